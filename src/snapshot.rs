//! The snapshot: everything the agent needs for one cwd, and the fingerprint
//! that says when it must be rebuilt; and the records it holds (the
//! instruction files and their budget, the skills, what was left out and
//! why, the warnings).

pub use crate::hidden::{HiddenFinding, HiddenReport};
pub use crate::instructions::{
    Activation, Block, Budget, Considered, Deduped, Import, RuleFile, ScopedRule, Skipped, Status,
};
pub use crate::skills::{Frontmatter, FrontmatterError, Rejected, Shadowed, Skill};
pub use crate::vocab::origin::Origin;
pub use crate::vocab::reason::Reason;
pub use crate::vocab::unicode::terminal_safe;
pub use crate::vocab::warning::{Warning, WarningKind};

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

use crate::error::SnapshotError;
use crate::instructions::{self, chain};
use crate::policy::Policy;
use crate::render;
use crate::sandbox::Place;
use crate::sandbox::{self, Handles, Roots, Stamp, open_roots};
use crate::skills::{self, ParseCache};
use crate::trace::{Trace, View};
use crate::trust::{Gate, TrustItem, Unapproved};

/// The project-context section for one cwd, and how it was made. Serialized
/// (camelCase) it is the `snapshot --format json` object; its schema is
/// documented in `docs/protocol.md` and kept stable.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Snapshot {
    /// The fingerprint, 32 hex digits.
    pub fingerprint: String,
    /// The home root, when it exists.
    #[serde(serialize_with = "crate::vocab::paths::lossy_opt")]
    pub home: Option<PathBuf>,
    /// The repository root.
    #[serde(serialize_with = "crate::vocab::paths::lossy")]
    pub repo_root: PathBuf,
    /// The working directory.
    #[serde(serialize_with = "crate::vocab::paths::lossy")]
    pub cwd: PathBuf,
    /// The policy's named roots (`[[roots.named]]`), in its order, with
    /// where each was found (`null`: nowhere, or not a directory).
    pub named_roots: Vec<NamedRootPlace>,
    /// Kept instruction files, in read order (outermost first).
    pub instruction_files: Vec<Block>,
    /// Files folded into an identical kept one.
    pub deduped: Vec<Deduped>,
    /// Files not used, with the reason.
    pub skipped: Vec<Skipped>,
    /// Every `@path` import met in the instruction files (under a policy
    /// that imports), in read order: what it named, and whether it was
    /// inlined or why not.
    pub imports: Vec<Import>,
    /// Rules scoped to some paths (`instructions.compat.scoped-rules`), left out
    /// of the prompt until a matching path is accessed.
    pub scoped_rules: Vec<ScopedRule>,
    /// The rule files (`[rules]`) in read order, each with its mode and
    /// why: `always` ones are blocks of the chain, `on-access` ones are in
    /// `scopedRules` too, `listed` ones are listed in the prompt by name
    /// and description, `manual` ones are left out.
    pub rules: Vec<RuleFile>,
    /// The scoped rules' globs, compiled once for this build (an access
    /// only matches against them).
    #[serde(skip)]
    pub(crate) rule_matcher: crate::instructions::rules::RuleMatcher,
    /// The instruction budget.
    pub budget: Budget,
    /// The repository's share of the prompt
    /// (`instructions.project-prompt-bytes`): `limit`, the bytes charged
    /// for everything the repository (and the folders above it) put in
    /// `prompt` (its blocks with their frames and notes, its listed skills
    /// and rules, the headings and notes they bring; at least what they
    /// take), and whether something was cut or left out for it (`skipped`,
    /// `prompt-share`; a listed skill left out counts in
    /// `hiddenProjectSkills`).
    pub project_share: Budget,
    /// Skills that won their name, in name order.
    // A loader holds each skill once, however many of its cached snapshots
    // list it.
    pub skills: Vec<Arc<Skill>>,
    /// Skills that lost their name to a lower rank.
    pub shadowed_project_skills: Vec<Shadowed>,
    /// Skill folders and files refused.
    pub rejected_skills: Vec<Rejected>,
    /// Project skills not listed in the prompt because of the cap
    /// (`skills.max-project-skills`) or the repository's share of the
    /// prompt.
    pub hidden_project_skills: usize,
    /// Files (and skill files) where hidden text was found.
    pub hidden_text: Vec<HiddenFinding>,
    /// What the user should know that did not stop the snapshot: an ignored
    /// repository marker, a home and repository that overlap, hard-linked
    /// project files.
    pub warnings: Vec<Warning>,
    /// Under `trust.project = "pinned"`, the project items left out of the
    /// prompt for want of the user's approval, and approvals whose item is
    /// gone, in path order. Always empty under `open`.
    pub unapproved: Vec<Unapproved>,
    /// The rendered section, exactly as it goes into the prompt.
    pub prompt: String,
    /// Where the instruction part of `prompt` ends (see
    /// [`Snapshot::instructions_prompt`]).
    #[serde(skip)]
    pub(crate) instructions_end: usize,
    /// Every instruction candidate and what happened to it (for `explain`).
    #[serde(skip)]
    pub considered: Vec<Considered>,
    /// The folders above the repository root opened as roots (when the
    /// policy reads files there), root-most first, for checking a cached
    /// build again.
    #[serde(skip)]
    pub(crate) ancestor_paths: Vec<Option<PathBuf>>,
    /// The state root (`roots.state`) the build used, for checking a
    /// cached build again.
    #[serde(skip)]
    pub(crate) state_root: Option<PathBuf>,
    /// The nonce carried by every block's header and footer in `prompt`
    /// (16 hex digits). Not part of the JSON.
    #[serde(skip)]
    pub nonce: String,
}

/// Where one named root of the policy was found.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct NamedRootPlace {
    /// Its name in the policy.
    pub name: String,
    /// Its directory, when it exists.
    #[serde(serialize_with = "crate::vocab::paths::lossy_opt")]
    pub path: Option<PathBuf>,
}

impl Snapshot {
    /// The instruction part of [`prompt`](Self::prompt): its heading, its
    /// preamble and the instruction files' blocks, without the skills list
    /// (or the unapproved note) that follow; empty when no file was kept.
    /// For an embedder that places the two parts apart, as Lisa's
    /// `renderInstructionChain` does.
    ///
    /// ```
    /// # let tmp = tempfile::tempdir().unwrap();
    /// # std::fs::create_dir(tmp.path().join(".git")).unwrap();
    /// std::fs::write(tmp.path().join("AGENTS.md"), "Use tabs.").unwrap();
    /// let policy = lisa_context::policy::Policy::builtin().unwrap();
    /// let snap = lisa_context::build(&policy, None, tmp.path(), None).unwrap();
    /// assert!(snap.instructions_prompt().contains("Use tabs."));
    /// assert!(snap.prompt.starts_with(snap.instructions_prompt()));
    /// ```
    pub fn instructions_prompt(&self) -> &str {
        self.prompt.get(..self.instructions_end).unwrap_or_default()
    }

    /// The named roots' paths, in policy order (`None` where absent).
    pub(crate) fn named_paths(&self) -> Vec<Option<PathBuf>> {
        self.named_roots.iter().map(|n| n.path.clone()).collect()
    }
}

/// A snapshot together with what it examined, for caching. It holds no
/// root handle: its roots are `snapshot.home` and `snapshot.repo_root`,
/// taken again from the loader's handles when needed.
#[derive(Debug)]
pub(crate) struct Built {
    /// The snapshot (shared: a cached one is handed out without copying).
    pub(crate) snapshot: Arc<Snapshot>,
    /// Every path examined.
    pub(crate) trace: Trace,
    /// What its roots never read inside: a check or a read of what it
    /// listed takes its roots again with the same shield.
    pub(crate) shield: Arc<sandbox::Shield>,
}

/// The skills as the snapshot holds them, in a list of their own size (a
/// `collect` would keep the records' larger buffer for the pointers).
fn shared_skills(skills: Vec<Skill>) -> Vec<Arc<Skill>> {
    let mut out = Vec::with_capacity(skills.len());
    out.extend(skills.into_iter().map(Arc::new));
    out
}

/// Builds a snapshot with the roots already opened, remembering parsed skill
/// frontmatter in `cache`. A shortage of file descriptors met on the way is
/// an error: what was read then does not describe the files.
pub(crate) fn build_with_roots(
    policy: &Policy,
    roots: Roots,
    cache: &ParseCache,
    tracing: Tracing,
) -> Result<Built, SnapshotError> {
    build_inner(policy, roots, cache, false, tracing).map(|outcome| outcome.built)
}

/// Whether a build records the paths it examined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tracing {
    /// Every path examined is recorded, and the snapshot has its
    /// fingerprint: a loader hands it out and checks it again later.
    On,
    /// Nothing is recorded and the fingerprint is left empty: the snapshot
    /// is summed up and dropped at once (a survey's builds), and nothing
    /// ever checks it again.
    Off,
}

/// What a review build found about the project items (see [`review`]).
#[derive(Debug)]
pub(crate) struct Review {
    /// Every project item, with its approval and both texts.
    pub(crate) items: Vec<TrustItem>,
    /// Why the trust store could not be used, if it could not.
    pub(crate) store_error: Option<crate::trust::StoreProblem>,
    /// The repository root.
    pub(crate) repo_root: std::path::PathBuf,
    /// The state root (`roots.state`), when there is one: the trust store
    /// is kept there.
    pub(crate) state: Option<std::path::PathBuf>,
    /// Why the state folder is not used (another user owns it or a file of
    /// it, or others may write it), when it is not: no trust store can be
    /// read or written there.
    pub(crate) unsafe_state: Option<crate::vocab::warning::Warning>,
}

/// Builds `cwd`'s snapshot as `trust.project = "pinned"` would, keeping
/// every project item's text: what `lisa-context trust` shows and records.
pub(crate) fn review(
    policy: &Policy,
    home: Option<&Path>,
    cwd: &Path,
    root: Option<&Path>,
    handles: &Handles,
    cache: &ParseCache,
) -> Result<Review, SnapshotError> {
    let mut pinned = policy.clone();
    pinned.trust.project = crate::policy::ProjectTrust::Pinned;
    let roots = open_roots(&pinned, home, cwd, root, handles)?;
    let Outcome {
        built,
        items,
        store_error,
    } = build_inner(&pinned, roots, cache, true, Tracing::On)?;
    Ok(Review {
        items,
        store_error,
        repo_root: built.snapshot.repo_root.clone(),
        state: built.snapshot.state_root.clone(),
        unsafe_state: built
            .snapshot
            .warnings
            .iter()
            .find(|w| w.kind == crate::vocab::warning::WarningKind::UnsafeState)
            .cloned(),
    })
}

/// What one build gives: the build, and what the trust gate saw (the
/// project items, texts kept for a review build, and the store's problem,
/// if any).
struct Outcome {
    built: Built,
    items: Vec<TrustItem>,
    store_error: Option<crate::trust::StoreProblem>,
}

/// Builds a snapshot (project items' texts kept when `keep_text`).
fn build_inner(
    policy: &Policy,
    roots: Roots,
    cache: &ParseCache,
    keep_text: bool,
    tracing: Tracing,
) -> Result<Outcome, SnapshotError> {
    crate::vocab::counters::bump(crate::vocab::counters::Counter::Builds);
    let mut trace = Trace::default();
    let mut view = match tracing {
        Tracing::On => View::recording(&mut trace),
        Tracing::Off => View::off(),
    };
    // Derived: what the sandbox probed outside the roots as it opened them,
    // before the build began.
    for (path, stamp) in &roots.marker_probes {
        view.note(Place::Marker, path, *stamp, None);
    }
    for (path, stamp) in &roots.dir_probes {
        view.note(Place::Directory, path, *stamp, None);
    }
    for (path, stamp) in &roots.owner_probes {
        view.note(Place::Owner, path, *stamp, None);
    }
    for (place, path, stamp) in &roots.state_probes {
        view.note(*place, path, *stamp, None);
    }
    let mut gate = Gate::load(policy, &roots, &mut view, keep_text);
    let candidates = chain::candidates(policy, &roots, &mut view);
    let sel = instructions::select(policy, &roots, &candidates, &mut view, &mut gate);
    let set = skills::skills(policy, &roots, &mut view, cache, &mut gate);
    let store_error = gate.store_error.clone();
    let (unapproved, items, store_warning) = gate.finish();

    let mut hidden_text = sel.hidden;
    hidden_text.extend(set.hidden);
    let key = nonce_key(policy, &roots, &mut view);
    let nonce = render::nonce(&key, policy, &sel.blocks, &set.skills, &sel.rules);
    let mut skills = set.skills;
    let mut hidden_project = set.hidden_project;
    let rendered = render::render(
        policy,
        &nonce,
        sel.blocks,
        &mut skills,
        &mut hidden_project,
        &sel.rules,
        unapproved.len(),
    );
    let mut budget = sel.budget;
    let mut skipped = sel.skipped;
    let mut considered = sel.considered;
    let blocks = left_out_for_share(
        policy,
        &rendered,
        &sel.rules,
        &mut budget,
        &mut skipped,
        &mut considered,
    );
    let render::Rendered {
        mut prompt,
        instructions_end,
        share,
        ..
    } = rendered;
    prompt.shrink_to_fit();
    let home = roots.set.home.as_ref().map(|h| h.path.clone());
    let home_str = home
        .as_ref()
        .map(|h| h.to_string_lossy().into_owned())
        .unwrap_or_default();
    // The policy's warnings are part of the snapshot, not of the policy's
    // values (its digest): a file rewritten from a deprecated spelling to
    // the new one is a new snapshot. Policies without any hash as before.
    let policy_warnings: Vec<Warning> = policy_warnings(policy).collect();
    let warned: Vec<String> = policy_warnings
        .iter()
        .map(|w| format!("{}\n{}", w.path.to_string_lossy(), w.message))
        .collect();
    let fingerprint = if tracing == Tracing::On {
        let repo = roots.set.repo.path.to_string_lossy();
        let cwd = roots.cwd.to_string_lossy();
        // A new key is a new nonce, so a new prompt.
        let key_hash = blake3::hash(&key).to_hex();
        let mut context: Vec<&str> = vec![&home_str, &repo, &cwd, key_hash.as_str()];
        context.extend(warned.iter().map(String::as_str));
        trace.fingerprint(policy.digest(), &context, policy.fingerprint.include_mtime)
    } else {
        String::new()
    };
    let named_roots = policy
        .roots
        .named
        .iter()
        .zip(&roots.set.named)
        .map(|(n, r)| NamedRootPlace {
            name: n.name.get_ref().clone(),
            path: r.as_ref().map(|r| r.path.clone()),
        })
        .collect();
    let snapshot = Snapshot {
        fingerprint,
        home,
        repo_root: roots.set.repo.path.clone(),
        cwd: roots.cwd.clone(),
        named_roots,
        instruction_files: blocks,
        deduped: sel.deduped,
        skipped,
        imports: sel.imports,
        scoped_rules: sel.scoped,
        rules: sel.rules,
        rule_matcher: sel.rule_matcher,
        budget,
        project_share: share,
        skills: shared_skills(skills),
        shadowed_project_skills: set.shadowed,
        rejected_skills: set.rejected,
        hidden_project_skills: hidden_project,
        hidden_text,
        warnings: policy_warnings
            .into_iter()
            .chain(roots.warnings.iter().cloned())
            .chain(sel.warnings)
            .chain(set.warnings)
            .chain(store_warning)
            .collect(),
        unapproved,
        prompt,
        instructions_end,
        considered,
        state_root: roots.set.state.as_ref().map(|r| r.path.clone()),
        ancestor_paths: roots
            .ancestor_paths
            .iter()
            .zip(&roots.set.ancestors)
            .map(|(p, r)| r.as_ref().map(|_| p.clone()))
            .collect(),
        nonce,
    };
    if let Some(source) = roots.set.shortage() {
        return Err(SnapshotError::ResourceExhausted {
            path: roots.set.repo.path.clone(),
            source,
        });
    }
    trace.entries.shrink_to_fit();
    Ok(Outcome {
        built: Built {
            snapshot: Arc::new(snapshot),
            trace,
            shield: roots.set.repo.shield().clone(),
        },
        items,
        store_error,
    })
}

/// Records what the repository's share of the prompt left out or cut
/// (see [`render::render`]): a block left out is `skipped` as
/// `prompt-share` and gives back what it charged the budget, a cut block
/// keeps only what it shows charged (when the budget counts text), and a
/// listed rule left out is `skipped` as `prompt-share` instead of
/// `rule-listed`. Returns the blocks the prompt holds.
fn left_out_for_share(
    policy: &Policy,
    rendered: &render::Rendered,
    rules: &[crate::instructions::RuleFile],
    budget: &mut crate::instructions::Budget,
    skipped: &mut Vec<Skipped>,
    considered: &mut [Considered],
) -> Vec<Block> {
    use crate::vocab::hash::FastMap;
    let mut blocks = rendered.blocks.clone();
    if !rendered.share.exhausted {
        return blocks;
    }
    let by_text = policy.instructions.budget_counts == crate::policy::BudgetCounts::Text;
    let mut status: FastMap<&Path, Status> = FastMap::default();
    for b in &mut blocks {
        if b.share_cut {
            let now = if by_text {
                b.included_bytes.min(b.charged)
            } else {
                b.charged
            };
            budget.used = budget.used.saturating_sub(b.charged - now);
            b.charged = now;
            status.insert(&b.path, Status::Truncated);
        }
    }
    for b in &rendered.dropped {
        budget.used = budget.used.saturating_sub(b.charged);
        skipped.push(Skipped {
            path: b.path.clone(),
            reason: Reason::PromptShare,
        });
        status.insert(&b.path, Status::Skipped(Reason::PromptShare));
    }
    for &i in &rendered.dropped_rules {
        let Some(rule) = rules.get(i) else {
            continue;
        };
        if let Some(s) = skipped
            .iter_mut()
            .find(|s| s.path == rule.path && s.reason == Reason::RuleListed)
        {
            s.reason = Reason::PromptShare;
        }
        status.insert(&rule.path, Status::Skipped(Reason::PromptShare));
    }
    for c in considered {
        if let Some(s) = status.get(c.path.as_path()) {
            c.status = s.clone();
        }
    }
    blocks
}

/// The key the nonce is derived with: the home root's key file (created on
/// first use), or this process's key when the home cannot hold one. The key
/// file is traced; the key itself enters the fingerprint by its hash.
/// The policy's own warnings, as a snapshot carries them: each key one of
/// its files writes in a deprecated spelling, with the file as the path.
fn policy_warnings(policy: &Policy) -> impl Iterator<Item = Warning> + '_ {
    policy.deprecations().iter().map(|p| {
        let (line, column) = p.line_column();
        Warning::new(
            WarningKind::DeprecatedPolicyKey,
            p.file_name(),
            format!(
                "{} (line {line}, column {column}): the old spelling is read for one release only",
                p.message
            ),
        )
    })
}

fn nonce_key(policy: &Policy, roots: &Roots, view: &mut View<'_>) -> [u8; sandbox::KEY_BYTES] {
    let Some((state, id)) = roots.set.state() else {
        return sandbox::process_key();
    };
    let rel = Path::new(&policy.trust.nonce_key_file);
    // The key file's stamp tells a cached build that the key was replaced;
    // the key itself enters the fingerprint through its hash (below).
    match sandbox::home_key(state, rel) {
        Some(found) => {
            // Derived: the stamp the key file was read (or written) with.
            let stamp = found.stamp.unwrap_or(Stamp::Absent);
            view.note(Place::Within(id), rel, stamp, None);
            found.key
        }
        None => {
            let key = sandbox::process_key();
            view.stamp(state, id, rel);
            key
        }
    }
}

/// Opens the roots for `cwd` and builds its snapshot. `home` is the home
/// root's path; `root` names the repository root explicitly.
pub(crate) fn build(
    policy: &Policy,
    home: Option<&Path>,
    cwd: &Path,
    root: Option<&Path>,
    handles: &Handles,
    cache: &ParseCache,
    tracing: Tracing,
) -> Result<Built, SnapshotError> {
    let roots = open_roots(policy, home, cwd, root, handles)?;
    build_with_roots(policy, roots, cache, tracing)
}

/// Every path a fresh build for `cwd` examined, absolute, in the order
/// examined: what "one `stat` per traced path" means for the benchmarks
/// that measure the per-turn check against that floor.
pub(crate) fn traced_paths(
    policy: &Policy,
    home: Option<&Path>,
    cwd: &Path,
    root: Option<&Path>,
) -> Result<Vec<PathBuf>, SnapshotError> {
    let handles = Handles::default();
    let built = build(
        policy,
        home,
        cwd,
        root,
        &handles,
        &ParseCache::new(0),
        Tracing::On,
    )?;
    // The build's roots, taken again from the handles it opened (as a
    // loader's check takes them).
    let snap = &built.snapshot;
    let roots = sandbox::attach(
        &handles,
        snap.home.as_deref(),
        &snap.named_paths(),
        &snap.ancestor_paths,
        snap.state_root.as_deref(),
        &snap.repo_root,
        &built.shield,
    )
    .map_err(|e| sandbox::RootsError::open_root(snap.repo_root.clone(), e))?;
    Ok(built
        .trace
        .entries
        .iter()
        .filter_map(|e| match e.place {
            Place::Within(id) => roots.get(id).map(|r| r.path.join(&e.rel)),
            _ => Some(e.rel.clone()),
        })
        .collect())
}
