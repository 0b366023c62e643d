//! The library entry point: a [`Loader`] serves snapshots for many cwds,
//! caching each until something it examined changes.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use cap_std::ambient_authority;
use cap_std::fs::Dir;
use serde::Serialize;

use crate::discovery::chain::Origin;
use crate::error::SnapshotError;
use crate::fingerprint::TraceRoot;
use crate::policy::{Policy, RootKind};
use crate::read::{self, Opened, Stamp};
use crate::roots::{self, Roots};
use crate::select::instructions::decode;
use crate::skill::cache::ParseCache;
use crate::snapshot::{self, Built, Snapshot};

/// How many parsed `SKILL.md` frontmatters a loader remembers.
const PARSE_CACHE_ENTRIES: usize = 16 * 1024;

/// The default number of (cwd, root) pairs a loader keeps.
pub const DEFAULT_CACHE_ENTRIES: usize = 256;

/// The `SKILL.md` of the skill that wins a name.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SkillFile {
    /// The skill's name.
    pub name: String,
    /// Home or project.
    pub origin: Origin,
    /// The file's absolute path.
    #[serde(serialize_with = "crate::paths::lossy")]
    pub path: PathBuf,
    /// The whole file: frontmatter and body.
    pub content: String,
}

struct Entry {
    built: Arc<Built>,
    tick: u64,
}

#[derive(Default)]
struct Cache {
    entries: HashMap<(PathBuf, Option<PathBuf>), Entry>,
    dirs: HashMap<PathBuf, Arc<Dir>>,
    tick: u64,
}

/// Builds snapshots for any number of cwds, concurrently, caching each one
/// until a file it depends on changes.
///
/// A check costs one `stat` per path the snapshot examined; files are re-read
/// only when their metadata moved, or when it is too recent to vouch for their
/// content (see [`crate::read::RACY_WINDOW`]). The cwd is always explicit: the
/// loader never looks at the process's working directory.
///
/// ```
/// use lisa_context::{Loader, policy::Policy};
///
/// let home = tempfile::tempdir().unwrap();
/// let repo = tempfile::tempdir().unwrap();
/// std::fs::create_dir(repo.path().join(".git")).unwrap();
/// std::fs::write(repo.path().join("AGENTS.md"), "Run the tests before committing.").unwrap();
///
/// let loader = Loader::new(Policy::builtin().unwrap(), Some(home.path().to_path_buf()));
/// let snap = loader.snapshot(repo.path()).unwrap();
/// assert_eq!(snap.instruction_files.len(), 1);
/// assert!(snap.prompt.contains("Run the tests before committing."));
///
/// // Nothing changed: the same fingerprint, and no new snapshot.
/// assert_eq!(loader.fingerprint(repo.path()).unwrap(), snap.fingerprint);
/// assert!(loader.refresh(repo.path(), &snap.fingerprint).unwrap().is_none());
/// ```
pub struct Loader {
    policy: Arc<Policy>,
    home: Option<PathBuf>,
    capacity: usize,
    cache: Mutex<Cache>,
    parsed: ParseCache,
}

impl Loader {
    /// A loader with the default cache size. `home` is the home root's path
    /// (see [`roots::home_path`]); `None` reads no home files or skills.
    pub fn new(policy: Policy, home: Option<PathBuf>) -> Self {
        Self::with_capacity(policy, home, DEFAULT_CACHE_ENTRIES)
    }

    /// A loader keeping at most `capacity` snapshots (least recently used go).
    pub fn with_capacity(policy: Policy, home: Option<PathBuf>, capacity: usize) -> Self {
        Self {
            policy: Arc::new(policy),
            home,
            capacity: capacity.max(1),
            cache: Mutex::new(Cache::default()),
            parsed: ParseCache::new(PARSE_CACHE_ENTRIES),
        }
    }

    /// The policy in force.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The home root's path.
    pub fn home(&self) -> Option<&Path> {
        self.home.as_deref()
    }

    /// The snapshot for `cwd` (absolute), rebuilt only if something changed.
    pub fn snapshot(&self, cwd: &Path) -> Result<Arc<Snapshot>, SnapshotError> {
        self.snapshot_in(cwd, None)
    }

    /// Like [`snapshot`](Self::snapshot), with the repository root named
    /// explicitly (it must contain `cwd`).
    pub fn snapshot_in(
        &self,
        cwd: &Path,
        root: Option<&Path>,
    ) -> Result<Arc<Snapshot>, SnapshotError> {
        Ok(self.current(cwd, root)?.snapshot.clone())
    }

    /// The fingerprint for `cwd`: equal to the `fingerprint` field of the
    /// snapshot that would be built now.
    pub fn fingerprint(&self, cwd: &Path) -> Result<String, SnapshotError> {
        self.fingerprint_in(cwd, None)
    }

    /// [`fingerprint`](Self::fingerprint) with an explicit root.
    pub fn fingerprint_in(&self, cwd: &Path, root: Option<&Path>) -> Result<String, SnapshotError> {
        Ok(self.current(cwd, root)?.snapshot.fingerprint.clone())
    }

    /// A new snapshot if the fingerprint differs from `previous`, else `None`.
    pub fn refresh(
        &self,
        cwd: &Path,
        previous: &str,
    ) -> Result<Option<Arc<Snapshot>>, SnapshotError> {
        self.refresh_in(cwd, None, previous)
    }

    /// [`refresh`](Self::refresh) with an explicit root.
    pub fn refresh_in(
        &self,
        cwd: &Path,
        root: Option<&Path>,
        previous: &str,
    ) -> Result<Option<Arc<Snapshot>>, SnapshotError> {
        let built = self.current(cwd, root)?;
        if built.snapshot.fingerprint == previous {
            Ok(None)
        } else {
            Ok(Some(built.snapshot.clone()))
        }
    }

    /// The `SKILL.md` of the skill that wins `name` for `cwd`: exactly the
    /// resolution the snapshot used. The name is checked against the policy's
    /// rule before any file is touched.
    pub fn skill(&self, cwd: &Path, name: &str) -> Result<SkillFile, SnapshotError> {
        self.skill_in(cwd, None, name)
    }

    /// [`skill`](Self::skill) with an explicit root.
    pub fn skill_in(
        &self,
        cwd: &Path,
        root: Option<&Path>,
        name: &str,
    ) -> Result<SkillFile, SnapshotError> {
        if !self.policy.is_valid_skill_name(name) {
            return Err(SnapshotError::InvalidSkillName(name.to_string()));
        }
        let built = self.current(cwd, root)?;
        let Some(skill) = built.snapshot.skills.iter().find(|s| s.name == name) else {
            return Err(SnapshotError::SkillNotFound {
                name: name.to_string(),
                cwd: built.snapshot.cwd.clone(),
            });
        };
        let dir = match skill.root {
            RootKind::Home => built.roots.home.as_ref().map(|h| &h.dir),
            RootKind::Repo => Some(&built.roots.repo.dir),
        };
        let unreadable = |reason: &str| SnapshotError::SkillUnreadable {
            path: skill.path.clone(),
            reason: reason.to_string(),
        };
        let Some(dir) = dir else {
            return Err(unreadable("its root is gone"));
        };
        let cap = u64::try_from(self.policy.skills.max_skill_file_bytes).unwrap_or(0);
        let (file, meta) = match read::open_candidate(dir, &skill.rel, self.policy.trust.symlinks) {
            Opened::File { file, meta } => (file, meta),
            Opened::Absent => return Err(unreadable("it no longer exists")),
            Opened::Refused(r) => return Err(unreadable(r.as_str())),
        };
        if meta.len() > cap {
            return Err(unreadable("too-large"));
        }
        let bytes =
            read::read_at_most(&file, cap, meta.len()).map_err(|e| unreadable(&e.to_string()))?;
        let content = decode(bytes, false).ok_or_else(|| unreadable("not-text"))?;
        Ok(SkillFile {
            name: skill.name.clone(),
            origin: skill.origin,
            path: skill.path.clone(),
            content,
        })
    }

    /// How many snapshots the cache holds.
    pub fn cached_entries(&self) -> usize {
        self.lock().entries.len()
    }

    /// An estimate of the bytes the cache holds (texts and paths).
    pub fn cached_bytes(&self) -> usize {
        self.lock()
            .entries
            .values()
            .map(|e| estimate_bytes(&e.built))
            .sum()
    }

    fn lock(&self) -> MutexGuard<'_, Cache> {
        // A panic while holding the lock cannot leave the map inconsistent
        // (every update is a single insert or remove), so a poisoned lock is
        // still usable.
        self.cache.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The up-to-date build for (cwd, root): the cached one when every path it
    /// examined still looks the same, a fresh one otherwise.
    fn current(&self, cwd: &Path, root: Option<&Path>) -> Result<Arc<Built>, SnapshotError> {
        if !cwd.is_absolute() {
            return Err(SnapshotError::RelativeCwd(cwd.to_path_buf()));
        }
        let key = (roots::normalize(cwd), root.map(roots::normalize));
        let cached = {
            let mut cache = self.lock();
            cache.tick += 1;
            let tick = cache.tick;
            cache.entries.get_mut(&key).map(|e| {
                e.tick = tick;
                e.built.clone()
            })
        };
        if let Some(built) = cached {
            if still_valid(&built) {
                return Ok(built);
            }
        }
        let built = Arc::new(self.build(&key.0, key.1.as_deref())?);
        let mut cache = self.lock();
        cache.tick += 1;
        let tick = cache.tick;
        cache.entries.insert(
            key,
            Entry {
                built: built.clone(),
                tick,
            },
        );
        let mut evicted = false;
        while cache.entries.len() > self.capacity {
            evicted = true;
            let oldest = cache
                .entries
                .iter()
                .min_by_key(|(_, e)| e.tick)
                .map(|(k, _)| k.clone());
            match oldest {
                Some(k) => {
                    cache.entries.remove(&k);
                }
                None => break,
            }
        }
        if !evicted {
            return Ok(built);
        }
        // Forget root handles no cached snapshot uses any more.
        let in_use: std::collections::HashSet<PathBuf> = cache
            .entries
            .values()
            .flat_map(|e| {
                let r = &e.built.roots;
                std::iter::once(r.repo.path.clone()).chain(r.home.as_ref().map(|h| h.path.clone()))
            })
            .collect();
        cache.dirs.retain(|p, _| in_use.contains(p));
        Ok(built)
    }

    fn build(&self, cwd: &Path, root: Option<&Path>) -> Result<Built, SnapshotError> {
        let mut open_dir = |p: &Path| -> std::io::Result<Arc<Dir>> {
            if let Some(d) = self.lock().dirs.get(p) {
                if same_directory(d, p) {
                    return Ok(d.clone());
                }
            }
            let d = Arc::new(Dir::open_ambient_dir(p, ambient_authority())?);
            self.lock().dirs.insert(p.to_path_buf(), d.clone());
            Ok(d)
        };
        let roots = roots::open_with(&self.policy, self.home.as_deref(), cwd, root, &mut open_dir)?;
        Ok(snapshot::build_with_cache(
            &self.policy,
            roots,
            Some(&self.parsed),
        ))
    }
}

/// Whether a handle still refers to the directory now at `path`.
fn same_directory(dir: &Dir, path: &Path) -> bool {
    use cap_std::fs::MetadataExt as _;
    use std::os::unix::fs::MetadataExt as _;
    match (dir.dir_metadata(), std::fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// Whether every path a build examined looks as it did, and none of it was
/// too fresh to trust.
fn still_valid(built: &Built) -> bool {
    let trace = &built.trace;
    if trace.has_racy_stamp() {
        return false;
    }
    // The cwd, the home and the repository root are among the traced paths
    // (`Roots::dir_probes`), stamped before their handles were opened: a
    // root replaced since shows up there.
    let roots: &Roots = &built.roots;
    trace.entries.iter().all(|e| {
        let now = match e.root {
            TraceRoot::Repo => Stamp::probe(&roots.repo.dir, &e.rel),
            TraceRoot::Home => match &roots.home {
                Some(h) => Stamp::probe(&h.dir, &e.rel),
                None => return false,
            },
            TraceRoot::Ambient => Stamp::probe_ambient(&e.rel),
            TraceRoot::AmbientDir => Stamp::probe_ambient_dir(&e.rel),
        };
        e.unchanged(&now)
    })
}

fn estimate_bytes(built: &Built) -> usize {
    use std::mem::size_of;
    use std::path::PathBuf;
    let path = |p: &PathBuf| p.capacity();
    let s = &built.snapshot;
    let fm = |f: &crate::skill::frontmatter::Frontmatter| {
        f.name.capacity()
            + f.description.capacity()
            + f.license.as_ref().map_or(0, String::capacity)
            + f.compatibility.as_ref().map_or(0, String::capacity)
            + f.allowed_tools.as_ref().map_or(0, String::capacity)
            + f.version.as_ref().map_or(0, String::capacity)
            + f.tags
                .iter()
                .map(|t| t.capacity() + size_of::<String>())
                .sum::<usize>()
            + f.metadata
                .iter()
                .map(|(k, v)| k.capacity() + v.capacity() + 64)
                .sum::<usize>()
            + f.extra.keys().map(|k| k.capacity() + 128).sum::<usize>()
    };
    size_of::<Built>()
        + s.prompt.capacity()
        + s.fingerprint.capacity()
        + path(&s.repo_root)
        + path(&s.cwd)
        + s.instruction_files
            .iter()
            .map(|b| size_of_val(b) + b.text.capacity() + path(&b.path))
            .sum::<usize>()
        + s.skills
            .iter()
            .map(|k| {
                size_of_val(k)
                    + k.name.capacity()
                    + k.description.capacity()
                    + k.source.capacity()
                    + path(&k.path)
                    + path(&k.rel)
                    + fm(&k.frontmatter)
            })
            .sum::<usize>()
        + s.deduped
            .iter()
            .map(|d| size_of_val(d) + path(&d.path) + path(&d.same_as))
            .sum::<usize>()
        + s.skipped
            .iter()
            .map(|d| size_of_val(d) + path(&d.path))
            .sum::<usize>()
        + s.rejected_skills
            .iter()
            .map(|d| size_of_val(d) + path(&d.path))
            .sum::<usize>()
        + s.shadowed_project_skills
            .iter()
            .map(|d| size_of_val(d) + d.name.capacity() + path(&d.path) + path(&d.shadowed_by))
            .sum::<usize>()
        + s.considered
            .iter()
            .map(|c| size_of_val(c) + path(&c.path) + 32)
            .sum::<usize>()
        + built
            .trace
            .entries
            .iter()
            .map(|e| size_of_val(e) + e.rel.capacity())
            .sum::<usize>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loader_is_send_and_sync() {
        fn assert_both<T: Send + Sync>() {}
        assert_both::<Loader>();
    }
}
