//! The instruction chain: the named roots' and the home's files, then each
//! level from the repository root down to the cwd, in the policy's order.
//!
//! A name is a file name, a path inside its folder (`.claude/CLAUDE.md`) or
//! a glob (`.claude/rules/**/*.md`). A glob is expanded by listing the
//! folders under its literal prefix through the sandbox (dot folders
//! included: the glob said where to look), bounded in depth and entries;
//! every folder listed is traced, so a file added later moves the
//! fingerprint. Matches come in path order.

use std::path::{Path, PathBuf};

use crate::policy::{ChainOrder, GlobOrder, Names, PathOrder, Policy, SourceLevels};
use crate::sandbox::{Root, Roots};
use crate::trace::View;
use crate::vocab::origin::{Origin, RootId};

/// The most entries one glob expansion lists, over all its folders.
const GLOB_ENTRIES: usize = 4096;

/// How deep below its literal prefix a glob expansion walks.
const GLOB_DEPTH: usize = 16;

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
    /// Loaded because a path was accessed: a scoped rule is read as any
    /// file then.
    pub(crate) on_access: bool,
    /// A level file below the cwd that an access found (`below`): its
    /// level picks by `access-level-pick` when `access-level-files` is set.
    pub(crate) accessed: bool,
    /// How many leading components of `rel` are the folder it was found
    /// in (a level, the home root): the rest is its name there.
    pub(crate) at: usize,
}

impl Candidate {
    /// The path relative to the folder it was found in, `/`-separated:
    /// what `rules.files` globs are matched against.
    pub(crate) fn name_in_place(&self) -> String {
        let name: PathBuf = self.rel.components().skip(self.at).collect();
        slash_path(&name)
    }
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

/// The paths `name` stands for in the folder `dir` of `root`: itself, or
/// for a glob every file under its literal prefix that matches, in path
/// order.
fn expand(
    policy: &Policy,
    root: &Root,
    id: RootId,
    dir: &Path,
    name: &str,
    order: GlobOrder,
    view: &mut View<'_>,
) -> Vec<PathBuf> {
    if !crate::policy::is_glob(name) {
        return vec![crate::vocab::paths::join(dir, name)];
    }
    let Some(matcher) = policy.glob_matcher(name) else {
        return Vec::new();
    };
    let prefix: PathBuf = name
        .split('/')
        .take_while(|c| !crate::policy::is_glob(c))
        .collect();
    let mut found = Vec::new();
    let mut queue = std::collections::VecDeque::from([(prefix, 0usize)]);
    let mut listed = 0usize;
    while let Some((sub, depth)) = queue.pop_front() {
        let folder = dir.join(&sub);
        // The root itself is `.` to the sandbox (a glob at the top of a
        // root, `*.instructions.md`, lists the root).
        let folder = if folder.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            folder
        };
        // One open stamps the folder and lists it.
        let room = GLOB_ENTRIES.saturating_sub(listed);
        let looked = view.list(root, id, &folder, room);
        if !looked.stamp.is_dir() || room == 0 {
            continue;
        }
        let Ok(Some(entries)) = &looked.listing else {
            continue;
        };
        let mut entries = entries.clone();
        listed += entries.len();
        entries.sort();
        for entry in entries {
            let rel = sub.join(&entry.name);
            let Some(text) = rel.to_str() else {
                continue;
            };
            if matcher.is_match(text) {
                found.push(dir.join(&rel));
            } else if depth + 1 < GLOB_DEPTH && !entry.is_link {
                queue.push_back((rel, depth + 1));
            }
        }
    }
    found.sort();
    if order == GlobOrder::NameLocale {
        // By name without extension (the rule name a JavaScript harness
        // gives the file), as `localeCompare` orders it; the sort is
        // stable, so equal names stay in path order.
        let mut named: Vec<(String, PathBuf)> = found
            .into_iter()
            .map(|p| {
                let stem = p.file_stem().unwrap_or_default();
                (stem.to_string_lossy().into_owned(), p)
            })
            .collect();
        named.sort_by(|a, b| crate::vocab::collate::locale_cmp(&a.0, &b.0));
        return named.into_iter().map(|(_, p)| p).collect();
    }
    found
}

/// Builds the candidates of one place.
struct Places<'a, 'v> {
    policy: &'a Policy,
    roots: &'a Roots,
    view: &'a mut View<'v>,
    out: Vec<Candidate>,
}

impl Places<'_, '_> {
    fn push(&mut self, id: RootId, level: usize, dir: &Path, names: &[&str], excluded: bool) {
        let Some(root) = self.roots.set.get(id) else {
            return;
        };
        let at = dir.components().count();
        let mut add = |rel: PathBuf| {
            self.out.push(Candidate {
                root: id,
                origin: id.origin(),
                level,
                path: crate::vocab::paths::join(&root.path, &rel),
                rel,
                excluded,
                on_access: false,
                accessed: false,
                at,
            });
        };
        for name in names {
            // A plain name is one candidate: no list to gather it in.
            if crate::policy::is_glob(name) {
                let order = self.policy.instructions.glob_order;
                for rel in expand(self.policy, root, id, dir, name, order, self.view) {
                    add(rel);
                }
            } else {
                add(crate::vocab::paths::join(dir, name));
            }
        }
    }

    /// The project's levels from the root to `to` (root-relative), less
    /// those `skip` says are done. With `present_only`, the walk stops at
    /// the first level that is not there (nothing below it can be): an
    /// access to a deep path that does not exist costs the levels that do.
    fn levels(
        &mut self,
        to: &Path,
        names: &[&str],
        skip: &dyn Fn(&Path) -> bool,
        present_only: bool,
    ) {
        self.out
            .reserve(names.len() * (to.components().count() + 1));
        // One folder path, grown a level at a time: the root, then each
        // folder down to `to`.
        let mut rel_dir = PathBuf::new();
        let steps = std::iter::once(None).chain(to.components().map(Some));
        for (i, step) in steps.enumerate() {
            if let Some(c) = step {
                rel_dir.push(c.as_os_str());
            }
            if skip(&rel_dir) {
                continue;
            }
            if present_only {
                crate::vocab::counters::bump(crate::vocab::counters::Counter::AccessLevels);
                // Not recorded: a level that is there is recorded by its
                // files' examination.
                if matches!(
                    self.view.glance(&self.roots.set.repo, &rel_dir),
                    crate::sandbox::Stamp::Absent
                ) {
                    break;
                }
            }
            // Only a policy that excludes levels needs the level's name.
            let excluded = self.policy.excludes_levels()
                && self.policy.is_level_excluded(&slash_path(&rel_dir));
            self.push(RootId::Repo, i + 1, &rel_dir, names, excluded);
        }
    }
}

/// Sorts the project's candidates by path under `sorted-paths`.
fn order(policy: &Policy, project: &mut [Candidate]) {
    match policy.instructions.order {
        ChainOrder::SortedPaths => {
            let utf16 = policy.instructions.path_order == PathOrder::Utf16;
            project.sort_by(|a, b| compare_paths(&a.path, &b.path, utf16));
        }
        // Stable: the names of one level keep the policy's order.
        ChainOrder::CwdToRoot => project.sort_by_key(|c| std::cmp::Reverse(c.level)),
        ChainOrder::RootToCwd => {}
    }
}

/// Two paths in `sorted-paths` order: by their bytes (for UTF-8, the order
/// of their code points), or by UTF-16 code units as JavaScript's default
/// sort compares strings. A path that is not UTF-8 is compared by its bytes.
pub(crate) fn compare_paths(a: &Path, b: &Path, utf16: bool) -> std::cmp::Ordering {
    if utf16 && let (Some(a), Some(b)) = (a.to_str(), b.to_str()) {
        return a.encode_utf16().cmp(b.encode_utf16());
    }
    a.as_os_str()
        .as_encoded_bytes()
        .cmp(b.as_os_str().as_encoded_bytes())
}

/// Whether any of `candidates` named one of `names` in its folder is a
/// file whose text is not blank (`instructions.compat.fallback-unless`):
/// each such file is read, bounded by `max-file-bytes` (and recorded: its
/// text decides). A file above the repository that another user owns does
/// not count, as for [`any_present`].
fn any_with_text(
    policy: &Policy,
    roots: &Roots,
    candidates: &[Candidate],
    names: &[&str],
    view: &mut View<'_>,
) -> bool {
    let limit = u64::try_from(policy.instructions.max_file_bytes).unwrap_or(0);
    candidates.iter().any(|c| {
        if !names.contains(&c.name_in_place().as_str()) {
            return false;
        }
        let Some(r) = roots.set.get(c.root) else {
            return false;
        };
        if c.origin == Origin::Ancestor
            && crate::trace::foreign_owner(policy, r, c.root, &c.rel, view).is_some()
        {
            return false;
        }
        match view.open(r, c.root, &c.rel, policy.trust.symlinks) {
            crate::trace::Open::File(file) if file.stamp().is_file() => file
                .read_at_most(limit)
                .is_ok_and(|bytes| !policy.is_blank(&bytes)),
            crate::trace::Open::File(file) => {
                file.leave();
                false
            }
            _ => false,
        }
    })
}

/// Whether any of `candidates` is there (a file, or anything a link
/// names): the test for `fallback-level-files`. A file above the
/// repository that another user owns is not there (it is not read either),
/// so a blank one planted in a shared folder cannot turn the fallback off.
fn any_present(
    policy: &Policy,
    roots: &Roots,
    candidates: &[Candidate],
    view: &mut View<'_>,
) -> bool {
    candidates.iter().any(|c| {
        let Some(r) = roots.set.get(c.root) else {
            return false;
        };
        // Not recorded: the candidate's own examination records it.
        !matches!(view.glance(r, &c.rel), crate::sandbox::Stamp::Absent)
            && (c.origin != Origin::Ancestor
                || crate::trace::foreign_owner(policy, r, c.root, &c.rel, view).is_none())
    })
}

/// The candidates in read order: home files first, then the project's in
/// the policy's order (by default outermost first, the cwd's files last).
pub(crate) fn candidates(policy: &Policy, roots: &Roots, view: &mut View<'_>) -> Vec<Candidate> {
    let ins = &policy.instructions;
    let mut places = Places {
        policy,
        roots,
        view,
        out: Vec::new(),
    };
    // The named roots' files, then the home's: the user's and an
    // administrator's own files, before any project file. A named root
    // with `unless-found` stands in for roots that hold none of their
    // files: it comes after the home's place, once those are known.
    let files_of = |i: usize| -> Vec<&str> {
        policy.roots.named[i]
            .files
            .iter()
            .map(|n| n.get_ref().as_str())
            .collect()
    };
    // Where each root's candidates are in `places.out`.
    let mut spans: Vec<(RootId, std::ops::Range<usize>)> = Vec::new();
    for (i, named) in policy.roots.named.iter().enumerate() {
        if named.unless_found.is_empty() {
            let start = places.out.len();
            places.push(RootId::Named(i), 0, Path::new(""), &files_of(i), false);
            spans.push((RootId::Named(i), start..places.out.len()));
        }
    }
    let home_names = names(&ins.home_files, &ins.extra_home_files);
    let start = places.out.len();
    places.push(RootId::Home, 0, Path::new(""), &home_names, false);
    spans.push((RootId::Home, start..places.out.len()));
    for (i, named) in policy.roots.named.iter().enumerate() {
        if named.unless_found.is_empty() {
            continue;
        }
        let found = named.unless_found.iter().any(|other| {
            let id = match other.get_ref().as_str() {
                "home" => Some(RootId::Home),
                name => policy
                    .roots
                    .named
                    .iter()
                    .position(|n| n.name.get_ref() == name)
                    .map(RootId::Named),
            };
            spans
                .iter()
                .filter(|(root, _)| Some(*root) == id)
                .any(|(_, range)| {
                    any_present(policy, roots, &places.out[range.clone()], places.view)
                })
        });
        let start = places.out.len();
        if !found {
            places.push(RootId::Named(i), 0, Path::new(""), &files_of(i), false);
        }
        spans.push((RootId::Named(i), start..places.out.len()));
    }
    let first_project = places.out.len();
    // The folders above the repository root, root-most first.
    let ancestor_names: Vec<&str> = ins
        .ancestor_files
        .iter()
        .map(|n| n.get_ref().as_str())
        .collect();
    let level_names = names(&ins.level_files, &ins.extra_level_files);
    // The nearest `ancestor_levels` of them are levels
    // (`instructions.compat.unmarked-levels`): read with the level files.
    let first_level = roots
        .set
        .ancestors
        .len()
        .saturating_sub(roots.ancestor_levels);
    for k in 0..roots.set.ancestors.len() {
        let names = if k < first_level {
            &ancestor_names
        } else {
            &level_names
        };
        places.push(RootId::Ancestor(k), 0, Path::new(""), names, false);
    }
    // The levels read: down to the cwd, or the root alone, or the cwd alone.
    let (to, skip): (&Path, &dyn Fn(&Path) -> bool) = match ins.levels {
        SourceLevels::EveryLevel => (&roots.cwd_rel, &|_| false),
        SourceLevels::Root => (Path::new(""), &|_| false),
        SourceLevels::Cwd => (&roots.cwd_rel, &|dir| dir != roots.cwd_rel),
    };
    places.levels(to, &level_names, skip, false);
    let stands_in = !ins.fallback_level_files.is_empty()
        && if ins.fallback_unless.is_empty() {
            !any_present(policy, roots, &places.out[first_project..], places.view)
        } else {
            let unless: Vec<&str> = ins
                .fallback_unless
                .iter()
                .map(|n| n.get_ref().as_str())
                .collect();
            !any_with_text(
                policy,
                roots,
                &places.out[first_project..],
                &unless,
                places.view,
            )
        };
    if stands_in {
        // No primary file at or above the cwd: the fallback names stand in.
        let fallback: Vec<&str> = ins
            .fallback_level_files
            .iter()
            .map(|n| n.get_ref().as_str())
            .collect();
        // Under `fallback-unless`, in every folder above the repository
        // too; else at the folders that are levels.
        let from = if ins.fallback_unless.is_empty() {
            first_level
        } else {
            0
        };
        for k in from..roots.set.ancestors.len() {
            places.push(RootId::Ancestor(k), 0, Path::new(""), &fallback, false);
        }
        places.levels(to, &fallback, skip, false);
        // Each fallback file joins its folder (after that folder's other
        // names): the folders above the repository outermost first, then
        // the levels from the root down.
        let ancestors = roots.set.ancestors.len();
        out_by_folder(&mut places.out[first_project..], ancestors);
    }
    let mut out = places.out;
    order(policy, &mut out[first_project..]);
    out
}

/// Sorts project candidates (stably) by their folder: the folders above
/// the repository, outermost first, then the repository's levels.
fn out_by_folder(project: &mut [Candidate], ancestors: usize) {
    project.sort_by_key(|c| match c.root {
        RootId::Ancestor(k) => k,
        _ => ancestors + c.level,
    });
}

/// The candidates of the levels below the cwd down to `target` (a
/// root-relative folder): what accessing `target` adds to the chain. A
/// target not below the cwd adds nothing (the chain holds the levels at and
/// above the cwd; a folder beside it is not the session's). Outermost
/// first, names in the policy's order within a level (whatever `order`
/// says: Gemini CLI sorts only what it loads at the start).
pub(crate) fn below(
    policy: &Policy,
    roots: &Roots,
    target: &Path,
    view: &mut View<'_>,
) -> Vec<Candidate> {
    let ins = &policy.instructions;
    // One level read (the root's or the cwd's): no walk for an access to
    // extend.
    if !target.starts_with(&roots.cwd_rel) || ins.levels != SourceLevels::EveryLevel {
        return Vec::new();
    }
    let level_names = if ins.access_level_files.is_empty() {
        names(&ins.level_files, &ins.extra_level_files)
    } else {
        ins.access_level_files
            .iter()
            .map(|n| n.get_ref().as_str())
            .collect()
    };
    let mut places = Places {
        policy,
        roots,
        view,
        out: Vec::new(),
    };
    let cwd_rel = roots.cwd_rel.clone();
    places.levels(target, &level_names, &|dir| cwd_rel.starts_with(dir), true);
    for c in &mut places.out {
        c.accessed = true;
    }
    places.out
}

/// A relative path with `/` separators, as globs expect.
pub(crate) fn slash_path(p: &Path) -> String {
    p.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}
