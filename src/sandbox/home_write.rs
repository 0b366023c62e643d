//! The one way the loader writes a file: all three of its writes (the nonce
//! key, the trust store, the frontmatter memo) are files of the state root
//! (`roots.state`: the home root under Lisa's policy, a private folder of
//! the loader's own under the others), and each goes through
//! [`write_home_file`]. The bytes go to a fresh temporary file beside the
//! target, created exclusively through that root's handle (so never through a link, and never over anything already
//! there) with mode 0600, synced when asked, and then moved into place in
//! one step: renamed over the target, or hard-linked to it only when the
//! target does not exist yet. A reader sees the old file or the new one,
//! never half of one, and the temporary file never outlives the call.

use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

use cap_std::fs::{OpenOptions, OpenOptionsExt as _};

use super::root::Root;

/// How the new file takes its place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Install {
    /// Renamed over the target, whatever was there.
    Replace,
    /// Linked to the target only when nothing is there yet (two processes
    /// racing agree on the first one's file).
    IfAbsent,
}

/// Writes `bytes` to `rel` under `root` as described in the module docs.
/// `Ok(false)` when `install` is [`Install::IfAbsent`] and the target
/// already existed (nothing was changed).
pub(crate) fn write_home_file(
    root: &Root,
    rel: &Path,
    bytes: &[u8],
    sync: bool,
    install: Install,
) -> io::Result<bool> {
    let tmp = temporary_name(rel);
    let write = || -> io::Result<()> {
        let mut opts = OpenOptions::new();
        opts.write(true).create_new(true).mode(0o600);
        let mut file = root.dir.open_with(&tmp, &opts)?;
        file.write_all(bytes)?;
        if sync {
            file.sync_all()?;
        }
        Ok(())
    };
    let placed = write().and_then(|()| match install {
        Install::Replace => root.dir.rename(&tmp, &root.dir, rel).map(|()| true),
        Install::IfAbsent => match root.dir.hard_link(&tmp, &root.dir, rel) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
            Err(e) => Err(e),
        },
    });
    // After a rename there is nothing left to remove; after a link or a
    // failure the temporary name goes.
    if install == Install::IfAbsent || placed.is_err() {
        let _ = root.dir.remove_file(&tmp);
    }
    placed
}

/// A temporary name beside `rel`, unique to this process and this call.
fn temporary_name(rel: &Path) -> PathBuf {
    let mut salt = [0u8; 8];
    let _ = rustix::rand::getrandom(&mut salt, rustix::rand::GetRandomFlags::empty());
    PathBuf::from(format!(
        "{}.{}.{:x}.tmp",
        rel.to_string_lossy(),
        std::process::id(),
        u64::from_le_bytes(salt)
    ))
}
