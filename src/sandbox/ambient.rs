//! The few looks at the disk that happen outside every root, each allowed
//! for a stated reason. Nothing here reads a byte of a repository's files.
//!
//! Before a root exists there is nothing to open relative to, so these take
//! absolute paths. Each is a `stat`, an open of a root directory, or a read of
//! a file the *user* named; none follows a path a repository chose except as
//! noted. Clippy refuses `std::fs` and ambient authority everywhere but in
//! this module (see `clippy.toml`).
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "the sandbox's own outside-root probes, each documented below"
)]

use std::io::{self, Read};
use std::path::Path;

use cap_fs_ext::{FollowSymlinks, OpenOptionsFollowExt, OpenOptionsSyncExt};
use cap_std::ambient_authority;
use cap_std::fs::{Dir, File, OpenOptions};

use super::stamp::Stamp;

/// A directory the caller named: the cwd, the home root, the repository root.
/// Links are followed (the user may work in a linked directory); it decides
/// which roots are opened, and is never read.
pub(super) fn directory_stamp(path: &Path) -> Stamp {
    Stamp::of_result(std::fs::metadata(path))
}

/// Like [`directory_stamp`], but the error is kept: the cwd and an explicit
/// `--home` must exist.
pub(crate) fn stat_directory(path: &Path) -> io::Result<Stamp> {
    std::fs::metadata(path).map(|m| Stamp::of_std(&m))
}

/// A repository marker (`.git`) in the cwd or one of its ancestors: the
/// search for the repository root has to look above any root. A marker that
/// is a symlink counts for what it points at, so a linked marker is stamped
/// by its target (a dangling link stamps as absent): the link's target
/// appearing or vanishing moves the root, and must move the fingerprint. Only
/// types are looked at; nothing is opened.
pub(super) fn marker_stamp(path: &Path) -> Stamp {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => Stamp::of_result(std::fs::metadata(path)),
        other => Stamp::of_result(other),
    }
}

/// Opens a root directory: the one place a capability is created.
pub(super) fn open_root(path: &Path) -> io::Result<Dir> {
    Dir::open_ambient_dir(path, ambient_authority())
}

/// Makes sure the loader's own state folder exists: created with its
/// missing parents, mode 0700, when absent. It must then be a real folder,
/// not a link: anything else is refused, and the loader keeps no state
/// there. Who owns it and who may write it is judged on its handle once
/// opened (see `roots::state_verdict`).
pub(super) fn ensure_state_dir(path: &Path) -> io::Result<()> {
    use std::os::unix::fs::DirBuilderExt as _;
    match std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(path)
    {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    let meta = std::fs::symlink_metadata(path)?;
    if !meta.is_dir() {
        return Err(io::Error::other("the state folder is not a folder"));
    }
    Ok(())
}

/// A state folder or a state file, stamped by its path to tell later
/// whether who owns it or who may write it changed: a folder with links
/// followed (as its handle was opened), a file with its final link not
/// followed (a link is never read as a state file).
pub(super) fn state_stamp(path: &Path, folder: bool) -> Stamp {
    if folder {
        directory_stamp(path)
    } else {
        Stamp::of_result(std::fs::symlink_metadata(path))
    }
}

/// Whether an open root handle still refers to the directory now at `path`
/// (a root replaced or moved gets a fresh handle).
pub(super) fn same_directory(dir: &Dir, path: &Path) -> bool {
    use cap_std::fs::MetadataExt as _;
    use std::os::unix::fs::MetadataExt as _;
    match (dir.dir_metadata(), std::fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// Why a file the user named could not be read.
#[derive(Debug)]
pub(crate) enum UserFileError {
    /// Nothing at the path.
    NotFound(io::Error),
    /// Opening or reading failed.
    Io(io::Error),
    /// A FIFO, directory or device.
    NotAFile,
    /// Longer than the limit.
    TooLarge,
}

/// Reads a file the user named (a policy file), up to `limit` bytes.
///
/// The file belongs to the user, not to a repository, so it is opened by its
/// full path and a link to it is followed anywhere (dotfile managers link
/// such files). Still: without blocking, and only if it is a regular file.
pub(crate) fn read_user_file(path: &Path, limit: u64) -> Result<Vec<u8>, UserFileError> {
    let file = match File::open_ambient_with(path, &user_file_options(), ambient_authority()) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(UserFileError::NotFound(e)),
        Err(e) => return Err(UserFileError::Io(e)),
    };
    read_user_opened(file, limit)
}

/// Reads the file `rel` under `dir` as [`read_user_file`] reads a file the
/// user named, but through the handle: a link is followed only where it
/// stays under `dir` (a served home's policy file, read through the
/// admitted home's handle).
pub(crate) fn read_file_under(dir: &Dir, rel: &Path, limit: u64) -> Result<Vec<u8>, UserFileError> {
    let file = match dir.open_with(rel, &user_file_options()) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(UserFileError::NotFound(e)),
        Err(e) => return Err(UserFileError::Io(e)),
    };
    read_user_opened(file, limit)
}

/// How a user's file is opened: for reading, links followed, without
/// blocking.
fn user_file_options() -> OpenOptions {
    let mut opts = OpenOptions::new();
    opts.read(true);
    opts.follow(FollowSymlinks::Yes);
    opts.nonblock(true);
    opts
}

/// Reads an opened user file: a regular file of at most `limit` bytes.
fn read_user_opened(file: File, limit: u64) -> Result<Vec<u8>, UserFileError> {
    let meta = file.metadata().map_err(UserFileError::Io)?;
    if !meta.is_file() {
        return Err(UserFileError::NotAFile);
    }
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(UserFileError::Io)?;
    if bytes.len() as u64 > limit {
        return Err(UserFileError::TooLarge);
    }
    Ok(bytes)
}

/// A policy file the user named (the home's `context-policy.toml`,
/// `--policy FILE`), stamped without reading it: kind, size, times, device
/// and inode, links followed as [`read_user_file`] follows them. A
/// long-lived loader compares this stamp before each call to learn that the
/// file was edited, replaced or removed, and loads its policy again.
pub(crate) fn user_file_stamp(path: &Path) -> Stamp {
    // The same look as at a directory the user named: links followed.
    directory_stamp(path)
}

/// Writes `bytes` to a file the user named on the command line (`survey
/// --write-baseline FILE`), created or truncated, links followed as for a
/// file the user reads. Never called with a path a repository chose.
pub(crate) fn write_user_file(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write as _;
    let mut opts = OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    let mut file = File::open_ambient_with(path, &opts, ambient_authority())?;
    file.write_all(bytes)?;
    file.sync_all()
}
