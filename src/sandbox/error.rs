//! Why the roots for a working directory could not be opened: the
//! sandbox's own error. The snapshot's public error
//! ([`SnapshotError`](crate::error::SnapshotError)) takes each case over
//! with its diagnostic code; the sandbox knows nothing of it.

use std::io;
use std::path::PathBuf;

use super::open;

/// Why [`open_roots`](super::open_roots) (or a reopen of a root) failed.
#[derive(Debug)]
pub(crate) enum RootsError {
    /// The working directory was given as a relative path.
    RelativeCwd(PathBuf),
    /// The working directory does not exist or cannot be examined.
    Cwd { path: PathBuf, source: io::Error },
    /// The working directory is not a directory.
    CwdNotADirectory(PathBuf),
    /// The explicit root does not contain the working directory.
    RootDoesNotContainCwd { root: PathBuf, cwd: PathBuf },
    /// A root could not be opened.
    OpenRoot { path: PathBuf, source: io::Error },
    /// Opening or reading under a root ran out of file descriptors.
    ResourceExhausted { path: PathBuf, source: io::Error },
    /// The home a server admitted is no longer the directory admitted, or
    /// no longer a real directory below the homes that this user owns:
    /// nothing of it is opened.
    HomeRefused { path: PathBuf, reason: String },
}

impl RootsError {
    /// The error for a root at `path` that could not be opened.
    pub(crate) fn open_root(path: PathBuf, e: io::Error) -> Self {
        if let Some(refused) = super::NotAdmitted::of(&e) {
            let reason = refused.reason.clone();
            Self::HomeRefused { path, reason }
        } else if open::is_exhaustion(&e) {
            Self::ResourceExhausted { path, source: e }
        } else {
            Self::OpenRoot { path, source: e }
        }
    }
}
