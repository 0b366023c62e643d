//! A folder under a root opened once: stamped and listed through the same
//! handle.
//!
//! A skill source is stamped (for the fingerprint) and then listed. Done by
//! path, that is a stat (cap-std opens the path `O_PATH`, stats the handle
//! and closes it) and a listing (cap-std opens the folder, duplicates the
//! handle by opening "." again, reads, closes both): ten system calls. Done
//! through one handle, it is an open, an fstat, the reads and a close. The
//! stamp is the handle's, so it is exactly what [`Root::stamp`] reports for
//! the same folder (links inside the root followed in both); whenever the
//! open fails for any reason other than "nothing there", the caller falls
//! back to the path-based calls, so every refusal is recorded as before.

use std::ffi::OsString;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt as _;
use std::path::Path;

use cap_std::fs::{OpenOptions, OpenOptionsExt as _};
use rustix::fs::{AtFlags, FileType, OFlags};
use rustix::io::Errno;

use super::stamp::Stamp;
use super::{Listed, Root};

/// What opening a folder found.
pub(crate) enum FolderLook {
    /// A folder, open for listing, with its stamp.
    Open(OpenFolder),
    /// Nothing at that path (its stamp is [`Stamp::Absent`]).
    Absent,
    /// Anything else (a file, a refused link, an unreadable folder...): ask
    /// [`Root::stamp`] and [`Root::list`] by path for the precise answer.
    Other,
}

/// A folder opened under a root.
pub(crate) struct OpenFolder {
    stamp: Stamp,
    fd: OwnedFd,
}

impl OpenFolder {
    /// The folder's stamp, taken from the open handle.
    pub(crate) fn stamp(&self) -> Stamp {
        self.stamp
    }

    /// Its entries, at most `max`, in the order the file system gives them
    /// ("." and ".." left out; an entry that cannot be read ends the
    /// listing, as a failed `getdents` would). The handle is closed.
    pub(crate) fn list(self, root: &Root, max: usize) -> Vec<Listed> {
        let mut out = Vec::new();
        let mut dir = match rustix::fs::Dir::new(self.fd) {
            Ok(dir) => dir,
            Err(errno) => {
                root.shortage.note(&io::Error::from(errno));
                return out;
            }
        };
        while out.len() < max {
            let entry = match dir.read() {
                Some(Ok(entry)) => entry,
                Some(Err(errno)) => {
                    root.shortage.note(&io::Error::from(errno));
                    break;
                }
                None => break,
            };
            let name = entry.file_name().to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            let is_link = match entry.file_type() {
                FileType::Unknown => {
                    // The file system did not say (some do not): one stat of
                    // the entry itself, relative to the open folder.
                    dir.fd()
                        .and_then(|fd| {
                            rustix::fs::statat(fd, entry.file_name(), AtFlags::SYMLINK_NOFOLLOW)
                        })
                        .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::Symlink)
                }
                t => t == FileType::Symlink,
            };
            out.push(Listed {
                name: OsString::from(std::ffi::OsStr::from_bytes(name)),
                is_link,
            });
        }
        out
    }
}

impl Root {
    /// Opens the folder `rel` (links inside the root followed, as
    /// [`Root::stamp`] follows them) and stamps it through the handle.
    pub(crate) fn open_folder(&self, rel: &Path) -> FolderLook {
        // Opened for reading (cap-std's own folder handles are `O_PATH`,
        // which cannot be listed), and only if it is a folder.
        let mut opts = OpenOptions::new();
        opts.read(true)
            .custom_flags((OFlags::DIRECTORY | OFlags::NONBLOCK).bits() as i32);
        let dir = match self.dir.open_with(rel, &opts) {
            Ok(dir) => dir,
            Err(e) => {
                self.shortage.note(&e);
                return match Errno::from_io_error(&e) {
                    Some(Errno::NOENT) => FolderLook::Absent,
                    _ => FolderLook::Other,
                };
            }
        };
        let stamp = match dir.metadata() {
            Ok(meta) => Stamp::of(&meta),
            Err(e) => {
                self.shortage.note(&e);
                return FolderLook::Other;
            }
        };
        FolderLook::Open(OpenFolder {
            stamp,
            fd: OwnedFd::from(dir.into_std()),
        })
    }
}
