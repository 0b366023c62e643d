//! A home a server admitted (`LoaderBuilder::home_below`, what `serve
//! --homes-under DIR` does with a request's `home`): a real directory below
//! the directory of homes, reached with no link on the way, that this user
//! (or root) owns.
//!
//! The admission is kept as the directory's identity (device and inode),
//! never as a path alone. Every later use opens the home again from the
//! directory of homes, one folder at a time with no link followed
//! ([`Admitted::open`]), and takes the handle only when it is still that
//! directory and still this user's; the loader's root handles hand out, for
//! the home's path, only a handle whose identity is the admitted one
//! (`Handles`). So whatever the path has become between a check and a use
//! (a link to another home, a folder outside the homes, a directory handed
//! to another user), nothing is read from it and nothing is written there:
//! what is read and written is the admitted directory's, or nothing.

use std::io;
use std::path::{Component, Path, PathBuf};

use cap_fs_ext::DirExt as _;
use cap_std::fs::Dir;

use super::ambient::{self, UserFileError};
use super::open;
use super::stamp::{Stamp, is_trusted_owner};

/// Why a home is not (or no longer) served: a sentence for the user.
#[derive(Debug, thiserror::Error)]
#[error("{reason}")]
pub(crate) struct NotAdmitted {
    /// Why.
    pub(crate) reason: String,
    /// The process ran out of file descriptors on the way (EMFILE,
    /// ENFILE): the home could not be looked at, which says nothing about
    /// it; a caller answers with the shortage, not a refusal.
    pub(crate) shortage: Option<io::Error>,
}

impl NotAdmitted {
    fn new(reason: impl Into<String>) -> Self {
        Self {
            reason: reason.into(),
            shortage: None,
        }
    }

    /// The refusal for `e`, met while looking at the home: `reason`, or
    /// the shortage of descriptors it is.
    fn on(e: io::Error, reason: String) -> Self {
        Self {
            reason,
            shortage: open::is_exhaustion(&e).then_some(e),
        }
    }

    /// As an I/O error (what a root handle's open returns), from which
    /// [`NotAdmitted::of`] takes it back; a shortage of descriptors stays
    /// the shortage it is.
    pub(crate) fn into_io(self) -> io::Error {
        match self.shortage {
            Some(e) => e,
            None => io::Error::other(self),
        }
    }

    /// The refusal an I/O error carries, if it is one.
    pub(crate) fn of(e: &io::Error) -> Option<&NotAdmitted> {
        e.get_ref()?.downcast_ref::<NotAdmitted>()
    }
}

/// A home admitted below a directory of homes, by its identity.
#[derive(Debug)]
pub(crate) struct Admitted {
    /// The directory of homes, as the operator named it (a link to it is
    /// followed: the operator chose it).
    under: PathBuf,
    /// The home below it: normal components only.
    rel: PathBuf,
    /// `under` joined with `rel`: the home's path.
    path: PathBuf,
    /// The admitted directory's device and inode.
    identity: (u64, u64),
}

impl Admitted {
    /// Admits `home` below `under`: `home` is absolute with no `.` or `..`,
    /// lies strictly below `under`, every folder from `under` down to it is
    /// a real directory (opened one at a time, no link followed), and this
    /// user (or root) owns it.
    pub(crate) fn admit(under: &Path, home: &Path) -> Result<Self, NotAdmitted> {
        let plain = home.is_absolute()
            && home
                .components()
                .all(|c| matches!(c, Component::RootDir | Component::Normal(_)));
        if !plain {
            return Err(NotAdmitted::new(
                "a home is an absolute path without `.` or `..`",
            ));
        }
        let Ok(rel) = home.strip_prefix(under) else {
            return Err(NotAdmitted::new(
                "it is not below the directory of homes (--homes-under)",
            ));
        };
        if rel.as_os_str().is_empty() {
            return Err(NotAdmitted::new("it is the directory of homes itself"));
        }
        let dir = walk(under, rel)?;
        let stamp = owned(&dir)?;
        let identity = stamp
            .identity()
            .ok_or_else(|| NotAdmitted::new("it cannot be examined"))?;
        Ok(Self {
            under: under.to_path_buf(),
            rel: rel.to_path_buf(),
            path: home.to_path_buf(),
            identity,
        })
    }

    /// The home's path.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The admitted home, opened now from the directory of homes with no
    /// link followed on the way: the handle, when the directory there is
    /// still the one admitted and still this user's.
    pub(crate) fn open(&self) -> Result<Dir, NotAdmitted> {
        let dir = walk(&self.under, &self.rel)?;
        self.judge(&dir)?;
        Ok(dir)
    }

    /// Whether `dir` is the admitted directory, still this user's.
    pub(crate) fn holds(&self, dir: &Dir) -> bool {
        self.judge(dir).is_ok()
    }

    /// `dir` as the admitted directory: its identity is the one admitted,
    /// and its owner still this user (or root).
    fn judge(&self, dir: &Dir) -> Result<(), NotAdmitted> {
        let stamp = owned(dir)?;
        if stamp.identity() != Some(self.identity) {
            return Err(NotAdmitted::new(
                "it is no longer the directory the server admitted (it was replaced since)",
            ));
        }
        Ok(())
    }

    /// Reads the file `rel` of the admitted home (the home's policy file),
    /// through the home's handle: opened now as [`open`](Self::open) opens
    /// it, a link followed only inside the home, without blocking, a
    /// regular file of at most `limit` bytes. The outer error: the home is
    /// no longer the one admitted, and nothing was read.
    pub(crate) fn read_file(
        &self,
        rel: &Path,
        limit: u64,
    ) -> Result<Result<Vec<u8>, UserFileError>, NotAdmitted> {
        let dir = self.open()?;
        Ok(ambient::read_file_under(&dir, rel, limit))
    }
}

/// Opens `rel` below `under` one folder at a time, refusing a link at each
/// step.
fn walk(under: &Path, rel: &Path) -> Result<Dir, NotAdmitted> {
    let mut dir = ambient::open_root(under).map_err(|e| {
        let reason = format!("not a real directory below the homes: {e}");
        NotAdmitted::on(e, reason)
    })?;
    let mut at = under.to_path_buf();
    for c in rel.components() {
        at.push(c);
        dir = dir.open_dir_nofollow(c).map_err(|e| {
            let reason = format!(
                "not a real directory below the homes: {} is not a directory (a link is not \
                 followed): {e}",
                at.display()
            );
            NotAdmitted::on(e, reason)
        })?;
    }
    Ok(dir)
}

/// The stamp of `dir`, when this user (or root) owns it.
fn owned(dir: &Dir) -> Result<Stamp, NotAdmitted> {
    let stamp = dir.dir_metadata().map(|m| Stamp::of(&m)).map_err(|e| {
        let reason = format!("it cannot be examined: {e}");
        NotAdmitted::on(e, reason)
    })?;
    match stamp.owner() {
        Some(uid) if is_trusted_owner(uid) => Ok(stamp),
        Some(uid) => Err(NotAdmitted::new(format!(
            "another user (uid {uid}) owns it"
        ))),
        None => Err(NotAdmitted::new("its owner cannot be told")),
    }
}
