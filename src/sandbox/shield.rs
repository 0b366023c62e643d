//! What the door never reads inside: version-control metadata.
//!
//! A repository's `.git` (and `.hg`, `.svn`, `.jj`, and every folder the
//! policy names as a repository marker) holds remote URLs with tokens,
//! credential helpers and hooks, never a project's stated conventions. A
//! committed link such as `AGENTS.md -> .git/config` survives a clone, and
//! `git remote set-url` then puts a token behind it. So every root refuses
//! to open a file, or list a folder, whose path enters one of these folders,
//! by name or through any link on the way (`vcs-metadata`), whatever the
//! feature asking: the chain, fallbacks, rules, skills, imports, on-access
//! loading, `skill show`, `rule show`, the survey.
//!
//! The check is made on what was opened, not on what a path looked like
//! before: on Linux the kernel's own name for the open descriptor
//! (`/proc/self/fd`), taken relative to the root's, so a link swapped in
//! between a check and the open cannot slip past. Where that name cannot be
//! had, the links on the way are read through the root's handle
//! ([`Root::resolve`](super::Root::resolve)).

use std::ffi::OsStr;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, LazyLock};

use crate::policy::{Policy, VCS_METADATA_NAMES};

/// The folder names a root never reads inside (ASCII case aside: a
/// case-insensitive file system opens `.GIT/config` as `.git/config`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Shield {
    /// [`VCS_METADATA_NAMES`] and the policy's marker names, each once.
    names: Box<[Box<str>]>,
}

/// The shield of every policy whose markers are all version-control
/// folders (every shipped policy).
static STANDARD: LazyLock<Arc<Shield>> = LazyLock::new(|| {
    Arc::new(Shield {
        names: VCS_METADATA_NAMES.iter().map(|n| Box::from(*n)).collect(),
    })
});

impl Shield {
    /// The shield under `policy`: the version-control folders, and every
    /// `roots.repo-markers` entry (a marker names what makes a folder a
    /// repository's root; a marker folder is that repository's metadata).
    pub(crate) fn of(policy: &Policy) -> Arc<Self> {
        let mut names: Vec<Box<str>> = VCS_METADATA_NAMES.iter().map(|n| Box::from(*n)).collect();
        for marker in policy.roots.repo_markers.iter() {
            let m = marker.get_ref().as_str();
            if !names.iter().any(|n| n.eq_ignore_ascii_case(m)) && plain_name(m) {
                names.push(Box::from(m));
            }
        }
        if names.len() == VCS_METADATA_NAMES.len() {
            return Self::standard();
        }
        Arc::new(Self {
            names: names.into_boxed_slice(),
        })
    }

    /// The shield of the version-control folders alone.
    pub(crate) fn standard() -> Arc<Self> {
        Arc::clone(&STANDARD)
    }

    /// Whether `name` (one path component) is a folder never read inside.
    pub(crate) fn covers_name(&self, name: &OsStr) -> bool {
        self.names.iter().any(|n| name.eq_ignore_ascii_case(&**n))
    }

    /// Whether the root-relative `rel` names, or passes through, a folder
    /// never read inside, as written (no link followed).
    pub(crate) fn covers(&self, rel: &Path) -> bool {
        rel.components().any(|c| match c {
            Component::Normal(name) => self.covers_name(name),
            _ => false,
        })
    }
}

/// Whether a marker is one plain name (a marker such as `sub/.git` names
/// no single folder: its last component is what a path would enter).
fn plain_name(m: &str) -> bool {
    !m.is_empty() && !m.contains('/') && m != "." && m != ".."
}

/// The path the kernel gives the open descriptor `fd`, relative to the one
/// it gives the root's handle `root`: what was really opened, every link
/// resolved. `None` where `/proc` cannot say (no procfs, a root moved or
/// removed since it was opened).
#[cfg(target_os = "linux")]
#[allow(
    clippy::disallowed_methods,
    reason = "reads the kernel's name of two descriptors the sandbox holds, through the verified /proc/self/fd; it opens nothing"
)]
pub(super) fn real_rel(
    root: &impl std::os::fd::AsFd,
    fd: &impl std::os::fd::AsFd,
) -> Option<PathBuf> {
    use std::os::fd::AsRawFd as _;
    use std::os::unix::ffi::OsStringExt as _;
    let proc_fd = rustix_linux_procfs::proc_self_fd().ok()?;
    let name = |fd: std::os::fd::BorrowedFd<'_>| -> Option<PathBuf> {
        let link = rustix::fs::readlinkat(proc_fd, fd.as_raw_fd().to_string(), Vec::new()).ok()?;
        let path = PathBuf::from(std::ffi::OsString::from_vec(link.into_bytes()));
        // A removed file or folder is named "... (deleted)", and anything
        // not absolute is no path at all (a pipe, a socket).
        path.is_absolute().then_some(path)
    };
    let root = name(root.as_fd())?;
    let file = name(fd.as_fd())?;
    file.strip_prefix(&root).ok().map(Path::to_path_buf)
}

/// Elsewhere the kernel's name cannot be had this way.
#[cfg(not(target_os = "linux"))]
pub(super) fn real_rel(
    _root: &impl std::os::fd::AsFd,
    _fd: &impl std::os::fd::AsFd,
) -> Option<PathBuf> {
    None
}
