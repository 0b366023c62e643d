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
//! open fails for any reason other than "nothing there", the stamp and the
//! listing are taken by path, so every refusal is recorded as before.

use std::ffi::OsString;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt as _;
use std::path::Path;

use cap_std::fs::{OpenOptions, OpenOptionsExt as _};
use rustix::fs::{AtFlags, FileType, OFlags};
use rustix::io::Errno;

use super::listed::Listed;
use super::root::Root;
use super::stamp::Stamp;

/// A folder under a root, stamped; open for listing when it is one.
pub(crate) struct LookedFolder {
    /// Its stamp: the open handle's, or [`Root::stamp`]'s when it did not
    /// open as a folder.
    pub(crate) stamp: Stamp,
    /// The handle, when the folder opened for listing.
    pub(super) fd: Option<OwnedFd>,
    /// Why it will not be listed, when its way led into version-control
    /// metadata.
    pub(super) refused: Option<crate::vocab::reason::Reason>,
}

impl LookedFolder {
    /// Its entries, at most `max`: through the open handle, or by path
    /// ([`Root::list`], which then says why it cannot) when there is none.
    /// The handle is closed.
    pub(crate) fn list(
        self,
        root: &Root,
        rel: &Path,
        max: usize,
    ) -> Result<Option<Vec<Listed>>, crate::vocab::reason::Reason> {
        if let Some(reason) = self.refused {
            return Err(reason);
        }
        match self.fd {
            Some(fd) => Ok(Some(list_fd(root, fd, max))),
            None if self.stamp == Stamp::Absent => Ok(None),
            None => root.list(rel, max),
        }
    }
}

/// The entries of the open folder `fd`, at most `max`, in the order the
/// file system gives them ("." and ".." left out; an entry that cannot be
/// read ends the listing, as a failed `getdents` would).
#[allow(
    clippy::disallowed_methods,
    reason = "the listing reads a folder the sandbox opened under a root, by its descriptor, and stats each entry relative to it"
)]
fn list_fd(root: &Root, fd: OwnedFd, max: usize) -> Vec<Listed> {
    let mut out = Vec::new();
    let mut dir = match rustix::fs::Dir::new(fd) {
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
        let kind = match entry.file_type() {
            FileType::Unknown => {
                // The file system did not say (some do not): one stat of
                // the entry itself, relative to the open folder.
                dir.fd()
                    .and_then(|fd| {
                        rustix::fs::statat(fd, entry.file_name(), AtFlags::SYMLINK_NOFOLLOW)
                    })
                    .map_or(FileType::Unknown, |st| FileType::from_raw_mode(st.st_mode))
            }
            t => t,
        };
        out.push(Listed {
            name: OsString::from(std::ffi::OsStr::from_bytes(name)),
            is_link: kind == FileType::Symlink,
            is_file: kind == FileType::RegularFile,
            is_dir: kind == FileType::Directory,
        });
    }
    out
}

impl Root {
    /// Stamps the folder `rel` (links inside the root followed, as
    /// [`Root::stamp`] follows them) and opens it for listing, in one open
    /// and an fstat of the handle. When it does not open as a folder for a
    /// reason other than "nothing there", the stamp is [`Root::stamp`]'s,
    /// and a listing goes by path, which records the precise refusal.
    pub(crate) fn look_folder(&self, rel: &Path) -> LookedFolder {
        let by_path = || LookedFolder {
            stamp: self.stamp(rel),
            fd: None,
            refused: None,
        };
        if self.shield.covers(rel) {
            return LookedFolder {
                refused: Some(crate::vocab::reason::Reason::VcsMetadata),
                ..by_path()
            };
        }
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
                    Some(Errno::NOENT) => LookedFolder {
                        stamp: Stamp::Absent,
                        fd: None,
                        refused: None,
                    },
                    _ => by_path(),
                };
            }
        };
        match dir.metadata() {
            // Where the way there really led decides whether it is listed.
            Ok(meta) => {
                let refused = self
                    .leads_into_metadata(rel, &dir)
                    .then_some(crate::vocab::reason::Reason::VcsMetadata);
                LookedFolder {
                    stamp: Stamp::of(&meta),
                    fd: refused.is_none().then(|| OwnedFd::from(dir.into_std())),
                    refused,
                }
            }
            Err(e) => {
                self.shortage.note(&e);
                by_path()
            }
        }
    }
}
