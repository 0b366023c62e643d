//! What `survey` builds: one snapshot per policy of the same repository,
//! and the reach of each policy's on-access rules, through one pass over
//! the disk.
//!
//! The policies' loaders form one group (one parse cache, one set of root
//! handles) and share a [`Pass`]: a folder the policies all list is listed
//! once, a `SKILL.md` they all read the same way is read once, a path they
//! all stamp is stamped once. The loaders keep nothing: each build is made
//! once, for the survey, and dropped with it, the pass with it.

use std::path::Path;
use std::sync::Arc;

use super::{Loader, LoaderBuilder};
use crate::access::RuleReach;
use crate::error::{BootstrapError, SnapshotError};
use crate::sandbox::Pass;
use crate::snapshot::Snapshot;

/// One surveyed policy: what it loads from the repository, and which of its
/// on-access rules no path of the repository reaches.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Surveyed {
    /// The policy's name, as given.
    pub policy: String,
    /// Its snapshot of the cwd.
    pub snapshot: Arc<Snapshot>,
    /// The reach of its on-access rules.
    pub reach: RuleReach,
}

/// Why a survey could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SurveyError {
    /// A policy's loader could not be set up.
    #[error("policy `{policy}`: {source}")]
    Bootstrap {
        /// The policy.
        policy: String,
        /// Why.
        source: BootstrapError,
    },
    /// A policy's snapshot could not be built.
    #[error("policy `{policy}`: {source}")]
    Snapshot {
        /// The policy.
        policy: String,
        /// Why.
        source: SnapshotError,
    },
}

/// Surveys `cwd` (in the repository `root` names, else the one found from
/// `cwd`) under each policy of `policies`: a name and the builder of its
/// loader (its home, which policy, whether the home's policy file is laid
/// over it). The answers come in the order given, and are exactly what a
/// fresh loader built from each builder would answer at that moment.
///
/// ```
/// let (home, repo) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
/// std::fs::create_dir(repo.path().join(".git")).unwrap();
/// std::fs::write(repo.path().join("AGENTS.md"), "Use tabs.").unwrap();
/// let policies = ["codex", "zed"].map(|name| {
///     let b = lisa_context::Loader::builder()
///         .shipped_policy(name)
///         .home(home.path())
///         .home_policy(false);
///     (name.to_string(), b)
/// });
/// let surveyed = lisa_context::survey(policies, repo.path(), None).unwrap();
/// assert_eq!(surveyed.len(), 2);
/// for s in &surveyed {
///     let files = &s.snapshot.instruction_files;
///     assert_eq!(files.len(), 1, "{}", s.policy);
///     assert!(files[0].path.ends_with("AGENTS.md"));
/// }
/// ```
pub fn survey(
    policies: impl IntoIterator<Item = (String, LoaderBuilder)>,
    cwd: &Path,
    root: Option<&Path>,
) -> Result<Vec<Surveyed>, SurveyError> {
    let pass = Arc::new(Pass::default());
    let mut first: Option<Loader> = None;
    let mut out = Vec::new();
    for (policy, builder) in policies {
        let builder = match &first {
            Some(first) => builder.share(first),
            None => builder,
        };
        let loader = match builder.build() {
            Ok(l) if first.is_none() => l.in_pass(Arc::clone(&pass)),
            Ok(l) => l,
            Err(source) => return Err(SurveyError::Bootstrap { policy, source }),
        };
        match loader.surveyed(cwd, root) {
            Ok((snapshot, reach)) => out.push(Surveyed {
                policy,
                snapshot,
                reach,
            }),
            Err(source) => return Err(SurveyError::Snapshot { policy, source }),
        }
        first.get_or_insert(loader);
    }
    Ok(out)
}
