//! Skill discovery: the folders of every skill source, each checked and its
//! `SKILL.md` frontmatter read (only as far as the frontmatter goes).

use std::path::{Path, PathBuf};

use super::cache::ParseCache;
use super::frontmatter::Frontmatter;
use super::read;
use crate::fingerprint::{Place, Trace};
use crate::origin::Origin;
use crate::policy::{FrontmatterMode, HardLinkRule, Policy, SkillSource, SymlinkRule};
use crate::reason::Reason;
use crate::sandbox::{Opened, Root, Roots, Stamp};
use crate::warning::{Warning, WarningKind};

/// The file that makes a folder a skill.
pub(crate) const SKILL_FILE: &str = "SKILL.md";

/// How many names beyond the scan cap a source listing may hold (see `scan`).
const LISTING_FACTOR: usize = 16;

/// A skill folder that passed every check.
#[derive(Debug, Clone)]
pub(crate) struct Found {
    /// The folder name, equal to the frontmatter name.
    pub(crate) name: String,
    /// The parsed frontmatter.
    pub(crate) frontmatter: Frontmatter,
    /// The root of its source.
    pub(crate) origin: Origin,
    /// The source's path, as the policy writes it.
    pub(crate) source: String,
    /// The source's rank.
    pub(crate) rank: i64,
    /// The `SKILL.md`, relative to its root.
    pub(crate) rel: PathBuf,
    /// The `SKILL.md`, absolute.
    pub(crate) path: PathBuf,
    /// A home skill shipping the policy's executable file.
    pub(crate) executable: bool,
}

/// A folder or file that was examined and refused.
#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct Rejected {
    /// What was refused (a skill folder, its `SKILL.md`, or a source).
    #[serde(serialize_with = "crate::paths::lossy")]
    pub path: PathBuf,
    /// Why.
    pub reason: Reason,
}

/// Examines every source of the policy, lowest rank first. `cache` remembers
/// parsed frontmatter across builds (a loader passes one).
pub(crate) fn discover(
    policy: &Policy,
    roots: &Roots,
    trace: &mut Trace,
    cache: &ParseCache,
) -> (Vec<Found>, Vec<Rejected>, Vec<Warning>) {
    let warnings = std::cell::RefCell::new(Vec::new());
    let mut sources: Vec<&SkillSource> = policy.skills.sources.iter().collect();
    sources.sort_by_key(|s| *s.rank.get_ref());
    let mut found = Vec::new();
    let mut rejected = Vec::new();
    for source in sources {
        let origin = source.root;
        let Some(root) = roots.get(origin) else {
            continue;
        };
        let ctx = SourceCtx {
            warnings: &warnings,
            policy,
            cache,
            root,
            origin,
            source,
        };
        ctx.scan(trace, &mut found, &mut rejected);
    }
    (found, rejected, warnings.into_inner())
}

struct SourceCtx<'a> {
    warnings: &'a std::cell::RefCell<Vec<Warning>>,
    policy: &'a Policy,
    cache: &'a ParseCache,
    root: &'a Root,
    origin: Origin,
    source: &'a SkillSource,
}

impl SourceCtx<'_> {
    fn place(&self) -> Place {
        Place::Within(self.origin)
    }

    fn reject(&self, rejected: &mut Vec<Rejected>, rel: &Path, reason: Reason) {
        rejected.push(Rejected {
            path: self.root.path.join(rel),
            reason,
        });
    }

    fn scan(&self, trace: &mut Trace, found: &mut Vec<Found>, rejected: &mut Vec<Rejected>) {
        let rel_source = PathBuf::from(self.source.path.get_ref());
        let source_stamp = self.root.stamp(&rel_source);
        trace.push(self.place(), &rel_source, source_stamp, None);
        let never_follow = self.policy.trust.symlinks == SymlinkRule::Never;
        if never_follow && self.root.is_symlink(&rel_source) {
            self.reject(rejected, &rel_source, Reason::SymlinkRefused);
            return;
        }
        // A file, FIFO or socket where the source folder should be is
        // reported, not passed over in silence.
        if matches!(source_stamp, Stamp::Present { .. }) && !source_stamp.is_dir() {
            self.reject(rejected, &rel_source, Reason::NotADirectory);
            return;
        }
        // Names are cheap (no file is opened to list them), so up to
        // LISTING_FACTOR times the cap are listed and sorted, and the first
        // `cap` in name order are examined: the choice does not depend on the
        // file system's directory order unless the folder is huge.
        let cap = usize::try_from(self.policy.skills.max_entries_per_source).unwrap_or(usize::MAX);
        let mut names = match self
            .root
            .list(&rel_source, cap.saturating_mul(LISTING_FACTOR))
        {
            Ok(Some(names)) => names,
            Ok(None) => return,
            Err(reason) => {
                self.reject(rejected, &rel_source, reason);
                return;
            }
        };
        names.sort();
        if names.len() > cap {
            names.truncate(cap);
            self.reject(rejected, &rel_source, Reason::ScanLimit);
        }
        for entry in names {
            let rel_folder = rel_source.join(&entry.name);
            let Some(name) = entry.name.to_str().map(str::to_string) else {
                self.reject(rejected, &rel_folder, Reason::InvalidName);
                continue;
            };
            if name.starts_with('.') {
                self.reject(rejected, &rel_folder, Reason::DotFolder);
                continue;
            }
            if !self.policy.is_valid_skill_name(&name) {
                self.reject(rejected, &rel_folder, Reason::InvalidName);
                continue;
            }
            if entry.is_link && never_follow {
                self.reject(rejected, &rel_folder, Reason::SymlinkRefused);
                continue;
            }
            match self.examine(&name, &rel_folder, trace) {
                Ok(f) => found.push(f),
                Err((rel, reason)) => self.reject(rejected, &rel, reason),
            }
        }
    }

    /// Why a skill folder whose `SKILL.md` did not open is unusable.
    fn explain_failure(
        &self,
        rel_folder: &Path,
        failed: Opened,
        trace: &mut Trace,
    ) -> (PathBuf, Reason) {
        let folder_stamp = self.root.stamp(rel_folder);
        let folder_fault = match folder_stamp {
            Stamp::Error(reason) => Some(reason),
            Stamp::Present { .. } if !folder_stamp.is_dir() => Some(Reason::NotADirectory),
            _ => None,
        };
        if let Some(reason) = folder_fault {
            trace.push(self.place(), rel_folder, folder_stamp, None);
            return (rel_folder.to_path_buf(), reason);
        }
        let rel = rel_folder.join(SKILL_FILE);
        match failed {
            Opened::Refused(reason) => {
                trace.push(self.place(), &rel, self.root.stamp(&rel), None);
                (rel, reason)
            }
            _ => {
                trace.push(self.place(), &rel, Stamp::Absent, None);
                (rel_folder.to_path_buf(), Reason::MissingSkillFile)
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
        let file = match self.root.open_file(&rel, self.policy.trust.symlinks) {
            Opened::File(file) => file,
            failed => return Err(self.explain_failure(rel_folder, failed, trace)),
        };
        let stamp = file.stamp();
        if self.origin == Origin::Project && stamp.is_hard_linked() {
            self.warnings
                .borrow_mut()
                .push(crate::instructions::hard_link_warning(
                    &self.root.path.join(&rel),
                ));
            if self.policy.trust.hard_links == HardLinkRule::Refuse {
                trace.push(self.place(), &rel, stamp, None);
                return Err((rel, Reason::HardLink));
            }
        }
        let cap = read::file_cap(self.policy);
        if file.len() > cap {
            trace.push(self.place(), &rel, stamp, None);
            return Err((rel, Reason::TooLarge));
        }
        let bytes = match read::frontmatter_bytes(&file, cap) {
            Ok(b) => b,
            Err(reason) => {
                trace.push(self.place(), &rel, stamp, None);
                return Err((rel, reason));
            }
        };
        trace.push(self.place(), &rel, stamp, Some(&bytes));
        // The same rule as for instruction files: a skill whose frontmatter
        // is not text is not listed (the agent could not load it).
        if !is_text(&bytes, file.len() > bytes.len() as u64) {
            return Err((rel, Reason::NotText));
        }
        let lenient = self.policy.skills.frontmatter == FrontmatterMode::Lenient;
        let (fm, strict_error) = self
            .cache
            .parse(&bytes, lenient)
            .map_err(|e| (rel.clone(), e.reason()))?;
        if fm.name != name {
            return Err((rel_folder.to_path_buf(), Reason::Impostor));
        }
        if let Some(strict_error) = strict_error {
            self.warnings.borrow_mut().push(Warning::new(
                WarningKind::LenientFrontmatter,
                self.root.path.join(&rel),
                format!(
                    "the frontmatter is not strict YAML and was read as plain `key: value` \
                     lines ({strict_error})"
                ),
            ));
        }
        let max_desc =
            usize::try_from(self.policy.skills.description_max_chars).unwrap_or(usize::MAX);
        if fm.description.chars().count() > max_desc {
            return Err((rel, Reason::DescriptionTooLong));
        }
        let executable =
            self.origin == Origin::Home && !self.policy.skills.executable_file.is_empty() && {
                let exe = rel_folder.join(&self.policy.skills.executable_file);
                let exe_stamp = self.root.stamp(&exe);
                trace.push(self.place(), &exe, exe_stamp, None);
                exe_stamp.is_file()
            };
        Ok(Found {
            name: name.to_string(),
            frontmatter: fm,
            origin: self.origin,
            source: self.source.path.get_ref().clone(),
            rank: *self.source.rank.get_ref(),
            path: self.root.path.join(&rel),
            rel,
            executable,
        })
    }
}

/// Whether frontmatter bytes are text: valid UTF-8 without NUL. When the
/// bytes stop before the end of the file, a character cut in half at the
/// very end does not count against them.
fn is_text(bytes: &[u8], cut: bool) -> bool {
    if memchr::memchr(0, bytes).is_some() {
        return false;
    }
    match std::str::from_utf8(bytes) {
        Ok(_) => true,
        Err(e) => cut && e.error_len().is_none(),
    }
}
