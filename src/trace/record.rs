//! The fingerprint: a hash of everything that decides the output.
//!
//! While a snapshot is built, every path examined is written to a [`Trace`]:
//! what was there ([`Stamp`]) and, for files read, a hash of the bytes read.
//! The fingerprint hashes the policy, the roots and, per entry, the path, its
//! kind, its size and its content hash — never inode or timestamps, so undoing
//! an edit restores the old value. The stamps are kept apart: they let a
//! later check decide, with one `stat` per path, that nothing changed.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, SystemTime};

use xxhash_rust::xxh3::Xxh3;

use crate::sandbox::{Place, RootSet, Stamp};
use crate::vocab::hash::{FastMap, FastSet};
use crate::vocab::origin::{Origin, RootId};

/// Folders vouched for, per root (by its place code): a short list, as a
/// build has a handful of roots.
#[derive(Debug, Default)]
struct Vouched(Vec<(u64, FastSet<Vec<u8>>)>);

impl Vouched {
    fn set(&self, code: u64) -> Option<&FastSet<Vec<u8>>> {
        self.0.iter().find(|(c, _)| *c == code).map(|(_, s)| s)
    }

    fn set_mut(&mut self, code: u64) -> &mut FastSet<Vec<u8>> {
        let at = match self.0.iter().position(|(c, _)| *c == code) {
            Some(at) => at,
            None => {
                self.0.push((code, FastSet::default()));
                self.0.len() - 1
            }
        };
        &mut self.0[at].1
    }
}

/// One examined path.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct TraceEntry {
    /// Where the path was examined.
    pub(crate) place: Place,
    /// The path: root-relative, or absolute outside the roots.
    pub(crate) rel: PathBuf,
    /// What was there.
    pub(crate) stamp: Stamp,
    /// A hash of the bytes read, when the file was read.
    pub(crate) content: Option<u128>,
}

impl TraceEntry {
    /// The entry of `rel` under `place` as `stamp` shows it, with a hash
    /// of `content` when the file was read.
    pub(crate) fn new(place: Place, rel: &Path, stamp: Stamp, content: Option<&[u8]>) -> Self {
        Self {
            place,
            rel: rel.to_path_buf(),
            stamp,
            content: content.map(xxhash_rust::xxh3::xxh3_128),
        }
    }

    /// Whether `now` (a fresh stamp of the same path) shows nothing that
    /// could change the output. Files and folders inside a root must look
    /// exactly the same. A repository marker only by its kind (a `.git`
    /// directory's timestamps move with every git command), and the cwd, home
    /// and repository root by their kind and identity (their timestamps move
    /// whenever any entry in them does; the entries that matter are traced
    /// themselves). The state folder and its files by their kind, identity,
    /// owner and whether others may write them: what decides whether the
    /// state is used.
    pub(crate) fn unchanged(&self, now: &Stamp) -> bool {
        match self.place {
            Place::Within(_) => *now == self.stamp,
            Place::Marker => kind_of(now) == kind_of(&self.stamp),
            Place::Owner => {
                kind_of(now) == kind_of(&self.stamp) && now.owner() == self.stamp.owner()
            }
            Place::Directory => {
                kind_of(now) == kind_of(&self.stamp) && now.identity() == self.stamp.identity()
            }
            // What decides whether the state folder is used: its kind,
            // which it is, who owns it and whether others may write it.
            Place::StateFolder | Place::StateFile => {
                kind_of(now) == kind_of(&self.stamp)
                    && now.identity() == self.stamp.identity()
                    && now.owner() == self.stamp.owner()
                    && now.writable_by_others() == self.stamp.writable_by_others()
            }
        }
    }
}

/// The file type of a stamp (or the non-presence it records).
fn kind_of(stamp: &Stamp) -> (u8, u32) {
    match *stamp {
        Stamp::Absent => (0, 0),
        Stamp::Error(reason) => (1, u32::from(reason as u8)),
        Stamp::Present { .. } => (2, stamp.type_bits()),
    }
}

/// Everything a snapshot examined.
#[derive(Debug)]
pub(crate) struct Trace {
    /// The entries, in the order examined. Shared: a loader holds each
    /// entry once, however many cached builds examined the same path and
    /// found it the same (the levels above a repository's cwds, its skills).
    pub(crate) entries: Vec<Arc<TraceEntry>>,
    /// When the examination started (for the racily-clean rule).
    pub(crate) started: SystemTime,
    /// Folders (per root, by its place code) seen to be real directories, not links,
    /// by a check in which the traced folder holding them was unchanged:
    /// while that folder stays unchanged, its entries cannot have been
    /// replaced, so later checks need not look at them again (see
    /// [`Trace::still_matches`]).
    vouched: Mutex<Vouched>,
    /// The stamp with the newest timestamp among the paths inside the
    /// roots, once asked for.
    newest: OnceLock<Option<Stamp>>,
    /// The deepest folder holding a traced path (the entry's index and the
    /// folder's length in its path), once asked for.
    deepest: OnceLock<Option<(usize, usize)>>,
}

impl Clone for Trace {
    fn clone(&self) -> Self {
        Self {
            entries: self.entries.clone(),
            started: self.started,
            vouched: Mutex::default(),
            newest: OnceLock::new(),
            deepest: OnceLock::new(),
        }
    }
}

impl Default for Trace {
    fn default() -> Self {
        Self {
            entries: Vec::new(),
            started: SystemTime::now(),
            vouched: Mutex::default(),
            newest: OnceLock::new(),
            deepest: OnceLock::new(),
        }
    }
}

impl Trace {
    /// Records an entry made already (shared with other builds).
    pub(super) fn push_entry(&mut self, entry: Arc<TraceEntry>) {
        self.entries.push(entry);
    }

    /// Records entries made already (shared with other builds).
    pub(super) fn extend(&mut self, entries: impl IntoIterator<Item = Arc<TraceEntry>>) {
        self.entries.extend(entries);
    }

    /// Makes room for `more` paths (a caller about to record many spares
    /// the copies of growing one at a time).
    pub(super) fn reserve(&mut self, more: usize) {
        self.entries.reserve(more);
    }

    /// Records a path (only a [`View`](super::View) records).
    pub(super) fn push(&mut self, place: Place, rel: &Path, stamp: Stamp, content: Option<&[u8]>) {
        self.entries
            .push(Arc::new(TraceEntry::new(place, rel, stamp, content)));
    }

    /// Whether every traced path looks as it did (see
    /// [`TraceEntry::unchanged`]), examined through `roots`. The caller
    /// checks the racily-clean rule and descriptor shortages.
    ///
    /// A path inside a root is first stamped with one unconfined `statx`
    /// (last component not followed), which is sound only when every folder
    /// on its way is a real directory: each such folder is stat'ed once per
    /// check (links not followed), unless the traced folder holding it was
    /// itself found unchanged this way and an earlier such check saw it as
    /// a real directory (an entry of an unchanged folder was not replaced).
    /// First of all, the way to the deepest traced folder is confirmed in
    /// one resolution that refuses every link, which vouches for every
    /// folder on it at once. A folder on the way found missing (no entry
    /// at all, under real directories) means the path is missing too, as
    /// the sandboxed stamp would find, and it is not looked for. Whenever
    /// the fast stamp differs, or a folder on the way is anything else but
    /// a real directory, the path is stamped again through the sandbox,
    /// and that stamp decides: the fast path can only say "unchanged"
    /// where the sandboxed stamp would. A directory outside the roots
    /// traced twice (the repository root, as a directory the caller named
    /// and as a marker's owner) is stamped once.
    pub(crate) fn still_matches(&self, roots: &RootSet) -> bool {
        let deepest = self.deepest_folder();
        self.check(roots, self.entries.iter().map(|e| &**e), deepest)
    }

    /// The deepest folder holding a traced path under a root (the cwd's
    /// level, for a chain), when it is deep enough that checking its whole
    /// way at once saves calls (see `Root::is_real_way`).
    fn deepest_folder(&self) -> Option<(Place, &[u8])> {
        // Found once per trace (the entries do not change once built), so
        // a check does not walk every path for it.
        let (i, len) = (*self.deepest.get_or_init(|| {
            self.entries
                .iter()
                .enumerate()
                .filter(|(_, e)| matches!(e.place, Place::Within(_)))
                .filter_map(|(i, e)| {
                    let rel = e.rel.as_os_str().as_encoded_bytes();
                    let dir = parent_of(rel)?;
                    let depth = memchr::memchr_iter(b'/', dir).count() + 1;
                    (depth >= WHOLE_WAY_MIN && is_plain(rel)).then_some((depth, i, dir.len()))
                })
                .max_by_key(|(depth, ..)| *depth)
                .map(|(_, i, len)| (i, len))
        }))?;
        let e = self.entries.get(i)?;
        Some((e.place, e.rel.as_os_str().as_encoded_bytes().get(..len)?))
    }

    /// [`still_matches`](Self::still_matches) for some of the entries only
    /// (a watched check looks again only where something happened).
    pub(crate) fn entries_match<'a>(
        &'a self,
        roots: &'a RootSet,
        entries: impl IntoIterator<Item = &'a TraceEntry>,
    ) -> bool {
        self.check(roots, entries, None)
    }

    /// The check of `entries`; the folders on the way to `deep` (with
    /// `deep`) are first confirmed as real directories all at once.
    fn check<'a>(
        &'a self,
        roots: &'a RootSet,
        entries: impl IntoIterator<Item = &'a TraceEntry>,
        deep: Option<(Place, &'a [u8])>,
    ) -> bool {
        let mut check = Check {
            roots,
            folders: FastMap::default(),
            unchanged_dirs: FastSet::default(),
            directories: Vec::new(),
            vouched: self.lock_vouched(),
            seen: Vec::new(),
        };
        if let Some((Place::Within(origin), dir)) = deep {
            check.confirm_whole_way(origin, dir);
        }
        let all = entries.into_iter().all(|e| check.entry(e));
        let Check {
            mut vouched, seen, ..
        } = check;
        for (code, dir) in seen {
            vouched.set_mut(code).insert(dir);
        }
        all
    }

    fn lock_vouched(&self) -> MutexGuard<'_, Vouched> {
        // Every update is one extend of a set of facts: a poisoned set is
        // still sound.
        self.vouched.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether any stamp is too fresh to vouch for its content.
    ///
    /// Only paths whose content or listing was used count: a marker or a
    /// root directory matters by its kind and identity alone (see
    /// [`TraceEntry::unchanged`]), never by its timestamps.
    pub(crate) fn has_racy_stamp(&self, window: Duration) -> bool {
        // A stamp is racy when its newest timestamp is close enough to the
        // start, so only the newest stamp of all can decide: found once,
        // and a check no longer walks every entry for it.
        self.newest
            .get_or_init(|| {
                self.entries
                    .iter()
                    .filter(|e| matches!(e.place, Place::Within(_)))
                    .filter_map(|e| match e.stamp {
                        Stamp::Present {
                            mtime_ns, ctime_ns, ..
                        } => Some((mtime_ns.max(ctime_ns), e.stamp)),
                        _ => None,
                    })
                    .max_by_key(|(t, _)| *t)
                    .map(|(_, stamp)| stamp)
            })
            .is_some_and(|stamp| stamp.is_racy(self.started, window))
    }

    /// The fingerprint, given the parts of the context outside the trace.
    /// `with_mtime` (the policy's `fingerprint.include-mtime`) adds the
    /// modification time of every file read inside a root, so that a touch
    /// moves it too.
    pub(crate) fn fingerprint(
        &self,
        policy_digest: u128,
        context: &[&str],
        with_mtime: bool,
    ) -> String {
        let mut h = Xxh3::new();
        field(&mut h, &policy_digest.to_le_bytes());
        for c in context {
            field(&mut h, c.as_bytes());
        }
        for e in &self.entries {
            match u8::try_from(e.place.code()) {
                Ok(code) if code < 5 => field(&mut h, &[code]),
                _ => field(&mut h, &e.place.code().to_le_bytes()),
            }
            field(&mut h, e.rel.as_os_str().as_encoded_bytes());
            match e.stamp {
                Stamp::Absent => field(&mut h, b"absent"),
                Stamp::Error(reason) => field(&mut h, &[b'e', reason as u8]),
                Stamp::Present {
                    size,
                    uid,
                    mtime_ns,
                    ..
                } => {
                    let kind = e.stamp.type_bits();
                    field(&mut h, &kind.to_le_bytes());
                    // The owner of a marker's directory decides whether the
                    // marker counts; a hard-linked project file is reported.
                    if e.place == Place::Owner {
                        field(&mut h, &uid.to_le_bytes());
                    }
                    // Who owns the state folder and its files, and whether
                    // others may write them, decide whether it is used.
                    if matches!(e.place, Place::StateFolder | Place::StateFile) {
                        field(&mut h, &uid.to_le_bytes());
                        field(&mut h, &[u8::from(e.stamp.writable_by_others())]);
                    }
                    // Only a project file's links are reported: the count
                    // of a home file's names says nothing about the output
                    // (and the nonce key has two names for an instant while
                    // it is put in place).
                    if e.stamp.is_hard_linked()
                        && matches!(e.place, Place::Within(id) if id.origin() == Origin::Project)
                    {
                        field(&mut h, b"hard-linked");
                    }
                    // A directory's size says nothing about the output (its
                    // entries are traced one by one) and need not come back
                    // when an entry is removed again; paths outside the
                    // roots count by kind alone (as `TraceEntry::unchanged`
                    // compares them), so a cached answer and a fresh build
                    // always agree.
                    let by_kind_only = !matches!(e.place, Place::Within(_));
                    if !e.stamp.is_dir() && !by_kind_only {
                        field(&mut h, &size.to_le_bytes());
                        if with_mtime && e.content.is_some() {
                            field(&mut h, &mtime_ns.to_le_bytes());
                        }
                    }
                }
            }
            match e.content {
                Some(c) => field(&mut h, &c.to_le_bytes()),
                None => field(&mut h, b""),
            }
        }
        format!("{:032x}", h.digest128())
    }
}

/// The state of one [`Trace::still_matches`]. Paths are handled as their
/// bytes (`/`-separated, as on every Unix).
struct Check<'a> {
    roots: &'a RootSet,
    /// Folders examined in this check: what each is now.
    folders: FastMap<(u64, &'a [u8]), Folder>,
    /// Traced folders found unchanged by the fast path in this check.
    unchanged_dirs: FastSet<(u64, &'a [u8])>,
    /// Directories outside the roots (links followed) stamped in this
    /// check, by their path's bytes.
    directories: Vec<(&'a [u8], Stamp)>,
    /// Folders earlier checks saw as real directories in an unchanged
    /// traced folder (one set per root).
    vouched: MutexGuard<'a, Vouched>,
    /// Folders this check saw so, to remember.
    seen: Vec<(u64, Vec<u8>)>,
}

/// What a folder on the way to a traced path is now, with every folder
/// above it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Folder {
    /// A real directory (not a link), under real directories only.
    Real,
    /// Nothing there (not even a link), under real directories: nothing
    /// can be below it.
    Missing,
    /// Anything else (a link, a file, an error, or something else above):
    /// the paths below it are stamped through the sandbox.
    Other,
}

impl Folder {
    /// What a look that does not follow the final link shows, for a path
    /// whose way is real.
    fn of(stamp: &Stamp) -> Self {
        match stamp {
            Stamp::Absent => Folder::Missing,
            _ if stamp.is_dir() => Folder::Real,
            _ => Folder::Other,
        }
    }
}

/// From how many folders deep the way to the deepest traced folder is
/// confirmed in one call (an open and a close) rather than a `statx` per
/// folder.
const WHOLE_WAY_MIN: usize = 3;

/// The folder part of a relative path (`None`: directly in the root).
fn parent_of(rel: &[u8]) -> Option<&[u8]> {
    memchr::memrchr(b'/', rel).map(|i| &rel[..i])
}

/// Whether a relative path has only normal components: not absolute, no
/// `.` or `..`, no empty component.
fn is_plain(rel: &[u8]) -> bool {
    !rel.is_empty()
        && rel
            .split(|&b| b == b'/')
            .all(|c| !c.is_empty() && c != b"." && c != b"..")
}

/// A path from its bytes (a prefix of a path's bytes cut at a `/` is a
/// path too).
fn path_of(bytes: &[u8]) -> &Path {
    Path::new(<std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(bytes))
}

impl<'a> Check<'a> {
    /// Confirms `dir` and every folder above it as real directories with
    /// one resolution that refuses every link (see `Root::is_real_way`);
    /// when it fails, nothing is recorded and each folder is looked at on
    /// its own, as before.
    fn confirm_whole_way(&mut self, origin: RootId, dir: &'a [u8]) {
        if !self
            .roots
            .get(origin)
            .is_some_and(|root| root.is_real_way(path_of(dir)))
        {
            return;
        }
        let code = Place::Within(origin).code();
        let mut prefix = Some(dir);
        while let Some(p) = prefix {
            self.folders.insert((code, p), Folder::Real);
            prefix = parent_of(p);
        }
    }

    fn entry(&mut self, e: &'a TraceEntry) -> bool {
        let Place::Within(origin) = e.place else {
            return self.outside(e);
        };
        let Some(root) = self.roots.get(origin) else {
            return false;
        };
        let code = e.place.code();
        let rel = e.rel.as_os_str().as_encoded_bytes();
        match self.way(code, origin, rel) {
            Folder::Real => {
                let fast = root.stamp_nofollow_unconfined(&e.rel);
                if e.unchanged(&fast) {
                    if fast.is_dir() {
                        self.unchanged_dirs.insert((code, rel));
                        // A real directory on a real way: the paths below
                        // it need not look at it again.
                        self.folders.insert((code, rel), Folder::Real);
                    }
                    return true;
                }
            }
            // A folder on the way is missing: so is the path, as the
            // sandboxed stamp would find.
            Folder::Missing => return e.unchanged(&Stamp::Absent),
            Folder::Other => {}
        }
        e.unchanged(&root.stamp(&e.rel))
    }

    /// A path outside the roots. A directory (followed) is stamped once
    /// per check: the repository root is traced both as a directory the
    /// caller named and as a marker's owner. Markers differ from each other
    /// and are stamped as they come.
    fn outside(&mut self, e: &'a TraceEntry) -> bool {
        if e.place == Place::Marker {
            return self
                .roots
                .restamp(e.place, &e.rel)
                .is_some_and(|now| e.unchanged(&now));
        }
        let rel = e.rel.as_os_str().as_encoded_bytes();
        if let Some((_, stamp)) = self.directories.iter().find(|(p, _)| *p == rel) {
            return e.unchanged(stamp);
        }
        let Some(now) = self.roots.restamp(e.place, &e.rel) else {
            return false;
        };
        self.directories.push((rel, now));
        e.unchanged(&now)
    }

    /// What the folders on the way to `rel` are now (`Real` for a path
    /// directly in the root); `Other` when `rel` is not plain.
    fn way(&mut self, code: u64, origin: RootId, rel: &'a [u8]) -> Folder {
        if !is_plain(rel) {
            return Folder::Other;
        }
        match parent_of(rel) {
            Some(dir) => self.folder(code, origin, dir),
            None => Folder::Real,
        }
    }

    /// What `dir` (with every folder above it, under the root) is now.
    fn folder(&mut self, code: u64, origin: RootId, dir: &'a [u8]) -> Folder {
        if let Some(&known) = self.folders.get(&(code, dir)) {
            return known;
        }
        let parent = parent_of(dir);
        if let Some(p) = parent {
            let above = self.folder(code, origin, p);
            if above != Folder::Real {
                self.folders.insert((code, dir), above);
                return above;
            }
        }
        let parent_unchanged = parent.is_some_and(|p| self.unchanged_dirs.contains(&(code, p)));
        let now = if parent_unchanged && self.vouched.set(code).is_some_and(|set| set.contains(dir))
        {
            Folder::Real
        } else {
            let now = self.roots.get(origin).map_or(Folder::Other, |root| {
                Folder::of(&root.stamp_nofollow_unconfined(path_of(dir)))
            });
            if now == Folder::Real && parent_unchanged {
                self.seen.push((code, dir.to_vec()));
            }
            now
        };
        self.folders.insert((code, dir), now);
        now
    }
}

/// Hashes one length-prefixed field, so that adjacent fields cannot run into
/// each other.
fn field(h: &mut Xxh3, bytes: &[u8]) {
    h.update(&(bytes.len() as u64).to_le_bytes());
    h.update(bytes);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(ino: u64, mtime_ns: i128) -> Stamp {
        Stamp::Present {
            mode: 0o040755,
            dev: 1,
            ino,
            size: 4096,
            uid: 0,
            nlink: 2,
            mtime_ns,
            ctime_ns: mtime_ns,
        }
    }

    fn entry(place: Place, stamp: Stamp) -> TraceEntry {
        TraceEntry {
            place,
            rel: PathBuf::from(".git"),
            stamp,
            content: None,
        }
    }

    #[test]
    fn outside_paths_compare_by_kind_and_identity() {
        // A `.git` touched by a git command: same kind, new timestamps.
        let marker = entry(Place::Marker, dir(7, 1));
        assert!(marker.unchanged(&dir(7, 99)));
        assert!(!marker.unchanged(&Stamp::Absent));
        // The cwd or a root: a new entry inside moves its mtime (fine); being
        // replaced by another directory changes its identity (not fine).
        let cwd = entry(Place::Directory, dir(7, 1));
        assert!(cwd.unchanged(&dir(7, 99)));
        assert!(!cwd.unchanged(&dir(8, 1)));
        // Inside a root, every field counts.
        let file = entry(Place::Within(RootId::Repo), dir(7, 1));
        assert!(!file.unchanged(&dir(7, 2)));
    }

    #[test]
    fn fingerprint_ignores_outside_timestamps_but_not_content() {
        let trace = |stamp, content: Option<&[u8]>| {
            let mut t = Trace::default();
            t.push(Place::Marker, Path::new("/r/.git"), stamp, None);
            t.push(
                Place::Within(RootId::Repo),
                Path::new("AGENTS.md"),
                Stamp::Absent,
                content,
            );
            t.fingerprint(1, &["/r"], false)
        };
        assert_eq!(trace(dir(7, 1), None), trace(dir(9, 5), None));
        assert_ne!(trace(dir(7, 1), None), trace(Stamp::Absent, None));
        assert_ne!(trace(dir(7, 1), Some(b"a")), trace(dir(7, 1), Some(b"b")));
    }
}
