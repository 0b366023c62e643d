//! The policy a loader works under: fixed for the loader's life, or loaded
//! from the user's policy files and loaded again whenever one of them moves.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

use super::bootstrap::{Bootstrap, Loaded};
use crate::error::{PolicyFailure, SnapshotError};
use crate::policy::Policy;
use crate::sandbox::{self, Stamp};

/// The policy in force for one call, and the home root that goes with it.
#[derive(Debug, Clone)]
pub(super) struct InForce {
    /// The policy.
    pub(super) policy: Arc<Policy>,
    /// The home root's path.
    pub(super) home: Option<PathBuf>,
    /// Changes whenever the policy or the home differs from the previous
    /// one in force: snapshots cached under another generation are not
    /// served.
    pub(super) generation: u64,
}

/// Where the policy comes from.
pub(super) enum Policies {
    /// Given once ([`crate::Loader::new`], a ready policy in the builder).
    Fixed(InForce),
    /// Read from the user's policy files, and read again when they move.
    Watched(Box<Watched>),
}

/// A watched policy: how to load it, and what the last load found.
pub(super) struct Watched {
    bootstrap: Bootstrap,
    racy_window: Duration,
    state: Mutex<State>,
}

/// The last load.
struct State {
    /// The policy and home, or the error to answer every call with.
    current: Result<InForce, PolicyFailure>,
    /// The files read and their stamps, taken before reading.
    files: Vec<(PathBuf, Stamp)>,
    /// When the load began.
    started: SystemTime,
    /// The digest, home and warnings of the last policy in force, and its
    /// generation.
    last: Last,
}

/// The digest, home and warnings of a policy in force, and its generation.
type Last = Option<(u128, Option<PathBuf>, Vec<String>, u64)>;

/// What a policy's warnings say, where: part of what a snapshot built under
/// it answers (its `warnings`), though not of the policy's values. A file
/// rewritten from a deprecated spelling to the new one gives the same
/// digest, and must still not be answered from snapshots that warn.
fn warnings_of(policy: &Policy) -> Vec<String> {
    policy
        .deprecations()
        .iter()
        .map(|p| {
            let (line, column) = p.line_column();
            format!("{}:{line}:{column}: {}", p.file_name(), p.message)
        })
        .collect()
}

impl State {
    /// The state after a load, `last` being the policy in force before it:
    /// a new generation begins when the policy, its warnings or the home
    /// changed.
    fn new(loaded: Loaded, mut last: Last) -> Self {
        let current = match loaded.result {
            Ok((policy, home)) => {
                let warnings = warnings_of(&policy);
                let generation = match &last {
                    Some((digest, last_home, last_warnings, generation))
                        if *digest == policy.digest()
                            && *last_home == home
                            && *last_warnings == warnings =>
                    {
                        *generation
                    }
                    Some((_, _, _, generation)) => generation + 1,
                    None => 0,
                };
                last = Some((policy.digest(), home.clone(), warnings, generation));
                Ok(InForce {
                    policy,
                    home,
                    generation,
                })
            }
            Err(e) => Err(PolicyFailure::new(e)),
        };
        State {
            current,
            files: loaded.files,
            started: loaded.started,
            last,
        }
    }

    /// Whether a policy file moved since it was read, or was stamped too
    /// close to its reading to vouch for what was read.
    fn stale(&self, racy_window: Duration) -> bool {
        self.files.iter().any(|(path, stamp)| {
            stamp.is_racy(self.started, racy_window) || sandbox::user_file_stamp(path) != *stamp
        })
    }
}

impl Policies {
    /// What the policy layer keeps for a watched policy's loads (`None`
    /// for a policy given once).
    pub(super) fn memo(&self) -> Option<std::sync::Arc<crate::policy::Memo>> {
        match self {
            Policies::Fixed(_) => None,
            Policies::Watched(w) => Some(std::sync::Arc::clone(&w.bootstrap.memo)),
        }
    }

    /// A policy loaded from files, to be watched.
    pub(super) fn watched(bootstrap: Bootstrap, loaded: Loaded, racy_window: Duration) -> Self {
        let state = State::new(loaded, None);
        Policies::Watched(Box::new(Watched {
            bootstrap,
            racy_window,
            state: Mutex::new(state),
        }))
    }

    /// The policy in force now: for a watched policy, loaded again first if
    /// a file moved.
    pub(super) fn in_force(&self) -> Result<InForce, SnapshotError> {
        match self {
            Policies::Fixed(fixed) => Ok(fixed.clone()),
            Policies::Watched(w) => {
                let mut state = w.lock();
                if state.stale(w.racy_window) {
                    let loaded = w.bootstrap.load();
                    let last = state.last.take();
                    *state = State::new(loaded, last);
                }
                state.current.clone().map_err(SnapshotError::PolicyInvalid)
            }
        }
    }

    /// The home root of the policy last in force, without looking at the
    /// files.
    pub(super) fn last_home(&self) -> Option<PathBuf> {
        match self {
            Policies::Fixed(fixed) => fixed.home.clone(),
            Policies::Watched(w) => w.lock().last.as_ref().and_then(|(_, h, _, _)| h.clone()),
        }
    }
}

impl Watched {
    fn lock(&self) -> MutexGuard<'_, State> {
        // Every update replaces whole fields: a poisoned state is sound.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}
