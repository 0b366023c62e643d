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

use std::os::unix::ffi::OsStrExt as _;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use super::listed::Listed;
use super::stamp::Stamp;
use crate::policy::{Fences, SymlinkRule};
use crate::vocab::hash::FastMap;
use crate::vocab::reason::Reason;

/// A folder as a pass saw it: its stamp, and its entries (at most the
/// number asked for, in the file system's order).
#[derive(Debug)]
pub(crate) struct Looked {
    /// The folder's stamp (see [`Root::look_folder`](super::Root::look_folder)).
    pub(crate) stamp: Stamp,
    /// Its entries; `Ok(None)` when nothing is there or it is not a folder.
    pub(crate) listing: Result<Option<Vec<Listed>>, Reason>,
}

/// How a file is read, which is part of what a pass remembers it by: two
/// builds that read the same file differently each read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum ReadAs {
    /// As far as its frontmatter goes (between these fences), never past
    /// `cap` bytes.
    Frontmatter {
        /// The most bytes read.
        cap: u64,
        /// The fences the frontmatter stands between.
        fences: Fences,
    },
    /// Whole, never past `cap` bytes.
    Whole {
        /// The most bytes read.
        cap: u64,
    },
}

/// A file as a pass read it.
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

/// What one survey's builds have asked the disk, by root path and
/// root-relative path.
#[derive(Debug, Default)]
pub(crate) struct Pass {
    folders: Mutex<ByPath<usize, Arc<Looked>>>,
    stamps: Mutex<ByPath<(), Stamp>>,
    files: Mutex<ByPath<(SymlinkRule, ReadAs), Read>>,
}

impl Pass {
    /// The folder `rel` of the root at `root`, listed up to `max` entries:
    /// remembered, or looked at now by `look`.
    pub(crate) fn folder(
        &self,
        root: &Path,
        rel: &Path,
        max: usize,
        look: impl FnOnce() -> Looked,
    ) -> Arc<Looked> {
        once(&self.folders, root, rel, max, || Arc::new(look()))
    }

    /// The stamp of `rel` under the root at `root`: remembered, or taken
    /// now by `stamp`.
    pub(crate) fn stamp(&self, root: &Path, rel: &Path, stamp: impl FnOnce() -> Stamp) -> Stamp {
        once(&self.stamps, root, rel, (), stamp)
    }

    /// The file `rel` under the root at `root`, opened under `rule` and
    /// read `how`: remembered, or read now by `read`.
    pub(crate) fn file(
        &self,
        root: &Path,
        rel: &Path,
        rule: SymlinkRule,
        how: ReadAs,
        read: impl FnOnce() -> Read,
    ) -> Read {
        once(&self.files, root, rel, (rule, how), read)
    }
}

/// The answer to (`root`, `rel`, `q`), made by `make` the first time. The
/// lock is not held while `make` works, so two builds asking at once may
/// both do the work; the first answer kept is the one every later ask gets.
fn once<Q: PartialEq, V: Clone>(
    map: &Mutex<ByPath<Q, V>>,
    root: &Path,
    rel: &Path,
    q: Q,
    make: impl FnOnce() -> V,
) -> V {
    let (root, rel) = (root.as_os_str().as_bytes(), rel.as_os_str().as_bytes());
    let find = |m: &ByPath<Q, V>| {
        m.get(root)?
            .get(rel)?
            .iter()
            .find(|(k, _)| *k == q)
            .map(|(_, v)| v.clone())
    };
    if let Some(v) = find(&lock(map)) {
        return v;
    }
    let made = make();
    let mut m = lock(map);
    if let Some(v) = find(&m) {
        return v;
    }
    m.entry(Box::from(root))
        .or_default()
        .entry(Box::from(rel))
        .or_default()
        .push((q, made.clone()));
    made
}

/// Locks `m`: every update is one insert, so a poisoned map is sound.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
