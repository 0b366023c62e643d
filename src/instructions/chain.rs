//! The instruction chain: home files, then each level from the repository root
//! down to the cwd, in the policy's order.

use std::path::{Path, PathBuf};

use crate::origin::{Origin, RootId};
use crate::policy::{ChainOrder, Names, Policy};
use crate::sandbox::Roots;

/// One path that may hold an instruction file.
#[derive(Debug, Clone)]
pub(crate) struct Candidate {
    /// The root it lives under.
    pub(crate) root: RootId,
    /// Home or project (the root's trust).
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

/// A place's names: the policy's list, then the extra names it does not
/// already hold.
fn names<'a>(base: &'a Names, extra: &'a Names) -> Vec<&'a str> {
    let mut out: Vec<&str> = base.iter().map(|n| n.get_ref().as_str()).collect();
    for n in extra {
        if !out.contains(&n.get_ref().as_str()) {
            out.push(n.get_ref());
        }
    }
    out
}

/// The candidates in read order: home files first, then the project's in
/// the policy's order (by default outermost first, the cwd's files last).
pub(crate) fn candidates(policy: &Policy, roots: &Roots) -> Vec<Candidate> {
    let ins = &policy.instructions;
    let mut out = Vec::new();
    // The named roots' files, then the home's: the user's and an
    // administrator's own files, before any project file.
    for (i, named) in policy.roots.named.iter().enumerate() {
        let Some(root) = roots.get(RootId::Named(i)) else {
            continue;
        };
        for name in &named.files {
            out.push(Candidate {
                root: RootId::Named(i),
                origin: Origin::Home,
                level: 0,
                rel: PathBuf::from(name.get_ref()),
                path: root.path.join(name.get_ref()),
                excluded: false,
            });
        }
    }
    if let Some(home) = &roots.home {
        for name in names(&ins.home_files, &ins.extra_home_files) {
            out.push(Candidate {
                root: RootId::Home,
                origin: Origin::Home,
                level: 0,
                rel: PathBuf::from(name),
                path: home.path.join(name),
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
    let level_names = names(&ins.level_files, &ins.extra_level_files);
    let first_project = out.len();
    for (i, rel_dir) in levels.iter().enumerate() {
        let excluded = policy.is_level_excluded(&slash_path(rel_dir));
        for name in &level_names {
            let rel = rel_dir.join(name);
            out.push(Candidate {
                root: RootId::Repo,
                origin: Origin::Project,
                level: i + 1,
                path: roots.repo.path.join(&rel),
                rel,
                excluded,
            });
        }
    }
    if ins.order == ChainOrder::SortedPaths {
        // Byte order of the paths, as a string sort of them gives.
        out[first_project..].sort_by(|a, b| {
            a.path
                .as_os_str()
                .as_encoded_bytes()
                .cmp(b.path.as_os_str().as_encoded_bytes())
        });
    }
    out
}

/// The candidates of the levels between the repository root and
/// `target` (a root-relative folder) that are not levels of the chain to
/// the cwd: what accessing `target` adds. Outermost first; `sorted-paths`
/// sorts them as the chain's.
pub(crate) fn below(policy: &Policy, roots: &Roots, target: &Path) -> Vec<Candidate> {
    let ins = &policy.instructions;
    let level_names = names(&ins.level_files, &ins.extra_level_files);
    let mut out = Vec::new();
    let mut dir = PathBuf::new();
    let mut levels = vec![PathBuf::new()];
    for c in target.components() {
        dir.push(c.as_os_str());
        levels.push(dir.clone());
    }
    for (i, rel_dir) in levels.iter().enumerate() {
        if roots.cwd_rel.starts_with(rel_dir) {
            continue;
        }
        let excluded = policy.is_level_excluded(&slash_path(rel_dir));
        for name in &level_names {
            let rel = rel_dir.join(name);
            out.push(Candidate {
                root: RootId::Repo,
                origin: Origin::Project,
                level: i + 1,
                path: roots.repo.path.join(&rel),
                rel,
                excluded,
            });
        }
    }
    if ins.order == ChainOrder::SortedPaths {
        out.sort_by(|a, b| {
            a.path
                .as_os_str()
                .as_encoded_bytes()
                .cmp(b.path.as_os_str().as_encoded_bytes())
        });
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
