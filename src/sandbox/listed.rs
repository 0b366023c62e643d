//! One entry of a listed folder.

use std::ffi::OsString;

/// One entry of a listed folder.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Listed {
    /// The entry's name.
    pub(crate) name: OsString,
    /// Whether the entry itself is a symlink.
    pub(crate) is_link: bool,
    /// Whether the listing says the entry is a regular file (false when
    /// the file system did not say what it is).
    pub(crate) is_file: bool,
    /// Whether the listing says the entry is a folder (not a link to
    /// one; false when the file system did not say).
    pub(crate) is_dir: bool,
}
