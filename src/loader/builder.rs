//! The bootstrap every embedder needs: which home root, which policy, and a
//! loader built from both.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::bootstrap::{Bootstrap, Loaded};
use super::cache::{Loader, Membership};
use super::limits::{
    DEFAULT_CACHE_BYTES, DEFAULT_CACHE_ENTRIES, DEFAULT_HANDLE_BUDGET, MAX_CACHE_BYTES,
    MAX_CACHE_ENTRIES, MAX_HANDLE_BUDGET, MIN_CACHE_BYTES, PARSE_CACHE_ENTRIES,
};
use crate::error::BootstrapError;
use crate::policy::Policy;
use crate::sandbox::{self};

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
    cache_bytes: usize,
    group: Option<Membership>,
    racy_window: Duration,
    handle_budget: usize,
    parse_entries: usize,
    /// The home admitted by [`home_below`](Self::home_below), if any.
    admitted: Option<std::sync::Arc<sandbox::Admitted>>,
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
                admitted: None,
                memo: std::sync::Arc::default(),
            },
            policy: None,
            capacity: DEFAULT_CACHE_ENTRIES,
            cache_bytes: DEFAULT_CACHE_BYTES,
            group: None,
            racy_window: sandbox::RACY_WINDOW,
            handle_budget: DEFAULT_HANDLE_BUDGET,
            parse_entries: PARSE_CACHE_ENTRIES,
            admitted: None,
        }
    }

    /// Uses `dir` as the home root, whatever the policy's candidates say.
    /// A relative path is taken as it is; pass an absolute one. (It undoes
    /// an earlier [`home_below`](Self::home_below).)
    pub fn home(mut self, dir: impl Into<PathBuf>) -> Self {
        self.bootstrap.home = Some(dir.into());
        // A home given here is not one admitted below a directory of homes.
        self.bootstrap.admitted = None;
        self.admitted = None;
        self
    }

    /// Lays this policy file over the built-in and home policies (the
    /// command line's `--policy FILE`). It must exist.
    pub fn policy_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.bootstrap.policy_file = Some(path.into());
        self
    }

    /// Uses `home` as the home root after checking that a server may serve
    /// it: `home` (absolute, no `.` or `..`) lies below `under` (the
    /// directory of homes the server was given), every folder from `under`
    /// down to it is a real directory (not a link), and it belongs to this
    /// user (or root), as a repository marker must. What `serve` does with a
    /// request's `home` field.
    ///
    /// The rule holds at every call of the loader, not only here: the home
    /// is kept as the directory admitted (its device and inode), each call
    /// opens it again from `under` with no link followed and fails with
    /// [`SnapshotError::HomeRefused`](crate::SnapshotError::HomeRefused)
    /// unless it is still that directory and still this user's (see
    /// [`Loader::check_home`]), and every read and write of the home (its
    /// policy file, its files, the state kept in it) goes through a handle
    /// of that directory, never through the path again.
    ///
    /// ```
    /// let homes = tempfile::tempdir().unwrap();
    /// std::fs::create_dir(homes.path().join("u1")).unwrap();
    /// let ok = lisa_context::Loader::builder().home_below(homes.path(), &homes.path().join("u1"));
    /// assert!(ok.is_ok());
    /// let out = lisa_context::Loader::builder().home_below(homes.path(), std::path::Path::new("/etc"));
    /// assert!(out.is_err());
    /// ```
    pub fn home_below(self, under: &Path, home: &Path) -> Result<Self, BootstrapError> {
        let admitted =
            sandbox::Admitted::admit(under, home).map_err(|e| BootstrapError::HomeRefused {
                path: home.to_path_buf(),
                reason: e.reason,
            })?;
        let admitted = std::sync::Arc::new(admitted);
        let mut this = self.home(home);
        this.bootstrap.admitted = Some(std::sync::Arc::clone(&admitted));
        this.admitted = Some(admitted);
        Ok(this)
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

    /// Keeps at most `entries` snapshots (least recently used go; from 1 to
    /// [`Loader::MAX_CACHE_ENTRIES`], or [`build`](Self::build) refuses it).
    pub fn capacity(mut self, entries: usize) -> Self {
        self.capacity = entries;
        self
    }

    /// Keeps at most `bytes` of snapshots (as [`Loader::cached_bytes`]
    /// weighs them: texts, paths, traces), the least recently used going
    /// first; the entry count ([`capacity`](Self::capacity)) stays a second
    /// bound, and the newest snapshot is kept whatever it weighs. From
    /// [`Loader::MIN_CACHE_BYTES`] to [`Loader::MAX_CACHE_BYTES`] (default
    /// [`Loader::DEFAULT_CACHE_BYTES`]), or [`build`](Self::build) refuses
    /// it.
    pub fn cache_bytes(mut self, bytes: usize) -> Self {
        self.cache_bytes = bytes;
        self
    }

    /// Makes the loader keep what the policy layer computes in `memo`
    /// (see [`crate::policy::Memo`]): the loaders of a survey share one.
    pub(crate) fn policy_memo(mut self, memo: std::sync::Arc<crate::policy::Memo>) -> Self {
        self.bootstrap.memo = memo;
        self
    }

    /// Makes the loader one of `other`'s group, as a server of many homes
    /// wants: the loaders of a group keep their own policies, homes, nonce
    /// keys, trust stores and memo files, and never answer from each
    /// other's builds, but share
    ///
    /// * one snapshot cache, under one bound of entries and bytes (the
    ///   [`capacity`](Self::capacity) and [`cache_bytes`](Self::cache_bytes)
    ///   of the group's first loader; this builder's are not used), the
    ///   least recently used build going first whichever loader made it;
    /// * each instruction text, skill record and trace entry once, however
    ///   many cached builds show it;
    /// * parsed frontmatter, by content (a parse depends on the bytes and
    ///   the reading alone);
    /// * one budget of open directories ([`handle_budget`](Self::handle_budget)
    ///   is `other`'s): a handle is a directory opened by its absolute
    ///   path, the same capability whichever home asks;
    /// * once [`watched`](Loader::watched), one inotify instance (the
    ///   kernel allows 128 per user by default).
    ///
    /// ```
    /// use lisa_context::Loader;
    ///
    /// let homes = tempfile::tempdir().unwrap();
    /// std::fs::create_dir(homes.path().join("ada")).unwrap();
    /// std::fs::create_dir(homes.path().join("bob")).unwrap();
    /// let repo = tempfile::tempdir().unwrap();
    /// std::fs::create_dir(repo.path().join(".git")).unwrap();
    /// std::fs::write(repo.path().join("AGENTS.md"), "Run the tests.").unwrap();
    ///
    /// let ada = Loader::builder().home(homes.path().join("ada")).build().unwrap();
    /// let bob = Loader::builder().home(homes.path().join("bob")).share(&ada).build().unwrap();
    /// let (a, b) = (ada.snapshot(repo.path()).unwrap(), bob.snapshot(repo.path()).unwrap());
    /// // Each home's own build (framed with its own nonce), one copy of the
    /// // file's text.
    /// assert_ne!(a.prompt, b.prompt);
    /// assert!(std::sync::Arc::ptr_eq(&a.instruction_files[0].text, &b.instruction_files[0].text));
    /// assert_eq!((ada.cached_entries(), ada.group_cached_entries()), (1, 2));
    /// ```
    pub fn share(mut self, other: &Loader) -> Self {
        let membership = other.membership();
        if let Some(memo) = membership.memo() {
            self.bootstrap.memo = memo;
        }
        self.group = Some(membership);
        self
    }

    /// How recent a file's timestamps may be before the loader re-reads it
    /// rather than trust its metadata (default [`Loader::RACY_WINDOW`]).
    /// A zero window trusts any stamp older than the build that took it:
    /// right on file systems with nanosecond timestamps when nothing writes
    /// twice within one tick, and what tests use to avoid waiting. The
    /// window applies to the policy files too.
    pub fn racy_window(mut self, window: Duration) -> Self {
        self.racy_window = window;
        self
    }

    /// Keeps at most `handles` root directories open (default
    /// [`Loader::DEFAULT_HANDLE_BUDGET`]; from 1 to [`Loader::MAX_HANDLE_BUDGET`]). Each repository root and
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
    /// (default 16,384, at most [`Loader::MAX_CACHE_ENTRIES`]): a later build meets an unchanged `SKILL.md`
    /// without parsing it again. 0 keeps none, which suits a loader that
    /// builds once (a command-line run): the home's frontmatter memo file
    /// still spares the next process the parsing.
    pub fn parse_cache(mut self, entries: usize) -> Self {
        self.parse_entries = entries;
        self
    }

    /// Checks the numeric settings against their ranges.
    fn check_settings(&self) -> Result<(), BootstrapError> {
        let checks: [(&'static str, usize, usize, usize); 4] = [
            ("capacity", self.capacity, 1, MAX_CACHE_ENTRIES),
            (
                "cache_bytes",
                self.cache_bytes,
                MIN_CACHE_BYTES,
                MAX_CACHE_BYTES,
            ),
            ("handle_budget", self.handle_budget, 1, MAX_HANDLE_BUDGET),
            ("parse_cache", self.parse_entries, 0, MAX_CACHE_ENTRIES),
        ];
        for (setting, value, min, max) in checks {
            if !(min..=max).contains(&value) {
                return Err(BootstrapError::OutOfRange {
                    setting,
                    value,
                    min,
                    max,
                });
            }
        }
        Ok(())
    }

    /// Checks that an explicit home root is a directory (a typo would
    /// silently drop the home policy and every home file).
    fn check_explicit_home(&self) -> Result<(), BootstrapError> {
        // A shipped policy name that names nothing is the caller's mistake,
        // not a file that may be fixed later: refused at once.
        self.bootstrap.check_base()?;
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

    /// The ready [`policy`](Self::policy), if any, its named roots found
    /// with this builder's environment.
    fn ready_located(&self) -> Option<Policy> {
        let mut policy = self.policy.clone()?;
        policy.locate_named_roots(&*self.bootstrap.env);
        Some(policy)
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
        if let Some(policy) = self.ready_located() {
            // A ready policy: the home is only a root, which may appear later.
            let home = self.bootstrap.home_for(&policy);
            return Ok((policy, home));
        }
        self.check_explicit_home()?;
        let (policy, home) = self.bootstrap.load().result?;
        Ok((std::sync::Arc::unwrap_or_clone(policy), home))
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
        self.check_settings()?;
        if let Some(policy) = self.ready_located() {
            let home = self.bootstrap.home_for(&policy);
            return Ok(Loader::fixed(
                policy,
                home,
                self.capacity,
                self.racy_window,
                self.handle_budget,
            )
            .with_parse_entries(self.parse_entries)
            .with_cache_bytes(self.cache_bytes)
            .join(self.group)
            .admitting(self.admitted));
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
        self.check_settings()?;
        self.check_explicit_home()?;
        let loaded = self.bootstrap.load();
        Ok(self.watching(loaded))
    }

    /// The loader that watches the policy files `loaded` read, with this
    /// builder's settings.
    fn watching(self, loaded: Loaded) -> Loader {
        let parse_entries = self.parse_entries;
        let cache_bytes = self.cache_bytes;
        let group = self.group;
        let admitted = self.admitted;
        Loader::watching(
            self.bootstrap,
            loaded,
            self.capacity,
            self.racy_window,
            self.handle_budget,
        )
        .with_parse_entries(parse_entries)
        .with_cache_bytes(cache_bytes)
        .join(group)
        .admitting(admitted)
    }
}

impl Loader {
    /// A builder: finds the home root, loads the layered policy from it.
    pub fn builder() -> LoaderBuilder {
        LoaderBuilder::new()
    }
}
