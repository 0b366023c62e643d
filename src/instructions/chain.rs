//! The instruction chain: home files, then each level from the repository root
//! down to the cwd, in the policy's order.

use std::path::{Path, PathBuf};

use crate::origin::Origin;
use crate::policy::Policy;
use crate::sandbox::Roots;

/// One path that may hold an instruction file.
#[derive(Debug, Clone)]
pub(crate) struct Candidate {
    /// Home or project.
    pub(crate) origin: Origin,
    /// 0 for home, 1 for the repository root, and one more per level below.
    pub(crate) level: usize,
    /// The path relative to its root.
    pub(crate) rel: PathBuf,
    /// The absolute path, for display.
    pub(crate) path: PathBuf,
    /// The level is excluded by `instructions.exclude-levels`.
    pub(crate) excluded: bool,
}

/// The candidates in read order: outermost first, the cwd's files last.
pub(crate) fn candidates(policy: &Policy, roots: &Roots) -> Vec<Candidate> {
    let mut out = Vec::new();
    if let Some(home) = &roots.home {
        for name in &policy.instructions.home_files {
            out.push(Candidate {
                origin: Origin::Home,
                level: 0,
                rel: PathBuf::from(name.get_ref()),
                path: home.path.join(name.get_ref()),
                excluded: false,
            });
        }
    }
    let mut level_rel = PathBuf::new();
    let mut levels = vec![PathBuf::new()];
    for c in roots.cwd_rel.components() {
        level_rel.push(c.as_os_str());
        levels.push(level_rel.clone());
    }
    for (i, rel_dir) in levels.iter().enumerate() {
        let excluded = policy.is_level_excluded(&slash_path(rel_dir));
        for name in &policy.instructions.level_files {
            let rel = rel_dir.join(name.get_ref());
            out.push(Candidate {
                origin: Origin::Project,
                level: i + 1,
                path: roots.repo.path.join(&rel),
                rel,
                excluded,
            });
        }
    }
    out
}

/// A relative path with `/` separators, as globs expect.
pub(crate) fn slash_path(p: &Path) -> String {
    p.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}
