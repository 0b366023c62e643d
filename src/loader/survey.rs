//! What `survey` builds: one snapshot per policy of the same repository,
//! and the reach of each policy's on-access rules.
//!
//! Each policy is an ordinary build by a loader of its own, made from the
//! policy's builder as a one-shot command makes it: what the survey
//! answers for a policy is what that policy's snapshot answers alone. The
//! builds share nothing but the threads they run on, and each loader is
//! dropped with its build.

use std::path::Path;
use std::sync::Arc;

use super::LoaderBuilder;
use crate::access::RuleReach;
use crate::error::{BootstrapError, SnapshotError};
use crate::snapshot::{Snapshot, Tracing};

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
/// (at most eight), each thread setting up the loaders of the policies it
/// takes. The first error, in the order given, is the answer. Each loader
/// builds once, so a builder's [`parse_cache`](LoaderBuilder::parse_cache)
/// is set to 0.
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
    survey_each(policies, cwd, root, Tracing::On, &|surveyed| surveyed)
}

/// [`survey`], each policy's answer given to `each` on the thread that
/// built it: what a caller keeps of a snapshot is made, and the rest
/// dropped, side by side too. Under [`Tracing::Off`] the builds record no
/// paths and the snapshots `each` gets have no fingerprint: for a caller
/// that only sums them up.
pub(crate) fn survey_each<T: Send>(
    policies: impl IntoIterator<Item = (String, LoaderBuilder)>,
    cwd: &Path,
    root: Option<&Path>,
    tracing: Tracing,
    each: &(dyn Fn(Surveyed) -> T + Sync),
) -> Result<Vec<T>, SurveyError> {
    let jobs: Vec<(String, LoaderBuilder)> = policies.into_iter().collect();
    if jobs.is_empty() {
        return Ok(Vec::new());
    }
    // Built side by side, each thread taking the next policy. The loaders
    // keep one policy memo between them: a shipped policy (most of them
    // lay a file over `lisa`) is parsed and merged once per survey.
    let memo = std::sync::Arc::new(crate::policy::Memo::default());
    let workers = crate::skills::parallel::workers().min(jobs.len());
    let built = crate::skills::parallel::each_in_order(jobs, workers, &|(policy, builder)| {
        let builder = builder.policy_memo(std::sync::Arc::clone(&memo));
        let loader = match builder.parse_cache(0).build() {
            Ok(loader) => loader,
            Err(source) => return Err(SurveyError::Bootstrap { policy, source }),
        };
        match loader.surveyed(cwd, root, tracing) {
            Ok((snapshot, reach)) => Ok(each(Surveyed {
                policy,
                snapshot,
                reach,
            })),
            Err(source) => Err(SurveyError::Snapshot { policy, source }),
        }
    });
    // The first error in the order given is the answer.
    built.into_iter().collect()
}
