//! What the command line (and any embedder) does with approvals: list them,
//! show what changed, approve exactly what was shown, revoke. Each command
//! rebuilds a snapshot for review (above the build, so it sits above
//! `snapshot`); the gate that runs inside a build is [`crate::trust`].

use std::path::{Path, PathBuf};

use crate::error::{ErrorCode, SnapshotError};
use crate::policy::Policy;
use crate::sandbox::{self, Handles, StoreIoError};
use crate::skills::ParseCache;
use crate::trust::{
    Approval, ItemKind, Selection, StoreFile, StoreProblem, TrustItem, TrustStatus, hex, repo_key,
};

/// Why a trust command failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TrustError {
    /// The snapshot could not be built (bad cwd, policy...).
    #[error(transparent)]
    Snapshot(#[from] SnapshotError),
    /// There is no home root to keep the store in.
    #[error("there is no home root to keep the trust store in")]
    NoHome,
    /// The store cannot be used; nothing in it counts as approved.
    #[error(
        "the trust store {} cannot be used: {reason}",
        crate::vocab::paths::shown(path)
    )]
    Store {
        /// The store.
        path: PathBuf,
        /// Why.
        reason: StoreProblem,
    },
    /// The state folder the store is kept in is not used: another user
    /// owns it or a file of it, or others may write it (see
    /// [`WarningKind::UnsafeState`](crate::vocab::warning::WarningKind::UnsafeState)).
    /// Nothing was read from it or written to it.
    #[error(
        "the trust store cannot be kept in {}: {reason}",
        crate::vocab::paths::shown(path)
    )]
    UnsafeState {
        /// The state folder, or the file of it that decided.
        path: PathBuf,
        /// Why, as the snapshot's warning says it.
        reason: String,
    },
    /// Writing the change would make the store larger than the largest store
    /// read back, which would void every approval: nothing was written.
    #[error(
        "approving this would make the trust store {} {bytes} bytes, over the {limit} bytes it can be read at; nothing was approved",
        crate::vocab::paths::shown(path)
    )]
    StoreFull {
        /// The store.
        path: PathBuf,
        /// The size it would have had.
        bytes: u64,
        /// The largest store read.
        limit: u64,
    },
    /// A path named is not a project item of this repository.
    #[error("{} is not a project instruction file or skill seen from here", crate::vocab::paths::shown(.0))]
    NotAnItem(PathBuf),
    /// A skill that cannot be approved as it is: more files or bytes than a
    /// skill may have (512 files, 16 MiB), or a file name that is not UTF-8.
    #[error(
        "{} cannot be approved: {reason}; nothing was approved",
        crate::vocab::paths::shown(path)
    )]
    Unapprovable {
        /// The skill's `SKILL.md`.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The content is no longer the one the user was shown.
    #[error(
        "{} changed since it was shown (expected {expected}, found {found}); nothing was approved",
        crate::vocab::paths::shown(path)
    )]
    ChangedSinceShown {
        /// The item.
        path: PathBuf,
        /// The hash given.
        expected: String,
        /// The hash now (`-`: gone).
        found: String,
    },
}

impl TrustError {
    /// The one table of this error's codes: its diagnostic code (`None`:
    /// the wrapped snapshot error's own), its help, and its wire code.
    /// Exhaustive, so a new variant cannot go without them.
    fn codes(&self) -> (Option<&'static str>, Option<&'static str>, ErrorCode) {
        match self {
            Self::Snapshot(e) => (None, None, e.wire_code()),
            Self::NoHome => (
                Some("trust::no-home"),
                Some("pass --home DIR or set LISA_HOME to an existing directory"),
                ErrorCode::TrustUnavailable,
            ),
            Self::Store { .. } => (
                Some("trust::store-invalid"),
                Some(
                    "nothing in it counts as approved; fix or remove the file, then approve again",
                ),
                ErrorCode::TrustStoreInvalid,
            ),
            Self::UnsafeState { .. } => (
                Some("trust::unsafe-state"),
                Some(
                    "make the state folder and its files this user's alone (chown, chmod go-w), \
                     or remove a file another user put there; then approve again",
                ),
                ErrorCode::TrustUnavailable,
            ),
            Self::StoreFull { .. } => (
                Some("trust::store-full"),
                Some(
                    "the store keeps its approvals; revoke those you no longer need \
                     (`lisa-context trust revoke --repo` in a repository you are done with), then approve again",
                ),
                ErrorCode::TrustStoreFull,
            ),
            Self::NotAnItem(_) => (
                Some("trust::not-an-item"),
                Some("`lisa-context trust status` lists the items"),
                ErrorCode::TrustUnavailable,
            ),
            Self::Unapprovable { .. } => (
                Some("trust::unapprovable"),
                Some(
                    "a skill is approved whole, every file of its folder: bring it within 512 files \
                     and 16 MiB (and UTF-8 file names), then approve it",
                ),
                ErrorCode::TrustUnavailable,
            ),
            Self::ChangedSinceShown { .. } => (
                Some("trust::changed"),
                Some("run `lisa-context trust diff` again and approve what it shows"),
                ErrorCode::TrustUnavailable,
            ),
        }
    }

    /// The wire code of this error (`error.code` in `serve`'s responses,
    /// `code` of the Node binding's exceptions).
    pub fn wire_code(&self) -> ErrorCode {
        self.codes().2
    }
}

impl ErrorCode {
    /// The code of a trust error (see [`TrustError::wire_code`]).
    pub fn of_trust(e: &TrustError) -> Self {
        e.wire_code()
    }
}

impl miette::Diagnostic for TrustError {
    fn code<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
        match self {
            Self::Snapshot(e) => e.code(),
            other => other
                .codes()
                .0
                .map(|c| Box::new(c) as Box<dyn std::fmt::Display>),
        }
    }

    fn help<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
        match self {
            Self::Snapshot(e) => e.help(),
            other => other
                .codes()
                .1
                .map(|h| Box::new(h) as Box<dyn std::fmt::Display>),
        }
    }

    fn severity(&self) -> Option<miette::Severity> {
        match self {
            Self::Snapshot(e) => e.severity(),
            _ => None,
        }
    }

    fn url<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
        match self {
            Self::Snapshot(e) => e.url(),
            _ => None,
        }
    }

    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        match self {
            Self::Snapshot(e) => e.source_code(),
            _ => None,
        }
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = miette::LabeledSpan> + '_>> {
        match self {
            Self::Snapshot(e) => e.labels(),
            _ => None,
        }
    }

    fn related<'a>(&'a self) -> Option<Box<dyn Iterator<Item = &'a dyn miette::Diagnostic> + 'a>> {
        match self {
            Self::Snapshot(e) => e.related(),
            _ => None,
        }
    }

    fn diagnostic_source(&self) -> Option<&dyn miette::Diagnostic> {
        match self {
            Self::Snapshot(e) => e.diagnostic_source(),
            _ => None,
        }
    }
}

/// Where a trust command runs: the policy, the roots and the loader's
/// handles and parse cache.
pub(crate) struct Scope<'a> {
    pub(crate) policy: &'a Policy,
    pub(crate) home: Option<&'a Path>,
    pub(crate) cwd: &'a Path,
    pub(crate) root: Option<&'a Path>,
    pub(crate) handles: &'a Handles,
    pub(crate) cache: &'a ParseCache,
}

/// Builds the review for `cwd`: every project item, texts kept.
fn review(scope: &Scope<'_>) -> Result<TrustStatus, TrustError> {
    let Scope {
        policy,
        home,
        cwd,
        root,
        handles,
        cache,
    } = *scope;
    let review = crate::snapshot::review(policy, home, cwd, root, handles, cache)?;
    let store = review
        .state
        .as_ref()
        .map(|h| h.join(&policy.trust.store_file));
    if let Some(w) = review.unsafe_state {
        return Err(TrustError::UnsafeState {
            path: w.path,
            reason: w.message,
        });
    }
    if let Some(reason) = review.store_error {
        return Err(TrustError::Store {
            path: store.unwrap_or_default(),
            reason,
        });
    }
    Ok(TrustStatus {
        repo_root: review.repo_root,
        store,
        items: review.items,
    })
}

/// The status of every project item seen from `cwd`.
pub(crate) fn status(scope: &Scope<'_>) -> Result<TrustStatus, TrustError> {
    review(scope)
}

fn store_error(path: &Path, e: StoreIoError) -> TrustError {
    TrustError::Store {
        path: path.to_path_buf(),
        reason: e.into(),
    }
}

/// Whether `item` is the one `path` names (a skill also by its folder).
fn names(item: &TrustItem, path: &Path) -> bool {
    let path = crate::vocab::home::normalize(path);
    item.path == path || (item.kind == ItemKind::Skill && item.path.parent() == Some(&path))
}

/// Runs `change` on the store under its lock, with a fresh review taken
/// under that lock.
fn locked_update<T>(
    scope: &Scope<'_>,
    change: impl FnOnce(&TrustStatus, &mut StoreFile) -> Result<T, TrustError>,
) -> Result<T, TrustError> {
    let first = review(scope)?;
    let (policy, handles) = (scope.policy, scope.handles);
    let (Some(state), Some(store_path)) = (policy.state_dir(scope.home), first.store.clone())
    else {
        return Err(TrustError::NoHome);
    };
    let shield = sandbox::Shield::of(policy);
    let attached = sandbox::attach(
        handles,
        None,
        &[],
        &[],
        Some(&state),
        &first.repo_root,
        &shield,
    )
    .map_err(|source| SnapshotError::from(sandbox::RootsError::open_root(state.clone(), source)))?;
    let Some(home_root) = attached.get(crate::vocab::origin::RootId::State) else {
        return Err(TrustError::NoHome);
    };
    let rel = Path::new(&policy.trust.store_file);
    let mut out = None;
    let result = sandbox::update_store(home_root, rel, |now| {
        let mut store =
            StoreFile::parse(now.bytes.as_deref()).map_err(|reason| TrustError::Store {
                path: store_path.clone(),
                reason,
            })?;
        // Under the lock: what the files hold now is what gets recorded.
        let fresh = review(scope)?;
        out = Some(change(&fresh, &mut store)?);
        store.compact();
        let bytes = store.to_bytes();
        // A store that could not be read back would void every approval:
        // refuse before anything is written.
        let size = bytes.len() as u64;
        if size > sandbox::MAX_STORE_BYTES {
            return Err(TrustError::StoreFull {
                path: store_path.clone(),
                bytes: size,
                limit: sandbox::MAX_STORE_BYTES,
            });
        }
        Ok::<_, TrustError>(bytes)
    });
    result.map_err(|e| store_error(&store_path, e))??;
    out.ok_or(TrustError::NoHome)
}

/// Approves `selection`; returns the items approved, as they were before
/// (their `current_hash` is what was recorded).
pub(crate) fn approve(
    scope: &Scope<'_>,
    selection: &Selection,
    now: u64,
) -> Result<Vec<TrustItem>, TrustError> {
    let policy = scope.policy;
    locked_update(scope, |fresh, store| {
        let chosen: Vec<&TrustItem> = match selection {
            // Every pending item that can be approved (a skill that cannot
            // stays pending, saying why).
            Selection::All => fresh
                .items
                .iter()
                .filter(|i| i.state.is_pending() && i.unapprovable.is_none())
                .collect(),
            Selection::Paths(paths) => {
                let mut chosen = Vec::new();
                for (path, expected) in paths {
                    let Some(item) = fresh.items.iter().find(|i| names(i, path)) else {
                        return Err(TrustError::NotAnItem(path.clone()));
                    };
                    if let Some(reason) = &item.unapprovable {
                        return Err(TrustError::Unapprovable {
                            path: item.path.clone(),
                            reason: reason.clone(),
                        });
                    }
                    let found = item.current_hash.clone().unwrap_or_else(|| "-".into());
                    if let Some(expected) = expected
                        && !expected.eq_ignore_ascii_case(&found)
                    {
                        return Err(TrustError::ChangedSinceShown {
                            path: item.path.clone(),
                            expected: expected.clone(),
                            found,
                        });
                    }
                    chosen.push(item);
                }
                chosen
            }
        };
        let digest = hex(policy.digest());
        let repo = store
            .repositories
            .entry(repo_key(&fresh.repo_root))
            .or_default();
        for item in &chosen {
            match &item.current_hash {
                Some(hash) => {
                    repo.insert(
                        item.rel.clone(),
                        Approval {
                            kind: item.kind,
                            hash: hash.clone(),
                            // The hash is always kept; the text only when
                            // there is one and it is small enough (it
                            // serves `trust diff`).
                            text: item
                                .current_text
                                .as_ref()
                                .filter(|t| crate::trust::fits(t))
                                .cloned(),
                            // A skill's approval keeps its manifest:
                            // every file, digest for digest.
                            files: item.manifest.clone(),
                            approved_at: now,
                            policy_digest: digest.clone(),
                            covers: None,
                        },
                    );
                }
                None => {
                    repo.remove(&item.rel);
                }
            }
        }
        if repo.is_empty() {
            store.repositories.remove(&repo_key(&fresh.repo_root));
        }
        Ok(chosen.into_iter().cloned().collect())
    })
}

/// Revokes the approvals of the items at `paths` (`None`: every approval of
/// the repository); returns the store keys removed.
pub(crate) fn revoke(
    scope: &Scope<'_>,
    paths: Option<&[PathBuf]>,
) -> Result<Vec<PathBuf>, TrustError> {
    locked_update(scope, |fresh, store| {
        let key = repo_key(&fresh.repo_root);
        let Some(repo) = store.repositories.get_mut(&key) else {
            return Ok(Vec::new());
        };
        let mut removed = Vec::new();
        match paths {
            None => {
                removed.extend(repo.keys().map(|k| fresh.repo_root.join(k)));
                repo.clear();
            }
            Some(paths) => {
                for path in paths {
                    let path = crate::vocab::home::normalize(path);
                    let Ok(rel) = path.strip_prefix(&fresh.repo_root) else {
                        return Err(TrustError::NotAnItem(path));
                    };
                    let rel = crate::trust::key(rel);
                    let skill = format!("{rel}/{}", crate::skills::SKILL_FILE);
                    let hit = [rel, skill].into_iter().find(|k| repo.contains_key(k));
                    let Some(hit) = hit else {
                        return Err(TrustError::NotAnItem(path));
                    };
                    repo.remove(&hit);
                    removed.push(fresh.repo_root.join(hit));
                }
            }
        }
        if repo.is_empty() {
            store.repositories.remove(&key);
        }
        Ok(removed)
    })
}
