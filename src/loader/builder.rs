//! The bootstrap every embedder needs: which home root, which policy, and a
//! loader built from both.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use super::{DEFAULT_CACHE_ENTRIES, Loader};
use crate::error::BootstrapError;
use crate::policy::{Layer, Policy, PolicyError, PolicySource};
use crate::sandbox;

/// How the loader reads environment variables (for `$NAME` and `~` in the
/// policy's home candidates).
type Env = Box<dyn Fn(&str) -> Option<OsString> + Send + Sync>;

/// Finds the home root, loads the layered policy from that same home, and
/// builds a [`Loader`].
///
/// The home root is, in order: the directory given to [`home`](Self::home);
/// else the first of the policy's `roots.home` candidates whose variables
/// are all set and non-empty (Lisa's policy lists `$LISA_HOME`, then
/// `~/.lisa`). The candidates are read from the layers that do not live in
/// the home (the built-in policy and any [`policy_file`](Self::policy_file)),
/// since the home's own policy cannot decide where the home is. The home's
/// `context-policy.toml` is then laid over the built-in policy, and the
/// policy file over both.
///
/// ```
/// use lisa_context::Loader;
///
/// let home = tempfile::tempdir().unwrap();
/// std::fs::write(
///     home.path().join("context-policy.toml"),
///     "version = 1\n[instructions]\nbudget-bytes = 1000\n",
/// ).unwrap();
/// let loader = Loader::builder()
///     .home(home.path())
///     .env(|_| None)
///     .build()
///     .unwrap();
/// assert_eq!(loader.home(), Some(home.path()));
/// assert_eq!(loader.policy().instructions.budget_bytes, 1000);
/// ```
#[must_use]
pub struct LoaderBuilder {
    home: Option<PathBuf>,
    policy_file: Option<PathBuf>,
    policy: Option<Policy>,
    env: Env,
    capacity: usize,
    racy_window: Duration,
}

impl Default for LoaderBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for LoaderBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoaderBuilder")
            .field("home", &self.home)
            .field("policy_file", &self.policy_file)
            .field("capacity", &self.capacity)
            .field("racy_window", &self.racy_window)
            .finish_non_exhaustive()
    }
}

impl LoaderBuilder {
    /// A builder reading the process's environment, with the default cache
    /// size and racy window.
    pub fn new() -> Self {
        Self {
            home: None,
            policy_file: None,
            policy: None,
            env: Box::new(|name| std::env::var_os(name)),
            capacity: DEFAULT_CACHE_ENTRIES,
            racy_window: sandbox::RACY_WINDOW,
        }
    }

    /// Uses `dir` as the home root, whatever the policy's candidates say.
    /// A relative path is taken as it is; pass an absolute one.
    pub fn home(mut self, dir: impl Into<PathBuf>) -> Self {
        self.home = Some(dir.into());
        self
    }

    /// Lays this policy file over the built-in and home policies (the
    /// command line's `--policy FILE`). It must exist.
    pub fn policy_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.policy_file = Some(path.into());
        self
    }

    /// Uses this policy as it is: no policy file is read, and the home root
    /// is the explicit one or the first of this policy's candidates.
    pub fn policy(mut self, policy: Policy) -> Self {
        self.policy = Some(policy);
        self
    }

    /// Reads environment variables through `env` instead of the process's
    /// environment (tests, and servers that resolve per user). A variable
    /// that is set but empty counts as unset.
    pub fn env(mut self, env: impl Fn(&str) -> Option<OsString> + Send + Sync + 'static) -> Self {
        self.env = Box::new(env);
        self
    }

    /// Keeps at most `entries` snapshots (least recently used go; at least
    /// one).
    pub fn capacity(mut self, entries: usize) -> Self {
        self.capacity = entries;
        self
    }

    /// How recent a file's timestamps may be before the loader re-reads it
    /// rather than trust its metadata (default [`RACY_WINDOW`](crate::RACY_WINDOW)).
    /// A zero window trusts any stamp older than the build that took it:
    /// right on file systems with nanosecond timestamps when nothing writes
    /// twice within one tick, and what tests use to avoid waiting.
    pub fn racy_window(mut self, window: Duration) -> Self {
        self.racy_window = window;
        self
    }

    /// The home root this builder would use with `policy`'s candidates.
    fn home_for(&self, policy: &Policy) -> Option<PathBuf> {
        match &self.home {
            Some(explicit) => Some(sandbox::normalize(explicit)),
            None => sandbox::first_candidate(
                policy.roots.home.iter().map(|c| c.get_ref().as_str()),
                &*self.env,
            ),
        }
    }

    /// Resolves the home root and loads the policy, without building a
    /// loader: `(policy, home)`.
    ///
    /// An explicit home must be a directory when the policy is read from it
    /// (a typo would silently drop the home policy and every home file); a
    /// home found through the candidates may be missing, and so may any home
    /// given with a ready [`policy`](Self::policy) (a server may see it
    /// created later).
    /// The home's own policy may not set `roots.home`: the home it names
    /// would not be the one the policy was read from.
    pub fn resolve(&self) -> Result<(Policy, Option<PathBuf>), BootstrapError> {
        if let Some(policy) = &self.policy {
            // A ready policy: the home is only a root, which may appear later.
            let home = self.home_for(policy);
            return Ok((policy.clone(), home));
        }
        if let Some(explicit) = &self.home {
            let missing = |source| BootstrapError::MissingHome {
                path: explicit.clone(),
                source,
            };
            match sandbox::is_user_directory(explicit) {
                Ok(true) => {}
                Ok(false) => return Err(missing(None)),
                Err(e) => return Err(missing(Some(e))),
            }
        }
        let file = match &self.policy_file {
            Some(path) => PolicySource::read(Layer::CommandLine, path, true)?,
            None => None,
        };
        // Where the home is comes from the layers that do not live in it.
        let mut outside = vec![PolicySource::builtin()];
        outside.extend(file.clone());
        let home = self.home_for(&Policy::from_sources(&outside)?);
        let mut sources = vec![PolicySource::builtin()];
        if let Some(h) = &home {
            sources.extend(PolicySource::read(
                Layer::Home,
                &h.join(crate::policy::HOME_POLICY_FILE),
                false,
            )?);
        }
        sources.extend(file);
        let policy = Policy::from_sources(&sources)?;
        if policy
            .definition("roots.home")
            .is_some_and(|d| d.layer == Layer::Home)
        {
            let invalid = policy.invalid_value(
                "roots.home",
                "the home's own policy cannot set `roots.home`: it was read from the home \
                 those candidates would replace",
            );
            return Err(BootstrapError::Policy(PolicyError::Invalid(invalid)));
        }
        Ok((policy, home))
    }

    /// Resolves the home root, loads the policy, and builds the loader.
    pub fn build(self) -> Result<Loader, BootstrapError> {
        let (policy, home) = self.resolve()?;
        Ok(Loader::from_parts(
            policy,
            home,
            self.capacity,
            self.racy_window,
        ))
    }
}
