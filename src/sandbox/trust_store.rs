//! The second write the loader makes: the trust store in the home root,
//! which records what the user approved (see `crate::trust`).
//!
//! Everything goes through the home root's handle. The store is read like
//! any other home file (links not followed, regular files only, bounded), so
//! a store that is a symlink, a FIFO or a directory is an error, never an
//! approval. An update runs under an exclusive lock — a lock file created
//! with `create_new` next to the store — and replaces the store by writing a
//! fresh temporary file and renaming it over the old one (through
//! `home_write::write_home_file`, the one write helper), so a reader sees
//! either the old store or the new one, and two updates at once are applied
//! one after the other: each reads what the other wrote.

use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cap_std::fs::{OpenOptions, OpenOptionsExt as _};

use super::home_write::{Install, write_home_file};
use super::{Opened, Root, Stamp};
use crate::policy::SymlinkRule;
use crate::vocab::reason::Reason;

/// The largest store read: far more than any number of approvals needs.
pub(crate) const MAX_STORE_BYTES: u64 = 64 * 1024 * 1024;

/// How long an update waits for another one to release the lock.
const LOCK_PATIENCE: Duration = Duration::from_secs(10);

/// Why the store could not be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum StoreIoError {
    /// Something other than a regular file sits at the store's name, or a
    /// link (never followed).
    #[error("it is not a regular file ({0})")]
    Refused(Reason),
    /// It is larger than [`MAX_STORE_BYTES`].
    #[error("it is larger than {MAX_STORE_BYTES} bytes")]
    TooLarge,
    /// Reading or writing failed.
    #[error("{0}")]
    Io(#[from] io::Error),
    /// Another update held the lock for too long.
    #[error("another process holds its lock {}; if none is running, remove that file", crate::vocab::paths::shown(.0))]
    Locked(PathBuf),
}

/// The store as read: its bytes (`None`: there is none yet) and its stamp.
#[derive(Debug)]
pub(crate) struct StoreBytes {
    /// The content, when the file exists.
    pub(crate) bytes: Option<Vec<u8>>,
    /// What was at the path.
    pub(crate) stamp: Stamp,
}

/// Reads the store `rel` in the home root.
pub(crate) fn read_store(home: &Root, rel: &Path) -> Result<StoreBytes, StoreIoError> {
    match home.open_file(rel, SymlinkRule::Never) {
        Opened::Absent => Ok(StoreBytes {
            bytes: None,
            stamp: Stamp::Absent,
        }),
        Opened::Refused(reason) => Err(StoreIoError::Refused(reason)),
        Opened::File(file) => {
            let bytes = file.read_at_most(MAX_STORE_BYTES + 1)?;
            if bytes.len() as u64 > MAX_STORE_BYTES {
                return Err(StoreIoError::TooLarge);
            }
            Ok(StoreBytes {
                bytes: Some(bytes),
                stamp: file.stamp(),
            })
        }
    }
}

/// The lock file; removed when dropped.
struct Lock<'a> {
    home: &'a Root,
    name: PathBuf,
}

impl Drop for Lock<'_> {
    fn drop(&mut self) {
        let _ = self.home.dir.remove_file(&self.name);
    }
}

/// Takes the store's lock: creates `<rel>.lock` exclusively, and while
/// another process holds it, sleeps and tries again (1 ms, doubling up to
/// 50 ms: a waiter costs no core), for at most [`LOCK_PATIENCE`].
fn lock<'a>(home: &'a Root, rel: &Path) -> Result<Lock<'a>, StoreIoError> {
    let name = PathBuf::from(format!("{}.lock", rel.to_string_lossy()));
    let mut opts = OpenOptions::new();
    opts.write(true).create_new(true).mode(0o600);
    let start = Instant::now();
    let mut pause = Duration::from_millis(1);
    loop {
        match home.dir.open_with(&name, &opts) {
            Ok(file) => {
                drop(file);
                return Ok(Lock { home, name });
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                if start.elapsed() > LOCK_PATIENCE {
                    return Err(StoreIoError::Locked(home.path.join(&name)));
                }
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// Updates the store under its lock: `change` gets the store as it is now
/// and returns the new content, or its own error (the inner `Err`), which
/// leaves the store untouched. The new content is written to a fresh
/// temporary file, synced, and renamed over the store; the outer `Err` is
/// a failure to lock, read or write.
pub(crate) fn update_store<E>(
    home: &Root,
    rel: &Path,
    change: impl FnOnce(StoreBytes) -> Result<Vec<u8>, E>,
) -> Result<Result<(), E>, StoreIoError> {
    let _lock = lock(home, rel)?;
    let now = read_store(home, rel)?;
    let bytes = match change(now) {
        Ok(bytes) => bytes,
        Err(e) => return Ok(Err(e)),
    };
    write_home_file(home, rel, &bytes, true, Install::Replace)?;
    Ok(Ok(()))
}
