//! The [`Loader`]: snapshots for many cwds, each cached until something it
//! examined changes.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use lru::LruCache;

use super::bootstrap::{Bootstrap, Loaded};
use super::group::{Cache, Group};
use super::key::{Key, SessionKey};
use super::limits::{
    DEFAULT_CACHE_BYTES, DEFAULT_CACHE_ENTRIES, DEFAULT_HANDLE_BUDGET, MAX_CACHE_BYTES,
    MAX_CACHE_ENTRIES, MAX_HANDLE_BUDGET, MAX_SESSION_NAME_BYTES, MAX_SESSIONS, MIN_CACHE_BYTES,
    PARSE_CACHE_ENTRIES,
};
use super::policies::{InForce, Policies};
use super::skill_file::SkillFile;
#[cfg(target_os = "linux")]
use super::watch;

use super::skill_file::SkillError;
use crate::access::AccessError;
mod changes;
mod skill_files;

use crate::access::{Access, Session};
use crate::error::{SkillReadError, SnapshotError};
use crate::on_request::RuleError;
use crate::policy::Policy;
use crate::review::{self, TrustError};
use crate::sandbox::{self, Handles};
use crate::skills::{self, ParseCache};
use crate::snapshot::{self, Built, Snapshot};
use crate::trust::Selection;
use crate::trust::{TrustItem, TrustStatus};

/// What a loader joining a group takes from a loader of it.
pub(super) struct Membership {
    group: Arc<Group>,
    handles: Arc<Handles>,
    parsed: ParseCache,
    /// The policy memo of the loader joined (`None`: its policy was given
    /// once).
    memo: Option<Arc<crate::policy::Memo>>,
}

impl Membership {
    /// The policy memo a loader joining the group takes.
    pub(super) fn memo(&self) -> Option<Arc<crate::policy::Memo>> {
        self.memo.clone()
    }
}

/// Builds snapshots for any number of cwds, concurrently, caching each one
/// until a file it depends on changes.
///
/// A check costs one `stat` per path the snapshot examined; files are re-read
/// only when their metadata moved, or when it is too recent to vouch for their
/// content (see [`Loader::RACY_WINDOW`]). The cwd is always
/// explicit: the loader never looks at the process's working directory.
///
/// ```
/// use lisa_context::{Loader, policy::Policy};
///
/// let home = tempfile::tempdir().unwrap();
/// let repo = tempfile::tempdir().unwrap();
/// std::fs::create_dir(repo.path().join(".git")).unwrap();
/// std::fs::write(repo.path().join("AGENTS.md"), "Run the tests before committing.").unwrap();
///
/// let loader = Loader::new(Policy::builtin().unwrap(), Some(home.path().to_path_buf()));
/// let snap = loader.snapshot(repo.path()).unwrap();
/// assert_eq!(snap.instruction_files.len(), 1);
/// assert!(snap.prompt.contains("Run the tests before committing."));
///
/// // Nothing changed: the same fingerprint, and no new snapshot.
/// assert_eq!(loader.fingerprint(repo.path()).unwrap(), snap.fingerprint);
/// assert!(loader.refresh(repo.path(), &snap.fingerprint).unwrap().is_none());
/// ```
pub struct Loader {
    policies: Policies,
    /// The cache (and watch) this loader shares with the other loaders of
    /// its group ([`LoaderBuilder::share`](crate::LoaderBuilder::share));
    /// a group of one otherwise.
    group: Arc<Group>,
    /// This loader's number in the group (its builds are keyed by it).
    owner: u64,
    handles: Arc<Handles>,
    parsed: ParseCache,
    racy_window: Duration,
    /// The sessions [`Loader::access_named`] keeps, by (name, cwd, root).
    sessions: Mutex<LruCache<SessionKey, Session>>,
    /// Set by [`Loader::watched`]: checks look only where inotify saw a
    /// change.
    #[cfg(target_os = "linux")]
    watch: Option<Arc<watch::Watch>>,
    /// Set by [`Loader::watched`] when no inotify instance could be had
    /// (the per-user `max_user_instances`, or no inotify at all).
    #[cfg(target_os = "linux")]
    watch_missing: bool,
}

impl std::fmt::Debug for Loader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Loader")
            .field("home", &self.home())
            .field("cached_entries", &self.cached_entries())
            .field("racy_window", &self.racy_window)
            .finish_non_exhaustive()
    }
}

impl Loader {
    /// The default number of (cwd, root) pairs a loader keeps.
    pub const DEFAULT_CACHE_ENTRIES: usize = DEFAULT_CACHE_ENTRIES;

    /// The most (cwd, root) pairs a loader may be asked to keep
    /// ([`LoaderBuilder::capacity`](crate::LoaderBuilder::capacity)).
    pub const MAX_CACHE_ENTRIES: usize = MAX_CACHE_ENTRIES;

    /// The default bound on the bytes the snapshot cache holds
    /// ([`LoaderBuilder::cache_bytes`](crate::LoaderBuilder::cache_bytes)).
    pub const DEFAULT_CACHE_BYTES: usize = DEFAULT_CACHE_BYTES;

    /// The least a loader's cache may be bounded to, in bytes.
    pub const MIN_CACHE_BYTES: usize = MIN_CACHE_BYTES;

    /// The most a loader's cache may be bounded to, in bytes.
    pub const MAX_CACHE_BYTES: usize = MAX_CACHE_BYTES;

    /// The default number of root handles (open directories) a loader
    /// keeps: well under the common soft limits on open files (1024; 256 on
    /// macOS).
    pub const DEFAULT_HANDLE_BUDGET: usize = DEFAULT_HANDLE_BUDGET;

    /// The most root handles a loader may be asked to keep
    /// ([`LoaderBuilder::handle_budget`](crate::LoaderBuilder::handle_budget)).
    pub const MAX_HANDLE_BUDGET: usize = MAX_HANDLE_BUDGET;

    /// How many named sessions [`Loader::access_named`] keeps.
    pub const MAX_SESSIONS: usize = MAX_SESSIONS;

    /// The longest session name [`Loader::access_named`] takes, in bytes
    /// (longer ones fail with
    /// [`AccessError::SessionNameTooLong`]).
    pub const MAX_SESSION_NAME_BYTES: usize = MAX_SESSION_NAME_BYTES;

    /// The most files a kept session records ([`Session::MAX_FILES`]).
    pub const MAX_SESSION_FILES: usize = Session::MAX_FILES;

    /// The longest path [`Loader::access`] takes, in bytes as given (the
    /// usual `PATH_MAX`; longer ones fail with
    /// [`AccessError::PathTooLong`]).
    pub const MAX_ACCESS_PATH_BYTES: usize = crate::access::MAX_PATH_BYTES;

    /// The deepest path [`Loader::access`] takes, in folder levels below
    /// the repository root once `..` is resolved (deeper ones fail with
    /// [`AccessError::PathTooLong`]).
    pub const MAX_ACCESS_PATH_DEPTH: usize = crate::access::MAX_PATH_DEPTH;

    /// How close to the moment of reading a file's timestamps may be before
    /// its stamp is distrusted and the file read again (git's "racily
    /// clean" problem; the default of
    /// [`LoaderBuilder::racy_window`](crate::LoaderBuilder::racy_window)).
    pub const RACY_WINDOW: Duration = sandbox::RACY_WINDOW;

    /// A loader with the default cache size. `home` is the home root's path;
    /// `None` reads no home files or skills. [`LoaderBuilder`](crate::LoaderBuilder) finds the
    /// home and loads its policy instead.
    pub fn new(policy: Policy, home: Option<PathBuf>) -> Self {
        Self::fixed(
            policy,
            home,
            DEFAULT_CACHE_ENTRIES,
            sandbox::RACY_WINDOW,
            DEFAULT_HANDLE_BUDGET,
        )
    }

    /// A loader whose policy never changes.
    pub(super) fn fixed(
        policy: Policy,
        home: Option<PathBuf>,
        capacity: usize,
        racy_window: Duration,
        handle_budget: usize,
    ) -> Self {
        let policies = Policies::Fixed(InForce {
            policy: Arc::new(policy),
            home,
            generation: 0,
        });
        Self::from_parts(policies, capacity, racy_window, handle_budget)
    }

    /// A loader that watches the policy files `loaded` read.
    pub(super) fn watching(
        bootstrap: Bootstrap,
        loaded: Loaded,
        capacity: usize,
        racy_window: Duration,
        handle_budget: usize,
    ) -> Self {
        let policies = Policies::watched(bootstrap, loaded, racy_window);
        Self::from_parts(policies, capacity, racy_window, handle_budget)
    }

    /// What a loader joining this one's group takes from it.
    pub(super) fn membership(&self) -> Membership {
        Membership {
            group: Arc::clone(&self.group),
            handles: Arc::clone(&self.handles),
            parsed: ParseCache::beside(&self.parsed),
            memo: self.policies.memo(),
        }
    }

    /// Makes this loader one of a group: its root handles, its snapshot
    /// cache (and the cache's bounds), the texts, skills and trace entries
    /// it holds once, its parsed frontmatter and, once watched, its watch.
    pub(super) fn join(mut self, membership: Option<Membership>) -> Self {
        if let Some(m) = membership {
            // The group this loader was made with holds nothing yet: it
            // goes with its last reference.
            self.group = m.group;
            self.owner = self.group.join();
            self.handles = m.handles;
            self.parsed = m.parsed;
        }
        self
    }

    /// Makes this loader the loader of the home `admitted` (from
    /// [`LoaderBuilder::home_below`](crate::LoaderBuilder::home_below)):
    /// its root handles open the home's path only as the admitted directory,
    /// and every call first checks that the home still holds (see
    /// [`check_home`](Self::check_home)).
    pub(super) fn admitting(mut self, admitted: Option<Arc<sandbox::Admitted>>) -> Self {
        if let Some(admitted) = admitted {
            self.handles = Arc::new(self.handles.admitting(admitted));
        }
        self
    }

    /// For a loader made with
    /// [`LoaderBuilder::home_below`](crate::LoaderBuilder::home_below):
    /// whether its home still satisfies the rule it was admitted under, now
    /// (opened again from the directory of homes, one folder at a time with
    /// no link followed, it is a real directory that this user owns) and is
    /// still the very directory admitted (the same device and inode), not
    /// one put at its path since. `Ok` for any other loader. (Out of file
    /// descriptors, the home cannot be looked at:
    /// [`SnapshotError::ResourceExhausted`].)
    ///
    /// Every call of the loader makes this check first and fails with this
    /// error; and whatever happens to the path after it, the home is read
    /// and written only through a handle of the admitted directory. A
    /// server keeping a loader per home asks before each request, and on
    /// [`SnapshotError::HomeRefused`] drops the loader and admits the home
    /// afresh (a new loader: nothing built from the old directory is
    /// served).
    ///
    /// ```
    /// let homes = tempfile::tempdir().unwrap();
    /// let a = homes.path().join("a");
    /// std::fs::create_dir(&a).unwrap();
    /// let loader = lisa_context::Loader::builder()
    ///     .home_below(homes.path(), &a)
    ///     .unwrap()
    ///     .build()
    ///     .unwrap();
    /// assert!(loader.check_home().is_ok());
    /// // The home is replaced by another directory: no longer the one admitted.
    /// std::fs::rename(&a, homes.path().join("old")).unwrap();
    /// std::fs::create_dir(&a).unwrap();
    /// assert!(loader.check_home().is_err());
    /// ```
    pub fn check_home(&self) -> Result<(), SnapshotError> {
        self.handles.check_admitted().map_err(|e| {
            let path = self.home().unwrap_or_default();
            match e.shortage {
                // Out of descriptors: nothing is known of the home.
                Some(source) => SnapshotError::ResourceExhausted { path, source },
                None => SnapshotError::HomeRefused {
                    path,
                    reason: e.reason,
                },
            }
        })
    }

    /// The policy in force for a call, once the admitted home (if any) was
    /// found to hold.
    fn in_force(&self) -> Result<InForce, SnapshotError> {
        self.check_home()?;
        self.policies.in_force()
    }

    /// Bounds the snapshot cache to `bytes` (see [`Loader::cached_bytes`]).
    pub(super) fn with_cache_bytes(self, bytes: usize) -> Self {
        self.lock().set_max_bytes(bytes);
        self
    }

    /// Keeps at most `entries` parsed frontmatters (0: none).
    pub(super) fn with_parse_entries(mut self, entries: usize) -> Self {
        self.parsed = ParseCache::new(entries);
        self
    }

    fn from_parts(
        policies: Policies,
        capacity: usize,
        racy_window: Duration,
        handle_budget: usize,
    ) -> Self {
        let group = Arc::new(Group::new(capacity, DEFAULT_CACHE_BYTES));
        let owner = group.join();
        Self {
            policies,
            group,
            owner,
            handles: Arc::new(Handles::with_budget(handle_budget)),
            parsed: ParseCache::new(PARSE_CACHE_ENTRIES),
            racy_window,
            // Grown as sessions come (a table for every session at once
            // would cost each loader ~90 KiB, and a server of many homes
            // has a loader per home); bounded at `MAX_SESSIONS` on insert.
            sessions: Mutex::new(LruCache::unbounded()),
            #[cfg(target_os = "linux")]
            watch: None,
            #[cfg(target_os = "linux")]
            watch_missing: false,
        }
    }

    /// The policy in force. A loader built from policy files loads them
    /// again first if one changed; the error is the diagnostic of an invalid
    /// one ([`SnapshotError::PolicyInvalid`]).
    pub fn policy(&self) -> Result<Arc<Policy>, SnapshotError> {
        Ok(self.in_force()?.policy)
    }

    /// The home root's path under the policy last loaded (`None`: no home).
    pub fn home(&self) -> Option<PathBuf> {
        self.policies.last_home()
    }

    /// The snapshot for `cwd` (absolute), rebuilt only if something changed.
    pub fn snapshot(&self, cwd: &Path) -> Result<Arc<Snapshot>, SnapshotError> {
        self.snapshot_in(cwd, None)
    }

    /// Like [`snapshot`](Self::snapshot), with the repository root named
    /// explicitly (it must contain `cwd`).
    pub fn snapshot_in(
        &self,
        cwd: &Path,
        root: Option<&Path>,
    ) -> Result<Arc<Snapshot>, SnapshotError> {
        Ok(self.current(cwd, root)?.snapshot.clone())
    }

    /// The fingerprint for `cwd`: equal to the `fingerprint` field of the
    /// snapshot that would be built now.
    pub fn fingerprint(&self, cwd: &Path) -> Result<String, SnapshotError> {
        self.fingerprint_in(cwd, None)
    }

    /// What touching `path` adds to `session` (see [`Session`]): the
    /// instruction files of the folders between the repository root and
    /// `path` that the session's chain did not hold and that it was not
    /// given before, under the policy's on-access budget, framed with the
    /// session's nonce. A relative `path` is taken from the session's cwd;
    /// a path outside the repository root is
    /// [`AccessError::OutsideRoot`]. Under a policy without
    /// `instructions.on-access`, nothing is loaded.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # std::fs::create_dir_all(dir.path().join("repo/.git/x")).unwrap();
    /// # std::fs::create_dir_all(dir.path().join("repo/pkg")).unwrap();
    /// # std::fs::write(dir.path().join("repo/pkg/GEMINI.md"), "pkg rules").unwrap();
    /// use lisa_context::{Loader, Session};
    ///
    /// let loader = Loader::builder().shipped_policy("gemini").home(dir.path()).build().unwrap();
    /// let mut session = Session::new(dir.path().join("repo"), None);
    /// let first = loader.access(&mut session, &dir.path().join("repo/pkg/main.rs")).unwrap();
    /// assert_eq!(first.instruction_files.len(), 1);
    /// // Once per session.
    /// let again = loader.access(&mut session, &dir.path().join("repo/pkg")).unwrap();
    /// assert!(again.instruction_files.is_empty());
    /// ```
    pub fn access(&self, session: &mut Session, path: &Path) -> Result<Access, AccessError> {
        let force = self.in_force()?;
        let cwd = self.absolute(session.cwd())?;
        let built = self.current_under(&force, &cwd, session.root())?;
        crate::access::access(
            &force.policy,
            force.home.as_deref(),
            &self.handles,
            &built.snapshot,
            session,
            path,
        )
    }

    /// [`access`](Self::access) for a session the loader keeps: the one
    /// named `session` for (`cwd`, `root`), created at its first access.
    /// What a server answering many sessions wants; the loader keeps at
    /// most [`Loader::MAX_SESSIONS`] (the least recently used go, and start afresh
    /// if they come back).
    pub fn access_named(
        &self,
        session: &str,
        cwd: &Path,
        root: Option<&Path>,
        path: &Path,
    ) -> Result<Access, AccessError> {
        if session.len() > MAX_SESSION_NAME_BYTES {
            return Err(AccessError::SessionNameTooLong {
                length: session.len(),
                max: MAX_SESSION_NAME_BYTES,
            });
        }
        let cwd = self.absolute(cwd)?;
        let key = (
            session.to_string(),
            cwd.clone(),
            root.map(crate::vocab::home::normalize),
        );
        let (mut state, known) = {
            let mut sessions = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
            match sessions.pop(&key) {
                Some(state) => (state, true),
                None => (Session::new(cwd, key.2.clone()), false),
            }
        };
        let result = self.access(&mut state, path);
        // A session is kept once an access in it succeeded: a request about
        // a cwd that cannot be built (missing, too long) leaves nothing
        // behind, so what the loader holds per session is bounded by real
        // paths (see [`Loader::MAX_SESSION_FILES`]).
        if known || result.is_ok() {
            let mut sessions = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
            sessions.put(key, state);
            while sessions.len() > MAX_SESSIONS {
                sessions.pop_lru();
            }
        }
        result
    }

    /// How many sessions [`access_named`](Self::access_named) keeps now,
    /// and the bytes of names and paths they hold (for the tests that bound
    /// a server's memory).
    pub(crate) fn sessions_held(&self) -> (usize, usize) {
        let sessions = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        let bytes = sessions
            .iter()
            .map(|((name, cwd, root), s)| {
                name.len()
                    + cwd.as_os_str().len()
                    + root.as_ref().map_or(0, |r| r.as_os_str().len())
                    + s.bytes_held()
            })
            .sum();
        (sessions.len(), bytes)
    }

    /// [`fingerprint`](Self::fingerprint) with an explicit root.
    pub fn fingerprint_in(&self, cwd: &Path, root: Option<&Path>) -> Result<String, SnapshotError> {
        Ok(self.current(cwd, root)?.snapshot.fingerprint.clone())
    }

    /// A new snapshot if the fingerprint differs from `previous`, else `None`.
    pub fn refresh(
        &self,
        cwd: &Path,
        previous: &str,
    ) -> Result<Option<Arc<Snapshot>>, SnapshotError> {
        self.refresh_in(cwd, None, previous)
    }

    /// [`refresh`](Self::refresh) with an explicit root.
    pub fn refresh_in(
        &self,
        cwd: &Path,
        root: Option<&Path>,
        previous: &str,
    ) -> Result<Option<Arc<Snapshot>>, SnapshotError> {
        let built = self.current(cwd, root)?;
        if built.snapshot.fingerprint == previous {
            Ok(None)
        } else {
            Ok(Some(built.snapshot.clone()))
        }
    }

    /// The `SKILL.md` of the skill that wins `name` for `cwd`: exactly the
    /// resolution the snapshot used, read under the same rules. The name is
    /// checked against the policy's rule before any file is touched.
    pub fn skill(&self, cwd: &Path, name: &str) -> Result<SkillFile, SkillError> {
        self.skill_in(cwd, None, name)
    }

    /// [`skill`](Self::skill) with an explicit root.
    pub fn skill_in(
        &self,
        cwd: &Path,
        root: Option<&Path>,
        name: &str,
    ) -> Result<SkillFile, SkillError> {
        let force = self.in_force()?;
        if !force.policy.is_valid_skill_name(name) {
            return Err(SkillError::InvalidName(name.to_string()));
        }
        let built = self.current_under(&force, cwd, root)?;
        let Some(skill) = built.snapshot.skills.iter().find(|s| s.name == name) else {
            let available: Vec<String> = built
                .snapshot
                .skills
                .iter()
                .map(|s| s.name.clone())
                .collect();
            return Err(SkillError::NotFound {
                name: name.to_string(),
                cwd: built.snapshot.cwd.clone(),
                available,
            });
        };
        let unreadable = |reason: SkillReadError| SkillError::Unreadable {
            path: skill.path.clone(),
            reason,
        };
        let snap = &built.snapshot;
        let mut tries = 0;
        let content = loop {
            tries += 1;
            let roots = sandbox::attach(
                &self.handles,
                snap.home.as_deref(),
                &snap.named_paths(),
                &snap.ancestor_paths,
                snap.state_root.as_deref(),
                &snap.repo_root,
                &built.shield,
            )
            .map_err(|e| match e {
                e if sandbox::is_exhaustion(&e) => {
                    SkillError::Snapshot(SnapshotError::ResourceExhausted {
                        path: snap.repo_root.clone(),
                        source: e,
                    })
                }
                e => match sandbox::NotAdmitted::of(&e) {
                    Some(refused) => SkillError::Snapshot(SnapshotError::HomeRefused {
                        path: snap.home.clone().unwrap_or_default(),
                        reason: refused.reason.clone(),
                    }),
                    None => unreadable(SkillReadError::RootUnopenable(e)),
                },
            })?;
            let Some(skill_root) = roots.get(skill.root_id) else {
                return Err(unreadable(SkillReadError::RootGone));
            };
            let pinned = skill.pinned_hash.as_deref();
            let read = skills::whole_file(&force.policy, skill_root, &skill.rel, pinned);
            match (read, roots.shortage()) {
                (Ok(content), None) => break content,
                (_, Some(e)) if tries > 1 => {
                    return Err(SkillError::Snapshot(SnapshotError::ResourceExhausted {
                        path: skill_root.path.clone(),
                        source: e,
                    }));
                }
                // Out of descriptors: shed the handles and try once more.
                (_, Some(_)) => self.handles.shed(),
                (Err(e), None) => return Err(unreadable(e.into())),
            }
        };
        // The body reaches the agent as file text does: under the policy's
        // hidden-text rule, with what was found reported.
        let (content, hidden_text) = crate::hidden::treat_for(content, &force.policy);
        Ok(SkillFile {
            name: skill.name.clone(),
            origin: skill.origin,
            path: skill.path.clone(),
            content,
            hidden_text,
        })
    }

    /// The text of the rule (`[rules]`) named `name` for `cwd`: what a
    /// `listed` rule's entry in the prompt offers the agent, or what the
    /// user names for a `manual` one. Read now, as a chain file is read
    /// (sandbox, per-file cap, approval under `pinned`, hidden text,
    /// imports), and framed with the session's nonce. Of two rules of one
    /// name, the home's wins, then the deepest folder's; names that look
    /// alike are one name (and so are names equal but for case under
    /// `rules.compat.one-per-name`), so a rule whose name lost that way is not
    /// served: [`RuleError::NotFound`] names the rule holding it.
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let home = tempfile::tempdir()?;
    /// let repo = tempfile::tempdir()?;
    /// std::fs::create_dir_all(repo.path().join(".git"))?;
    /// std::fs::create_dir_all(repo.path().join(".cursor/rules"))?;
    /// std::fs::write(
    ///     repo.path().join(".cursor/rules/db.mdc"),
    ///     "---\ndescription: Database conventions\n---\nUse migrations.\n",
    /// )?;
    /// let loader = lisa_context::Loader::builder()
    ///     .home(home.path())
    ///     .env(|_| None)
    ///     .shipped_policy("cursor")
    ///     .build()?;
    /// let rule = loader.rule(repo.path(), "db")?;
    /// assert_eq!(rule.content, "Use migrations.");
    /// # Ok(())
    /// # }
    /// ```
    pub fn rule(&self, cwd: &Path, name: &str) -> Result<crate::on_request::RuleText, RuleError> {
        self.rule_in(cwd, None, name)
    }

    /// [`rule`](Self::rule) with an explicit root.
    pub fn rule_in(
        &self,
        cwd: &Path,
        root: Option<&Path>,
        name: &str,
    ) -> Result<crate::on_request::RuleText, RuleError> {
        let force = self.in_force()?;
        let built = self.current_under(&force, cwd, root)?;
        crate::on_request::rule(
            &force.policy,
            force.home.as_deref(),
            &self.handles,
            &built.snapshot,
            name,
        )
    }

    /// Which on-access rules of the snapshot for `cwd` no path of the
    /// repository would load: a walk of the repository through the
    /// sandbox (at most 50,000 entries, 32 levels deep), each path tested
    /// against the rules' globs. What `survey` reports as
    /// `rule-unmatched`.
    pub fn rule_reach(
        &self,
        cwd: &Path,
        root: Option<&Path>,
    ) -> Result<crate::access::RuleReach, SnapshotError> {
        let force = self.in_force()?;
        let built = self.current_under(&force, cwd, root)?;
        crate::access::reach(
            &force.policy,
            force.home.as_deref(),
            &self.handles,
            &built.snapshot,
        )
    }

    /// How many of this loader's snapshots the cache holds.
    pub fn cached_entries(&self) -> usize {
        self.lock().entries_of(self.owner)
    }

    /// How many snapshots the cache holds for every loader of this one's
    /// group ([`LoaderBuilder::share`](crate::LoaderBuilder::share)); for a
    /// loader alone, [`cached_entries`](Self::cached_entries).
    pub fn group_cached_entries(&self) -> usize {
        self.lock().entries()
    }

    /// An estimate of the bytes the cache holds (texts, paths, traces, each
    /// shared text once): what
    /// [`LoaderBuilder::cache_bytes`](crate::LoaderBuilder::cache_bytes)
    /// bounds. For a loader of a group, the whole group's cache.
    pub fn cached_bytes(&self) -> usize {
        self.lock().bytes()
    }

    fn lock(&self) -> MutexGuard<'_, Cache> {
        self.group.lock()
    }

    /// Where every project item seen from `cwd` stands with the user: its
    /// instruction files on the chain to `cwd` and its skills, each
    /// approved, new, changed or removed, with both texts (see
    /// [`TrustItem::diff`](crate::trust::TrustItem::diff)). Computed as under
    /// `trust.project = "pinned"`, whatever the policy says, and never
    /// cached. A trust store that cannot be used is an error.
    pub fn trust_status(&self, cwd: &Path, root: Option<&Path>) -> Result<TrustStatus, TrustError> {
        let force = self.in_force()?;
        let cwd = self.absolute(cwd)?;
        review::status(&self.trust_scope(&force, &cwd, root))
    }

    /// What the trust functions work on, for `cwd` under `force`.
    fn trust_scope<'a>(
        &'a self,
        force: &'a InForce,
        cwd: &'a Path,
        root: Option<&'a Path>,
    ) -> review::Scope<'a> {
        review::Scope {
            policy: &force.policy,
            home: force.home.as_deref(),
            cwd,
            root,
            handles: &self.handles,
            cache: &self.parsed,
        }
    }

    /// Approves the items `selection` names, as they are on disk now:
    /// under the store's lock the files are read again, and with
    /// [`Selection::Paths`] an item whose content no longer has the hash
    /// the user was shown fails the whole call (nothing is approved). The
    /// approval records the hash and text just read, the time and the
    /// policy digest. Returns the items approved, as they were before
    /// (their `current_hash` is what was recorded; a removed item's
    /// approval is dropped). Not offered by `serve`: approving is the
    /// user's act.
    pub fn trust_approve(
        &self,
        cwd: &Path,
        root: Option<&Path>,
        selection: &Selection,
    ) -> Result<Vec<TrustItem>, TrustError> {
        let force = self.in_force()?;
        let cwd = self.absolute(cwd)?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        review::approve(&self.trust_scope(&force, &cwd, root), selection, now)
    }

    /// Drops the approvals of the items at `paths` (absolute; a skill by
    /// its `SKILL.md` or its folder), or of the whole repository (`None`).
    /// Returns the paths whose approval was dropped.
    pub fn trust_revoke(
        &self,
        cwd: &Path,
        root: Option<&Path>,
        paths: Option<&[PathBuf]>,
    ) -> Result<Vec<PathBuf>, TrustError> {
        let force = self.in_force()?;
        let cwd = self.absolute(cwd)?;
        review::revoke(&self.trust_scope(&force, &cwd, root), paths)
    }

    /// `cwd`, which must be absolute, normalized.
    fn absolute(&self, cwd: &Path) -> Result<PathBuf, SnapshotError> {
        if !cwd.is_absolute() {
            return Err(SnapshotError::RelativeCwd(cwd.to_path_buf()));
        }
        Ok(crate::vocab::home::normalize(cwd))
    }

    /// The up-to-date build for (cwd, root) under the policy in force.
    fn current(&self, cwd: &Path, root: Option<&Path>) -> Result<Arc<Built>, SnapshotError> {
        let force = self.in_force()?;
        self.current_under(&force, cwd, root)
    }

    /// The up-to-date build for (cwd, root) under `force`: the cached one
    /// when every path it examined still looks the same, a fresh one
    /// otherwise.
    fn current_under(
        &self,
        force: &InForce,
        cwd: &Path,
        root: Option<&Path>,
    ) -> Result<Arc<Built>, SnapshotError> {
        if !cwd.is_absolute() {
            return Err(SnapshotError::RelativeCwd(cwd.to_path_buf()));
        }
        let key: Key = (
            self.owner,
            crate::vocab::home::normalize(cwd),
            root.map(crate::vocab::home::normalize),
        );
        let cached = self.lock().get(force.generation, &key);
        if let Some(built) = cached
            && self.still_valid(&key, &built)
        {
            return Ok(built);
        }
        let built = self.build_now(force, &key.1, key.2.as_deref(), snapshot::Tracing::On)?;
        let mut cache = self.lock();
        if cache.enter(self.owner, force.generation) {
            return Ok(cache.insert(key, built));
        }
        // Otherwise the policy changed while this was built: answer, but do
        // not keep it.
        Ok(Arc::new(built))
    }

    /// A fresh build for (cwd, root) under `force`, not kept. Out of
    /// descriptors, every root handle is shed and the build tried once more.
    fn build_now(
        &self,
        force: &InForce,
        cwd: &Path,
        root: Option<&Path>,
        tracing: snapshot::Tracing,
    ) -> Result<Built, SnapshotError> {
        let build = || {
            snapshot::build(
                &force.policy,
                force.home.as_deref(),
                cwd,
                root,
                &self.handles,
                &self.parsed,
                tracing,
            )
        };
        match build() {
            Err(SnapshotError::ResourceExhausted { .. }) => {
                self.handles.shed();
                build()
            }
            other => other,
        }
    }

    /// A survey's view of (cwd, root): a fresh build, not kept (a survey
    /// asks once), and the reach of its on-access rules. Under
    /// [`Tracing::Off`](snapshot::Tracing::Off) the snapshot has no
    /// fingerprint: for a caller that sums it up and drops it.
    pub(super) fn surveyed(
        &self,
        cwd: &Path,
        root: Option<&Path>,
        tracing: snapshot::Tracing,
    ) -> Result<(Arc<crate::snapshot::Snapshot>, crate::access::RuleReach), SnapshotError> {
        let force = self.in_force()?;
        let cwd = self.absolute(cwd)?;
        let root = root.map(crate::vocab::home::normalize);
        let built = self.build_now(&force, &cwd, root.as_deref(), tracing)?;
        let reach = crate::access::reach(
            &force.policy,
            force.home.as_deref(),
            &self.handles,
            &built.snapshot,
        )?;
        Ok((built.snapshot, reach))
    }

    /// The folders of `snap`'s repository a survey takes as cwds (see
    /// [`super::walk::walk`]), walked through this loader's sandbox.
    pub(super) fn survey_walk(
        &self,
        snap: &crate::snapshot::Snapshot,
        wanted: &super::walk::Wanted,
        max_folders: usize,
    ) -> Result<super::walk::Walk, SnapshotError> {
        let force = self.in_force()?;
        super::walk::walk(
            &force.policy,
            force.home.as_deref(),
            &self.handles,
            snap,
            wanted,
            max_folders,
        )
    }

    /// Whether every path a build examined looks as it did, and none of it was
    /// too fresh to trust.
    fn still_valid(&self, key: &Key, built: &Arc<Built>) -> bool {
        let trace = &built.trace;
        if trace.has_racy_stamp(self.racy_window) {
            return false;
        }
        // The roots' handles may have been shed since: take them again.
        let snap = &built.snapshot;
        let Ok(roots) = sandbox::attach(
            &self.handles,
            snap.home.as_deref(),
            &snap.named_paths(),
            &snap.ancestor_paths,
            snap.state_root.as_deref(),
            &snap.repo_root,
            &built.shield,
        ) else {
            return false;
        };
        // The cwd, the home and the repository root are among the traced
        // paths, stamped before their handles were opened: a root replaced
        // since shows up there (a handle taken again is checked the same
        // way).
        #[cfg(target_os = "linux")]
        if let Some(watch) = &self.watch {
            return watch.still_matches(key, built, &roots) && roots.shortage().is_none();
        }
        #[cfg(not(target_os = "linux"))]
        let _ = key;
        let unchanged = trace.still_matches(&roots);
        // A stamp taken while descriptors ran out vouches for nothing.
        unchanged && roots.shortage().is_none()
    }

    /// This loader, checking cached snapshots with the help of inotify: a
    /// check stats only the paths outside the roots and those in folders
    /// where a change was reported since the snapshot was last found
    /// unchanged, so that its cost does not grow with the number of skills.
    /// Where the watch cannot be trusted (the queue overflowed, the watch
    /// limit was reached, a folder moved, a network file system), the check
    /// stats every path as without it. The answers are the same either way.
    /// Without inotify (other systems, or none available) this is the
    /// loader unchanged.
    pub fn watched(self) -> Self {
        #[cfg(target_os = "linux")]
        {
            let mut this = self;
            this.watch = this.group.watch();
            this.watch_missing = this.watch.is_none();
            this
        }
        #[cfg(not(target_os = "linux"))]
        self
    }

    /// Whether a [`watched`](Self::watched) loader ran into the kernel's
    /// limits on watches (`max_user_watches`, `max_user_instances`): the
    /// builds it could not watch are checked by the stat sweep, which is
    /// exact but costs a `stat` per examined path. False for a loader that
    /// does not watch.
    pub fn watch_limited(&self) -> bool {
        #[cfg(target_os = "linux")]
        {
            self.watch_missing || self.watch.as_ref().is_some_and(|w| w.limited())
        }
        #[cfg(not(target_os = "linux"))]
        false
    }

    /// How many root handles (open directories) the loader keeps; never
    /// more than its budget ([`LoaderBuilder::handle_budget`](crate::LoaderBuilder::handle_budget)).
    pub fn open_handles(&self) -> usize {
        self.handles.len()
    }
}

impl Drop for Loader {
    /// Leaves the group: the cache drops this loader's builds.
    fn drop(&mut self) {
        self.lock().leave(self.owner);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loader_is_send_and_sync() {
        fn assert_both<T: Send + Sync>() {}
        assert_both::<Loader>();
    }
}
