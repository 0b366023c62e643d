//! Stamps: what a path looked like when it was examined, enough to tell
//! without reading that nothing about it changed.

use std::io;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rustix::fs::FileType;

use super::errno::{Failure, classify};
use crate::vocab::reason::Reason;

/// What a path looked like when it was last examined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Stamp {
    /// Nothing there.
    Absent,
    /// Something there that could not be examined (an escape, a permission
    /// error), with the reason it would be refused for.
    Error(Reason),
    /// Something there.
    Present {
        /// File type and permission bits.
        mode: u32,
        /// Device.
        dev: u64,
        /// Inode.
        ino: u64,
        /// Size in bytes.
        size: u64,
        /// Owner.
        uid: u32,
        /// Number of hard links.
        nlink: u64,
        /// Modification time, nanoseconds since the epoch.
        mtime_ns: i128,
        /// Status-change time, nanoseconds since the epoch.
        ctime_ns: i128,
    },
}

/// How close to the moment of reading a timestamp may be before a stamp is
/// distrusted (git's "racily clean" problem): a file written twice within one
/// timestamp tick keeps its metadata, so only a re-read can tell. Two seconds
/// covers the coarsest common file systems.
pub const RACY_WINDOW: Duration = Duration::from_secs(2);

/// The metadata fields a stamp keeps, from either `std` or cap-std metadata
/// (both expose the same Unix fields under the same names).
macro_rules! stamp_of {
    ($meta:expr) => {{
        let m = $meta;
        Stamp::Present {
            mode: m.mode(),
            dev: m.dev(),
            ino: m.ino(),
            size: m.size(),
            uid: m.uid(),
            nlink: m.nlink(),
            mtime_ns: i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec()),
            ctime_ns: i128::from(m.ctime()) * 1_000_000_000 + i128::from(m.ctime_nsec()),
        }
    }};
}

impl Stamp {
    /// The stamp of metadata taken through a root handle.
    pub(crate) fn of(meta: &cap_std::fs::Metadata) -> Stamp {
        use cap_std::fs::MetadataExt as _;
        stamp_of!(meta)
    }

    /// The stamp of metadata taken by path (the probes outside the roots).
    pub(super) fn of_std(meta: &std::fs::Metadata) -> Stamp {
        use std::os::unix::fs::MetadataExt as _;
        stamp_of!(meta)
    }

    #[cfg(target_os = "linux")]
    /// The stamp of a raw `statx` result, with the same fields (and the
    /// same device number encoding) as cap-std's metadata gives.
    pub(super) fn of_statx(st: &rustix::fs::Statx) -> Stamp {
        let ns = |t: &rustix::fs::StatxTimestamp| {
            i128::from(t.tv_sec) * 1_000_000_000 + i128::from(t.tv_nsec)
        };
        Stamp::Present {
            mode: u32::from(st.stx_mode),
            dev: rustix::fs::makedev(st.stx_dev_major, st.stx_dev_minor),
            ino: st.stx_ino,
            size: st.stx_size,
            uid: st.stx_uid,
            nlink: u64::from(st.stx_nlink),
            mtime_ns: ns(&st.stx_mtime),
            ctime_ns: ns(&st.stx_ctime),
        }
    }

    /// The stamp of a failed stat or open.
    pub(crate) fn of_error(e: &io::Error) -> Stamp {
        match classify(e) {
            Failure::Refused(reason) => Stamp::Error(reason),
            Failure::Absent => Stamp::Absent,
        }
    }

    /// The stamp of a stat result.
    pub(super) fn of_result(meta: io::Result<std::fs::Metadata>) -> Stamp {
        match meta {
            Ok(m) => Stamp::of_std(&m),
            Err(e) => Stamp::of_error(&e),
        }
    }

    /// The file type, when something is there.
    pub(crate) fn file_type(&self) -> Option<FileType> {
        match *self {
            Stamp::Present { mode, .. } => Some(FileType::from_raw_mode(mode as _)),
            _ => None,
        }
    }

    /// Whether a directory is there.
    pub(crate) fn is_dir(&self) -> bool {
        self.file_type() == Some(FileType::Directory)
    }

    /// Whether a regular file is there.
    pub(crate) fn is_file(&self) -> bool {
        self.file_type() == Some(FileType::RegularFile)
    }

    /// The file-type bits alone (`S_IFMT` of the mode), 0 when nothing is
    /// there: what the fingerprint hashes for a path's kind.
    #[allow(
        clippy::useless_conversion,
        reason = "the raw mode is u32 on Linux, u16 on macOS"
    )]
    pub(crate) fn type_bits(&self) -> u32 {
        self.file_type().map_or(0, |t| u32::from(t.as_raw_mode()))
    }

    /// Whether the stamp was taken too close to `observed` to vouch for the
    /// content: its newest timestamp lies within `window` of `observed` (see
    /// [`RACY_WINDOW`]).
    pub(crate) fn is_racy(&self, observed: SystemTime, window: Duration) -> bool {
        let Stamp::Present {
            mtime_ns, ctime_ns, ..
        } = *self
        else {
            return false;
        };
        let observed_ns = observed
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as i128);
        mtime_ns.max(ctime_ns) + window.as_nanos() as i128 >= observed_ns
    }

    /// The owner's uid, when present.
    pub(crate) fn owner(&self) -> Option<u32> {
        match *self {
            Stamp::Present { uid, .. } => Some(uid),
            _ => None,
        }
    }

    /// Whether a regular file with more than one hard link is there.
    pub(crate) fn is_hard_linked(&self) -> bool {
        matches!(*self, Stamp::Present { nlink, .. } if nlink > 1) && self.is_file()
    }

    /// Whether the group or others may write what is there (`mode & 0o022`):
    /// a state folder or file that is so is not used. Never for a link,
    /// whose own mode means nothing (its owner still says who put it
    /// there).
    pub(crate) fn writable_by_others(&self) -> bool {
        matches!(*self, Stamp::Present { mode, .. } if mode & 0o022 != 0)
            && self.file_type() != Some(FileType::Symlink)
    }

    /// The permission bits (`mode & 0o7777`), when present.
    pub(crate) fn permissions(&self) -> Option<u32> {
        match *self {
            Stamp::Present { mode, .. } => Some(mode & 0o7777),
            _ => None,
        }
    }

    /// Device and inode, when present.
    pub(crate) fn identity(&self) -> Option<(u64, u64)> {
        match *self {
            Stamp::Present { dev, ino, .. } => Some((dev, ino)),
            _ => None,
        }
    }
}

/// Whether what `uid` owns is trusted as the user's own: the user running
/// the loader, or root (git's rule for `safe.directory`).
pub(crate) fn is_trusted_owner(uid: u32) -> bool {
    uid == 0 || uid == rustix::process::geteuid().as_raw()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(t: i128) -> Stamp {
        Stamp::Present {
            mode: 0o100644,
            dev: 1,
            ino: 2,
            size: 3,
            uid: 0,
            nlink: 1,
            mtime_ns: t,
            ctime_ns: t,
        }
    }

    #[test]
    fn stamps_of_recent_files_are_racy() {
        let now = SystemTime::now();
        let ns = now
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as i128);
        assert!(at(ns).is_racy(now, RACY_WINDOW));
        assert!(at(ns - 1_000_000_000).is_racy(now, RACY_WINDOW));
        assert!(!at(ns - 3_000_000_000).is_racy(now, RACY_WINDOW));
        assert!(!Stamp::Absent.is_racy(now, RACY_WINDOW));
        // A zero window distrusts only stamps from the very moment observed.
        assert!(!at(ns - 1).is_racy(now, Duration::ZERO));
        assert!(at(ns).is_racy(now, Duration::ZERO));
    }

    #[test]
    fn file_types_come_from_the_mode() {
        assert!(at(0).is_file());
        assert!(!at(0).is_dir());
        assert_eq!(at(0).type_bits(), 0o100000);
        assert_eq!(Stamp::Absent.type_bits(), 0);
    }
}
