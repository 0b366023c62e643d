//! Opening a candidate under a root, and bounded reads from it.
//!
//! A candidate is opened without following its last component and without
//! blocking; its type is checked on the open handle, never on the path. Only
//! regular files are handed out, and they are read only up to a limit.

use std::io::{self, Read};
use std::path::Path;

use cap_fs_ext::{FollowSymlinks, OpenOptionsFollowExt, OpenOptionsSyncExt};
use cap_std::fs::{Dir, Metadata, OpenOptions};
use rustix::io::Errno;

use super::stamp::Stamp;
use crate::policy::SymlinkRule;
use crate::reason::Reason;

/// What opening a candidate found.
#[derive(Debug)]
pub(crate) enum Opened {
    /// Nothing at that path.
    Absent,
    /// Something there that will not be read.
    Refused(Reason),
    /// A regular file, open for reading.
    File(OpenFile),
}

/// A regular file opened under a root. The only thing to do with it is read
/// a bounded prefix.
#[derive(Debug)]
pub(crate) struct OpenFile {
    /// The handle: a plain `std` file once opened (the sandbox governs
    /// opening, and std reads into spare capacity without zero-filling it).
    #[allow(
        clippy::disallowed_types,
        reason = "a file the sandbox opened under a root, read only through this type"
    )]
    file: std::fs::File,
    /// Its metadata, taken from the handle.
    meta: Metadata,
}

impl OpenFile {
    /// The file's size, as fstat reported it when it was opened.
    pub(crate) fn len(&self) -> u64 {
        self.meta.len()
    }

    /// The stamp of the open handle.
    pub(crate) fn stamp(&self) -> Stamp {
        Stamp::of(&self.meta)
    }

    /// Reads at most `limit` bytes from the start (or from where the last
    /// read stopped).
    pub(crate) fn read_at_most(&self, limit: u64) -> io::Result<Vec<u8>> {
        // Sized from fstat, so a small file costs one allocation; never more
        // than 64 KiB up front, whatever the file claims.
        let initial = limit.min(self.len().saturating_add(1)).min(64 * 1024);
        let mut buf = Vec::with_capacity(usize::try_from(initial).unwrap_or(0));
        self.read_into(&mut buf, limit)?;
        Ok(buf)
    }

    /// Appends at most `limit` more bytes to `buf`; returns how many came.
    pub(crate) fn read_into(&self, buf: &mut Vec<u8>, limit: u64) -> io::Result<usize> {
        let mut handle = &self.file;
        (&mut handle).take(limit).read_to_end(buf)
    }
}

/// What an error from opening, listing or stating a path means for a
/// candidate.
pub(crate) fn classify(e: &io::Error) -> Opened {
    if e.kind() == io::ErrorKind::NotFound {
        return Opened::Absent;
    }
    match Errno::from_io_error(e) {
        // A component on the way is a file: nothing can be there.
        Some(Errno::NOTDIR) => Opened::Absent,
        // `O_NONBLOCK` on a FIFO without a writer, or a device without a
        // driver behind it.
        Some(Errno::NXIO) => Opened::Refused(Reason::NotRegularFile),
        // A symlink met where links are not followed (Linux says ELOOP, the
        // BSDs EMLINK), or a chain of links too long to resolve.
        Some(errno) if is_link_errno(errno) => Opened::Refused(Reason::SymlinkEscape),
        Some(_) => Opened::Refused(Reason::Unreadable),
        // cap-std refuses a path that would leave the root with
        // PermissionDenied and no OS error number; a real EACCES has one.
        None if e.kind() == io::ErrorKind::PermissionDenied => {
            Opened::Refused(Reason::SymlinkEscape)
        }
        None => Opened::Refused(Reason::Unreadable),
    }
}

/// Whether an error says the process (EMFILE) or the system (ENFILE) ran
/// out of file descriptors: a passing shortage of the reader's, which says
/// nothing about the file and must never be recorded as a fact about it.
pub(crate) fn is_exhaustion(e: &io::Error) -> bool {
    Errno::from_io_error(e).is_some_and(|errno| errno == Errno::MFILE || errno == Errno::NFILE)
}

fn is_link_errno(errno: Errno) -> bool {
    errno == Errno::LOOP || errno == Errno::MLINK
}

fn is_link_error(e: &io::Error) -> bool {
    Errno::from_io_error(e).is_some_and(is_link_errno)
}

fn options(follow: FollowSymlinks) -> OpenOptions {
    let mut o = OpenOptions::new();
    o.read(true);
    o.follow(follow);
    // A FIFO opened for reading would wait for a writer; non-blocking mode
    // makes the open return at once, and the type check below refuses it.
    o.nonblock(true);
    o
}

/// Opens `rel` under `dir` as a candidate file, applying the symlink rule.
///
/// The last component is opened without following; if it is a link, it is
/// refused (`never`) or opened again following links, which cap-std confines to
/// the root (`within-root`). The type is then checked on the handle.
///
/// Every error met is shown to `note` first (the root counts descriptor
/// shortages there).
pub(super) fn open_candidate(
    dir: &Dir,
    rel: &Path,
    rule: SymlinkRule,
    note: &dyn Fn(&io::Error),
) -> Opened {
    let file = match dir.open_with(rel, &options(FollowSymlinks::No)) {
        Ok(f) => f,
        Err(e) if is_link_error(&e) => match rule {
            SymlinkRule::Never => return Opened::Refused(Reason::SymlinkRefused),
            SymlinkRule::WithinRoot => match dir.open_with(rel, &options(FollowSymlinks::Yes)) {
                Ok(f) => f,
                Err(e) => {
                    note(&e);
                    return classify(&e);
                }
            },
        },
        Err(e) => {
            note(&e);
            return classify(&e);
        }
    };
    match file.metadata() {
        Ok(meta) if meta.is_file() => Opened::File(OpenFile {
            file: file.into_std(),
            meta,
        }),
        Ok(_) => Opened::Refused(Reason::NotRegularFile),
        Err(_) => Opened::Refused(Reason::Unreadable),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_classified_by_errno_not_by_number() {
        let os = |errno: Errno| io::Error::from_raw_os_error(errno.raw_os_error());
        let reason = |e: &io::Error| match classify(e) {
            Opened::Refused(r) => Some(r),
            _ => None,
        };
        assert!(matches!(classify(&os(Errno::NOENT)), Opened::Absent));
        assert!(matches!(classify(&os(Errno::NOTDIR)), Opened::Absent));
        assert_eq!(reason(&os(Errno::LOOP)), Some(Reason::SymlinkEscape));
        assert_eq!(reason(&os(Errno::MLINK)), Some(Reason::SymlinkEscape));
        assert_eq!(reason(&os(Errno::NXIO)), Some(Reason::NotRegularFile));
        assert_eq!(reason(&os(Errno::ACCESS)), Some(Reason::Unreadable));
        let escape = io::Error::new(io::ErrorKind::PermissionDenied, "outside the root");
        assert_eq!(reason(&escape), Some(Reason::SymlinkEscape));
        assert!(is_exhaustion(&os(Errno::MFILE)));
        assert!(is_exhaustion(&os(Errno::NFILE)));
        assert!(!is_exhaustion(&os(Errno::ACCESS)));
    }
}
