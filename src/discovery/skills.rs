//! Skill discovery: the folders of every skill source, each checked and its
//! `SKILL.md` frontmatter read (only as far as the frontmatter goes).

use std::path::{Path, PathBuf};

use cap_std::fs::Dir;

use crate::discovery::chain::Origin;
use crate::fingerprint::{Trace, TraceRoot};
use crate::policy::{Policy, RootKind, SkillSource, SymlinkRule};
use crate::read::{self, Opened, Reason, Stamp};
use crate::roots::Roots;
use crate::skill::cache::{ParseCache, parse_uncached};
use crate::skill::frontmatter::{self, Frontmatter, FrontmatterError};

/// The file that makes a folder a skill.
pub const SKILL_FILE: &str = "SKILL.md";

/// How many names beyond the scan cap a source listing may hold (see `scan`).
const LISTING_FACTOR: usize = 16;

/// How much of a `SKILL.md` is read at a time while looking for the end of
/// its frontmatter.
const CHUNK: u64 = 4096;

/// A skill folder that passed every check.
#[derive(Debug, Clone)]
pub struct Found {
    /// The folder name, equal to the frontmatter name.
    pub name: String,
    /// The parsed frontmatter.
    pub frontmatter: Frontmatter,
    /// Home or project.
    pub origin: Origin,
    /// The source's root.
    pub root: RootKind,
    /// The source's path, as the policy writes it.
    pub source: String,
    /// The source's rank.
    pub rank: i64,
    /// The `SKILL.md`, relative to its root.
    pub rel: PathBuf,
    /// The `SKILL.md`, absolute.
    pub path: PathBuf,
    /// A home skill shipping the policy's executable file.
    pub executable: bool,
}

/// A folder or file that was examined and refused.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Rejected {
    /// What was refused (a skill folder, its `SKILL.md`, or a source).
    #[serde(serialize_with = "crate::paths::lossy")]
    pub path: PathBuf,
    /// Why.
    pub reason: Reason,
}

fn origin_of(root: RootKind) -> Origin {
    match root {
        RootKind::Home => Origin::Home,
        RootKind::Repo => Origin::Project,
    }
}

/// Examines every source of the policy, lowest rank first. `cache` remembers
/// parsed frontmatter across builds (a [`crate::Loader`] passes one).
pub fn discover(
    policy: &Policy,
    roots: &Roots,
    trace: &mut Trace,
    cache: Option<&ParseCache>,
) -> (Vec<Found>, Vec<Rejected>) {
    let mut sources: Vec<&SkillSource> = policy.skills.sources.iter().collect();
    sources.sort_by_key(|s| *s.rank.get_ref());
    let mut found = Vec::new();
    let mut rejected = Vec::new();
    for source in sources {
        let (dir, base, troot) = match source.root {
            RootKind::Home => match &roots.home {
                Some(h) => (&h.dir, &h.path, TraceRoot::Home),
                None => continue,
            },
            RootKind::Repo => (&roots.repo.dir, &roots.repo.path, TraceRoot::Repo),
        };
        let ctx = SourceCtx {
            policy,
            cache,
            dir,
            base,
            troot,
            source,
        };
        ctx.scan(trace, &mut found, &mut rejected);
    }
    (found, rejected)
}

struct SourceCtx<'a> {
    policy: &'a Policy,
    cache: Option<&'a ParseCache>,
    dir: &'a Dir,
    base: &'a Path,
    troot: TraceRoot,
    source: &'a SkillSource,
}

impl SourceCtx<'_> {
    fn scan(&self, trace: &mut Trace, found: &mut Vec<Found>, rejected: &mut Vec<Rejected>) {
        let rel_source = PathBuf::from(self.source.path.get_ref());
        let stamp = Stamp::probe(self.dir, &rel_source);
        trace.push(self.troot, &rel_source, stamp, None);
        let reject = |rejected: &mut Vec<Rejected>, rel: &Path, reason| {
            rejected.push(Rejected {
                path: self.base.join(rel),
                reason,
            })
        };
        if self.policy.trust.symlinks == SymlinkRule::Never {
            if let Ok(m) = self.dir.symlink_metadata(&rel_source) {
                if m.file_type().is_symlink() {
                    reject(rejected, &rel_source, Reason::SymlinkRefused);
                    return;
                }
            }
        }
        let entries = match self.dir.read_dir(&rel_source) {
            Ok(e) => e,
            Err(e) => {
                match read::Opened::from_error(&e) {
                    Opened::Absent => {}
                    Opened::Refused(reason) => reject(rejected, &rel_source, reason),
                    Opened::File { .. } => {}
                }
                return;
            }
        };
        // Names are cheap (no file is opened to list them), so up to
        // LISTING_FACTOR times the cap are listed and sorted, and the first
        // `cap` in name order are examined: the choice does not depend on the
        // file system's directory order unless the folder is huge.
        let cap = usize::try_from(self.policy.skills.max_entries_per_source).unwrap_or(usize::MAX);
        let list_cap = cap.saturating_mul(LISTING_FACTOR);
        let mut names = Vec::new();
        for entry in entries {
            if names.len() >= list_cap {
                break;
            }
            let Ok(entry) = entry else { continue };
            let is_link = entry.file_type().map(|t| t.is_symlink()).unwrap_or(false);
            names.push((entry.file_name(), is_link));
        }
        names.sort();
        if names.len() > cap {
            names.truncate(cap);
            reject(rejected, &rel_source, Reason::ScanLimit);
        }
        for (name, is_link) in names {
            let rel_folder = rel_source.join(&name);
            let Some(name) = name.to_str().map(str::to_string) else {
                reject(rejected, &rel_folder, Reason::InvalidName);
                continue;
            };
            if name.starts_with('.') {
                reject(rejected, &rel_folder, Reason::DotFolder);
                continue;
            }
            if !self.policy.is_valid_skill_name(&name) {
                reject(rejected, &rel_folder, Reason::InvalidName);
                continue;
            }
            if is_link && self.policy.trust.symlinks == SymlinkRule::Never {
                reject(rejected, &rel_folder, Reason::SymlinkRefused);
                continue;
            }
            match self.examine(&name, &rel_folder, trace) {
                Ok(f) => found.push(f),
                Err((rel, reason)) => reject(rejected, &rel, reason),
            }
        }
    }

    fn examine(
        &self,
        name: &str,
        rel_folder: &Path,
        trace: &mut Trace,
    ) -> Result<Found, (PathBuf, Reason)> {
        // Open the SKILL.md straight away: for a good skill that is the only
        // path examined (and traced: a removed or replaced folder shows up as
        // a changed SKILL.md). The folder is examined only to explain a failure.
        let rel = rel_folder.join(SKILL_FILE);
        let (file, meta) = match read::open_candidate(self.dir, &rel, self.policy.trust.symlinks) {
            Opened::File { file, meta } => (file, meta),
            failed => {
                let folder_stamp = Stamp::probe(self.dir, rel_folder);
                let folder_fault = match folder_stamp {
                    Stamp::Error(_) => Some(match self.dir.metadata(rel_folder) {
                        Err(e) => match Opened::from_error(&e) {
                            Opened::Refused(r) => r,
                            _ => Reason::Unreadable,
                        },
                        Ok(_) => Reason::Unreadable,
                    }),
                    Stamp::Present { mode, .. } if mode & 0o170000 != 0o040000 => {
                        Some(Reason::NotADirectory)
                    }
                    _ => None,
                };
                if let Some(reason) = folder_fault {
                    trace.push(self.troot, rel_folder, folder_stamp, None);
                    return Err((rel_folder.to_path_buf(), reason));
                }
                return Err(match failed {
                    Opened::Refused(reason) => {
                        trace.push(self.troot, &rel, Stamp::probe(self.dir, &rel), None);
                        (rel, reason)
                    }
                    _ => {
                        trace.push(self.troot, &rel, Stamp::Absent, None);
                        (rel_folder.to_path_buf(), Reason::MissingSkillFile)
                    }
                });
            }
        };
        let stamp = Stamp::of(&meta);
        let cap = u64::try_from(self.policy.skills.max_skill_file_bytes).unwrap_or(0);
        if meta.len() > cap {
            trace.push(self.troot, &rel, stamp, None);
            return Err((rel, Reason::TooLarge));
        }
        // Read only as far as the frontmatter goes.
        let mut buf = Vec::new();
        loop {
            let chunk = match read::read_at_most(&file, CHUNK.min(cap - buf.len() as u64), CHUNK) {
                Ok(c) => c,
                Err(_) => {
                    trace.push(self.troot, &rel, stamp, None);
                    return Err((rel, Reason::Unreadable));
                }
            };
            let done = chunk.is_empty();
            buf.extend_from_slice(&chunk);
            if done || frontmatter::frontmatter_end(&buf).is_some() || buf.len() as u64 >= cap {
                break;
            }
        }
        if let Some(end) = frontmatter::frontmatter_end(&buf) {
            buf.truncate(end);
        }
        trace.push(self.troot, &rel, stamp, Some(&buf));
        let parsed = match self.cache {
            Some(c) => c.parse(&buf),
            None => parse_uncached(&buf),
        };
        let fm = parsed.map_err(|e| (rel.clone(), reason_of(&e)))?;
        if fm.name != name {
            return Err((rel_folder.to_path_buf(), Reason::Impostor));
        }
        let max_desc =
            usize::try_from(self.policy.skills.description_max_chars).unwrap_or(usize::MAX);
        if fm.description.chars().count() > max_desc {
            return Err((rel, Reason::DescriptionTooLong));
        }
        let executable = self.source.root == RootKind::Home
            && !self.policy.skills.executable_file.is_empty()
            && {
                let exe = rel_folder.join(&self.policy.skills.executable_file);
                let exe_stamp = Stamp::probe(self.dir, &exe);
                trace.push(self.troot, &exe, exe_stamp, None);
                matches!(exe_stamp, Stamp::Present { mode, .. } if mode & 0o170000 == 0o100000)
            };
        Ok(Found {
            name: name.to_string(),
            frontmatter: fm,
            origin: origin_of(self.source.root),
            root: self.source.root,
            source: self.source.path.get_ref().clone(),
            rank: *self.source.rank.get_ref(),
            path: self.base.join(&rel),
            rel,
            executable,
        })
    }
}

fn reason_of(e: &FrontmatterError) -> Reason {
    match e {
        FrontmatterError::MissingName => Reason::MissingName,
        FrontmatterError::MissingDescription => Reason::MissingDescription,
        _ => Reason::BadFrontmatter,
    }
}
