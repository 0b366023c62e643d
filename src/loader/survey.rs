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

/// What a survey looks at: the cwd alone, or every folder of the
/// repository a harness would read from as a cwd.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Scope {
    /// Every folder of the repository that holds a file or folder some
    /// surveyed policy reads at a level (an instruction file's name, the
    /// first folder of a rule file's or a repository skill source's path),
    /// the cwd first.
    #[default]
    Repo,
    /// The cwd alone.
    Cwd,
}

/// The most folders a [`Scope::Repo`] survey takes as cwds by default (the
/// cwd besides); past it the survey says it is incomplete.
pub const MAX_SURVEY_FOLDERS: usize = 256;

/// What [`survey_scope_each`] made: per policy (in the order given), what
/// `each` made of each folder (in [`folders`](Self::folders) order).
pub(crate) struct Scoped<T> {
    /// The folders surveyed, the cwd first.
    pub folders: Vec<std::path::PathBuf>,
    /// Whether the repository walk stopped short.
    pub capped: bool,
    /// Per policy, per folder.
    pub parts: Vec<Vec<T>>,
}

/// [`survey_each`] over the folders `scope` names: the cwd (in the root
/// given), then, for [`Scope::Repo`], every other folder of the repository
/// the first policy finds from the cwd that some policy reads from (see
/// [`Wanted`]), each in that repository. One loader per policy serves
/// every folder.
pub(crate) fn survey_scope_each<T: Send>(
    policies: impl IntoIterator<Item = (String, LoaderBuilder)>,
    cwd: &Path,
    root: Option<&Path>,
    scope: Scope,
    max_folders: usize,
    tracing: Tracing,
    each: &(dyn Fn(Surveyed) -> T + Sync),
) -> Result<Scoped<T>, SurveyError> {
    let mut loaders = Vec::new();
    for (policy, builder) in policies {
        match builder.build() {
            Ok(loader) => loaders.push((policy, loader)),
            Err(source) => return Err(SurveyError::Bootstrap { policy, source }),
        }
    }
    let mut folders = vec![crate::vocab::home::normalize(cwd)];
    let mut capped = false;
    let mut repo_root: Option<std::path::PathBuf> = None;
    if scope == Scope::Repo
        && let Some((first, loader)) = loaders.first()
    {
        let fail = |source| SurveyError::Snapshot {
            policy: first.clone(),
            source,
        };
        let mut held = Vec::new();
        for (_, l) in &loaders {
            held.push(l.policy().map_err(fail)?);
        }
        let wanted = super::walk::Wanted::of(held.iter().map(|p| p.as_ref()));
        let (snap, _) = loader.surveyed(cwd, root, Tracing::Off).map_err(fail)?;
        let walked = loader
            .survey_walk(&snap, &wanted, max_folders)
            .map_err(fail)?;
        capped = walked.capped;
        for f in walked.folders {
            if !folders.contains(&f) {
                folders.push(f);
            }
        }
        repo_root = Some(snap.repo_root.clone());
    }
    let workers = crate::skills::parallel::workers().min(loaders.len().max(1));
    let folders_ref = &folders;
    let repo_root_ref = repo_root.as_deref();
    let built = crate::skills::parallel::each_in_order(loaders, workers, &|(policy, loader)| {
        let mut made = Vec::with_capacity(folders_ref.len());
        for (i, folder) in folders_ref.iter().enumerate() {
            // The cwd in the root given; the others in the repository the
            // cwd is in.
            let r = if i == 0 { root } else { repo_root_ref };
            match loader.surveyed(folder, r, tracing) {
                Ok((snapshot, reach)) => made.push(each(Surveyed {
                    policy: policy.clone(),
                    snapshot,
                    reach,
                })),
                Err(source) => return Err(SurveyError::Snapshot { policy, source }),
            }
        }
        Ok(made)
    });
    let parts = built.into_iter().collect::<Result<Vec<_>, _>>()?;
    Ok(Scoped {
        folders,
        capped,
        parts,
    })
}
