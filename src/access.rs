//! On-access loading: when the agent touches a path, the instruction files
//! of the folders between the repository root and that path which the
//! session's chain did not hold are loaded, once each per session (Gemini
//! CLI and Claude Code load files below the cwd this way).
//!
//! The files go through the same steps as the chain's (the sandbox, pick
//! rules, imports, hidden text, trust) under their own budget
//! (`instructions.access-budget-bytes`, for the whole session), and are
//! framed with the session's nonce: they read as more of the section the
//! agent already has. A path outside the repository root loads nothing and
//! is an error; `..` is resolved before the check, links are the sandbox's
//! business (a linked folder leaving the root is refused like any other).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::SnapshotError;
use crate::instructions::{self, Block, Budget, Deduped, Import, Skipped, chain};
use crate::policy::{AccessRoot, Policy};
use crate::render;
use crate::sandbox::{Handles, open_roots};
use crate::snapshot::Snapshot;
use crate::trace::Trace;
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
    #[cfg(feature = "internals")]
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
) -> Result<Access, SnapshotError> {
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
        return Err(SnapshotError::AccessOutsideRoot {
            path: absolute,
            root: snap.repo_root.clone(),
        });
    };
    let depth = rel.components().count();
    if depth > MAX_PATH_DEPTH {
        return Err(too_long(length, depth));
    }
    let limit = u64::try_from(policy.instructions.access_budget_bytes).unwrap_or(0);
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
    let roots = open_roots(policy, home, &snap.cwd, Some(&snap.repo_root), handles)?;
    // A folder loads its own files; a file (or a path not there yet) its
    // folder's.
    let target = if roots.set.repo.stamp(&rel).is_dir() {
        rel.clone()
    } else {
        rel.parent().map(Path::to_path_buf).unwrap_or_default()
    };
    let mut trace = Trace::default();
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
            at: r.at,
        })
        .collect();
    let candidates: Vec<_> = chain::below(policy, &roots, &target, &mut trace)
        .into_iter()
        .chain(rules)
        .filter(|c| !session.delivered.contains(&c.path))
        .collect();
    let mut gate = Gate::load(policy, &roots, &mut trace, false);
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
        &mut trace,
        &mut gate,
        left,
        given,
    );
    if let Some(source) = roots.set.shortage() {
        return Err(SnapshotError::ResourceExhausted {
            path: roots.set.repo.path.clone(),
            source,
        });
    }
    session.used += sel.budget.used;
    for b in &sel.blocks {
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
    outcome.prompt = render::render_blocks(policy, &snap.nonce, &sel.blocks);
    outcome.instruction_files = sel.blocks;
    outcome.deduped = sel.deduped;
    outcome.skipped = sel.skipped;
    outcome.imports = sel.imports;
    outcome.budget = Budget {
        limit,
        used: session.used,
        exhausted: sel.budget.exhausted,
    };
    Ok(outcome)
}

/// The first `rules.regex-scan-bytes` of the touched file `rel`, read through
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

/// The error for a path past [`MAX_PATH_BYTES`] or [`MAX_PATH_DEPTH`].
fn too_long(length: usize, depth: usize) -> SnapshotError {
    SnapshotError::AccessPathTooLong {
        length,
        depth,
        max_bytes: MAX_PATH_BYTES,
        max_depth: MAX_PATH_DEPTH,
    }
}
