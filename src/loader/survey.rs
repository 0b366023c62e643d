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
/// fresh loader built from each builder would answer at that moment. The
/// policies are built side by side on as many threads as the system grants
/// (at most eight). The first error, in the order given, is the answer: a
/// loader that cannot be set up stops the survey there.
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
    // The loaders are set up in order: the first takes the pass, the
    // others share its handles (and so the pass) and its parse cache.
    let mut loaders: Vec<(String, Loader)> = Vec::new();
    let mut unbuilt = None;
    for (policy, builder) in policies {
        let builder = match loaders.first() {
            Some((_, first)) => builder.share(first),
            None => builder,
        };
        match builder.build() {
            Ok(l) if loaders.is_empty() => loaders.push((policy, l.in_pass(Arc::clone(&pass)))),
            Ok(l) => loaders.push((policy, l)),
            Err(source) => {
                unbuilt = Some(SurveyError::Bootstrap { policy, source });
                break;
            }
        }
    }
    // Then built side by side, each thread taking the next policy. The pass
    // lets one build at a time ask the disk a question (the others wait for
    // its answer), so the answers are the ones one build after another
    // would get. (Building the first policy alone, for the others to take
    // its answers without waiting, measured slower on two cores.)
    let workers = crate::skills::parallel::workers().min(loaders.len().max(1));
    let built = crate::skills::parallel::each_in_order(&loaders, workers, &|(_, loader)| {
        loader.surveyed(cwd, root)
    });
    let mut out = Vec::with_capacity(built.len());
    for ((policy, _), answer) in loaders.into_iter().zip(built) {
        match answer {
            Ok((snapshot, reach)) => out.push(Surveyed {
                policy,
                snapshot,
                reach,
            }),
            Err(source) => return Err(SurveyError::Snapshot { policy, source }),
        }
    }
    match unbuilt {
        Some(e) => Err(e),
        None => Ok(out),
    }
}
