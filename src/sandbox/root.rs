//! One opened root: its path, its cap-std handle, and everything the loader
//! may do under it (open a candidate, stat, list, look at a folder).

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, Ordering};

use cap_std::fs::Dir;

use super::listed::Listed;
use super::open::{self, Opened};
use super::shield::{self, Shield};
use super::stamp::Stamp;
use crate::policy::SymlinkRule;
use crate::vocab::reason::Reason;

/// The most links [`Root::resolve`] follows on one path (Linux's own
/// bound, `MAXSYMLINKS`).
pub(crate) const MAX_LINKS: usize = 40;

/// One opened root: its path, and the capability everything under it is
/// read through.
#[derive(Debug, Clone)]
pub(crate) struct Root {
    /// The root's absolute path, as found (never canonicalized).
    pub(crate) path: PathBuf,
    /// Shared between the cwds of one repository by the loader's
    /// [`Handles`](super::Handles).
    pub(super) dir: Arc<Dir>,
    /// Where a shortage of file descriptors met under this root is noted.
    pub(super) shortage: Arc<Shortage>,
    /// The folders nothing is read inside (version-control metadata).
    pub(super) shield: Arc<Shield>,
}

/// A folder as [`Root::look`] saw it: its stamp, and its entries (at most
/// the number asked for, in the file system's order).
#[derive(Debug, Clone)]
pub(crate) struct Looked {
    /// The folder's stamp (see [`Root::look_folder`]).
    pub(crate) stamp: Stamp,
    /// Its entries; `Ok(None)` when nothing is there or it is not a folder.
    pub(crate) listing: Result<Option<Vec<Listed>>, Reason>,
}

/// A file as [`Root::read`] read it.
#[derive(Debug)]
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
        bytes: Result<Vec<u8>, Reason>,
    },
}

/// The first shortage of file descriptors (EMFILE, ENFILE) met by the
/// roots of one build or check. What was read while descriptors ran out
/// says nothing about the files, so the whole result is thrown away.
#[derive(Debug, Default)]
pub(crate) struct Shortage(AtomicI32);

impl Shortage {
    /// Notes `e` when it is a shortage.
    pub(super) fn note(&self, e: &io::Error) {
        if open::is_exhaustion(e) {
            let errno = e.raw_os_error().unwrap_or(-1);
            let _ = self
                .0
                .compare_exchange(0, errno, Ordering::Relaxed, Ordering::Relaxed);
        }
    }

    /// The shortage met, if any, as an error.
    pub(crate) fn error(&self) -> Option<io::Error> {
        match self.0.load(Ordering::Relaxed) {
            0 => None,
            errno if errno > 0 => Some(io::Error::from_raw_os_error(errno)),
            _ => Some(io::Error::other("out of file descriptors")),
        }
    }
}

impl Root {
    /// Opens `rel` as a candidate file under the symlink rule (see
    /// [`open::open_candidate_telling`]), refusing (`vcs-metadata`) a path that
    /// enters version-control metadata as written or where the open really
    /// led (see [`shield`]).
    pub(crate) fn open_file(&self, rel: &Path, rule: SymlinkRule) -> Opened {
        if self.shield.covers(rel) {
            return Opened::Refused(Reason::VcsMetadata);
        }
        let (opened, ruled) =
            open::open_candidate_telling(&self.dir, rel, rule, &|e| self.shortage.note(e));
        match opened {
            // A lone name opened as no link: nothing was followed.
            Opened::File(file) if ruled || rel.components().nth(1).is_some() => {
                if self.leads_into_metadata(rel, &file.handle()) {
                    Opened::Refused(Reason::VcsMetadata)
                } else {
                    Opened::File(file)
                }
            }
            other => other,
        }
    }

    /// Whether opening `rel` led into version-control metadata: the path
    /// the kernel names for `fd` (what was opened), else the links on the
    /// way as read now; a way that cannot be told is taken as leading in.
    pub(super) fn leads_into_metadata(&self, rel: &Path, fd: &impl std::os::fd::AsFd) -> bool {
        match shield::real_rel(&*self.dir, fd) {
            Some(real) => self.shield.covers(&real),
            None => self.resolve(rel).is_none_or(|r| self.shield.covers(&r)),
        }
    }

    /// The folders nothing is read inside under this root.
    pub(crate) fn shield(&self) -> &Arc<Shield> {
        &self.shield
    }

    /// Stats `rel`, following links that stay inside the root.
    pub(crate) fn stamp(&self, rel: &Path) -> Stamp {
        match self.dir.metadata(rel) {
            Ok(m) => Stamp::of(&m),
            Err(e) => {
                self.shortage.note(&e);
                Stamp::of_error(&e)
            }
        }
    }

    /// The folder `rel`, stamped and listed up to `max` entries (see
    /// [`look_folder`](Self::look_folder)); a present non-folder is stamped
    /// and not listed.
    pub(crate) fn look(&self, rel: &Path, max: usize) -> Looked {
        let folder = self.look_folder(rel);
        let stamp = folder.stamp;
        let listing = if matches!(stamp, Stamp::Present { .. }) && !stamp.is_dir() {
            Ok(None)
        } else {
            folder.list(self, rel, max)
        };
        Looked { stamp, listing }
    }

    /// Opens `rel` under `rule` and reads it (`read` does the reading,
    /// given the open file; a file over `cap` bytes is not read).
    pub(crate) fn read(
        &self,
        rel: &Path,
        rule: SymlinkRule,
        cap: u64,
        read: impl FnOnce(&open::OpenFile) -> Result<Vec<u8>, Reason>,
    ) -> Read {
        match self.open_file(rel, rule) {
            Opened::Absent => Read::Absent,
            Opened::Refused(reason) => Read::Refused(reason),
            Opened::File(file) => Read::File {
                stamp: file.stamp(),
                len: file.len(),
                bytes: if file.len() > cap {
                    Err(Reason::TooLarge)
                } else {
                    read(&file)
                },
            },
        }
    }

    /// Stats `rel` with one `statx` relative to the root's handle, the last
    /// component not followed: the fast path of the unchanged check.
    ///
    /// This is **not** confined to the root by itself: the kernel follows a
    /// link met on the way. It is sound only under the rule the caller
    /// (`trace::Trace::still_matches`) keeps: every proper prefix of
    /// `rel` has been seen to be a real directory (not a link) in the same
    /// check, and `rel` has only normal components. The resolution then
    /// never leaves the root, and meets exactly what the sandboxed
    /// [`stamp`](Self::stamp) would, except for a last component that is a
    /// link (stamped here as the link, there as its target: never equal, so
    /// the caller falls back to the sandboxed stamp).
    #[cfg(target_os = "linux")]
    #[allow(
        clippy::disallowed_methods,
        reason = "the one fast stamp outside cap-std, relative to the root's own descriptor; its soundness rule is above"
    )]
    pub(crate) fn stamp_nofollow_unconfined(&self, rel: &Path) -> Stamp {
        use rustix::fs::{AtFlags, StatxFlags, statx};
        match statx(
            &*self.dir,
            rel,
            AtFlags::SYMLINK_NOFOLLOW,
            StatxFlags::BASIC_STATS,
        ) {
            Ok(st) => Stamp::of_statx(&st),
            Err(errno) => {
                let e = io::Error::from(errno);
                self.shortage.note(&e);
                Stamp::of_error(&e)
            }
        }
    }

    /// Elsewhere: cap-std's own stat, the last component not followed.
    #[cfg(not(target_os = "linux"))]
    pub(crate) fn stamp_nofollow_unconfined(&self, rel: &Path) -> Stamp {
        match self.dir.symlink_metadata(rel) {
            Ok(m) => Stamp::of(&m),
            Err(e) => {
                self.shortage.note(&e);
                Stamp::of_error(&e)
            }
        }
    }

    /// Whether `rel` and every folder on the way to it are real directories
    /// under the root now: one `openat2` (`O_PATH`, `RESOLVE_BENEATH |
    /// RESOLVE_NO_SYMLINKS`) that fails on any link met, and a close. What
    /// a `statx` of each folder (links not followed) would establish, in
    /// two calls however deep. `false` on any failure, including a kernel
    /// without `openat2`: the caller then looks at each folder.
    #[cfg(target_os = "linux")]
    #[allow(
        clippy::disallowed_methods,
        reason = "one resolution under the root's own descriptor that refuses every link; it opens nothing for reading"
    )]
    pub(crate) fn is_real_way(&self, rel: &Path) -> bool {
        use rustix::fs::{Mode, OFlags, ResolveFlags, openat2};
        use std::sync::atomic::AtomicBool;
        // A kernel without `openat2` (before 5.6, or valgrind) says so
        // once; it is not asked again.
        static MISSING: AtomicBool = AtomicBool::new(false);
        if MISSING.load(Ordering::Relaxed) {
            return false;
        }
        match openat2(
            &*self.dir,
            rel,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
            ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS,
        ) {
            Ok(_fd) => true,
            Err(errno) => {
                if errno == rustix::io::Errno::NOSYS {
                    MISSING.store(true, Ordering::Relaxed);
                }
                self.shortage.note(&io::Error::from(errno));
                false
            }
        }
    }

    /// Elsewhere: never (each folder is looked at on its own).
    #[cfg(not(target_os = "linux"))]
    pub(crate) fn is_real_way(&self, _rel: &Path) -> bool {
        false
    }

    /// Stats `rel` through the root's handle, the last component not
    /// followed (a link is stamped as the link, with its own owner).
    pub(crate) fn stamp_nofollow(&self, rel: &Path) -> Stamp {
        match self.dir.symlink_metadata(rel) {
            Ok(m) => Stamp::of(&m),
            Err(e) => {
                self.shortage.note(&e);
                Stamp::of_error(&e)
            }
        }
    }

    /// Where the links on the way to `rel` lead: the root-relative path
    /// with every link met spliced in and `..` taken back, as the kernel
    /// resolves it (each link is read through the root's handle, at most
    /// [`MAX_LINKS`] of them). `None` when the way leaves the root, loops,
    /// or a link cannot be read: opening `rel` then fails too. Nothing is
    /// opened or canonicalized.
    pub(crate) fn resolve(&self, rel: &Path) -> Option<PathBuf> {
        use std::path::Component;
        let mut done = PathBuf::new();
        let mut todo: std::collections::VecDeque<OsString> = rel
            .components()
            .map(|c| c.as_os_str().to_os_string())
            .collect();
        let mut links = 0usize;
        while let Some(part) = todo.pop_front() {
            match Path::new(&part).components().next() {
                Some(Component::Normal(_)) => {}
                Some(Component::ParentDir) => {
                    if !done.pop() {
                        return None;
                    }
                    continue;
                }
                Some(Component::CurDir) | None => continue,
                // An absolute path or a prefix leaves the root.
                Some(_) => return None,
            }
            done.push(&part);
            let Ok(meta) = self.dir.symlink_metadata(&done) else {
                // Nothing there (or unreadable): the rest is taken as
                // written, and opening it will say what it is.
                done.extend(todo.iter());
                return Some(done);
            };
            if !meta.file_type().is_symlink() {
                continue;
            }
            links += 1;
            if links > MAX_LINKS {
                return None;
            }
            let target = self.dir.read_link(&done).ok()?;
            if target.is_absolute() {
                return None;
            }
            done.pop();
            for c in target.components().rev() {
                todo.push_front(c.as_os_str().to_os_string());
            }
        }
        Some(done)
    }

    /// Whether `rel` itself is a symlink (the link is not followed).
    pub(crate) fn is_symlink(&self, rel: &Path) -> bool {
        match self.dir.symlink_metadata(rel) {
            Ok(m) => m.file_type().is_symlink(),
            Err(e) => {
                self.shortage.note(&e);
                false
            }
        }
    }

    /// The shortage of file descriptors met under this root (and the
    /// others sharing its record), if any.
    pub(crate) fn shortage(&self) -> Option<io::Error> {
        self.shortage.error()
    }

    /// Lists the folder `rel`: at most `max` entries, in the order the file
    /// system gives them (unreadable entries are passed over). `Ok(None)`
    /// when nothing is there; the reason it would be refused for when it
    /// cannot be listed.
    pub(crate) fn list(&self, rel: &Path, max: usize) -> Result<Option<Vec<Listed>>, Reason> {
        if self.shield.covers(rel)
            || (rel.components().next().is_some()
                && self.resolve(rel).is_some_and(|r| self.shield.covers(&r)))
        {
            return Err(Reason::VcsMetadata);
        }
        let entries = match self.dir.read_dir(rel) {
            Ok(entries) => entries,
            Err(e) => {
                self.shortage.note(&e);
                return match open::classify(&e) {
                    Opened::Refused(reason) => Err(reason),
                    Opened::Absent | Opened::File(_) => Ok(None),
                };
            }
        };
        let mut out = Vec::new();
        for entry in entries {
            if out.len() >= max {
                break;
            }
            let entry = match entry {
                Ok(entry) => entry,
                Err(e) => {
                    self.shortage.note(&e);
                    continue;
                }
            };
            let kind = entry.file_type().ok();
            out.push(Listed {
                name: entry.file_name(),
                is_link: kind.is_some_and(|t| t.is_symlink()),
                is_file: kind.is_some_and(|t| t.is_file()),
                is_dir: kind.is_some_and(|t| t.is_dir()),
            });
        }
        Ok(Some(out))
    }
}
