//! A rule served by name: the text of a `[rules]` file the prompt lists
//! (`listed`, the agent asks for it when its description fits the task) or
//! leaves out (`manual`, the user names it), read when it is asked for.
//!
//! The read is the one a chain file gets, not a raw one: the sandbox (links
//! the policy refuses, other owners, hard links, FIFOs), the per-file cap,
//! the approval gate under `trust.project = "pinned"` (a rule whose text
//! changed since it was approved is refused, as a skill's would be), the
//! hidden-text rule, imports, and the session's nonce around the text. The
//! rule's frontmatter is what it says about itself and is left out.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{ErrorCode, SnapshotError, operation_diagnostic};
use crate::hidden::HiddenReport;
use crate::instructions::{self, Activation, Import, RuleFile, chain};
use crate::policy::Policy;
use crate::render;
use crate::sandbox::{Handles, open_roots};
use crate::snapshot::Snapshot;
use crate::trace::View;
use crate::trust::Gate;
use crate::vocab::alike;
use crate::vocab::hash::FastMap;
use crate::vocab::origin::Origin;

/// The most bytes of an asked-for name an error repeats: a name is
/// compared whole, but one a client made huge is not echoed back whole.
const SHOWN_NAME_BYTES: usize = 256;

/// A rule's text, as [`Loader::rule`](crate::Loader::rule) serves it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct RuleText {
    /// The rule's name, as the snapshot's `rules` gives it.
    pub name: String,
    /// Home or project.
    pub origin: Origin,
    /// Its mode in the snapshot (`listed` or `manual` for the rules this
    /// is for; any rule can be asked for).
    pub mode: Activation,
    /// The rule's file, absolute.
    #[serde(serialize_with = "crate::vocab::paths::lossy")]
    pub path: PathBuf,
    /// Its body as it enters the prompt: the frontmatter left out,
    /// trimmed, hidden text treated under the policy's rule, imports
    /// inlined.
    pub content: String,
    /// Whether `instructions.max-file-bytes` stopped the read before the
    /// end of the file.
    pub truncated: bool,
    /// What hidden text the file (and its imports) held: empty counts
    /// when none.
    pub hidden_text: HiddenReport,
    /// The `@path` imports the body met, in read order.
    pub imports: Vec<Import>,
    /// The text framed with the session's nonce, to put where the agent
    /// sees the answer: it reads as more of the section it already has.
    pub prompt: String,
    /// Other rules of the same name, or of a name that looks like it,
    /// that lost to this one (a home rule wins over a project one, then
    /// the deepest folder): their files.
    #[serde(serialize_with = "crate::vocab::paths::lossy_list")]
    pub shadowed: Vec<PathBuf>,
}

/// Why a rule asked for by name ([`Loader::rule`](crate::Loader::rule))
/// is not served.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RuleError {
    /// The snapshot the rule is served from could not be built, or a root
    /// could not be read under.
    #[error(transparent)]
    Snapshot(#[from] SnapshotError),
    /// No rule (`[rules]`) of that name is in the snapshot for this cwd.
    #[error(
        "no rule named {name:?} is available from {}",
        crate::vocab::paths::shown(cwd)
    )]
    NotFound {
        /// The name asked for (cut to a bounded length for display).
        name: String,
        /// The cwd it was resolved for.
        cwd: PathBuf,
        /// The rules' names served from that cwd, in name order, each
        /// once.
        available: Vec<String>,
        /// When a rule of that very name exists but is not served: the
        /// rule that holds its name in its place (the user's own rule
        /// before a project's, then the deepest folder's; names that look
        /// alike are one name, and so are names equal without regard to
        /// case under `rules.compat.one-per-name`).
        held_by: Option<Box<RuleHolder>>,
    },
    /// The rule's file is not served: it went through the same steps as
    /// a chain file and one refused it (not approved under
    /// `trust.project = "pinned"`, a link the policy refuses, gone, blank,
    /// not text...).
    #[error(
        "cannot serve rule file {}: {}",
        crate::vocab::paths::shown(path),
        reason.as_str()
    )]
    Unreadable {
        /// The rule's file.
        path: PathBuf,
        /// Why, as a snapshot's `skipped[].reason` says it.
        reason: crate::vocab::reason::Reason,
    },
}

impl RuleError {
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
            Self::NotFound { .. } => ("rule::not-found", ErrorCode::RuleNotFound),
            Self::Unreadable { .. } => ("rule::unreadable", ErrorCode::RuleUnreadable),
        }
    }

    fn own_code(&self) -> &'static str {
        self.codes().0
    }

    fn own_help(&self) -> Option<String> {
        match self {
            Self::NotFound {
                name,
                available,
                held_by,
                ..
            } => Some(rule_advice(name, available, held_by.as_deref())),
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

operation_diagnostic!(RuleError);

/// The rule that holds a name asked for in place of a rule of that very
/// name ([`RuleError::NotFound`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RuleHolder {
    /// Its name, as written.
    pub name: String,
    /// Home or project.
    pub origin: crate::vocab::origin::Origin,
    /// Its file.
    pub path: PathBuf,
}

/// The help of [`RuleError::NotFound`]: why a rule of that name
/// is not served, when one exists; else the nearest name.
fn rule_advice(name: &str, available: &[String], held_by: Option<&RuleHolder>) -> String {
    let Some(holder) = held_by else {
        return crate::vocab::suggest::name_advice("rule", name, available);
    };
    let safe = |n: &str| crate::vocab::unicode::terminal_safe(n).into_owned();
    let listed = available
        .iter()
        .map(|n| safe(n))
        .collect::<Vec<_>>()
        .join(", ");
    // Why the two are one name: the one-per-name rule compares without
    // case; any other pair looks alike.
    let why = if holder.name.trim().to_lowercase() == name.trim().to_lowercase() {
        format!(
            "rules whose names differ only in case are one rule under `{}`",
            crate::policy::keys::RULES.one_per_name
        )
    } else {
        "names that look alike are one name".to_string()
    };
    format!(
        "`{}` is not served: the {} rule `{}` ({}) holds its name ({why}; the user's own rule \
         comes first, then the deepest folder's). Available here: {listed}",
        safe(name),
        holder.origin.as_str(),
        safe(&holder.name),
        crate::vocab::paths::shown(&holder.path),
    )
}

/// The rule of `name` in `snap`, read now under `policy`.
///
/// Of several rules of one name, the user's own (home) wins, so that no
/// repository can answer in its place; then the deepest folder, then read
/// order. Names that look alike are one name (see `vocab::alike`), and so
/// are names equal but for case under `rules.compat.one-per-name`: a rule whose
/// name only looks like the winner's is not served (the error names the
/// rule holding it), as a rule of the winner's very name is not.
pub(crate) fn rule(
    policy: &Policy,
    home: Option<&Path>,
    handles: &Handles,
    snap: &Snapshot,
    name: &str,
) -> Result<RuleText, RuleError> {
    // Names that look alike are one name (and so are names equal but for
    // case, where `rules.compat.one-per-name` compares them so): each rule's set
    // of one name, the asked name's first.
    let sets = alike::groups(
        std::iter::once(name.trim()).chain(snap.rules.iter().map(|r| r.name.trim())),
        policy.rules.one_per_name,
    );
    let set_of = |i: usize| sets[i + 1];
    // The rules a set's name answers with, best first: the home's, then
    // the deepest folder's, then read order. A rule another replaced
    // (`rules.compat.one-per-name`) answers to no name.
    let held = |set: usize| {
        let mut held: Vec<&RuleFile> = snap
            .rules
            .iter()
            .enumerate()
            .filter(|(i, r)| set_of(*i) == set && r.replaced_by.is_none())
            .map(|(_, r)| r)
            .collect();
        held.sort_by_key(|r| (r.origin != Origin::Home, std::cmp::Reverse(r.level)));
        held
    };
    let named = held(sets[0]);
    let (winner, losers) = match named.split_first() {
        Some((&winner, losers)) if winner.name == name => (winner, losers),
        holder => {
            // The names served: each set's best rule's. A rule of the very
            // name asked for that lost it is told apart from no rule at all.
            let mut best: FastMap<usize, &RuleFile> = FastMap::default();
            for (i, r) in snap.rules.iter().enumerate() {
                let better = |b: &&RuleFile| {
                    (r.origin != Origin::Home, std::cmp::Reverse(r.level))
                        < (b.origin != Origin::Home, std::cmp::Reverse(b.level))
                };
                if r.replaced_by.is_none() && best.get(&set_of(i)).is_none_or(better) {
                    best.insert(set_of(i), r);
                }
            }
            let mut available: Vec<String> = best.values().map(|r| r.name.clone()).collect();
            available.sort();
            available.dedup();
            let asked = snap.rules.iter().any(|r| r.name == name);
            let held_by = holder.filter(|_| asked).map(|(h, _)| {
                Box::new(RuleHolder {
                    name: h.name.clone(),
                    origin: h.origin,
                    path: h.path.clone(),
                })
            });
            return Err(RuleError::NotFound {
                name: shown_name(name),
                cwd: snap.cwd.clone(),
                available,
                held_by,
            });
        }
    };
    let roots = open_roots(policy, home, &snap.cwd, Some(&snap.repo_root), handles)
        .map_err(SnapshotError::from)?;
    let candidate = chain::Candidate {
        root: winner.root,
        origin: winner.origin,
        level: winner.level,
        rel: winner.rel.clone(),
        path: winner.path.clone(),
        excluded: false,
        // Read as the access a scoped rule waits for is: the body, not
        // the mode again.
        on_access: true,
        accessed: false,
        at: winner.at,
    };
    // A rule served by name is answered, never checked again: nothing is
    // recorded.
    let mut view = View::off();
    let mut gate = Gate::load(policy, &roots, &mut view, false);
    let limit = u64::try_from(policy.instructions.max_file_bytes).unwrap_or(u64::MAX);
    let sel = instructions::select_within(
        policy,
        &roots,
        std::slice::from_ref(&candidate),
        &mut view,
        &mut gate,
        limit,
        Vec::new(),
    );
    if let Some(source) = roots.set.shortage() {
        return Err(RuleError::Snapshot(SnapshotError::ResourceExhausted {
            path: roots.set.repo.path.clone(),
            source,
        }));
    }
    let Some(block) = sel.blocks.first() else {
        let reason = sel
            .skipped
            .first()
            .map_or(crate::vocab::reason::Reason::Unreadable, |s| s.reason);
        return Err(RuleError::Unreadable {
            path: winner.path.clone(),
            reason,
        });
    };
    let hidden_text = sel
        .hidden
        .iter()
        .fold(HiddenReport::default(), |mut all, found| {
            all.absorb(found.report.clone());
            all
        });
    Ok(RuleText {
        name: winner.name.clone(),
        origin: winner.origin,
        mode: winner.mode,
        path: winner.path.clone(),
        content: block.text.to_string(),
        truncated: block.truncated,
        hidden_text,
        imports: sel.imports.clone(),
        prompt: render::render_blocks(policy, &snap.nonce, &sel.blocks),
        shadowed: losers.iter().map(|r| r.path.clone()).collect(),
    })
}

/// `name` cut at a character boundary to [`SHOWN_NAME_BYTES`].
fn shown_name(name: &str) -> String {
    if name.len() <= SHOWN_NAME_BYTES {
        return name.to_string();
    }
    let mut end = SHOWN_NAME_BYTES;
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &name[..end])
}
