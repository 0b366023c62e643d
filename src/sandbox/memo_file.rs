//! The third write the loader makes: the memo of parsed skill frontmatter
//! in the home root (see `crate::skills::memo`), a cache that only ever
//! saves work and never decides anything.
//!
//! It is read like any other home file (links not followed, regular files
//! only, bounded), and replaced whole: the new content goes to a fresh
//! temporary file, which is renamed over the old one (through
//! `home_write::write_home_file`, the one write helper), so a reader sees one
//! complete memo or the other. Two processes replacing it at once lose one
//! of their updates, which costs a parse later and nothing else; so there is
//! no lock and no sync.

use std::io::{self};
use std::path::Path;

use super::home_write::{Install, write_home_file};
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
    // A cache: no sync (a memo lost in a crash costs a parse).
    write_home_file(home, rel, bytes, false, Install::Replace).map(drop)
}
