//! Root handles shared between builds: a long-lived loader opens each root
//! directory once, and opens it again only when the directory at that path
//! is no longer the one the handle holds, or when the handle was shed.
//!
//! Each handle is an open file descriptor, so they are kept within a budget:
//! the least recently used go first. Cached snapshots do not hold handles;
//! a check or a skill read reopens a root that was shed. When the process
//! runs out of descriptors anyway (a low `ulimit -n`), every handle is shed
//! and the open is tried once more.

use std::io;
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use cap_std::fs::Dir;
use lru::LruCache;

use super::pass::Pass;
use super::{Root, Shield, Shortage, ambient, open};

/// The default number of root handles a loader keeps open: well under the
/// common soft limits on open files (1024, or 256 on macOS).
pub(crate) const DEFAULT_HANDLE_BUDGET: usize = 128;

/// Open root directories by path, at most a budget of them.
#[derive(Debug)]
pub(crate) struct Handles {
    dirs: Mutex<LruCache<PathBuf, Arc<Dir>>>,
    /// At most this many are kept.
    budget: usize,
    /// The survey pass the roots taken from these handles share, if any.
    pass: Option<Arc<Pass>>,
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
            dirs: Mutex::new(LruCache::new(budget)),
            budget: budget.get(),
            pass: None,
        }
    }

    /// Handles whose roots share `pass`: for the builds of one survey only
    /// (see [`Pass`]).
    pub(crate) fn with_pass(budget: usize, pass: Arc<Pass>) -> Self {
        Self {
            pass: Some(pass),
            ..Self::with_budget(budget)
        }
    }

    /// How many handles are kept at most.
    pub(crate) fn budget(&self) -> usize {
        self.budget
    }

    /// The pass the roots share, if any.
    pub(crate) fn pass(&self) -> Option<Arc<Pass>> {
        self.pass.clone()
    }

    /// The handle for `path`: the remembered one while it still names the
    /// same directory, a freshly opened one otherwise.
    pub(crate) fn open(&self, path: &Path) -> io::Result<Arc<Dir>> {
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
    /// it.
    pub(crate) fn root(
        &self,
        path: &Path,
        shortage: &Arc<Shortage>,
        shield: &Arc<Shield>,
    ) -> io::Result<Root> {
        let remembered = self.lock().get(path).cloned();
        let dir = match remembered {
            Some(d) => d,
            None => self.reopen(path)?,
        };
        Ok(Root {
            path: path.to_path_buf(),
            dir,
            shortage: shortage.clone(),
            pass: self.pass.clone(),
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
