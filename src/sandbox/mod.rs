//! The sandbox: the roots, and the one door to the disk.
//!
//! Everything lisa-context learns from the file system passes through this
//! module. Under a root, access goes through that root's cap-std [`Dir`]
//! with a root-relative path, so nothing a repository holds can name a file
//! outside it: a link leaving the root fails inside cap-std, whatever the
//! caller forgot to check. [`Root`] offers exactly what the loader needs and
//! no more: open a candidate file (never blocking, regular files only), read
//! a bounded prefix of it, stat a path, list a folder.
//!
//! The few probes that must look outside every root (the search for the
//! repository marker, the cwd, the root directories themselves, the user's
//! policy files) live in `ambient`, each with the reason it is allowed.
//!
//! Clippy enforces the door: `clippy.toml` disallows `std::fs`, ambient
//! authority, path-based metadata and rustix's file calls everywhere, and
//! only these files of this module carry an `#[allow]` for them, each at
//! the item that needs it and with its reason (`tests/it/door.rs` holds
//! the code to this list): `ambient.rs`, `folder.rs`, `open.rs`,
//! `root.rs`, `shield.rs`, `watch.rs`.
//!
//! Every root refuses what lies inside version-control metadata (`.git`,
//! `.hg`, `.svn`, `.jj`, the policy's marker folders), by name or through
//! a link, for every read (`shield.rs`).

mod admitted;
mod ambient;
mod errno;
mod error;
mod folder;
mod handles;
mod home_write;
mod listed;
mod memo_file;
mod open;
mod place;
mod policy_file;
mod root;
mod roots;
mod secret;
mod shield;
mod stamp;
mod trust_store;
#[cfg(target_os = "linux")]
pub(crate) mod watch;

pub(crate) use admitted::{Admitted, NotAdmitted};
pub(crate) use ambient::{
    UserFileError, read_user_file, stat_directory, user_file_stamp, write_user_file,
};
pub(crate) use handles::{DEFAULT_HANDLE_BUDGET, Handles};

pub(crate) use error::RootsError;
pub(crate) use listed::Listed;
pub(crate) use memo_file::{read_memo, replace_memo};
pub(crate) use open::{OpenFile, Opened, is_exhaustion};
pub(crate) use place::Place;
pub(crate) use root::{Looked, Read, Root, Shortage};
pub(crate) use roots::{RootSet, Roots, attach, open_roots};
pub(crate) use secret::{KEY_BYTES, home_key, process_key};
pub(crate) use shield::Shield;
pub use stamp::RACY_WINDOW;
pub(crate) use stamp::{Stamp, is_trusted_owner};
pub(crate) use trust_store::{MAX_STORE_BYTES, StoreBytes, StoreIoError, read_store, update_store};
