//! One entry of a listed folder.

use std::ffi::OsString;

/// One entry of a listed folder.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Listed {
    /// The entry's name.
    pub(crate) name: OsString,
    /// Whether the entry itself is a symlink.
    pub(crate) is_link: bool,
}
