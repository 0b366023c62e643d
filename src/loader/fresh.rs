//! One snapshot from scratch, without a cache: the answer every cached
//! path must equal.

use std::path::Path;

use crate::error::SnapshotError;
use crate::policy::Policy;
use crate::sandbox::Handles;
use crate::skills::ParseCache;
use crate::snapshot::{self, Snapshot};

/// Builds one snapshot from scratch, without a cache: what a fresh
/// [`Loader`](crate::Loader) would answer for the same arguments. `home` is the home root's
/// path (`None`: no home files or skills); `root` names the repository root
/// explicitly (it must contain `cwd`, which must be absolute).
///
/// ```
/// let repo = tempfile::tempdir().unwrap();
/// std::fs::write(repo.path().join("AGENTS.md"), "Use tabs.").unwrap();
/// let policy = lisa_context::policy::Policy::builtin().unwrap();
/// let snapshot = lisa_context::build(&policy, None, repo.path(), None).unwrap();
/// assert_eq!(snapshot.instruction_files.len(), 1);
/// ```
pub fn build(
    policy: &Policy,
    home: Option<&Path>,
    cwd: &Path,
    root: Option<&Path>,
) -> Result<Snapshot, SnapshotError> {
    build_viewed(policy, home, cwd, root, snapshot::Tracing::On)
}

/// [`build`], its stages asking the disk through the view `tracing` names:
/// under [`Tracing::Off`](snapshot::Tracing::Off) nothing is recorded and
/// the snapshot has no fingerprint, and otherwise it answers the same.
pub(crate) fn build_viewed(
    policy: &Policy,
    home: Option<&Path>,
    cwd: &Path,
    root: Option<&Path>,
    tracing: snapshot::Tracing,
) -> Result<Snapshot, SnapshotError> {
    let handles = Handles::default();
    // One build keeps no parses in memory (a copy of every parsed
    // frontmatter for a cache dropped on return); the home's memo file
    // still serves and learns.
    let cache = ParseCache::new(0);
    let built = snapshot::build(policy, home, cwd, root, &handles, &cache, tracing)?;
    Ok(std::sync::Arc::unwrap_or_clone(built.snapshot))
}
