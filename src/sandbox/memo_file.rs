//! The third write the loader makes: the memo of parsed skill frontmatter
//! in the home root (see `crate::skills::memo`), a cache that only ever
//! saves work and never decides anything.
//!
//! It is read like any other home file (links not followed, regular files
//! only, bounded), and replaced whole: the new content goes to a fresh
//! temporary file, which is renamed over the old one, so a reader sees one
//! complete memo or the other. Two processes replacing it at once lose one
//! of their updates, which costs a parse later and nothing else; so there is
//! no lock and no sync.

use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

use cap_std::fs::{OpenOptions, OpenOptionsExt as _};

use super::{Opened, Root};
use crate::policy::SymlinkRule;

/// The memo `rel` of the home root, when it is a regular file of at most
/// `max` bytes that reads without error; `None` otherwise (absent, a link,
/// a FIFO, too large, unreadable: a memo that cannot be used is no memo).
pub(crate) fn read_memo(home: &Root, rel: &Path, max: u64) -> Option<Vec<u8>> {
    let Opened::File(file) = home.open_file(rel, SymlinkRule::Never) else {
        return None;
    };
    if file.len() > max {
        return None;
    }
    let bytes = file.read_at_most(max.saturating_add(1)).ok()?;
    (bytes.len() as u64 <= max).then_some(bytes)
}

/// Replaces the memo `rel` of the home root with `bytes` (mode 0600).
pub(crate) fn replace_memo(home: &Root, rel: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut salt = [0u8; 8];
    let _ = rustix::rand::getrandom(&mut salt, rustix::rand::GetRandomFlags::empty());
    let tmp = PathBuf::from(format!(
        "{}.{}.{:x}.tmp",
        rel.to_string_lossy(),
        std::process::id(),
        u64::from_le_bytes(salt)
    ));
    let write = || -> io::Result<()> {
        let mut opts = OpenOptions::new();
        opts.write(true).create_new(true).mode(0o600);
        let mut file = home.dir.open_with(&tmp, &opts)?;
        file.write_all(bytes)?;
        drop(file);
        home.dir.rename(&tmp, &home.dir, rel)
    };
    let written = write();
    if written.is_err() {
        let _ = home.dir.remove_file(&tmp);
    }
    written
}
