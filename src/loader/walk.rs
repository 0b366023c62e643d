//! The folders of a repository a survey takes as cwds (`survey --scope
//! repo`): a walk of the repository through the sandbox, as the rule
//! reach's walk goes.

use std::path::Path;

use crate::error::SnapshotError;
use crate::snapshot::Snapshot;

/// The names, in a folder's listing, that make it a folder some policy
/// reads from: the first component of every level file, rule file and
/// repository skill source the policies name (globs included).
#[derive(Debug, Clone)]
pub(crate) struct Wanted {
    set: globset::GlobSet,
}

impl Wanted {
    /// The names `policies` read at a level.
    pub(crate) fn of<'p>(policies: impl IntoIterator<Item = &'p crate::policy::Policy>) -> Self {
        let mut firsts: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
        for p in policies {
            let ins = &p.instructions;
            let files = ins
                .level_files
                .iter()
                .chain(&ins.extra_level_files)
                .chain(&ins.fallback_level_files)
                .chain(&ins.access_level_files);
            for f in files {
                if let Some(first) = f.get_ref().split('/').find(|c| !c.is_empty() && *c != ".") {
                    firsts.insert(first.to_string());
                }
            }
            for s in &p.skills.sources {
                if s.root.get_ref() == "repo"
                    && let Some(first) = s
                        .path
                        .get_ref()
                        .split('/')
                        .find(|c| !c.is_empty() && *c != ".")
                {
                    firsts.insert(first.to_string());
                }
            }
        }
        let mut b = globset::GlobSetBuilder::new();
        for f in firsts {
            let glob = globset::GlobBuilder::new(&f)
                .literal_separator(true)
                .build()
                .or_else(|_| globset::Glob::new(&globset::escape(&f)));
            if let Ok(g) = glob {
                b.add(g);
            }
        }
        Self {
            set: b.build().unwrap_or_else(|_| globset::GlobSet::empty()),
        }
    }

    /// Whether a folder holding an entry named `name` is one to survey.
    fn holds(&self, name: &std::ffi::OsStr) -> bool {
        self.set.is_match(Path::new(name))
    }
}

/// What [`walk`] found.
#[derive(Debug, Clone, Default)]
pub(crate) struct Walk {
    /// The folders to survey (absolute), in breadth-first name order, the
    /// repository root first when it is one.
    pub folders: Vec<std::path::PathBuf>,
    /// Whether the walk stopped short: more folders than the cap, more
    /// entries than [`crate::access::REACH_ENTRIES`], or deeper than 32
    /// levels.
    pub capped: bool,
}

/// Walks the repository of `snap` through its sandbox, as
/// [`crate::access::reach`] does (links are not followed, version-control
/// metadata and `import-excluded-names` folders are not entered), and
/// names each folder whose listing holds a name of `wanted`, at most
/// `max_folders` of them.
pub(crate) fn walk(
    policy: &crate::policy::Policy,
    home: Option<&Path>,
    handles: &crate::sandbox::Handles,
    snap: &Snapshot,
    wanted: &Wanted,
    max_folders: usize,
) -> Result<Walk, SnapshotError> {
    const DEPTH: usize = 32;
    let roots =
        crate::sandbox::open_roots(policy, home, &snap.cwd, Some(&snap.repo_root), handles)?;
    let repo = &roots.set.repo;
    let mut out = Walk::default();
    let mut entries_seen = 0usize;
    let mut queue = std::collections::VecDeque::from([(std::path::PathBuf::new(), 0usize)]);
    while let Some((folder, depth)) = queue.pop_front() {
        let at = if folder.as_os_str().is_empty() {
            Path::new(".")
        } else {
            folder.as_path()
        };
        let room = crate::access::REACH_ENTRIES.saturating_sub(entries_seen);
        if room == 0 {
            out.capped = true;
            break;
        }
        let looked = repo.look(at, room);
        if !looked.stamp.is_dir() {
            continue;
        }
        let Ok(Some(entries)) = &looked.listing else {
            continue;
        };
        let mut entries = entries.clone();
        entries_seen += entries.len();
        if entries.len() >= room {
            out.capped = true;
        }
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        if entries.iter().any(|e| wanted.holds(&e.name)) {
            if out.folders.len() >= max_folders {
                out.capped = true;
                break;
            }
            out.folders.push(snap.repo_root.join(&folder));
        }
        for entry in entries {
            if entry.is_link || entry.is_file || policy.is_import_excluded(&entry.name) {
                continue;
            }
            if depth + 1 < DEPTH {
                queue.push_back((folder.join(&entry.name), depth + 1));
            } else {
                out.capped = true;
            }
        }
    }
    if let Some(source) = roots.set.shortage() {
        return Err(SnapshotError::ResourceExhausted {
            path: roots.set.repo.path.clone(),
            source,
        });
    }
    Ok(out)
}
