//! What an error number means for the door: nothing there, something
//! refused (with its reason), or a shortage of file descriptors that says
//! nothing about the file.

use std::io;

use rustix::io::Errno;

use crate::vocab::reason::Reason;

/// What an error met on a path says about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Failure {
    /// Nothing at that path.
    Absent,
    /// Something there that will not be read.
    Refused(Reason),
}

/// What an error from opening, listing or stating a path means for a
/// candidate.
pub(crate) fn classify(e: &io::Error) -> Failure {
    if e.kind() == io::ErrorKind::NotFound {
        return Failure::Absent;
    }
    match Errno::from_io_error(e) {
        // A component on the way is a file: nothing can be there.
        Some(Errno::NOTDIR) => Failure::Absent,
        // `O_NONBLOCK` on a FIFO without a writer, or a device without a
        // driver behind it.
        Some(Errno::NXIO) => Failure::Refused(Reason::NotRegularFile),
        // A symlink met where links are not followed (Linux says ELOOP, the
        // BSDs EMLINK), or a chain of links too long to resolve.
        Some(errno) if is_link_errno(errno) => Failure::Refused(Reason::SymlinkEscape),
        Some(_) => Failure::Refused(Reason::Unreadable),
        // cap-std refuses a path that would leave the root with
        // PermissionDenied and no OS error number; a real EACCES has one.
        None if e.kind() == io::ErrorKind::PermissionDenied => {
            Failure::Refused(Reason::SymlinkEscape)
        }
        None => Failure::Refused(Reason::Unreadable),
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

pub(super) fn is_link_error(e: &io::Error) -> bool {
    Errno::from_io_error(e).is_some_and(is_link_errno)
}
