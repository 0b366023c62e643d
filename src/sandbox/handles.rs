//! Root handles shared between builds: a long-lived loader opens each root
//! directory once, and opens it again only when the directory at that path
//! is no longer the one the handle holds.

use std::collections::{HashMap, HashSet};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use cap_std::fs::Dir;

use super::ambient;

/// Open root directories by path.
#[derive(Debug, Default)]
pub(crate) struct Handles {
    dirs: Mutex<HashMap<PathBuf, Arc<Dir>>>,
}

impl Handles {
    /// The handle for `path`: the remembered one while it still names the
    /// same directory, a freshly opened one otherwise.
    pub(crate) fn open(&self, path: &Path) -> io::Result<Arc<Dir>> {
        if let Some(d) = self.lock().get(path).cloned() {
            if ambient::same_directory(&d, path) {
                return Ok(d);
            }
        }
        let d = Arc::new(ambient::open_root(path)?);
        self.lock().insert(path.to_path_buf(), d.clone());
        Ok(d)
    }

    /// Forgets every handle whose path is not in `in_use`.
    pub(crate) fn retain(&self, in_use: &HashSet<&Path>) {
        self.lock().retain(|p, _| in_use.contains(p.as_path()));
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<PathBuf, Arc<Dir>>> {
        // Every update is one insert or a retain: a poisoned map is sound.
        self.dirs.lock().unwrap_or_else(|p| p.into_inner())
    }
}
