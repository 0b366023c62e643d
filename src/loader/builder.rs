//! The bootstrap every embedder needs: which home root, which policy, and a
//! loader built from both.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use super::{DEFAULT_CACHE_ENTRIES, DEFAULT_HANDLE_BUDGET, Loader};
use crate::error::BootstrapError;
use crate::policy::keys::ROOTS;
use crate::policy::{HOME_POLICY_FILE, Layer, Policy, PolicyError, PolicySource};
use crate::sandbox::{self, Stamp};

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
/// assert_eq!(loader.home().as_deref(), Some(home.path()));
/// assert_eq!(loader.policy().unwrap().instructions.budget_bytes, 1000);
/// ```
#[must_use]
pub struct LoaderBuilder {
    bootstrap: Bootstrap,
    policy: Option<Policy>,
    capacity: usize,
    racy_window: Duration,
    handle_budget: usize,
    parse_entries: usize,
}

/// The settings a loader keeps from its builder so that it can load its
/// policy again when a policy file changes.
pub(super) struct Bootstrap {
    /// The explicit home root, if any.
    home: Option<PathBuf>,
    /// The command line's policy file, if any.
    policy_file: Option<PathBuf>,
    /// The shipped policy that stands for the built-in one (`--policy
    /// NAME`), if any.
    base: Option<String>,
    /// Whether the home's `context-policy.toml` is read (true but for a
    /// one-run bypass of a broken file).
    home_policy: bool,
    /// How variables of the home candidates are read.
    env: Env,
}

/// The outcome of one load of the layered policy.
pub(super) struct Loaded {
    /// The policy files read (or looked for), each with its stamp taken
    /// just before it was read: the policy file, then the home's policy file
    /// when the home is known. A change to any of them calls for another
    /// load.
    pub(super) files: Vec<(PathBuf, Stamp)>,
    /// When the load began: a stamp this recent cannot vouch for the content
    /// read.
    pub(super) started: SystemTime,
    /// The policy and the home root, or why they could not be had.
    pub(super) result: Result<(Policy, Option<PathBuf>), BootstrapError>,
}

impl Bootstrap {
    /// The home root this bootstrap would use with `policy`'s candidates.
    fn home_for(&self, policy: &Policy) -> Option<PathBuf> {
        match &self.home {
            Some(explicit) => Some(crate::vocab::home::normalize(explicit)),
            None => crate::vocab::home::first_candidate(
                policy.roots.home.iter().map(|c| c.get_ref().as_str()),
                &*self.env,
            ),
        }
    }

    /// The lowest layer: the shipped policy named, else the built-in one.
    fn base_source(&self) -> Result<PolicySource, BootstrapError> {
        match &self.base {
            None => Ok(PolicySource::builtin()),
            Some(name) => PolicySource::shipped(name)
                .ok_or_else(|| BootstrapError::UnknownPolicy { name: name.clone() }),
        }
    }

    /// Loads the layered policy: the policy file (for the home candidates),
    /// the home, the home's policy file, and the merge of all of them. The
    /// files are read even when an earlier one is broken, as far as the home
    /// can be told, so that each is watched.
    pub(super) fn load(&self) -> Loaded {
        let started = SystemTime::now();
        let mut files = Vec::new();
        let file = match &self.policy_file {
            Some(path) => {
                files.push((path.clone(), sandbox::user_file_stamp(path)));
                PolicySource::read(Layer::CommandLine, path, true)
            }
            None => Ok(None),
        };
        // Where the home is comes from the layers that do not live in it; a
        // broken policy file leaves only an explicit home known.
        let base = self.base_source();
        // The policy of those layers, kept: when the home holds no policy
        // file it is the whole policy, and building it again would cost
        // as much as the first time.
        let mut outside_policy = None;
        let home = match (&file, &base) {
            (Ok(file), Ok(base)) => {
                let mut outside = vec![base.clone()];
                outside.extend(file.clone());
                Policy::from_sources(&outside)
                    .map(|p| {
                        let home = self.home_for(&p);
                        outside_policy = Some(p);
                        home
                    })
                    .map_err(BootstrapError::from)
            }
            _ => Ok(self.home.as_deref().map(crate::vocab::home::normalize)),
        };
        let home_file = match &home {
            _ if !self.home_policy => None,
            Ok(home) => home.as_ref().map(|h| h.join(HOME_POLICY_FILE)),
            Err(_) => self
                .home
                .as_deref()
                .map(|h| crate::vocab::home::normalize(h).join(HOME_POLICY_FILE)),
        };
        if let Some(path) = &home_file {
            files.push((path.clone(), sandbox::user_file_stamp(path)));
        }
        let result = (|| {
            let file = file?;
            let home = home?;
            let mut sources = vec![base?];
            let home_layer = match &home_file {
                Some(path) => PolicySource::read(Layer::Home, path, false)?,
                None => None,
            };
            let mut policy = match (home_layer, outside_policy) {
                // The same layers as the policy that found the home.
                (None, Some(same)) => same,
                (home_layer, _) => {
                    sources.extend(home_layer);
                    sources.extend(file);
                    Policy::from_sources(&sources)?
                }
            };
            policy.locate_named_roots(&*self.env);
            if policy
                .definition(ROOTS.home)
                .is_some_and(|d| d.layer == Layer::Home)
            {
                let invalid = policy.invalid_value(
                    ROOTS.home,
                    "the home's own policy cannot set `roots.home`: it was read from the home \
                     those candidates would replace",
                );
                return Err(BootstrapError::Policy(PolicyError::Invalid(invalid)));
            }
            Ok((policy, home))
        })();
        Loaded {
            files,
            started,
            result,
        }
    }
}

impl Default for LoaderBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for LoaderBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoaderBuilder")
            .field("home", &self.bootstrap.home)
            .field("policy_file", &self.bootstrap.policy_file)
            .field("capacity", &self.capacity)
            .field("racy_window", &self.racy_window)
            .field("handle_budget", &self.handle_budget)
            .field("parse_entries", &self.parse_entries)
            .finish_non_exhaustive()
    }
}

impl LoaderBuilder {
    /// A builder reading the process's environment, with the default cache
    /// size and racy window.
    pub fn new() -> Self {
        Self {
            bootstrap: Bootstrap {
                home: None,
                policy_file: None,
                base: None,
                home_policy: true,
                env: Box::new(|name| std::env::var_os(name)),
            },
            policy: None,
            capacity: DEFAULT_CACHE_ENTRIES,
            racy_window: sandbox::RACY_WINDOW,
            handle_budget: DEFAULT_HANDLE_BUDGET,
            parse_entries: super::PARSE_CACHE_ENTRIES,
        }
    }

    /// Uses `dir` as the home root, whatever the policy's candidates say.
    /// A relative path is taken as it is; pass an absolute one.
    pub fn home(mut self, dir: impl Into<PathBuf>) -> Self {
        self.bootstrap.home = Some(dir.into());
        self
    }

    /// Lays this policy file over the built-in and home policies (the
    /// command line's `--policy FILE`). It must exist.
    pub fn policy_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.bootstrap.policy_file = Some(path.into());
        self
    }

    /// Uses the shipped policy `name` (one of
    /// [`SHIPPED_NAMES`](crate::policy::SHIPPED_NAMES)) in place of the built-in one, as
    /// `--policy NAME` does. The home policy and any
    /// [`policy_file`](Self::policy_file) are still laid over it.
    pub fn shipped_policy(mut self, name: impl Into<String>) -> Self {
        self.bootstrap.base = Some(name.into());
        self
    }

    /// Whether to read the home's `context-policy.toml` (default true).
    /// `false` skips it, e.g. to run once past a broken one
    /// (`--no-home-policy`).
    pub fn home_policy(mut self, read: bool) -> Self {
        self.bootstrap.home_policy = read;
        self
    }

    /// Uses this policy as it is: no policy file is read (nor watched), and
    /// the home root is the explicit one or the first of this policy's
    /// candidates.
    pub fn policy(mut self, policy: Policy) -> Self {
        self.policy = Some(policy);
        self
    }

    /// Reads environment variables through `env` instead of the process's
    /// environment (tests, and servers that resolve per user). A variable
    /// that is set but empty counts as unset.
    pub fn env(mut self, env: impl Fn(&str) -> Option<OsString> + Send + Sync + 'static) -> Self {
        self.bootstrap.env = Box::new(env);
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
    /// twice within one tick, and what tests use to avoid waiting. The
    /// window applies to the policy files too.
    pub fn racy_window(mut self, window: Duration) -> Self {
        self.racy_window = window;
        self
    }

    /// Keeps at most `handles` root directories open (default
    /// [`DEFAULT_HANDLE_BUDGET`]; at least one). Each repository root and
    /// the home root is one open file descriptor; the least recently used
    /// are closed first, and a cached snapshot whose root was closed opens
    /// it again when it is next checked. Out of descriptors all the same
    /// (a low `ulimit -n`), the loader closes every handle and tries once
    /// more before failing with
    /// [`SnapshotError::ResourceExhausted`](crate::SnapshotError::ResourceExhausted).
    pub fn handle_budget(mut self, handles: usize) -> Self {
        self.handle_budget = handles;
        self
    }

    /// Keeps at most `entries` parsed frontmatters in memory, by content
    /// (default 16,384): a later build meets an unchanged `SKILL.md`
    /// without parsing it again. 0 keeps none, which suits a loader that
    /// builds once (a command-line run): the home's frontmatter memo file
    /// still spares the next process the parsing.
    pub fn parse_cache(mut self, entries: usize) -> Self {
        self.parse_entries = entries;
        self
    }

    /// Checks that an explicit home root is a directory (a typo would
    /// silently drop the home policy and every home file).
    fn check_explicit_home(&self) -> Result<(), BootstrapError> {
        // A shipped policy name that names nothing is the caller's mistake,
        // not a file that may be fixed later: refused at once.
        self.bootstrap.base_source()?;
        let Some(explicit) = &self.bootstrap.home else {
            return Ok(());
        };
        let missing = |source| BootstrapError::MissingHome {
            path: explicit.clone(),
            source,
        };
        match sandbox::stat_directory(explicit).map(|s| s.is_dir()) {
            Ok(true) => Ok(()),
            Ok(false) => Err(missing(None)),
            Err(e) => Err(missing(Some(e))),
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
            let home = self.bootstrap.home_for(policy);
            let mut policy = policy.clone();
            policy.locate_named_roots(&*self.bootstrap.env);
            return Ok((policy, home));
        }
        self.check_explicit_home()?;
        self.bootstrap.load().result
    }

    /// Resolves the home root, loads the policy, and builds the loader.
    ///
    /// A loader built from policy files (no ready [`policy`](Self::policy))
    /// watches them: before each call it compares a `stat` of the home's
    /// `context-policy.toml` and of the [`policy_file`](Self::policy_file)
    /// with what it read, and loads the policy again when either moved (or is
    /// too recent to vouch for its content). A policy that changed empties
    /// the snapshot cache. An edit that makes the policy invalid does not
    /// stop the loader: every call fails with
    /// [`SnapshotError::PolicyInvalid`](crate::SnapshotError::PolicyInvalid)
    /// until the file is fixed.
    pub fn build(self) -> Result<Loader, BootstrapError> {
        if let Some(policy) = &self.policy {
            let home = self.bootstrap.home_for(policy);
            let mut policy = policy.clone();
            policy.locate_named_roots(&*self.bootstrap.env);
            return Ok(Loader::fixed(
                policy,
                home,
                self.capacity,
                self.racy_window,
                self.handle_budget,
            )
            .with_parse_entries(self.parse_entries));
        }
        self.check_explicit_home()?;
        let mut loaded = self.bootstrap.load();
        // Unlike `build_lenient`, an invalid policy at the start is an error.
        loaded.result = Ok(loaded.result?);
        Ok(self.watching(loaded))
    }

    /// Like [`build`](Self::build), but an invalid (or unreadable) policy
    /// does not stop it: the loader starts, every call fails with
    /// [`SnapshotError::PolicyInvalid`](crate::SnapshotError::PolicyInvalid)
    /// carrying the diagnostic, and the first call after the files are fixed
    /// succeeds. What a long-lived server wants. Only an explicit home that
    /// is not a directory is still an error.
    pub fn build_lenient(self) -> Result<Loader, BootstrapError> {
        if self.policy.is_some() {
            return self.build();
        }
        self.check_explicit_home()?;
        let loaded = self.bootstrap.load();
        Ok(self.watching(loaded))
    }

    /// The loader that watches the policy files `loaded` read, with this
    /// builder's settings.
    fn watching(self, loaded: Loaded) -> Loader {
        let parse_entries = self.parse_entries;
        Loader::watching(
            self.bootstrap,
            loaded,
            self.capacity,
            self.racy_window,
            self.handle_budget,
        )
        .with_parse_entries(parse_entries)
    }
}
