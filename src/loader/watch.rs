//! The watched check: a long-lived loader (`serve`) watches the folders a
//! cached build examined, and a check looks again only where the kernel
//! reported a change, so that its cost no longer grows with the number of
//! traced paths.
//!
//! For each cached build, the first check after it was built *arms* it:
//! every folder holding a traced path, and every folder above those up to
//! the root, gets an inotify watch, and only then is the full stat sweep
//! made; a build that passes it is clean as of the moment the watches were
//! in place. Every later check reads the queued events first (synchronously:
//! see `sandbox::watch`), then stats only
//!
//! - the paths outside the roots (markers, the cwd, the roots themselves:
//!   a handful, growing with depth, not with skills),
//! - the traced paths whose folder reported an event since the build was
//!   last found clean (a traced folder, such as a skills source, counts as
//!   the folder of its own entries too: adding a skill raises an event in
//!   the source, not in its parent), and
//! - the traced paths that are links: a link's target may sit in a folder
//!   whose events name nothing traced. A path that becomes a link arms the
//!   build again at the next check, among these.
//!
//! It falls back to the full sweep whenever the watch cannot be trusted:
//! the queue overflowed, a folder came, went or moved under a watched one
//! (the watches may no longer stand for the paths), a watch could not be
//! added (the per-user limit), inotify could not be read, or the root lies
//! on a network or user-space file system. The racily-clean rule is
//! applied first, exactly as in the unwatched check.
//!
//! Known limits, shared with every inotify-based tool: a write through a
//! shared memory mapping raises no event, and neither does a new hard link
//! to a traced file made from a folder that is not watched (the kernel
//! tells only watchers of the file itself). Such a file keeps its cached
//! answer until another event or a fallback sweep.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use crate::sandbox::Place;
use crate::sandbox::RootSet;
use crate::sandbox::watch::{Change, Watcher, trustworthy};
use crate::snapshot::Built;
use crate::vocab::origin::RootId;

use super::key::Key;

/// The most folders one loader watches; past it, builds are checked by
/// the stat sweep. (The default per-user limit is 8,192 on older kernels
/// and much higher on newer ones; other programs need some too.)
const MAX_WATCHES: usize = 32 * 1024;

/// How many change records are kept; a build last found clean before the
/// oldest one kept is swept.
const MAX_LOG: usize = 16 * 1024;

/// The watches of a loader, and what they reported.
pub(crate) struct Watch {
    state: Mutex<State>,
    /// A second descriptor of the inotify instance, waited on without the
    /// lock ([`Watch::wait_after`]).
    waiter: Option<std::os::fd::OwnedFd>,
}

impl std::fmt::Debug for Watch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = self.lock();
        f.debug_struct("Watch")
            .field("folders", &s.by_dir.len())
            .field("builds", &s.builds.len())
            .finish_non_exhaustive()
    }
}

struct State {
    watcher: Watcher,
    /// Watch descriptor to folder, and folder to (descriptor, users).
    by_wd: HashMap<i32, Arc<Path>>,
    by_dir: HashMap<Arc<Path>, (i32, usize)>,
    /// Events counted so far (the clock the records below use).
    seq: u64,
    /// Before this, nothing can be trusted: every build is swept again.
    epoch: u64,
    /// (seq, folder) of every entry event, oldest first, at most MAX_LOG.
    log: std::collections::VecDeque<(u64, Arc<Path>)>,
    /// The sequence number of the oldest record ever dropped from `log`.
    log_floor: u64,
    /// The armed builds.
    builds: HashMap<Key, Armed>,
    /// A watch could not be added for want of room (the per-user limits):
    /// some builds are checked by the sweep.
    limited: bool,
    /// How many armed builds make arming look for the dead ones.
    sweep_at: usize,
}

/// The fewest armed builds that make arming look for dead ones.
const MIN_SWEEP: usize = 64;

/// A build with its folders watched.
struct Armed {
    built: Weak<Built>,
    /// Every folder it watches.
    dirs: Vec<Arc<Path>>,
    /// Traced paths inside a root, by the absolute folder holding them.
    by_dir: HashMap<Arc<Path>, Vec<usize>>,
    /// The traced paths outside the roots: stat'ed at every check.
    outside: Vec<usize>,
    /// When it was last found clean (a `seq`).
    clean_at: u64,
}

impl Watch {
    /// A watch, when inotify is available.
    pub(crate) fn new() -> Option<Self> {
        let watcher = Watcher::new().ok()?;
        let waiter = watcher.waiter().ok();
        Some(Self {
            waiter,
            state: Mutex::new(State {
                watcher,
                by_wd: HashMap::new(),
                by_dir: HashMap::new(),
                seq: 0,
                epoch: 0,
                log: std::collections::VecDeque::new(),
                log_floor: 0,
                builds: HashMap::new(),
                limited: false,
                sweep_at: MIN_SWEEP,
            }),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Every update leaves the maps consistent or only over-watching; a
        // poisoned state is still sound (at worst it sweeps).
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether every traced path of `built` (cached under `key`) looks as
    /// it did, looking only where events say something happened. The
    /// caller has applied the racily-clean rule, and checks descriptor
    /// shortages on `roots` afterwards.
    /// How many events the watch has read so far (after reading those
    /// queued now): a count that only grows.
    pub(crate) fn events(&self) -> u64 {
        let mut state = self.lock();
        state.drain();
        state.seq
    }

    /// Waits until the watch has read more than `seen` events (see
    /// [`events`](Self::events)), the kernel waking the wait, and returns
    /// the new count. Events read by a check meanwhile count: a change
    /// that happened after `seen` was taken is never waited past. `None`
    /// when the watch has no descriptor to wait on.
    /// With a `timeout`, it returns the count as it is (maybe `seen`) once
    /// that much time has passed.
    pub(crate) fn wait_after(
        &self,
        seen: u64,
        timeout: Option<std::time::Duration>,
    ) -> Option<u64> {
        let waiter = self.waiter.as_ref()?;
        let deadline = timeout.map(|t| std::time::Instant::now() + t);
        loop {
            let now = self.events();
            if now > seen {
                return Some(now);
            }
            let left = match deadline {
                None => None,
                Some(d) => match d.checked_duration_since(std::time::Instant::now()) {
                    Some(left) if !left.is_zero() => Some(left),
                    _ => return Some(now),
                },
            };
            crate::sandbox::watch::wait_readable(waiter, left);
        }
    }

    /// Whether a watch could not be added for want of room (the per-user
    /// limits): the builds concerned are checked by the sweep.
    pub(crate) fn limited(&self) -> bool {
        self.lock().limited
    }

    pub(crate) fn still_matches(&self, key: &Key, built: &Arc<Built>, roots: &RootSet) -> bool {
        let trace = &built.trace;
        let mut state = self.lock();
        state.drain();
        let armed = state.builds.get(key).filter(|a| {
            a.built.ptr_eq(&Arc::downgrade(built))
                && a.clean_at >= state.epoch
                && a.clean_at >= state.log_floor
        });
        let Some(armed) = armed else {
            // Not armed, or no longer trusted: arm (again), then sweep.
            state.disarm(key);
            let armed = state.arm(built, roots);
            let start = state.seq;
            drop(state);
            let clean = trace.still_matches(roots);
            if let Some(mut armed) = armed {
                let mut state = self.lock();
                if clean {
                    armed.clean_at = start;
                    state.disarm(key);
                    state.builds.insert(key.clone(), armed);
                } else {
                    // It is rebuilt; the new build arms at its first check.
                    for dir in &armed.dirs {
                        state.release(dir);
                    }
                }
            }
            return clean;
        };
        // Armed and trusted: the outside paths, and the folders with news.
        let start = state.seq;
        let mut look: Vec<usize> = armed.outside.clone();
        // Sorted, as arming pushed them in trace order.
        let outside = armed.outside.clone();
        let mut seen: HashSet<&Path> = HashSet::new();
        let from = state.log.partition_point(|(seq, _)| *seq <= armed.clean_at);
        for (_, dir) in state.log.range(from..) {
            if seen.insert(&**dir)
                && let Some(ix) = armed.by_dir.get(&**dir)
            {
                look.extend_from_slice(ix);
            }
        }
        drop(state);
        look.sort_unstable();
        look.dedup();
        let clean = trace.entries_match(
            roots,
            look.iter()
                .filter_map(|&i| trace.entries.get(i))
                .map(|e| &**e),
        );
        // A path in a folder with news that has become a link (to nothing,
        // or to a file elsewhere) is watched through the wrong folder from
        // now on: the build is armed again, sorting it among the outside
        // paths, at the next check. Only asked of a clean check: one that
        // found a change makes a new build, which is armed afresh.
        let linked = clean
            && look
                .iter()
                .filter(|i| outside.binary_search(i).is_err())
                .filter_map(|&i| trace.entries.get(i))
                .any(|e| {
                    let Place::Within(origin) = e.place else {
                        return false;
                    };
                    roots
                        .get(origin)
                        .is_some_and(|root| root.is_symlink(&e.rel))
                });
        let mut state = self.lock();
        if linked {
            state.disarm(key);
        } else if clean
            && let Some(a) = state.builds.get_mut(key)
            && a.built.ptr_eq(&Arc::downgrade(built))
        {
            a.clean_at = a.clean_at.max(start);
        }
        clean
    }
}

impl State {
    /// Reads the queued events into the log.
    fn drain(&mut self) {
        let State {
            watcher,
            by_wd,
            seq,
            epoch,
            log,
            log_floor,
            ..
        } = self;
        let result = watcher.drain(|change| {
            *seq += 1;
            match change {
                Change::Entry(wd) => {
                    if let Some(dir) = by_wd.get(&wd) {
                        log.push_back((*seq, dir.clone()));
                        if log.len() > MAX_LOG
                            && let Some((dropped, _)) = log.pop_front()
                        {
                            *log_floor = dropped;
                        }
                    }
                }
                // A watch this loader removed says so once more: no news.
                Change::Structure(wd) if !by_wd.contains_key(&wd) => {}
                Change::Structure(_) | Change::Overflow => *epoch = *seq,
            }
        });
        if result.is_err() {
            self.seq += 1;
            self.epoch = self.seq;
        }
        if self.epoch == self.seq && self.epoch > 0 {
            // Nothing before now can be trusted: every build re-arms.
            self.log.clear();
            self.log_floor = self.seq;
        }
    }

    /// Disarms the builds no longer held by any cache.
    fn drop_dead(&mut self) {
        let dead: Vec<Key> = self
            .builds
            .iter()
            .filter(|(_, a)| a.built.strong_count() == 0)
            .map(|(k, _)| k.clone())
            .collect();
        for k in dead {
            self.disarm(&k);
        }
        self.sweep_at = (2 * self.builds.len()).max(MIN_SWEEP);
    }

    /// Drops the build armed under `key`, and the watches only it used.
    fn disarm(&mut self, key: &Key) {
        let Some(armed) = self.builds.remove(key) else {
            return;
        };
        for dir in armed.dirs {
            self.release(&dir);
        }
    }

    fn release(&mut self, dir: &Path) {
        if let Some((wd, users)) = self.by_dir.get_mut(dir) {
            *users -= 1;
            if *users == 0 {
                let wd = *wd;
                self.watcher.remove(wd);
                self.by_wd.remove(&wd);
                self.by_dir.remove(dir);
            }
        }
    }

    /// Watches every folder `built` needs, or none (`None`: this build
    /// is checked by sweeping).
    fn arm(&mut self, built: &Arc<Built>, roots: &RootSet) -> Option<Armed> {
        // Builds no longer cached give their watches back first: looked
        // for once the armed builds have doubled since the last look, so
        // that arming stays linear however many builds are armed.
        if self.builds.len() >= self.sweep_at {
            self.drop_dead();
        }
        let trace = &built.trace;
        let mut by_dir: HashMap<PathBuf, Vec<usize>> = HashMap::new();
        let mut outside = Vec::new();
        let mut dirs: HashSet<PathBuf> = HashSet::new();
        let mut trusted: HashMap<RootId, bool> = HashMap::new();
        let mut ids: Vec<RootId> = Vec::new();
        for (i, e) in trace.entries.iter().enumerate() {
            let Place::Within(origin) = e.place else {
                outside.push(i);
                continue;
            };
            let root = roots.get(origin)?;
            let ok = *trusted.entry(origin).or_insert_with(|| {
                ids.push(origin);
                trustworthy(root)
            });
            if !ok {
                return None;
            }
            // A link's target may sit in another folder, whose events name
            // nothing traced here: a path that is a link is stamped on every
            // check, like the paths outside the roots.
            if root.is_symlink(&e.rel) {
                outside.push(i);
                continue;
            }
            let abs = root.path.join(&e.rel);
            let parent = abs.parent()?.to_path_buf();
            by_dir.entry(parent).or_default().push(i);
            add_folders(&root.path, &e.rel, &mut dirs);
            // A traced folder (a skills source, a listed level) changes
            // with its entries, and those raise events in the folder
            // itself, not in its parent: watch it, and look at it again
            // when it reports one.
            if e.stamp.is_dir() {
                by_dir.entry(abs.clone()).or_default().push(i);
                dirs.insert(abs);
            }
        }
        let roots_paths: Vec<PathBuf> = [RootId::Home, RootId::Repo]
            .into_iter()
            .chain(
                ids.iter()
                    .copied()
                    .filter(|id| !matches!(id, RootId::Home | RootId::Repo)),
            )
            .filter_map(|id| roots.get(id).map(|r| r.path.clone()))
            .collect();
        if self.by_dir.len() + dirs.len() > MAX_WATCHES {
            // Dead builds may still hold watches: give them back first.
            self.drop_dead();
            if self.by_dir.len() + dirs.len() > MAX_WATCHES {
                return None;
            }
        }
        let mut added = Vec::new();
        for dir in dirs {
            // One copy of a folder's path for every build watching it.
            if let Some((shared, _)) = self.by_dir.get_key_value(dir.as_path()) {
                let shared = Arc::clone(shared);
                if let Some((_, users)) = self.by_dir.get_mut(dir.as_path()) {
                    *users += 1;
                }
                added.push(shared);
                continue;
            }
            match self.watcher.add(&dir) {
                Ok(wd) => {
                    let dir: Arc<Path> = Arc::from(dir);
                    self.by_wd.insert(wd, Arc::clone(&dir));
                    self.by_dir.insert(Arc::clone(&dir), (wd, 1));
                    added.push(dir);
                }
                // Not there (yet), below the root: its nearest folder above
                // is watched, and its coming is a structural event there.
                Err(e)
                    if e.kind() == std::io::ErrorKind::NotFound && !roots_paths.contains(&dir) => {}
                // A link (the watch would not see what it leads to), the
                // watch limit, anything else: this build is swept.
                Err(e) => {
                    if matches!(e.raw_os_error(), Some(code) if code == libc_enospc() || code == libc_emfile())
                    {
                        self.limited = true;
                    }
                    for d in &added {
                        self.release(d);
                    }
                    return None;
                }
            }
        }
        // The folders' paths as the watches hold them (a folder not there
        // yet has a copy of its own).
        let by_dir = by_dir
            .into_iter()
            .map(|(dir, ix)| {
                let dir = match self.by_dir.get_key_value(dir.as_path()) {
                    Some((shared, _)) => Arc::clone(shared),
                    None => Arc::from(dir),
                };
                (dir, ix)
            })
            .collect();
        Some(Armed {
            built: Arc::downgrade(built),
            dirs: added,
            by_dir,
            outside,
            clean_at: 0,
        })
    }
}

/// The root and every folder from it down to the one holding `rel`.
fn add_folders(root: &Path, rel: &Path, dirs: &mut HashSet<PathBuf>) {
    let mut dir = root.to_path_buf();
    dirs.insert(dir.clone());
    if let Some(parent) = rel.parent() {
        for c in parent.components() {
            dir.push(c);
            dirs.insert(dir.clone());
        }
    }
}

/// `ENOSPC`: the per-user watch limit (`max_user_watches`).
fn libc_enospc() -> i32 {
    rustix::io::Errno::NOSPC.raw_os_error()
}

/// `EMFILE`: the per-user instance limit (`max_user_instances`).
fn libc_emfile() -> i32 {
    rustix::io::Errno::MFILE.raw_os_error()
}
