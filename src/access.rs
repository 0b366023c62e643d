//! On-access loading: when the agent touches a path, the instruction files
//! of the folders between the repository root and that path which the
//! session's chain did not hold are loaded, once each per session (Gemini
//! CLI and Claude Code load files below the cwd this way).
//!
//! The files go through the same steps as the chain's (the sandbox, pick
//! rules, imports, hidden text, trust) under the chain's budget: what the
//! chain used of `instructions.budget-bytes` counts, a session takes from
//! what is left (at most `instructions.access-budget-bytes` in all), and a
//! budget of 0 lets no project file in. They are framed with the session's
//! nonce (they read as more of the section the agent already has), and
//! what they add, framing included, is charged to what the section left of
//! the repository's share of the prompt
//! (`instructions.project-prompt-bytes`). A path outside the repository root loads nothing and
//! is an error; `..` is resolved before the check, links are the sandbox's
//! business (a linked folder leaving the root is refused like any other).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{ErrorCode, SnapshotError, operation_diagnostic};
use crate::instructions::{self, Block, Budget, Deduped, Import, Skipped, chain};
use crate::policy::{AccessRoot, BudgetOrder, Policy};
use crate::render;
use crate::sandbox::{Handles, open_roots};
use crate::snapshot::Snapshot;
use crate::trace::View;
use crate::trust::Gate;

/// The longest path an access takes, in bytes as given: the usual
/// `PATH_MAX`, so no real path is refused.
pub(crate) const MAX_PATH_BYTES: usize = 4096;

/// The deepest path an access takes, in folder levels below the repository
/// root (after `..` is resolved). Each level below the cwd costs a look at
/// its folder, so this bounds what one access can cost.
pub(crate) const MAX_PATH_DEPTH: usize = 256;

/// One session's on-access state: where it works, and what it has been
/// given so far.
#[derive(Debug, Clone)]
pub struct Session {
    cwd: PathBuf,
    root: Option<PathBuf>,
    /// Files given on access so far.
    delivered: BTreeSet<PathBuf>,
    /// The device and inode of every file given so far, at the start or
    /// on access (a link to one of them is not given again).
    given: BTreeMap<(u64, u64), PathBuf>,
    /// Budget used on access so far.
    used: u64,
    /// Bytes of the repository's share of the prompt
    /// (`instructions.project-prompt-bytes`) that accesses took so far.
    share_used: u64,
}

impl Session {
    /// The most files one session records as given or recognised as copies.
    /// A session that holds this many is full: later accesses load nothing
    /// more (as if its budget were spent), so what a session holds stays
    /// bounded whatever paths its client touches.
    pub const MAX_FILES: usize = 1024;

    /// A session working in `cwd` (absolute), with the repository root
    /// given or found as for a snapshot.
    pub fn new(cwd: impl Into<PathBuf>, root: Option<PathBuf>) -> Self {
        Session {
            cwd: cwd.into(),
            root,
            delivered: BTreeSet::new(),
            given: BTreeMap::new(),
            used: 0,
            share_used: 0,
        }
    }

    /// The session's working directory.
    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// The repository root the session named, if it named one.
    pub fn root(&self) -> Option<&Path> {
        self.root.as_deref()
    }

    /// The bytes of paths this session holds: its cwd and root, and every
    /// file it recorded.
    pub(crate) fn bytes_held(&self) -> usize {
        let len = |p: &Path| p.as_os_str().len();
        len(&self.cwd)
            + self.root.as_deref().map_or(0, len)
            + self.delivered.iter().map(|p| len(p)).sum::<usize>()
            + self.given.values().map(|p| len(p)).sum::<usize>()
    }

    /// The files given on access so far, in path order.
    pub fn delivered(&self) -> impl Iterator<Item = &Path> {
        self.delivered.iter().map(PathBuf::as_path)
    }
}

/// What one access added to a session.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Access {
    /// The path accessed, absolute and normalized.
    #[serde(serialize_with = "crate::vocab::paths::lossy")]
    pub path: PathBuf,
    /// Files loaded by this access, in order (each only once per session).
    pub instruction_files: Vec<Block>,
    /// Files folded into a kept one.
    pub deduped: Vec<Deduped>,
    /// Files not used, and why.
    pub skipped: Vec<Skipped>,
    /// Their `@path` imports.
    pub imports: Vec<Import>,
    /// The session's on-access budget after this access.
    pub budget: Budget,
    /// The blocks, framed with the session's nonce, to put where the
    /// agent sees the tool's result. Empty when nothing was loaded.
    pub prompt: String,
}

/// Loads what accessing `path` adds to `session`, whose current snapshot is
/// `snap`.
pub(crate) fn access(
    policy: &Policy,
    home: Option<&Path>,
    handles: &Handles,
    snap: &Snapshot,
    session: &mut Session,
    path: &Path,
) -> Result<Access, AccessError> {
    // Bounded before anything else looks at it: normalizing and walking a
    // path cost its length.
    let length = path.as_os_str().len();
    if length > MAX_PATH_BYTES {
        return Err(too_long(length, 0));
    }
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        snap.cwd.join(path)
    };
    let absolute = crate::vocab::home::normalize(&absolute);
    let Ok(rel) = absolute
        .strip_prefix(&snap.repo_root)
        .map(Path::to_path_buf)
    else {
        return Err(AccessError::OutsideRoot {
            path: absolute,
            root: snap.repo_root.clone(),
        });
    };
    let depth = rel.components().count();
    if depth > MAX_PATH_DEPTH {
        return Err(too_long(length, depth));
    }
    // The chain's budget holds on access too: what the chain used counts,
    // and a session takes from what it left (within its own
    // `access-budget-bytes`); a budget of 0 lets no project file in.
    let chain_left = snap.budget.limit.saturating_sub(snap.budget.used);
    let limit = u64::try_from(policy.instructions.access_budget_bytes)
        .unwrap_or(0)
        .min(chain_left);
    let mut outcome = Access {
        path: absolute,
        instruction_files: Vec::new(),
        deduped: Vec::new(),
        skipped: Vec::new(),
        imports: Vec::new(),
        budget: Budget {
            limit,
            used: session.used,
            exhausted: false,
        },
        prompt: String::new(),
    };
    if !policy.instructions.on_access {
        return Ok(outcome);
    }
    // `access-root = "cwd"`: a path outside the working directory loads
    // nothing (nor does it count as loaded).
    if policy.instructions.access_root == AccessRoot::Cwd && !outcome.path.starts_with(&snap.cwd) {
        return Ok(outcome);
    }
    let roots = open_roots(policy, home, &snap.cwd, Some(&snap.repo_root), handles)
        .map_err(SnapshotError::from)?;
    // A folder loads its own files; a file (or a path not there yet) its
    // folder's.
    let target = if roots.set.repo.stamp(&rel).is_dir() {
        rel.clone()
    } else {
        rel.parent().map(Path::to_path_buf).unwrap_or_default()
    };
    // An access's reads are answered, never checked again: nothing is
    // recorded.
    let mut view = View::off();
    let accessed = chain::slash_path(&rel);
    // A rule with content patterns also wants the touched file's first
    // bytes: read once, through the sandbox, only when such a rule's globs
    // matched.
    let mut head: Option<Option<Vec<u8>>> = None;
    let mut content_matches = |set: &regex::bytes::RegexSet| {
        let bytes = head.get_or_insert_with(|| head_of(policy, &roots.set.repo, &rel));
        bytes.as_deref().is_some_and(|b| set.is_match(b))
    };
    let rules: Vec<_> = snap
        .rule_matcher
        .matching(&accessed)
        .into_iter()
        .filter_map(|i| snap.scoped_rules.get(i))
        .filter(|r| r.content.as_ref().is_none_or(&mut content_matches))
        .map(|r| chain::Candidate {
            root: r.root,
            origin: r.origin,
            level: 0,
            rel: r.rel.clone(),
            path: r.path.clone(),
            excluded: false,
            on_access: true,
            accessed: false,
            at: r.at,
        })
        .collect();
    let mut levels = chain::below(policy, &roots, &target, &mut view);
    if policy.instructions.access_order == BudgetOrder::NearestFirst {
        // Stable: a level's names keep the policy's order.
        levels.sort_by_key(|c| std::cmp::Reverse(c.level));
    }
    let candidates: Vec<_> = levels
        .into_iter()
        .chain(rules)
        .filter(|c| !session.delivered.contains(&c.path))
        .collect();
    let mut gate = Gate::load(policy, &roots, &mut view, false);
    let left = if session.delivered.len() >= Session::MAX_FILES {
        0
    } else {
        limit.saturating_sub(session.used)
    };
    // The files the session holds, by identity: the chain's project files
    // and what earlier accesses gave.
    let identity = |path: &Path| {
        path.strip_prefix(&roots.set.repo.path)
            .ok()
            .and_then(|rel| roots.set.repo.stamp(rel).identity())
    };
    if session.given.is_empty() {
        for b in &snap.instruction_files {
            if let Some(id) = identity(&b.path) {
                session.given.insert(id, b.path.clone());
            }
        }
    }
    let given = session
        .given
        .iter()
        .map(|(id, path)| (*id, path.clone()))
        .collect();
    let sel = instructions::select_within(
        policy,
        &roots,
        &candidates,
        &mut view,
        &mut gate,
        left,
        given,
    );
    if let Some(source) = roots.set.shortage() {
        return Err(AccessError::Snapshot(SnapshotError::ResourceExhausted {
            path: roots.set.repo.path.clone(),
            source,
        }));
    }
    // What the files take of the prompt is the repository's too: within
    // what its share has left after the session's section and the
    // accesses before this one.
    let share_left = snap
        .project_share
        .limit
        .saturating_sub(snap.project_share.used)
        .saturating_sub(session.share_used);
    let rendered = render::render_access(policy, &snap.nonce, sel.blocks, share_left);
    session.share_used += rendered.share.used;
    let mut used = sel.budget.used;
    let mut skipped = sel.skipped;
    let by_text = policy.instructions.budget_counts == crate::policy::BudgetCounts::Text;
    for b in &rendered.dropped {
        used = used.saturating_sub(b.charged);
        skipped.push(instructions::Skipped {
            path: b.path.clone(),
            reason: crate::vocab::reason::Reason::PromptShare,
        });
    }
    for b in rendered.blocks.iter().filter(|b| b.share_cut && by_text) {
        used = used.saturating_sub(b.charged - b.included_bytes.min(b.charged));
    }
    session.used += used;
    for b in &rendered.blocks {
        session.delivered.insert(b.path.clone());
        if let Some(id) = identity(&b.path) {
            session.given.insert(id, b.path.clone());
        }
    }
    for d in &sel.deduped {
        if session.delivered.len() < Session::MAX_FILES {
            session.delivered.insert(d.path.clone());
        }
    }
    outcome.prompt = rendered.prompt;
    outcome.instruction_files = rendered.blocks;
    outcome.deduped = sel.deduped;
    outcome.skipped = skipped;
    outcome.imports = sel.imports;
    outcome.budget = Budget {
        limit,
        used: session.used,
        exhausted: sel.budget.exhausted || rendered.share.exhausted,
    };
    Ok(outcome)
}

/// The first `rules.compat.regex-scan-bytes` of the touched file `rel`, read through
/// the repository's sandbox under the policy's link rule; `None` when it is
/// not a regular file there, is refused, or cannot be read.
fn head_of(policy: &Policy, repo: &crate::sandbox::Root, rel: &Path) -> Option<Vec<u8>> {
    let limit = u64::try_from(policy.rules.regex_scan_bytes).unwrap_or(0);
    if limit == 0 {
        return None;
    }
    match repo.open_file(rel, policy.trust.symlinks) {
        crate::sandbox::Opened::File(f) => f.read_at_most(limit).ok(),
        _ => None,
    }
}

/// Why an on-access load ([`Loader::access`](crate::Loader::access)) could
/// not be answered. A file under the path that is refused is no error: it
/// is recorded in the answer with its reason.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AccessError {
    /// The snapshot the access extends could not be built, or a root
    /// could not be read under.
    #[error(transparent)]
    Snapshot(#[from] SnapshotError),
    /// An on-access path outside the session's repository root.
    #[error(
        "{} is outside the repository root {}",
        crate::vocab::paths::shown(path),
        crate::vocab::paths::shown(root)
    )]
    OutsideRoot {
        /// The path, absolute and normalized.
        path: PathBuf,
        /// The session's repository root.
        root: PathBuf,
    },
    /// An `access` session name longer than
    /// [`Loader::MAX_SESSION_NAME_BYTES`](crate::Loader::MAX_SESSION_NAME_BYTES)
    /// (the loader keeps each session by its name: a name is bounded so no
    /// request can make it hold more).
    #[error("the session name is {length} bytes long; at most {max} are allowed")]
    SessionNameTooLong {
        /// The name's length in bytes.
        length: usize,
        /// The most allowed.
        max: usize,
    },
    /// An on-access path longer than
    /// [`Loader::MAX_ACCESS_PATH_BYTES`](crate::Loader::MAX_ACCESS_PATH_BYTES)
    /// as given, or deeper below the repository root than
    /// [`Loader::MAX_ACCESS_PATH_DEPTH`](crate::Loader::MAX_ACCESS_PATH_DEPTH)
    /// levels once normalized: refused before anything is read, so that no
    /// path can make an access cost more than those bounds allow.
    #[error("{}", path_too_long(*length, *depth, *max_bytes, *max_depth))]
    PathTooLong {
        /// The path's length in bytes, as given.
        length: usize,
        /// Its depth below the repository root (0 when the length alone
        /// refused it, before it was normalized).
        depth: usize,
        /// The longest path allowed, in bytes.
        max_bytes: usize,
        /// The deepest path allowed, in levels below the repository root.
        max_depth: usize,
    },
}

impl AccessError {
    /// The snapshot error inside, when that is the case.
    pub fn snapshot(&self) -> Option<&SnapshotError> {
        match self {
            Self::Snapshot(inner) => Some(inner),
            _ => None,
        }
    }

    /// The one table of this error's own codes: diagnostic and wire.
    fn codes(&self) -> (&'static str, ErrorCode) {
        match self {
            Self::Snapshot(_) => ("", ErrorCode::BadRequest),
            Self::OutsideRoot { .. } => ("access::outside-root", ErrorCode::AccessOutsideRoot),
            Self::SessionNameTooLong { .. } => {
                ("access::session-name-too-long", ErrorCode::BadRequest)
            }
            Self::PathTooLong { .. } => ("access::path-too-long", ErrorCode::BadRequest),
        }
    }

    fn own_code(&self) -> &'static str {
        self.codes().0
    }

    fn own_help(&self) -> Option<&'static str> {
        match self {
            Self::OutsideRoot { .. } => {
                Some("only paths under the repository root load instruction files on access")
            }
            _ => None,
        }
    }

    /// The wire code of this error (`error.code` in `serve`'s responses).
    pub fn wire_code(&self) -> ErrorCode {
        match self.snapshot() {
            Some(inner) => inner.wire_code(),
            None => self.codes().1,
        }
    }
}

operation_diagnostic!(AccessError);

/// The message of [`AccessError::PathTooLong`]: the bound the path
/// broke.
fn path_too_long(length: usize, depth: usize, max_bytes: usize, max_depth: usize) -> String {
    if length > max_bytes {
        format!("the accessed path is {length} bytes long; at most {max_bytes} are allowed")
    } else {
        format!(
            "the accessed path lies {depth} levels below the repository root; at most {max_depth} are allowed"
        )
    }
}

/// The error for a path past [`MAX_PATH_BYTES`] or [`MAX_PATH_DEPTH`].
fn too_long(length: usize, depth: usize) -> AccessError {
    AccessError::PathTooLong {
        length,
        depth,
        max_bytes: MAX_PATH_BYTES,
        max_depth: MAX_PATH_DEPTH,
    }
}

/// The most entries [`reach`] lists in one repository, every folder
/// together: past it the walk stops and says it is not complete.
pub(crate) const REACH_ENTRIES: usize = 50_000;

/// How deep below the repository root [`reach`] walks.
const REACH_DEPTH: usize = 32;

/// Which on-access rules some file of the repository would load (see
/// [`Loader::rule_reach`](crate::Loader::rule_reach)).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct RuleReach {
    /// The on-access rules (`scopedRules`) whose globs match no path of
    /// the repository, in read order. Only a complete walk names any: a
    /// rule not met in part of a tree may match in the rest.
    #[serde(serialize_with = "crate::vocab::paths::lossy_list")]
    pub unmatched: Vec<PathBuf>,
    /// How many entries the walk listed.
    pub entries: usize,
    /// Whether the walk saw the whole repository (under 50,000 entries and
    /// 32 levels, version-control folders and what links lead to aside).
    pub complete: bool,
}

/// Walks the repository of `snap` through its sandbox (links are not
/// followed, version-control metadata and `import-excluded-names` folders
/// are not entered) and tells which of its scoped rules no path matches.
/// Content patterns are not tested: a path their globs match is enough.
pub(crate) fn reach(
    policy: &Policy,
    home: Option<&Path>,
    handles: &Handles,
    snap: &Snapshot,
) -> Result<RuleReach, SnapshotError> {
    let mut outcome = RuleReach {
        unmatched: Vec::new(),
        entries: 0,
        complete: true,
    };
    let total = snap.scoped_rules.len();
    if total == 0 {
        return Ok(outcome);
    }
    let roots = open_roots(policy, home, &snap.cwd, Some(&snap.repo_root), handles)?;
    let repo = &roots.set.repo;
    let mut matched = vec![false; total];
    let mut left = total;
    let mut queue = std::collections::VecDeque::from([(PathBuf::new(), 0usize)]);
    'walk: while let Some((folder, depth)) = queue.pop_front() {
        // The root itself is `.` to the sandbox; paths below it are
        // matched without a leading `./`.
        let at = if folder.as_os_str().is_empty() {
            Path::new(".")
        } else {
            folder.as_path()
        };
        let room = REACH_ENTRIES - outcome.entries;
        let looked = repo.look(at, room);
        if !looked.stamp.is_dir() {
            continue;
        }
        let Ok(Some(entries)) = &looked.listing else {
            continue;
        };
        let mut entries = entries.clone();
        outcome.entries += entries.len();
        if entries.len() >= room {
            outcome.complete = false;
        }
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        for entry in entries {
            if policy.is_import_excluded(&entry.name) {
                continue;
            }
            let rel = folder.join(&entry.name);
            for i in snap.rule_matcher.matching(&chain::slash_path(&rel)) {
                if let Some(m) = matched.get_mut(i)
                    && !*m
                {
                    *m = true;
                    left -= 1;
                }
            }
            if left == 0 {
                break 'walk;
            }
            // A link is not followed; a regular file (as the listing
            // says) has nothing below it to look at.
            if entry.is_link || entry.is_file {
                continue;
            }
            if depth + 1 < REACH_DEPTH {
                queue.push_back((rel, depth + 1));
            } else {
                outcome.complete = false;
            }
        }
        if !outcome.complete {
            break;
        }
    }
    if let Some(source) = roots.set.shortage() {
        return Err(SnapshotError::ResourceExhausted {
            path: roots.set.repo.path.clone(),
            source,
        });
    }
    if outcome.complete {
        outcome.unmatched = snap
            .scoped_rules
            .iter()
            .zip(&matched)
            .filter(|(_, m)| !**m)
            .map(|(r, _)| r.path.clone())
            .collect();
    }
    Ok(outcome)
}
