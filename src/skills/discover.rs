//! Skill discovery: the folders of every skill source, each checked and its
//! `SKILL.md` frontmatter read (only as far as the frontmatter goes).

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::cache::ParseCache;
pub(crate) use super::found::{Found, Rejected};
use super::frontmatter::Frontmatter;
use super::parallel::{in_order, threshold, workers};
use super::read;
use crate::policy::{
    FrontmatterMode, HardLinkRule, LeadingBom, LongDescription, NameFrom, Policy, ProjectTrust,
    SkillSource, SourceLevels, SymlinkRule, Whitespace,
};
use crate::sandbox::Place;
use crate::sandbox::{Looked, Opened, Read, Root, Roots, Stamp};
use crate::trace::{Trace, TraceEntry, View};
use crate::vocab::origin::{Origin, RootId};
use crate::vocab::reason::Reason;
use crate::vocab::warning::{Warning, WarningKind};

/// The file that makes a folder a skill.
pub(crate) const SKILL_FILE: &str = "SKILL.md";

/// How many names beyond the scan cap a source listing may hold (see `scan`).
const LISTING_FACTOR: usize = 16;

/// Examines every source of the policy, lowest rank first. `cache` remembers
/// parsed frontmatter across builds (a loader passes one). Under
/// `trust.project = "pinned"` a project skill's whole `SKILL.md` is read and
/// hashed.
pub(crate) fn discover(
    policy: &Policy,
    roots: &Roots,
    view: &mut View<'_>,
    cache: &ParseCache,
) -> (Vec<Found>, Vec<Rejected>, Vec<Warning>) {
    let warnings = std::cell::RefCell::new(Vec::new());
    let mut sources: Vec<&SkillSource> = policy.skills.sources.iter().collect();
    sources.sort_by_key(|s| *s.rank.get_ref());
    let mut found = Vec::new();
    let mut rejected = Vec::new();
    for source in sources {
        let Some(id) = policy.root_id(source.root.get_ref()) else {
            continue;
        };
        let Some(root) = roots.set.get(id) else {
            continue;
        };
        let origin = id.origin();
        let ctx = SourceCtx {
            warnings: &warnings,
            policy,
            cache,
            root,
            id,
            origin,
            source,
        };
        // `skills.compat.levels-need-repository`: under a `.git` folder
        // with no `HEAD` (a marker, but no repository) Codex reads the
        // cwd's level alone.
        let cwd_only = source.levels == SourceLevels::EveryLevel
            && policy
                .skills
                .levels_need_repository
                .iter()
                .any(|p| p.get_ref() == source.path.get_ref())
            && bare_git_dir(root, id, view);
        // `instructions.compat.unmarked-levels`: with no marker found, the
        // folders above the cwd that are levels hold the source too,
        // outermost first, each its own sandbox (git's owner rule applies:
        // see `examine`); the repository's own levels come after them.
        let above = if source.levels == SourceLevels::EveryLevel && !cwd_only {
            roots.ancestor_levels
        } else {
            0
        };
        let first = roots.set.ancestors.len().saturating_sub(above);
        for (level, k) in (first..roots.set.ancestors.len()).enumerate() {
            let id = RootId::Ancestor(k);
            let Some(root) = roots.set.get(id) else {
                continue;
            };
            let ctx = SourceCtx {
                root,
                id,
                origin: id.origin(),
                ..ctx
            };
            ctx.scan(
                Path::new(source.path.get_ref()),
                level,
                view,
                &mut found,
                &mut rejected,
            );
        }
        for (level, rel_source) in source_dirs(source, &roots.cwd_rel, cwd_only) {
            ctx.scan(&rel_source, above + level, view, &mut found, &mut rejected);
        }
    }
    (found, rejected, warnings.into_inner())
}

/// Whether the root's `.git` is a folder with no `HEAD` in it: a marker,
/// but no repository. Both stamps are recorded (a `HEAD` written later
/// changes the answer).
fn bare_git_dir(root: &Root, id: RootId, view: &mut View<'_>) -> bool {
    view.stamp(root, id, Path::new(".git")).is_dir()
        && !view.stamp(root, id, Path::new(".git/HEAD")).is_file()
}

/// The folders a source is looked for in, with their level: its path
/// under its root, or under every level from the repository root to the
/// cwd (the cwd's alone with `cwd_only`), or under the cwd.
fn source_dirs(source: &SkillSource, cwd_rel: &Path, cwd_only: bool) -> Vec<(usize, PathBuf)> {
    let path = Path::new(source.path.get_ref());
    let levels = cwd_rel.components().count();
    match source.levels {
        SourceLevels::Root => vec![(0, path.to_path_buf())],
        SourceLevels::Cwd => vec![(levels, cwd_rel.join(path))],
        SourceLevels::EveryLevel if cwd_only => vec![(levels, cwd_rel.join(path))],
        SourceLevels::EveryLevel => {
            let mut dir = PathBuf::new();
            let mut out = vec![(0, path.to_path_buf())];
            for (i, c) in cwd_rel.components().enumerate() {
                dir.push(c.as_os_str());
                out.push((i + 1, crate::vocab::paths::join(&dir, path)));
            }
            out
        }
    }
}

pub(super) struct SourceCtx<'a> {
    pub(super) warnings: &'a std::cell::RefCell<Vec<Warning>>,
    pub(super) policy: &'a Policy,
    pub(super) cache: &'a ParseCache,
    pub(super) root: &'a Root,
    pub(super) id: RootId,
    pub(super) origin: Origin,
    pub(super) source: &'a SkillSource,
}

impl SourceCtx<'_> {
    fn place(&self) -> Place {
        Place::Within(self.id)
    }

    /// Whether a skill's name is its folder's under this policy.
    fn folder_named(&self) -> bool {
        matches!(
            self.policy.skills.name_from,
            NameFrom::FolderAndFrontmatter | NameFrom::Folder
        )
    }

    /// Why a folder may not hold a skill by its name, if so: any name is
    /// fine when the frontmatter names skills, a valid one is needed when
    /// the folder does.
    fn folder_name_refusal(&self, folder: &str) -> Option<Reason> {
        if self.folder_named() {
            self.policy.skill_name_refusal(folder)
        } else {
            None
        }
    }

    pub(super) fn reject(&self, rejected: &mut Vec<Rejected>, rel: &Path, reason: Reason) {
        rejected.push(Rejected {
            path: crate::vocab::paths::join(&self.root.path, rel),
            reason,
        });
    }

    fn scan(
        &self,
        rel_source: &Path,
        level: usize,
        view: &mut View<'_>,
        found: &mut Vec<Found>,
        rejected: &mut Vec<Rejected>,
    ) {
        // One open stamps the source and, when it is a folder, lists it.
        let folder = view.list(self.root, self.id, rel_source, self.listing_max());
        let source_stamp = folder.stamp;
        let never_follow = self.policy.trust.symlinks == SymlinkRule::Never;
        if never_follow && view.is_symlink(self.root, rel_source) {
            self.reject(rejected, rel_source, Reason::SymlinkRefused);
            return;
        }
        // A file, FIFO or socket where the source folder should be is
        // reported, not passed over in silence.
        if matches!(source_stamp, Stamp::Present { .. }) && !source_stamp.is_dir() {
            self.reject(rejected, rel_source, Reason::NotADirectory);
            return;
        }
        if self.source.source_skill && source_stamp.is_dir() {
            let name = rel_source
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default()
                .to_string();
            self.maybe_skill(&name, rel_source, level, view, found, rejected);
        }
        let depth = usize::try_from(*self.source.depth.get_ref()).unwrap_or(1);
        if depth <= 1 {
            self.scan_children(rel_source, &folder, level, view, found, rejected);
        } else {
            self.walk(rel_source, &folder, depth, level, view, found, rejected);
        }
    }

    /// How many names a folder listing may hold: up to `LISTING_FACTOR`
    /// times the scan cap (see `entries`).
    fn listing_max(&self) -> usize {
        let cap = usize::try_from(self.policy.skills.max_entries_per_source).unwrap_or(usize::MAX);
        cap.saturating_mul(LISTING_FACTOR)
    }

    /// The source's entries, sorted by name, at most the policy's cap of
    /// them; `None` when the folder cannot be listed (the reason is
    /// recorded).
    fn entries<'f>(
        &self,
        rel_dir: &Path,
        folder: &'f Looked,
        rejected: &mut Vec<Rejected>,
    ) -> Option<Vec<&'f crate::sandbox::Listed>> {
        // Names are cheap (no file is opened to list them), so up to
        // LISTING_FACTOR times the cap are listed and sorted, and the first
        // `cap` in name order are examined: the choice does not depend on the
        // file system's directory order unless the folder is huge.
        let cap = usize::try_from(self.policy.skills.max_entries_per_source).unwrap_or(usize::MAX);
        let mut names = match &folder.listing {
            Ok(Some(names)) => names.iter().collect::<Vec<_>>(),
            Ok(None) => return None,
            Err(reason) => {
                self.reject(rejected, rel_dir, *reason);
                return None;
            }
        };
        names.sort();
        if names.len() > cap {
            names.truncate(cap);
            self.reject(rejected, rel_dir, Reason::ScanLimit);
        }
        Some(names)
    }

    /// Depth 1: every sub-folder of the source is a skill folder.
    fn scan_children(
        &self,
        rel_source: &Path,
        folder: &Looked,
        level: usize,
        view: &mut View<'_>,
        found: &mut Vec<Found>,
        rejected: &mut Vec<Rejected>,
    ) {
        let Some(names) = self.entries(rel_source, folder, rejected) else {
            return;
        };
        let never_follow = self.policy.trust.symlinks == SymlinkRule::Never;
        let folder_named = self.folder_named();
        let mut steps = Vec::with_capacity(names.len());
        for entry in names {
            let rel_folder = crate::vocab::paths::join(rel_source, &entry.name);
            let Some(name) = entry.name.to_str().map(str::to_string) else {
                steps.push(Step::Reject(rel_folder, Reason::InvalidName));
                continue;
            };
            if name.starts_with('.') {
                steps.push(Step::Reject(rel_folder, Reason::DotFolder));
                continue;
            }
            if folder_named && let Some(reason) = self.policy.skill_name_refusal(&name) {
                steps.push(Step::Reject(rel_folder, reason));
                continue;
            }
            if entry.is_link && never_follow {
                steps.push(Step::Reject(rel_folder, Reason::SymlinkRefused));
                continue;
            }
            steps.push(Step::Examine(name, rel_folder));
        }
        // Room for what the examinations record (a folder and its
        // `SKILL.md` each, at most): growing these one push at a time copies
        // them over and over.
        found.reserve(steps.len());
        view.reserve(2 * steps.len());
        // Examined in parallel when there are many, merged in this order.
        run(self, steps, level, view, found, rejected);
    }

    /// Depth 2 and more: folders are walked breadth first, dot folders
    /// skipped, at most `max-entries-per-source` folders listed in all; a
    /// folder holding a `SKILL.md` is a skill (and is walked on), one
    /// without is only walked.
    #[allow(
        clippy::too_many_arguments,
        reason = "the scan's state, passed down as scan_children takes it"
    )]
    fn walk(
        &self,
        rel_source: &Path,
        folder: &Looked,
        depth: usize,
        level: usize,
        view: &mut View<'_>,
        found: &mut Vec<Found>,
        rejected: &mut Vec<Rejected>,
    ) {
        let cap = usize::try_from(self.policy.skills.max_entries_per_source).unwrap_or(usize::MAX);
        let never_follow = self.policy.trust.symlinks == SymlinkRule::Never;
        let mut queue: std::collections::VecDeque<(PathBuf, usize)> =
            std::collections::VecDeque::from([(rel_source.to_path_buf(), 0usize)]);
        let mut listed = 0usize;
        let mut source = Some(folder);
        while let Some((dir, at)) = queue.pop_front() {
            if listed >= cap {
                self.reject(rejected, &dir, Reason::ScanLimit);
                break;
            }
            listed += 1;
            // The source itself was looked at by `scan`.
            let below;
            let looked = match source.take() {
                Some(folder) => folder,
                None => {
                    // Its stamp was recorded as the walk went into it.
                    below = view.list_again(self.root, &dir, self.listing_max());
                    &below
                }
            };
            let Some(names) = self.entries(&dir, looked, rejected) else {
                continue;
            };
            for entry in names {
                let rel_folder = crate::vocab::paths::join(&dir, &entry.name);
                let Some(name) = entry.name.to_str().map(str::to_string) else {
                    continue;
                };
                // A regular file (as the listing says) is no folder: passed
                // over without a stat.
                if name.starts_with('.') || (entry.is_link && never_follow) || entry.is_file {
                    continue;
                }
                // What is no folder is passed over, and not recorded.
                let stamp = view.stamp_if(self.root, self.id, &rel_folder, Stamp::is_dir);
                if !stamp.is_dir() {
                    continue;
                }
                self.maybe_skill(&name, &rel_folder, level, view, found, rejected);
                if at + 1 < depth {
                    queue.push_back((rel_folder, at + 1));
                }
            }
        }
    }

    /// A folder that may hold a skill (a walked folder, or the source
    /// itself): examined when it holds a `SKILL.md` (one open, the
    /// examination's own), passed over in silence when it does not.
    fn maybe_skill(
        &self,
        name: &str,
        rel_folder: &Path,
        level: usize,
        view: &mut View<'_>,
        found: &mut Vec<Found>,
        rejected: &mut Vec<Rejected>,
    ) {
        if let Some(reason) = self.folder_name_refusal(name) {
            // Only a folder holding a `SKILL.md` is refused for its name.
            let rel = crate::vocab::paths::join(rel_folder, SKILL_FILE);
            let stamp = view.stamp(self.root, self.id, &rel);
            if !matches!(stamp, Stamp::Absent) {
                self.reject(rejected, rel_folder, reason);
            }
            return;
        }
        match self.examine(name, rel_folder, level, view) {
            Ok(f) => found.push(f),
            Err((_, Reason::MissingSkillFile)) => {}
            Err((rel, reason)) => self.reject(rejected, &rel, reason),
        }
    }

    /// Why a skill folder whose `SKILL.md` did not open is unusable.
    fn explain_failure(
        &self,
        rel_folder: &Path,
        failed: Opened,
        view: &mut View<'_>,
    ) -> (PathBuf, Reason) {
        // The folder is recorded only when it is at fault: otherwise the
        // `SKILL.md` is.
        let folder_fault = |s: &Stamp| match *s {
            Stamp::Error(reason) => Some(reason),
            Stamp::Present { .. } if !s.is_dir() => Some(Reason::NotADirectory),
            _ => None,
        };
        let folder_stamp = view.stamp_if(self.root, self.id, rel_folder, |s| {
            folder_fault(s).is_some()
        });
        if let Some(reason) = folder_fault(&folder_stamp) {
            return (rel_folder.to_path_buf(), reason);
        }
        let rel = crate::vocab::paths::join(rel_folder, SKILL_FILE);
        match failed {
            Opened::Refused(reason) => {
                view.stamp(self.root, self.id, &rel);
                (rel, reason)
            }
            _ => {
                view.note(self.place(), &rel, Stamp::Absent, None);
                (rel_folder.to_path_buf(), Reason::MissingSkillFile)
            }
        }
    }

    /// How this policy reads a `SKILL.md`: everything the reading and
    /// parsing depend on.
    fn reading_how(&self) -> How {
        How::of(self.policy, self.origin)
    }

    /// Opens and reads the `SKILL.md` `rel` as `how` says, and parses its
    /// frontmatter: what the file is, before any check of the policy's
    /// own (name, description, hard links). A file that is not there or
    /// is refused is explained (`Err`), as the folder's failure.
    fn read_frontmatter(
        &self,
        rel: &Path,
        rel_folder: &Path,
        how: &How,
        view: &mut View<'_>,
    ) -> Result<SkillRead, (PathBuf, Reason)> {
        let (cap, pin, fences) = (how.cap, how.pin, how.reading.fences);
        // A pinned project skill is approved by its whole file: read it all
        // (it is no larger than the cap), trace and hash all of it, and
        // parse its frontmatter from the same bytes.
        // Recorded by the caller: the entry made here is shared by the
        // builds that read the file the same way.
        let read = view.read_unrecorded(self.root, rel, how.links, cap, |file| {
            if pin {
                file.read_at_most(cap).map_err(|_| Reason::Unreadable)
            } else {
                read::frontmatter_bytes(file, cap, fences, how.reading.body)
            }
        });
        let (stamp, len, bytes) = match read {
            Read::File { stamp, len, bytes } => (stamp, len, bytes),
            Read::Absent => return Err(self.explain_failure(rel_folder, Opened::Absent, view)),
            Read::Refused(reason) => {
                return Err(self.explain_failure(rel_folder, Opened::Refused(reason), view));
            }
        };
        let path = crate::vocab::paths::join(&self.root.path, rel);
        let refused = |reason| SkillRead {
            path: path.clone(),
            stamp,
            entry: Arc::new(TraceEntry::new(self.place(), rel, stamp, None)),
            pinned_hash: None,
            pinned_digest: None,
            parsed: Err(reason),
        };
        if len > cap {
            return Ok(refused(Reason::TooLarge));
        }
        let read = match bytes {
            Ok(b) => b,
            Err(reason) => return Ok(refused(reason)),
        };
        let end = if pin {
            // The bytes a read that stops at the frontmatter would have
            // given (under `description-from-body`, up to the body's first
            // line), so that the parse is the same.
            match super::frontmatter::frontmatter_end_with(&read, fences) {
                Some(end) if how.reading.body => {
                    super::frontmatter::body_line_end(&read, end, true).unwrap_or(read.len())
                }
                Some(end) => end,
                None => read.len(),
            }
        } else {
            read.len()
        };
        let bytes = &read[..end];
        // A pinned skill's trace holds its whole file; any other's the
        // frontmatter read.
        let (traced, pinned_hash, pinned_digest) = if pin {
            (
                &read[..],
                Some(crate::trust::content_hash(&read)),
                // Its manifest entry: a pinned skill is approved by every
                // file of its folder, this one as read here.
                Some((crate::trust::sha256_digest(&read), read.len() as u64)),
            )
        } else {
            (bytes, None, None)
        };
        let entry = Arc::new(TraceEntry::new(self.place(), rel, stamp, Some(traced)));
        let parsed = if !is_text(bytes, len > bytes.len() as u64) {
            // The same rule as for instruction files: a skill whose
            // frontmatter is not text is not listed (the agent could not
            // load it).
            Err(Reason::NotText)
        } else if how.bom_is_text && bytes.starts_with(crate::vocab::text::BOM) {
            // A byte order mark the policy counts as text stands before the
            // `---`, so the first line is not a fence.
            Err(Reason::BadFrontmatter)
        } else {
            self.cache
                .parse(bytes, how.reading)
                .map(|(fm, strict_error)| (Arc::new(fm), strict_error))
                .map_err(|e| e.reason())
        };
        Ok(SkillRead {
            path,
            stamp,
            entry,
            pinned_hash,
            pinned_digest,
            parsed,
        })
    }

    pub(super) fn examine(
        &self,
        folder: &str,
        rel_folder: &Path,
        level: usize,
        view: &mut View<'_>,
    ) -> Result<Found, (PathBuf, Reason)> {
        // Open the SKILL.md straight away: for a good skill that is the only
        // path examined (and traced: a removed or replaced folder shows up as
        // a changed SKILL.md). The folder is examined only to explain a failure.
        let how = self.reading_how();
        let rel = crate::vocab::paths::join(rel_folder, SKILL_FILE);
        // Above the repository, git's owner rule: a skill another user owns
        // (its `SKILL.md`, or a folder on the way to it) may have been
        // planted in a shared folder, and is not read.
        if self.origin == Origin::Ancestor
            && let Some((path, owner)) =
                crate::trace::foreign_owner(self.policy, self.root, self.id, &rel, view)
        {
            self.warnings.borrow_mut().push(Warning::new(
                WarningKind::UnsafeAncestor,
                &path,
                format!(
                    "not read as a skill above the cwd: this belongs to another user \
                     (uid {owner}), who may have planted it; list {} in \
                     roots.safe-directories to trust it",
                    crate::vocab::paths::shown(&self.root.path)
                ),
            ));
            return Err((rel, Reason::ForeignOwner));
        }
        let read = self.read_frontmatter(&rel, rel_folder, &how, view)?;
        let rel = read.entry.rel.clone();
        if self.origin == Origin::Project && read.stamp.is_hard_linked() {
            self.warnings
                .borrow_mut()
                .push(crate::vocab::warning::Warning::hard_link(&read.path));
            if self.policy.trust.hard_links == HardLinkRule::Refuse {
                // Derived: refused unread, recorded without its content.
                view.note(self.place(), &rel, read.stamp, None);
                return Err((rel, Reason::HardLink));
            }
        }
        // Derived: the entry `read_frontmatter` made, shared.
        view.note_entry(Arc::clone(&read.entry));
        let (mut fm, strict_error) = match &read.parsed {
            Ok((fm, strict_error)) => (Arc::clone(fm), strict_error.clone()),
            Err(reason) => return Err((rel, *reason)),
        };
        let pinned_hash = read.pinned_hash.clone();
        let pinned_digest = read.pinned_digest.clone();
        let name = match self.policy.skills.name_from {
            NameFrom::FolderAndFrontmatter if fm.name.is_empty() => {
                return Err((rel, Reason::MissingName));
            }
            NameFrom::FolderAndFrontmatter if fm.name != folder => {
                return Err((rel_folder.to_path_buf(), Reason::Impostor));
            }
            NameFrom::Frontmatter if fm.name.is_empty() => {
                return Err((rel, Reason::MissingName));
            }
            NameFrom::FolderAndFrontmatter | NameFrom::Folder => folder.to_string(),
            NameFrom::Frontmatter => fm.name.clone(),
            NameFrom::FrontmatterElseFolder if fm.name.is_empty() => folder.to_string(),
            NameFrom::FrontmatterElseFolder => fm.name.clone(),
        };
        // `skills.compat.name-dash-chars`: the peer lists the name with
        // those characters turned into `-` (Gemini CLI).
        let dashes = &self.policy.skills.name_dash_chars;
        let name = if !dashes.is_empty() && name.contains(|c| dashes.contains(c)) {
            name.chars()
                .map(|c| if dashes.contains(c) { '-' } else { c })
                .collect()
        } else {
            name
        };
        // A name taken from the folder was checked before the folder was
        // examined (`folder_name_refusal`); one from the frontmatter is checked
        // here.
        if !self.folder_named()
            && let Some(reason) = self.policy.skill_name_refusal(&name)
        {
            return Err((rel, reason));
        }
        if let Some(strict_error) = strict_error {
            self.warnings.borrow_mut().push(Warning::new(
                WarningKind::LenientFrontmatter,
                read.path.clone(),
                {
                    let again = match self.policy.skills.frontmatter {
                        FrontmatterMode::QuoteSpecialValues => {
                            "again with its special values quoted"
                        }
                        _ => "as plain `key: value` lines",
                    };
                    if self.policy.skills.description_from_body {
                        format!(
                            "the frontmatter is not strict YAML ({strict_error}): it was read \
                             {again}, or, where that does not read it either, as no keys, the \
                             description taken from the body's first line"
                        )
                    } else {
                        format!(
                            "the frontmatter is not strict YAML and was read {again} \
                             ({strict_error})"
                        )
                    }
                },
            ));
        }
        // The parse keeps a description's final line breaks (a block
        // scalar's); they are cut unless the peer shows them
        // (`skills.compat.keep-final-breaks`, Gemini CLI).
        if !self.policy.skills.keep_final_breaks && fm.description.ends_with(['\n', '\r']) {
            super::frontmatter::cut_final_breaks(Arc::make_mut(&mut fm));
        }
        // Claude Code lists a description's tabs and line breaks as spaces,
        // its ends trimmed (`skills.compat.breaks-to-spaces`).
        if self.policy.skills.breaks_to_spaces {
            let spaced = crate::vocab::text::breaks_to_spaces(&fm.description);
            if spaced != fm.description.as_str() {
                let spaced = spaced.into_owned();
                Arc::make_mut(&mut fm).description = spaced;
            }
        }
        let max_desc =
            usize::try_from(self.policy.skills.description_max_chars).unwrap_or(usize::MAX);
        if self.policy.skills.description_whitespace == Whitespace::Collapse
            && let std::borrow::Cow::Owned(one_line) =
                crate::vocab::text::collapse_whitespace(&fm.description)
        {
            Arc::make_mut(&mut fm).description = one_line;
        }
        if fm.description.chars().count() > max_desc {
            match self.policy.skills.long_description {
                LongDescription::Refuse => return Err((rel, Reason::DescriptionTooLong)),
                LongDescription::Cut => {
                    let suffix = self
                        .policy
                        .templates
                        .description_cut_suffix
                        .render(|_| None);
                    let keep = max_desc.saturating_sub(suffix.chars().count());
                    let mut cut: String = fm.description.chars().take(keep).collect();
                    cut.push_str(&suffix);
                    Arc::make_mut(&mut fm).description = cut;
                }
            }
        }
        let executable =
            self.origin == Origin::Home && !self.policy.skills.executable_file.is_empty() && {
                let exe = rel_folder.join(&self.policy.skills.executable_file);
                view.stamp(self.root, self.id, &exe).is_file()
            };
        Ok(Found {
            name,
            level,
            frontmatter: fm,
            root: self.id,
            origin: self.origin,
            source: self.source.path.get_ref().clone(),
            rank: *self.source.rank.get_ref(),
            path: read.path.clone(),
            rel,
            executable,
            pinned_hash,
            pinned_digest,
            pinned_files: None,
        })
    }
}

/// How a policy reads a `SKILL.md`: the link rule, the size cap, whether
/// the whole file is read (a pinned project skill), the frontmatter
/// reading (fences, scalars, fallback) and what a byte order mark is.
struct How {
    links: SymlinkRule,
    cap: u64,
    pin: bool,
    reading: super::frontmatter::Reading,
    bom_is_text: bool,
}

impl How {
    /// How `policy` reads the `SKILL.md` files of a root of `origin`.
    fn of(policy: &Policy, origin: Origin) -> Self {
        How {
            links: match policy.skills.skill_file_symlinks {
                SymlinkRule::Never => SymlinkRule::Never,
                SymlinkRule::WithinRoot => policy.trust.symlinks,
            },
            cap: read::file_cap(policy),
            // A pinned project skill is approved by its whole file.
            pin: origin == Origin::Project && policy.trust.project == ProjectTrust::Pinned,
            reading: super::frontmatter::Reading::of(policy),
            bom_is_text: policy.skills.leading_bom == LeadingBom::Text,
        }
    }
}

/// A `SKILL.md` as one reading found it: its stamp, the trace entry it
/// left, its content hash when pinned, and its frontmatter or why it has
/// none. The same for every policy that reads it the same way.
struct SkillRead {
    /// The `SKILL.md`, absolute (its root-relative path is the entry's).
    path: PathBuf,
    stamp: Stamp,
    entry: Arc<TraceEntry>,
    pinned_hash: Option<String>,
    /// When pinned: the whole file's SHA-256 digest and size.
    pinned_digest: Option<(String, u64)>,
    parsed: Result<(Arc<Frontmatter>, Option<String>), Reason>,
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

/// One folder of a source, in listing order.
pub(super) enum Step {
    /// Refused before any file was opened.
    Reject(PathBuf, Reason),
    /// To examine: the skill name and the folder, relative to the root.
    Examine(String, PathBuf),
}

/// What examining one folder gave.
type Outcome = (
    Result<Found, (PathBuf, Reason)>,
    Vec<std::sync::Arc<TraceEntry>>,
    Vec<Warning>,
);

/// Examines the folders `steps` names and records everything in order.
pub(super) fn run(
    ctx: &SourceCtx<'_>,
    steps: Vec<Step>,
    level: usize,
    view: &mut View<'_>,
    found: &mut Vec<Found>,
    rejected: &mut Vec<Rejected>,
) {
    let (policy, cache, root, id, origin, source) = (
        ctx.policy, ctx.cache, ctx.root, ctx.id, ctx.origin, ctx.source,
    );
    let records = view.records();
    let examine = |name: &str, rel: &std::path::Path| -> Outcome {
        let warnings = RefCell::new(Vec::new());
        let local = SourceCtx {
            warnings: &warnings,
            policy,
            cache,
            root,
            id,
            origin,
            source,
        };
        let mut t = Trace::default();
        // A good skill records one path (its `SKILL.md`): room for exactly
        // that, where a first push would make room for four.
        if records {
            t.entries.reserve_exact(1);
        }
        // The worker's view records as the build's does.
        let mut view = if records {
            View::recording(&mut t)
        } else {
            View::off()
        };
        let result = local.examine(name, rel, level, &mut view);
        (result, t.entries, warnings.into_inner())
    };
    let to_examine = steps
        .iter()
        .filter(|s| matches!(s, Step::Examine(..)))
        .count();
    // The worker count is asked for only when the source is big enough
    // (asking reads the cgroup files under /proc and /sys: some twenty
    // system calls a small source would pay for nothing).
    let big = to_examine >= threshold();
    let workers = if big { workers() } else { 1 };
    let outcomes: Vec<Vec<Outcome>> = if big && workers > 1 {
        let jobs: Vec<(&str, &std::path::Path)> = steps
            .iter()
            .filter_map(|s| match s {
                Step::Examine(name, rel) => Some((name.as_str(), rel.as_path())),
                Step::Reject(..) => None,
            })
            .collect();
        in_order(&jobs, workers, &|(name, rel)| examine(name, rel))
    } else {
        Vec::new()
    };
    let parallel = !outcomes.is_empty();
    // Taken chunk by chunk: gathering them into one list first would copy
    // every outcome once more.
    let mut next = outcomes.into_iter().flatten();
    for step in steps {
        match step {
            Step::Reject(rel, reason) => ctx.reject(rejected, &rel, reason),
            Step::Examine(name, rel) => {
                let outcome = if parallel {
                    next.next()
                } else {
                    Some(examine(&name, &rel))
                };
                let Some((result, entries, warnings)) = outcome else {
                    continue;
                };
                view.extend(entries);
                ctx.warnings.borrow_mut().extend(warnings);
                match result {
                    Ok(f) => found.push(f),
                    Err((rel, reason)) => ctx.reject(rejected, &rel, reason),
                }
            }
        }
    }
}
