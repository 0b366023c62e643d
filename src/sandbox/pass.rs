//! One pass over the disk shared by the builds of a survey.
//!
//! `survey` builds one snapshot per policy for the same repository at the
//! same moment, and most of what those builds ask the disk is the same:
//! the same skill folders listed, the same `SKILL.md` files read, the same
//! levels stamped. A [`Pass`] answers each such question once, by root and
//! root-relative path, for as long as the pass lives: the first build to
//! ask does the real work through the root's handle, and every later build
//! gets that answer. A pass is made for one survey and dropped with it: it
//! never outlives the moment it describes, so what it answers is what a
//! fresh look at that moment would have found. Nothing long-lived holds
//! one (a loader that keeps its snapshots never has a pass).

use std::any::Any;
use std::os::unix::ffi::OsStrExt as _;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

use super::listed::Listed;
use super::stamp::Stamp;
use crate::policy::SymlinkRule;
use crate::vocab::hash::{FastMap, FastSet};
use crate::vocab::reason::Reason;

/// A folder as a pass saw it: its stamp, and its entries (at most the
/// number asked for, in the file system's order).
#[derive(Debug, Clone)]
pub(crate) struct Looked {
    /// The folder's stamp (see [`Root::look_folder`](super::Root::look_folder)).
    pub(crate) stamp: Stamp,
    /// Its entries; `Ok(None)` when nothing is there or it is not a folder.
    pub(crate) listing: Result<Option<Vec<Listed>>, Reason>,
}

impl Looked {
    /// This look with at most the first `max` entries.
    fn cut(&self, max: usize) -> Looked {
        let listing = match &self.listing {
            Ok(Some(entries)) => Ok(Some(entries.iter().take(max).cloned().collect())),
            other => other.clone(),
        };
        Looked {
            stamp: self.stamp,
            listing,
        }
    }
}

/// A file as the sandbox read it: in a pass, whole (up to a cap), so that
/// every build can take from it the part it reads.
#[derive(Debug, Clone)]
pub(crate) enum Read {
    /// Nothing there.
    Absent,
    /// Refused, with the reason.
    Refused(Reason),
    /// A regular file: its stamp and size from the open handle, and what
    /// the reader took from it (or why it took nothing).
    File {
        /// The open handle's stamp.
        stamp: Stamp,
        /// The size fstat reported.
        len: u64,
        /// What was read, or why nothing was.
        bytes: Result<Arc<[u8]>, Reason>,
    },
}

/// Answers by root path, then by root-relative path (each by its bytes,
/// looked up without copying them), then by what else the question holds.
type ByPath<Q, V> = FastMap<Box<[u8]>, FastMap<Box<[u8]>, Vec<(Q, V)>>>;

/// The largest file a pass reads whole and keeps: a larger one is read by
/// each build for itself, as far as its frontmatter goes (a repository of
/// thousands of large `SKILL.md` files would otherwise be held whole).
pub(crate) const SHARED_FILE_MAX: u64 = 16 * 1024;

/// The most bytes a pass keeps (files, listings, stamps, roughly weighed):
/// past it, answers are given but no longer kept, and a later build asks
/// the disk again, as it would without a pass.
const KEPT_BYTES_MAX: usize = 64 * 1024 * 1024;

/// What one survey's builds have asked the disk, by root path and
/// root-relative path.
#[derive(Debug)]
pub(crate) struct Pass {
    folders: RwLock<ByPath<usize, Arc<Looked>>>,
    stamps: RwLock<ByPath<(), Stamp>>,
    files: RwLock<ByPath<(), FileRead>>,
    /// What a layer above made of those answers (a `SKILL.md`'s
    /// frontmatter read one way, say), by root path and the layer's own
    /// key: see [`Pass::recall`].
    derived: RwLock<ByRoot<Derived>>,
    /// The questions a build is asking the disk right now, by kind, root
    /// and path: another build asking one of them waits for that answer
    /// (see [`remembered`]).
    asking: Mutex<Asking>,
    /// Woken when a question that a build waits for is answered.
    answered: Condvar,
    /// The ways of deriving values (see [`Pass::keep`]) that two builds of
    /// the pass or more take, when the pass was told
    /// ([`Pass::expecting`]); `None`: any way may be shared.
    shared_ways: Option<FastSet<Box<[u8]>>>,
    /// What the answers kept weigh.
    kept: AtomicUsize,
    /// The most they may weigh.
    max_kept: usize,
}

impl Default for Pass {
    fn default() -> Self {
        Self::with_budget(KEPT_BYTES_MAX)
    }
}

impl Read {
    /// Whether this answer, read under a cap of `read_cap` bytes, is also
    /// the answer under `cap`: it is unless it is a file no larger than
    /// `cap` that was too large to read under `read_cap`.
    fn serves(&self, read_cap: u64, cap: u64) -> bool {
        match self {
            Read::Absent | Read::Refused(_) => true,
            Read::File { len, .. } => *len > cap || *len <= read_cap,
        }
    }
}

/// A value a layer above derived from a pass's answers.
type Derived = Arc<dyn Any + Send + Sync>;

/// Values by root path, then by a key of the caller's.
type ByRoot<V> = FastMap<Box<[u8]>, FastMap<Box<[u8]>, V>>;

/// Which of a pass's maps a question is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    Folder,
    Stamp,
    File,
}

/// A question being asked: its kind, and a 128-bit hash of its root path
/// and root-relative path (no copy of the paths is made to ask). Two
/// questions with one hash would only make a build wait for the other's
/// answer: after a wait, the answer is looked for again and the question
/// asked when it is not there.
type Asked = (Kind, u128);

/// The [`Asked`] of a `kind` question about `rel` under `root`.
fn asked(kind: Kind, root: &[u8], rel: &[u8]) -> Asked {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(&(root.len() as u64).to_le_bytes());
    h.update(root);
    h.update(rel);
    (kind, h.digest128())
}

/// The questions being asked, and how many builds wait for an answer (a
/// wake-up is a system call: made only when someone waits).
#[derive(Debug, Default)]
struct Asking {
    questions: FastSet<Asked>,
    waiting: usize,
}

/// A file read in a pass: under which link rule (`None`: the rule had no
/// say, the last component not being a link) and cap.
#[derive(Debug, Clone)]
struct FileRead {
    rule: Option<SymlinkRule>,
    cap: u64,
    read: Read,
}

impl Pass {
    /// A pass keeping at most `max_kept` bytes of answers.
    pub(crate) fn with_budget(max_kept: usize) -> Self {
        Self {
            folders: RwLock::default(),
            stamps: RwLock::default(),
            files: RwLock::default(),
            derived: RwLock::default(),
            asking: Mutex::default(),
            answered: Condvar::new(),
            shared_ways: None,
            kept: AtomicUsize::new(0),
            max_kept,
        }
    }

    /// A pass for builds that derive values in the ways `builds` names:
    /// for each build, the ways it derives in (opaque bytes of the layer
    /// above). A way only one build takes is [not
    /// shared](Self::shares_way): what that build derives that way is asked
    /// for by no other, and need not be kept.
    pub(crate) fn expecting<W>(builds: impl IntoIterator<Item = W>) -> Self
    where
        W: IntoIterator<Item = Box<[u8]>>,
    {
        let mut seen = FastSet::default();
        let mut shared = FastSet::default();
        for ways in builds {
            // A way a build names twice is still one build's.
            let ways: FastSet<Box<[u8]>> = ways.into_iter().collect();
            for way in ways {
                if seen.contains(&way) {
                    shared.insert(way);
                } else {
                    seen.insert(way);
                }
            }
        }
        Self {
            shared_ways: Some(shared),
            ..Self::default()
        }
    }

    /// Whether two builds or more derive values `way` (see
    /// [`expecting`](Self::expecting)); true for any way when the pass was
    /// not told.
    pub(crate) fn shares_way(&self, way: &[u8]) -> bool {
        self.shared_ways
            .as_ref()
            .is_none_or(|shared| shared.contains(way))
    }

    /// Whether an answer weighing `weight` bytes may still be kept (and
    /// counts it when so).
    fn room_for(&self, weight: usize) -> bool {
        self.kept
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |kept| {
                kept.checked_add(weight).filter(|&k| k <= self.max_kept)
            })
            .is_ok()
    }

    /// The folder `rel` of the root at `root`, listed up to `max` entries:
    /// remembered, or looked at now by `look`. A listing made under
    /// another bound answers too, cut to `max`, when it holds every entry
    /// or at least `max` of them (a listing stops at its bound, so its first
    /// `max` entries are the same either way).
    pub(crate) fn folder(
        &self,
        root: &Path,
        rel: &Path,
        max: usize,
        look: impl FnOnce() -> Looked,
    ) -> Arc<Looked> {
        let answer = |kept: &[(usize, Arc<Looked>)]| {
            kept.iter().find_map(|(bound, looked)| {
                let n = match &looked.listing {
                    Ok(Some(entries)) => entries.len(),
                    _ => return Some(Arc::clone(looked)),
                };
                if max == *bound || (n < *bound && n <= max) {
                    Some(Arc::clone(looked))
                } else if max < n {
                    Some(Arc::new(looked.cut(max)))
                } else {
                    None
                }
            })
        };
        remembered(self, Kind::Folder, &self.folders, root, rel, answer, || {
            let looked = Arc::new(look());
            let weight = match &looked.listing {
                Ok(Some(entries)) => entries.iter().map(|e| e.name.len() + 32).sum(),
                _ => 0,
            };
            ((max, Arc::clone(&looked)), looked, weight + 64)
        })
    }

    /// What was kept under `key` for the root at `root` by
    /// [`keep`](Self::keep), if it is a `T`.
    ///
    /// A layer above the sandbox keeps here what it derives from the pass's
    /// answers alone (nothing else), under a key that holds everything the
    /// derivation depends on: a root-relative path and every setting that
    /// changes the result. Then every build that asks with the same key
    /// would derive the same value from the same answers, and takes it
    /// instead.
    pub(crate) fn recall<T: Any + Send + Sync>(&self, root: &Path, key: &[u8]) -> Option<Arc<T>> {
        let m = read(&self.derived);
        let kept = m.get(root.as_os_str().as_bytes())?.get(key)?;
        Arc::clone(kept).downcast::<T>().ok()
    }

    /// Keeps `value` under `key` for the root at `root` (see
    /// [`recall`](Self::recall)), while the pass has room for `weight`
    /// bytes.
    pub(crate) fn keep<T: Any + Send + Sync>(
        &self,
        root: &Path,
        key: Box<[u8]>,
        value: Arc<T>,
        weight: usize,
    ) {
        if !self.room_for(weight.saturating_add(key.len())) {
            return;
        }
        let root = root.as_os_str().as_bytes();
        let mut m = write(&self.derived);
        // The root's path is copied only the first time.
        let by_key = match m.get_mut(root) {
            Some(by_key) => by_key,
            None => m.entry(Box::from(root)).or_default(),
        };
        by_key.insert(key, value);
    }

    /// The stamp of `rel` under the root at `root`: remembered, or taken
    /// now by `stamp`.
    pub(crate) fn stamp(&self, root: &Path, rel: &Path, stamp: impl FnOnce() -> Stamp) -> Stamp {
        let answer = |kept: &[((), Stamp)]| kept.first().map(|(_, s)| *s);
        remembered(self, Kind::Stamp, &self.stamps, root, rel, answer, || {
            let s = stamp();
            (((), s), s, 64)
        })
    }

    /// The file `rel` under the root at `root`, opened under `rule` and
    /// read whole up to `cap` bytes: remembered, or read now by `read`
    /// (which also tells whether the link rule had a say). An answer read
    /// under another rule serves when the rule had no say; one read under
    /// another cap serves when [`Read::serves`] says so. A file larger than
    /// [`SHARED_FILE_MAX`] is never kept: `read` reads it as its caller
    /// wants, and each build reads it again.
    pub(crate) fn file(
        &self,
        root: &Path,
        rel: &Path,
        rule: SymlinkRule,
        cap: u64,
        read: impl FnOnce() -> (Read, bool),
    ) -> Read {
        let answer = |kept: &[((), FileRead)]| {
            kept.iter().find_map(|((), f)| {
                (f.rule.is_none_or(|r| r == rule) && f.read.serves(f.cap, cap))
                    .then(|| f.read.clone())
            })
        };
        remembered(self, Kind::File, &self.files, root, rel, answer, || {
            let (made, ruled) = read();
            let weight = match &made {
                Read::File { len, .. } if *len > SHARED_FILE_MAX => usize::MAX,
                Read::File { bytes: Ok(b), .. } => b.len() + 128,
                _ => 128,
            };
            let kept = FileRead {
                rule: ruled.then_some(rule),
                cap,
                read: made.clone(),
            };
            (((), kept), made, weight)
        })
    }
}

/// What `answer` finds among the answers kept for (`root`, `rel`), else
/// what `make` makes (and keeps, while `pass` has room for its weight).
///
/// One build at a time asks the disk a given question: a build that finds
/// another asking the same (kind, root, path) waits for that answer, and
/// asks for itself only when the answer kept does not serve it (another
/// bound, cap or link rule) or was not kept. So the builds of a survey
/// that run side by side still read each file once. Waits cannot form a
/// cycle: a stamp's or a file's `make` asks only the disk, and a folder's
/// asks at most for the stamp of the same path (when the folder will not
/// open), a question of another kind.
fn remembered<Q, V, R>(
    pass: &Pass,
    kind: Kind,
    map: &RwLock<ByPath<Q, V>>,
    root: &Path,
    rel: &Path,
    answer: impl Fn(&[(Q, V)]) -> Option<R>,
    make: impl FnOnce() -> ((Q, V), R, usize),
) -> R {
    let (root, rel) = (root.as_os_str().as_bytes(), rel.as_os_str().as_bytes());
    let find = || {
        let m = read(map);
        m.get(root)
            .and_then(|by_rel| by_rel.get(rel))
            .and_then(|kept| answer(kept))
    };
    if let Some(found) = find() {
        return found;
    }
    let asked = asked(kind, root, rel);
    let mut asking = lock(&pass.asking);
    loop {
        // Looked for again under the lock: an answer given between the
        // first look and now is found here, not asked again.
        if let Some(found) = find() {
            return found;
        }
        if !asking.questions.contains(&asked) {
            break;
        }
        asking.waiting += 1;
        asking = pass
            .answered
            .wait(asking)
            .unwrap_or_else(|p| p.into_inner());
        asking.waiting -= 1;
    }
    asking.questions.insert(asked);
    drop(asking);
    // Takes the question back however `make` ends (a panic included), so
    // that no build waits for an answer that will never come.
    let _asking = Question { pass, asked };
    let (kept, made, weight) = make();
    if !pass.room_for(weight) {
        return made;
    }
    // The paths are copied only the first time each is kept.
    let mut m = write(map);
    let by_rel = match m.get_mut(root) {
        Some(by_rel) => by_rel,
        None => m.entry(Box::from(root)).or_default(),
    };
    match by_rel.get_mut(rel) {
        Some(kept_here) => kept_here.push(kept),
        None => {
            by_rel.insert(Box::from(rel), vec![kept]);
        }
    }
    made
}

/// A question a build is asking: taken back, and the waiting builds
/// woken, when dropped.
struct Question<'a> {
    pass: &'a Pass,
    asked: Asked,
}

impl Drop for Question<'_> {
    fn drop(&mut self) {
        let waiting = {
            let mut asking = lock(&self.pass.asking);
            asking.questions.remove(&self.asked);
            asking.waiting
        };
        if waiting > 0 {
            self.pass.answered.notify_all();
        }
    }
}

/// Locks `m`: every update is one insert, so a poisoned map is sound.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Reads a map: builds that side by side find answers do not wait on each
/// other. Every update is one insert, so a poisoned map is sound.
fn read<T>(m: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    m.read().unwrap_or_else(|p| p.into_inner())
}

/// Writes a map (see [`read`]).
fn write<T>(m: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    m.write().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn past_its_budget_a_pass_answers_without_keeping() {
        let pass = Pass::with_budget(64 * 3);
        let root = Path::new("/r");
        let made = std::cell::Cell::new(0);
        let stamp = |rel: &str| {
            pass.stamp(root, Path::new(rel), || {
                made.set(made.get() + 1);
                Stamp::Absent
            })
        };
        for rel in ["a", "b", "c", "d"] {
            assert_eq!(stamp(rel), Stamp::Absent);
        }
        assert_eq!(made.get(), 4);
        // The first three were kept; the fourth was not.
        for rel in ["a", "b", "c"] {
            stamp(rel);
        }
        assert_eq!(made.get(), 4);
        stamp("d");
        assert_eq!(made.get(), 5);
    }

    #[test]
    fn a_pass_told_its_builds_ways_shares_only_those_two_take() {
        let ways = |ws: &[&str]| -> Vec<Box<[u8]>> {
            ws.iter().map(|w| Box::from(w.as_bytes())).collect()
        };
        let pass = Pass::expecting([
            ways(&["a", "x"]),
            ways(&["b", "x"]),
            ways(&["a"]),
            ways(&["c"]),
            ways(&["c", "c"]),
            ways(&["d", "d"]),
        ]);
        for shared in ["a", "c", "x"] {
            assert!(pass.shares_way(shared.as_bytes()), "{shared}");
        }
        // One build naming a way twice is still one build.
        for alone in ["b", "d", "e"] {
            assert!(!pass.shares_way(alone.as_bytes()), "{alone}");
        }
        // A pass told nothing may share any way.
        assert!(Pass::default().shares_way(b"b"));
        assert!(!Pass::expecting(std::iter::empty::<Vec<Box<[u8]>>>()).shares_way(b"a"));
    }

    #[test]
    fn a_derived_value_is_recalled_by_its_root_key_and_type_within_the_budget() {
        let pass = Pass::with_budget(1024);
        let (root, other) = (Path::new("/r"), Path::new("/s"));
        pass.keep(root, Box::from(&b"k"[..]), Arc::new(7u32), 100);
        assert_eq!(pass.recall::<u32>(root, b"k").as_deref(), Some(&7));
        // Another root, another key or another type: nothing.
        assert!(pass.recall::<u32>(other, b"k").is_none());
        assert!(pass.recall::<u32>(root, b"j").is_none());
        assert!(pass.recall::<u64>(root, b"k").is_none());
        // Past the budget, a value is not kept.
        pass.keep(root, Box::from(&b"big"[..]), Arc::new(8u32), 2048);
        assert!(pass.recall::<u32>(root, b"big").is_none());
    }

    #[test]
    fn builds_asking_at_once_have_the_disk_asked_once() {
        // Eight threads ask for the same stamp at once: one asks the disk,
        // the others wait for its answer.
        let pass = Pass::default();
        let asked = AtomicUsize::new(0);
        let root = Path::new("/r");
        let answers: Vec<Stamp> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|_| {
                    s.spawn(|| {
                        pass.stamp(root, Path::new("a"), || {
                            asked.fetch_add(1, Ordering::Relaxed);
                            // Long enough for the others to come asking.
                            std::thread::yield_now();
                            Stamp::Absent
                        })
                    })
                })
                .collect();
            handles.into_iter().filter_map(|h| h.join().ok()).collect()
        });
        assert_eq!(answers, vec![Stamp::Absent; 8]);
        assert_eq!(asked.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn a_file_over_the_shared_size_is_never_kept() {
        let pass = Pass::default();
        let root = Path::new("/r");
        let made = std::cell::Cell::new(0);
        let read = |len: u64| {
            pass.file(
                root,
                Path::new("SKILL.md"),
                SymlinkRule::WithinRoot,
                1 << 20,
                || {
                    made.set(made.get() + 1);
                    let file = Read::File {
                        stamp: Stamp::Absent,
                        len,
                        bytes: Ok(Arc::from(&b"---"[..])),
                    };
                    (file, false)
                },
            )
        };
        read(SHARED_FILE_MAX + 1);
        read(SHARED_FILE_MAX + 1);
        assert_eq!(made.get(), 2);
        // A small one is read once, for either link rule.
        let pass = Pass::default();
        let ask = |rule| {
            pass.file(root, Path::new("SKILL.md"), rule, 1 << 20, || {
                made.set(made.get() + 1);
                let file = Read::File {
                    stamp: Stamp::Absent,
                    len: 3,
                    bytes: Ok(Arc::from(&b"---"[..])),
                };
                (file, false)
            })
        };
        ask(SymlinkRule::WithinRoot);
        ask(SymlinkRule::Never);
        assert_eq!(made.get(), 3);
    }
}
