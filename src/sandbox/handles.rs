//! Root handles shared between builds: a long-lived loader opens each root
//! directory once, and opens it again only when the directory at that path
//! is no longer the one the handle holds, or when the handle was shed.
//!
//! Each handle is an open file descriptor, so they are kept within a budget:
//! the least recently used go first. Cached snapshots do not hold handles;
//! a check or a skill read reopens a root that was shed. When the process
//! runs out of descriptors anyway (a low `ulimit -n`), every handle is shed
//! and the open is tried once more.
//!
//! The handles of a served home's loader know the home it admitted
//! ([`Admitted`]): for that path they hand out only a handle of the admitted
//! directory (checked on the handle itself), never whatever the path leads
//! to now.

use std::io;
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use cap_std::fs::Dir;
use lru::LruCache;

#[cfg(test)]
use super::Stamp;
use super::admitted::Admitted;
use super::{Root, Shield, Shortage, ambient, open};

/// The default number of root handles a loader keeps open: well under the
/// common soft limits on open files (1024, or 256 on macOS).
pub(crate) const DEFAULT_HANDLE_BUDGET: usize = 128;

/// Open root directories by path, at most a budget of them.
#[derive(Debug)]
pub(crate) struct Handles {
    /// Shared with the handles made [`admitting`](Self::admitting) a home
    /// from these.
    dirs: Arc<Mutex<LruCache<PathBuf, Arc<Dir>>>>,
    /// At most this many are kept.
    budget: usize,
    /// The home a server admitted, if any: its path opens only as the
    /// admitted directory.
    admitted: Option<Arc<Admitted>>,
}

impl Default for Handles {
    fn default() -> Self {
        Self::with_budget(DEFAULT_HANDLE_BUDGET)
    }
}

impl Handles {
    /// Keeps at most `budget` handles open (at least one).
    pub(crate) fn with_budget(budget: usize) -> Self {
        let budget = NonZeroUsize::new(budget).unwrap_or(NonZeroUsize::MIN);
        Self {
            dirs: Arc::new(Mutex::new(LruCache::new(budget))),
            budget: budget.get(),
            admitted: None,
        }
    }

    /// Handles sharing these ones' open directories and budget, for the
    /// loader of the home `admitted`: its path opens only as the admitted
    /// directory (see [`open`](Self::open)).
    pub(crate) fn admitting(&self, admitted: Arc<Admitted>) -> Self {
        Self {
            dirs: Arc::clone(&self.dirs),
            budget: self.budget,
            admitted: Some(admitted),
        }
    }

    /// Whether the admitted home (if any) still holds: opened now from the
    /// directory of homes with no link on the way, it is the directory
    /// admitted and this user's. The handle is remembered for the calls
    /// that follow.
    pub(crate) fn check_admitted(&self) -> Result<(), super::NotAdmitted> {
        let Some(admitted) = &self.admitted else {
            return Ok(());
        };
        let dir = Arc::new(admitted.open()?);
        self.lock().push(admitted.path().to_path_buf(), dir);
        Ok(())
    }

    /// The admitted home, when `path` is its path.
    fn admitted_at(&self, path: &Path) -> Option<&Admitted> {
        self.admitted.as_deref().filter(|a| a.path() == path)
    }

    /// A handle of the admitted home: the remembered one while it is still
    /// the admitted directory and this user's, else one opened now the
    /// admitted way; an error ([`NotAdmitted`](super::NotAdmitted), as an
    /// I/O error) when the directory there is no longer the admitted one.
    fn admitted_handle(&self, admitted: &Admitted) -> io::Result<Arc<Dir>> {
        let path = admitted.path();
        if let Some(d) = self.lock().get(path).cloned()
            && admitted.holds(&d)
        {
            return Ok(d);
        }
        let dir = Arc::new(admitted.open().map_err(super::NotAdmitted::into_io)?);
        self.lock().push(path.to_path_buf(), dir.clone());
        Ok(dir)
    }

    /// The handle for `path`: the remembered one while it still names the
    /// same directory, a freshly opened one otherwise.
    /// For the admitted home's path, only a handle of the admitted
    /// directory (see [`admitting`](Self::admitting)).
    pub(crate) fn open(&self, path: &Path) -> io::Result<Arc<Dir>> {
        if let Some(admitted) = self.admitted_at(path) {
            return self.admitted_handle(admitted);
        }
        if let Some(d) = self.lock().get(path).cloned()
            && ambient::same_directory(&d, path)
        {
            return Ok(d);
        }
        self.reopen(path)
    }

    /// The root at `path` for checking or reading what a cached build
    /// examined: the remembered handle, or a new one if it was shed. The
    /// handle is not checked against the directory now at the path: the
    /// build's trace holds that directory's identity, and a check compares
    /// it. The admitted home's path is the exception: only a handle of the
    /// admitted directory is taken (see [`admitting`](Self::admitting)).
    pub(crate) fn root(
        &self,
        path: &Path,
        shortage: &Arc<Shortage>,
        shield: &Arc<Shield>,
    ) -> io::Result<Root> {
        let remembered = match self.admitted_at(path) {
            Some(admitted) => Some(self.admitted_handle(admitted)?),
            None => self.lock().get(path).cloned(),
        };
        let dir = match remembered {
            Some(d) => d,
            None => self.reopen(path)?,
        };
        Ok(Root {
            path: path.to_path_buf(),
            dir,
            shortage: shortage.clone(),
            shield: shield.clone(),
        })
    }

    /// Opens `path` and remembers the handle (the least recently used one
    /// goes when over budget). Out of descriptors, every handle is shed and
    /// the open tried once more.
    fn reopen(&self, path: &Path) -> io::Result<Arc<Dir>> {
        let dir = match ambient::open_root(path) {
            Err(e) if open::is_exhaustion(&e) => {
                self.shed();
                ambient::open_root(path)?
            }
            other => other?,
        };
        let dir = Arc::new(dir);
        self.lock().push(path.to_path_buf(), dir.clone());
        Ok(dir)
    }

    /// Forgets every handle (those still in use close when their user is
    /// done with them).
    pub(crate) fn shed(&self) {
        self.lock().clear();
    }

    /// How many handles are remembered.
    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> MutexGuard<'_, LruCache<PathBuf, Arc<Dir>>> {
        // Every update is one push or a clear: a poisoned map is sound.
        self.dirs.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::Arc;

    use super::*;
    use crate::policy::Policy;
    use crate::sandbox::home_write::{Install, write_home_file};
    use crate::sandbox::{Admitted, RootsError, attach, open_roots};

    /// A home swapped between the check that it holds and its use (the
    /// race a served home's loader must survive): the use takes no handle
    /// of what the path leads to now. A handle of the admitted directory
    /// (remembered, or taken before the swap) reads and writes that
    /// directory, wherever it went, never the link's target; without one,
    /// the home is refused, and nothing is opened at all.
    #[test]
    fn a_home_swapped_after_its_check_is_neither_read_nor_written() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let homes = tmp.path().join("homes");
        let (a, b) = (homes.join("a"), homes.join("b"));
        let old = homes.join("a.old");
        let repo = tmp.path().join("repo");
        for dir in [&a, &b, &repo.join(".git")] {
            std::fs::create_dir_all(dir).expect("mkdir");
        }
        let policy = Policy::builtin().expect("the built-in policy");
        let admitted = Arc::new(Admitted::admit(&homes, &a).expect("admitted"));
        let handles = Handles::default().admitting(admitted);
        // The check passes.
        handles.check_admitted().expect("the home holds");
        // Then `a` is replaced by a link to `b`, before the use.
        std::fs::rename(&a, &old).expect("rename");
        std::os::unix::fs::symlink(&b, &a).expect("symlink");
        // The use: the roots of a build. The home's handle is the admitted
        // directory's, and what is written through it lands there.
        let roots = open_roots(&policy, Some(&a), &repo, None, &handles).expect("roots");
        let home = roots.set.home.as_ref().expect("the home");
        let (state, _) = roots.set.state().expect("Lisa's state root is the home");
        let rel = Path::new("context-nonce.key");
        write_home_file(state, rel, b"0123", false, Install::IfAbsent).expect("write");
        assert!(home.stamp(rel).is_file());
        assert!(ambient::directory_stamp(&old.join(rel)).is_file());
        assert_eq!(ambient::directory_stamp(&b.join(rel)), Stamp::Absent);
        // With no handle of the admitted directory left, the home is
        // refused: nothing of `b` is opened, for a build...
        drop(roots);
        handles.shed();
        match open_roots(&policy, Some(&a), &repo, None, &handles) {
            Err(RootsError::HomeRefused { path, .. }) => assert_eq!(path, a),
            other => panic!("expected the home refused, got {other:?}"),
        }
        // ...nor for the trust store's write path (the state root attached
        // again).
        let attached = attach(
            &handles,
            None,
            &[],
            &[],
            Some(&a),
            &repo,
            &Shield::standard(),
        );
        assert!(
            attached
                .as_ref()
                .is_err_and(|e| crate::sandbox::NotAdmitted::of(e).is_some()),
            "{attached:?}"
        );
        // And the check made at every call says so.
        assert!(handles.check_admitted().is_err());
        assert_eq!(ambient::directory_stamp(&b.join(rel)), Stamp::Absent);
    }
}
