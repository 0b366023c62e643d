//! Choosing what of the chain enters the prompt: each candidate read
//! once, deduplicated, imports expanded, the budget granted in the
//! policy's order.

use std::path::{Path, PathBuf};

use super::chain::Candidate;
use super::imports::{Import, Importer};
use super::records::{Block, Budget, Considered, Deduped, Skipped, Status};
use super::rules;
use super::rules::{Activation, RuleFile, ScopedRule};
use crate::hidden::{self, HiddenFinding, HiddenReport};
use crate::policy::{
    BudgetCounts, BudgetOrder, BudgetScope, ChainOrder, CharUnit, HardLinkRule, Pick, Policy,
};
use crate::sandbox::{Roots, Stamp};
use crate::trace::{Open, View};
use crate::trust::{self, Gate, ItemKind};
use crate::vocab::hash::FastMap;
use crate::vocab::origin::{Origin, RootId};
use crate::vocab::reason::Reason;
use crate::vocab::text;
use crate::vocab::warning::Warning;

/// The instruction part of a snapshot.
#[derive(Debug, Clone)]
pub(crate) struct Selection {
    /// Kept blocks in read order.
    pub(crate) blocks: Vec<Block>,
    /// Folded files.
    pub(crate) deduped: Vec<Deduped>,
    /// Skipped files.
    pub(crate) skipped: Vec<Skipped>,
    /// The budget.
    pub(crate) budget: Budget,
    /// Files with hidden text.
    pub(crate) hidden: Vec<HiddenFinding>,
    /// Every candidate, in read order.
    pub(crate) considered: Vec<Considered>,
    /// Hard-linked project files, in read order.
    pub(crate) warnings: Vec<Warning>,
    /// Every `@path` import met, in read order.
    pub(crate) imports: Vec<Import>,
    /// Files whose frontmatter scopes them to some paths (left for access).
    pub(crate) scoped: Vec<ScopedRule>,
    /// The rule files (`[rules]`) and their modes, in read order.
    pub(crate) rules: Vec<RuleFile>,
    /// Their globs, compiled once.
    pub(crate) rule_matcher: rules::RuleMatcher,
}

/// Bytes read beyond what the budget can still use, so that a BOM, leading
/// whitespace or a character straddling the limit does not make a file look
/// shorter than it is.
const READ_SLACK: u64 = 4096;

/// Runs the instruction stage over `candidates` (in read order).
pub(crate) fn select(
    policy: &Policy,
    roots: &Roots,
    candidates: &[Candidate],
    view: &mut View<'_>,
    gate: &mut Gate,
) -> Selection {
    let limit = u64::try_from(policy.instructions.budget_bytes).unwrap_or(0);
    select_within(policy, roots, candidates, view, gate, limit, Vec::new())
}

/// [`select`] with another budget, and files already given (their device
/// and inode, and their path): what on-access loading has left. A
/// candidate that is one of those files is folded into it.
pub(crate) fn select_within(
    policy: &Policy,
    roots: &Roots,
    candidates: &[Candidate],
    view: &mut View<'_>,
    gate: &mut Gate,
    limit: u64,
    given: Vec<((u64, u64), PathBuf)>,
) -> Selection {
    let mut run = Selector::new(policy, &roots.cwd, candidates.len(), limit);
    run.kept_by_identity.extend(given);
    for i in grant_order(policy, candidates) {
        run.consider(roots, i, &candidates[i], view, gate);
    }
    run.finish(candidates)
}

/// The order in which the budget is granted. The user's home files always
/// come first, whatever the order: a repository can neither crowd them out
/// of the budget nor, by copying one, fold it into a project block (a
/// project copy of a home file is the one folded). Then the repository's
/// levels, outermost or nearest first; within a level, the policy's name
/// order.
fn grant_order(policy: &Policy, candidates: &[Candidate]) -> Vec<usize> {
    let mut grant: Vec<usize> = (0..candidates.len()).collect();
    let nearest_first = policy.instructions.budget_order == BudgetOrder::NearestFirst;
    let sorted = policy.instructions.order == ChainOrder::SortedPaths;
    grant.sort_by_key(|&i| {
        let c = &candidates[i];
        let level = if sorted {
            // Sorted paths have no levels to go by: read order.
            0
        } else if nearest_first {
            usize::MAX - c.level
        } else {
            c.level
        };
        (c.origin != Origin::Home, level, i)
    });
    grant
}

/// A candidate's bytes as read: how many the file has, the most the read
/// could take, and whether it was read as a pinned file.
struct Bytes {
    bytes: Vec<u8>,
    size: u64,
    read_limit: u64,
    pinned: bool,
}

/// A candidate's text, decoded and treated.
struct Text {
    /// The treated text, untrimmed.
    text: String,
    /// What hidden text was found.
    report: HiddenReport,
    /// The file's size on disk.
    size: u64,
    /// Whether the read stopped before the end of the file.
    read_cut: bool,
    /// How many bytes were read.
    read_len: u64,
    /// Whether it stopped there because of `max-file-bytes` (rather than
    /// because the budget could not use more).
    file_limit_cut: bool,
    /// When `max-file-chars` cut the text: how many characters (in the
    /// policy's `char-unit`) it had.
    chars_cut: Option<u64>,
    /// The cap that cut it, and whether it was its source's.
    char_limit: (u64, bool),
    /// How many characters of the text enter the prompt (counted only
    /// while its source has a cap).
    chars_kept: u64,
    /// Whether the file holds only white space, as the policy's `trim`
    /// and `leading-bom` define it (judged on the bytes as read, before
    /// line breaks are normalised).
    blank: bool,
    /// Under a budget that counts the file's bytes: where the file is
    /// wider than its text (a BOM, CRLF line breaks), so the cut falls
    /// where the file's bytes run out. `None` otherwise, and when the text
    /// is no longer the file's decoded text (a rule's body, hidden text
    /// treated, imports inlined, a character cap): then the text is
    /// budgeted as it stands.
    widths: Option<text::RawWidths>,
}

/// The state of one selection run. Records carry the candidate's index so
/// they can be put back in read order at the end.
struct Selector<'p> {
    policy: &'p Policy,
    /// The working directory, absolute (where `import-root = "cwd"` bounds
    /// imports).
    cwd: &'p Path,
    limit: u64,
    /// `instructions.max-file-bytes`.
    max_file: u64,
    /// The most read from one file: the per-file limit, or less when the
    /// whole budget is smaller.
    file_cap: u64,
    statuses: Vec<Option<Status>>,
    blocks: Vec<Block>,
    deduped: Vec<(usize, Deduped)>,
    skipped: Vec<(usize, Skipped)>,
    hidden: Vec<(usize, HiddenFinding)>,
    warnings: Vec<(usize, Warning)>,
    kept_by_identity: FastMap<(u64, u64), PathBuf>,
    kept_by_text: FastMap<u128, PathBuf>,
    used: u64,
    exhausted: bool,
    /// The longest file kept so far: a later copy of it must be read far
    /// enough to be recognised as one, whatever budget is left.
    longest_kept: u64,
    /// For each place (the home root, each level) that picks one name, the
    /// file that took it.
    picked: FastMap<(RootId, usize), PathBuf>,
    /// Imports met, by candidate.
    imports: Vec<(usize, Import)>,
    /// Scoped rules met, by candidate.
    scoped: Vec<(usize, ScopedRule)>,
    /// Rule files met, by candidate.
    rules: Vec<(usize, RuleFile)>,
    /// What is left of the chain's import limits (files, bytes).
    import_left: (u64, u64),
    /// The files read so far, for `instructions.compat.import-once`.
    import_seen: crate::vocab::hash::FastSet<PathBuf>,
    /// Content patterns this build may still compile.
    patterns_left: usize,
    /// What each kept block charged the budget, by read order (a block
    /// taken out later gives it back).
    charged_bytes: FastMap<usize, u64>,
    /// What is left of `home-max-chars` and `project-max-chars` (`None`:
    /// no such cap), by [`char_source`].
    chars_left: [Option<u64>; 2],
}

/// Which of the two sources `home-max-chars` and `project-max-chars` cap
/// a file of `origin` counts toward.
fn char_source(origin: Origin) -> usize {
    match origin {
        Origin::Home => 0,
        Origin::Project | Origin::Ancestor => 1,
    }
}

impl<'p> Selector<'p> {
    fn new(policy: &'p Policy, cwd: &'p Path, count: usize, limit: u64) -> Self {
        let ins = &policy.instructions;
        let max_file = u64::try_from(ins.max_file_bytes).unwrap_or(0);
        let file_cap = max_file.min(limit + READ_SLACK);
        Self {
            policy,
            cwd,
            limit,
            max_file,
            file_cap,
            statuses: vec![None; count],
            blocks: Vec::new(),
            deduped: Vec::new(),
            skipped: Vec::new(),
            hidden: Vec::new(),
            warnings: Vec::new(),
            kept_by_identity: FastMap::default(),
            kept_by_text: FastMap::default(),
            used: 0,
            exhausted: false,
            longest_kept: 0,
            picked: FastMap::default(),
            imports: Vec::new(),
            scoped: Vec::new(),
            rules: Vec::new(),
            patterns_left: rules::MAX_PATTERNS,
            charged_bytes: FastMap::default(),
            import_left: Importer::limits(policy),
            import_seen: crate::vocab::hash::FastSet::default(),
            chars_left: [ins.home_max_chars, ins.project_max_chars]
                .map(|cap| u64::try_from(cap).ok().filter(|&c| c > 0)),
        }
    }

    /// How a candidate's place picks among its names.
    fn pick(&self, cand: &Candidate) -> Pick {
        let ins = &self.policy.instructions;
        match cand.origin {
            Origin::Home => ins.home_pick,
            // The scoped rules an access loads share no place (they are
            // at level 0 of the repository, which no level file is): each
            // is its own.
            Origin::Project if cand.on_access && cand.level == 0 => Pick::All,
            Origin::Project if cand.accessed && !ins.access_level_files.is_empty() => {
                ins.access_level_pick
            }
            Origin::Project | Origin::Ancestor => ins.level_pick,
        }
    }

    /// Notes that `cand` took its place's one slot, when the place picks
    /// `rule`.
    fn take_slot(&mut self, cand: &Candidate, rule: Pick) {
        if self.pick(cand) == rule {
            self.picked
                .entry((cand.root, cand.level))
                .or_insert_with(|| cand.path.clone());
        }
    }

    /// Whether the budget counts a file of `origin`. A budget of 0 means
    /// no project file at all, whatever the scope.
    fn charged(&self, origin: Origin) -> bool {
        if self.limit == 0 && origin != Origin::Home {
            return true;
        }
        match self.policy.instructions.budget_scope {
            BudgetScope::All => true,
            // What the user did not write counts: the repository's files
            // and those found above it.
            BudgetScope::Project => origin != Origin::Home,
            BudgetScope::None => false,
        }
    }

    fn skip(&mut self, i: usize, cand: &Candidate, reason: Reason) {
        self.skipped.push((
            i,
            Skipped {
                path: cand.path.clone(),
                reason,
            },
        ));
        self.statuses[i] = Some(Status::Skipped(reason));
    }

    /// Skips an ancestor file because `path` (the file or a folder on its
    /// way) belongs to another user, and says so in `warnings`.
    fn refuse_foreign(
        &mut self,
        i: usize,
        cand: &Candidate,
        folder: &std::path::Path,
        path: &std::path::Path,
        owner: u32,
    ) {
        let message = format!(
            "not read as a file above the repository: this belongs to another user \
             (uid {owner}), who may have planted it; list {} in roots.safe-directories \
             to trust it",
            crate::vocab::paths::shown(folder)
        );
        self.warnings.push((
            i,
            Warning::new(
                crate::vocab::warning::WarningKind::UnsafeAncestor,
                path,
                message,
            ),
        ));
        self.skip(i, cand, Reason::ForeignOwner);
    }

    fn fold(&mut self, i: usize, cand: &Candidate, same_as: PathBuf, status: Status) {
        self.deduped.push((
            i,
            Deduped {
                path: cand.path.clone(),
                same_as,
            },
        ));
        self.statuses[i] = Some(status);
    }

    /// Takes one candidate through every step.
    fn consider(
        &mut self,
        roots: &Roots,
        i: usize,
        cand: &Candidate,
        view: &mut View<'_>,
        gate: &mut Gate,
    ) {
        let Some(root) = roots.set.get(cand.root) else {
            return;
        };
        if cand.excluded {
            self.skip(i, cand, Reason::Excluded);
            return;
        }
        // Another name of this place was picked: this one is not looked at
        // (its absence or presence cannot change the output while the
        // picked file stays, and the picked file is traced).
        if let Some(winner) = self.picked.get(&(cand.root, cand.level)) {
            self.statuses[i] = Some(Status::NotPicked(winner.clone()));
            return;
        }
        // Above the repository, what another user owns is not read.
        let foreign = |s: &Stamp| {
            s.owner()
                .filter(|&o| {
                    !crate::sandbox::is_trusted_owner(o)
                        && !crate::trace::ancestor_trusted(self.policy, root)
                })
                .map(|o| (cand.path.clone(), o))
        };
        if cand.origin == Origin::Ancestor
            && let Some((path, owner)) =
                crate::trace::foreign_owner(self.policy, root, cand.root, &cand.rel, view)
        {
            view.stamp(root, cand.root, &cand.rel);
            self.refuse_foreign(i, cand, &root.path, &path, owner);
            return;
        }
        let file = match view.open(root, cand.root, &cand.rel, self.policy.trust.symlinks) {
            Open::Absent => {
                if cand.origin == Origin::Project {
                    gate.missing(&cand.rel, &cand.path);
                }
                self.statuses[i] = Some(Status::Absent);
                return;
            }
            Open::Refused(reason) => {
                if cand.origin == Origin::Project {
                    gate.missing(&cand.rel, &cand.path);
                }
                // A link the sandbox refuses would have been a file to a
                // program that follows it: it takes the place's slot.
                if matches!(reason, Reason::SymlinkEscape | Reason::SymlinkRefused) {
                    self.take_slot(cand, Pick::FirstFile);
                }
                self.skip(i, cand, reason);
                return;
            }
            Open::File(file) => file,
        };
        let stamp = file.stamp();
        // The file opened is the one examined: one swapped in since is
        // held to the same rule.
        if cand.origin == Origin::Ancestor
            && let Some((path, owner)) = foreign(&stamp)
        {
            file.leave();
            self.refuse_foreign(i, cand, &root.path, &path, owner);
            return;
        }
        self.take_slot(cand, Pick::FirstFile);
        let skip_over = u64::try_from(self.policy.instructions.skip_larger_than).unwrap_or(0);
        if skip_over > 0 && file.len() > skip_over {
            file.leave();
            self.skip(i, cand, Reason::TooLarge);
            return;
        }
        // A project file with more than one hard link may be a link to a
        // file outside the repository: always reported, refused per policy.
        if cand.origin == Origin::Project && stamp.is_hard_linked() {
            self.warnings.push((i, Warning::hard_link(&cand.path)));
            if self.policy.trust.hard_links == HardLinkRule::Refuse {
                file.leave();
                self.skip(i, cand, Reason::HardLink);
                return;
            }
        }
        // Step 1: the same file reached twice (a hard link, or a link inside
        // the root) is folded without reading it again.
        if let Some(same) = stamp
            .identity()
            .filter(|_| self.policy.instructions.fold_same_file)
            .and_then(|id| self.kept_by_identity.get(&id).cloned())
        {
            // Derived: the file folded into, so that folding into another
            // moves the fingerprint.
            file.leave_as(same.as_os_str().as_encoded_bytes());
            self.fold(i, cand, same.clone(), Status::SameFile(same));
            return;
        }
        // A huge file late in the chain costs a few KiB, not the whole cap.
        let want = self.limit.saturating_sub(self.used).max(self.longest_kept) + READ_SLACK;
        // A pinned project file is read as far as an approval reads it (the
        // per-file limit), so that its hash is the one approved.
        let pinned = gate.pinned() && cand.origin == Origin::Project;
        let read_limit = if pinned || !self.charged(cand.origin) {
            self.max_file
        } else {
            self.file_cap.min(want)
        };
        let size = file.len();
        let Ok(bytes) = file.read_at_most(read_limit) else {
            self.skip(i, cand, Reason::Unreadable);
            return;
        };
        let read = Bytes {
            bytes,
            size,
            read_limit,
            pinned,
        };
        let Some(text) = self.read(i, &roots.set, read, cand, view, gate) else {
            return;
        };
        self.keep(i, cand, stamp, text);
    }

    /// Leaves a rule out of the chain until an access to a path its `globs`
    /// match (`scopedRules`).
    fn wait_for_access(
        &mut self,
        i: usize,
        cand: &Candidate,
        globs: Vec<String>,
        content: Option<regex::bytes::RegexSet>,
        misread: Option<String>,
    ) {
        self.scoped.push((
            i,
            ScopedRule {
                path: cand.path.clone(),
                origin: cand.origin,
                globs,
                root: cand.root,
                rel: cand.rel.clone(),
                at: cand.at,
                content,
                misread,
            },
        ));
        self.skip(i, cand, Reason::Scoped);
    }

    /// Decodes a candidate read, as far as the budget can still use it;
    /// skips it (and says why) when it is not text.
    fn read(
        &mut self,
        i: usize,
        roots: &crate::sandbox::RootSet,
        read: Bytes,
        cand: &Candidate,
        view: &mut View<'_>,
        gate: &mut Gate,
    ) -> Option<Text> {
        let Bytes {
            bytes,
            size,
            read_limit,
            pinned,
        } = read;
        if pinned {
            let hash = trust::content_hash(&bytes);
            let text = || String::from_utf8_lossy(&bytes).into_owned();
            if !gate.admit(ItemKind::Instruction, &cand.rel, &cand.path, hash, text) {
                self.skip(i, cand, Reason::Unapproved);
                return None;
            }
        }
        let read_len = bytes.len() as u64;
        let read_cut = read_len < size;
        let file_limit_cut = read_cut && read_limit == self.max_file;
        let mut blank = self.policy.is_blank(&bytes);
        let widths = (self.policy.instructions.budget_counts == BudgetCounts::File)
            .then(|| text::RawWidths::of(&bytes))
            .filter(|w| w.bom > 0 || !w.wider.is_empty());
        let Some(text) = text::decode(bytes, read_cut) else {
            self.skip(i, cand, Reason::NotText);
            return None;
        };
        let decoded_hash = widths
            .as_ref()
            .map(|_| xxhash_rust::xxh3::xxh3_64(text.as_bytes()));
        // A rule's frontmatter says when it applies (unless this is the
        // access it waited for): only `always` goes on as a block.
        let is_rule =
            self.policy.has_rule_files() && self.policy.is_rule_file(&cand.name_in_place());
        if !cand.on_access && is_rule {
            let mut rule =
                rules::activation(&self.policy.rules, &text, cand, &mut self.patterns_left);
            // A rule's name is capped as a skill's is: the name it is listed,
            // shown and asked for by.
            cap_name(&mut rule.name, self.policy);
            let mode = rule.mode;
            // A listed rule's name and description reach the prompt: the
            // policy's hidden-text rule holds for them as for file text.
            if mode == Activation::Listed {
                let (name, mut report) =
                    hidden::treat_for(std::mem::take(&mut rule.name), self.policy);
                rule.name = name;
                if let Some(d) = rule.description.take() {
                    let (d, found) = hidden::treat_for(d, self.policy);
                    report.absorb(found);
                    rule.description = Some(d);
                }
                // Places in the name, not in the file: none given.
                report.clear_positions();
                if !report.is_empty() {
                    self.hidden.push((
                        i,
                        HiddenFinding {
                            path: cand.path.clone(),
                            report,
                        },
                    ));
                }
            }
            let globs = rule.globs.clone();
            let content = rule.content.clone();
            self.rules.push((i, rule));
            match mode {
                Activation::Always => {}
                Activation::OnAccess => {
                    self.wait_for_access(i, cand, globs, content, None);
                    return None;
                }
                Activation::Listed => {
                    self.skip(i, cand, Reason::RuleListed);
                    return None;
                }
                Activation::Manual => {
                    self.skip(i, cand, Reason::RuleManual);
                    return None;
                }
            }
        } else if self.policy.instructions.scoped_rules && !cand.on_access {
            match rules::scope_of(&text) {
                rules::Scope::Unscoped => {}
                rules::Scope::Paths(globs) => {
                    self.wait_for_access(i, cand, globs, None, None);
                    return None;
                }
                // A scope this reading cannot tell: the file waits for an
                // access no path makes (it is listed, with why).
                rules::Scope::Unread(why) => {
                    self.wait_for_access(i, cand, Vec::new(), None, Some(why));
                    return None;
                }
            }
        }
        // A rule's frontmatter is what it says about itself, not text for
        // the prompt: a rule goes in as its body (also when an access
        // loads it).
        let mut text = text;
        if is_rule && let Some(start) = rules::body_start(&text) {
            text.drain(..start);
            // A rule of frontmatter alone is blank.
            blank = self.policy.is_blank(text.as_bytes());
        }
        // Caps counted in characters: over the text that enters the
        // prompt, before hidden text is treated and imports are inlined.
        // The file's own cap, and what its source's has left.
        let source_left = self.chars_left[char_source(cand.origin)];
        if source_left == Some(0) {
            self.skip(i, cand, Reason::CharLimit);
            return None;
        }
        let file_limit = u64::try_from(self.policy.instructions.max_file_chars).unwrap_or(0);
        let char_limit = match (file_limit, source_left) {
            (0, None) => (0, false),
            (0, Some(left)) => (left, true),
            (file, Some(left)) if left < file => (left, true),
            (file, _) => (file, false),
        };
        let (chars_cut, chars_kept) =
            cut_chars(self.policy.instructions.char_unit, &mut text, char_limit.0);
        if chars_cut.is_some() {
            blank = self.policy.is_blank(text.as_bytes());
        }
        // Each file's own text is treated before imports are inlined, so
        // that the policy's import frames are never taken for hidden text.
        let (mut text, mut report) = hidden::treat_for(text, self.policy);
        if Importer::enabled(self.policy)
            && let Some(mut importer) = Importer::new(
                self.policy,
                roots,
                cand.root,
                self.cwd,
                self.import_left,
                std::mem::take(&mut self.import_seen),
            )
        {
            text = importer.expand(&text, &cand.rel, view, gate);
            self.import_left = importer.left();
            self.import_seen = importer.seen();
            report.absorb(std::mem::take(&mut importer.found));
            self.imports
                .extend(importer.records.into_iter().map(|r| (i, r)));
        }
        // The widths hold for the decoded text only.
        let widths =
            widths.filter(|_| decoded_hash == Some(xxhash_rust::xxh3::xxh3_64(text.as_bytes())));
        Some(Text {
            widths,
            text,
            report,
            size,
            read_cut,
            read_len,
            file_limit_cut,
            chars_cut,
            char_limit,
            chars_kept,
            blank,
        })
    }

    /// Steps 2 to 4 for a file that was read.
    fn keep(&mut self, i: usize, cand: &Candidate, stamp: Stamp, read: Text) {
        let ins = &self.policy.instructions;
        let Text {
            text,
            report,
            size,
            read_cut,
            read_len,
            file_limit_cut,
            chars_cut,
            char_limit,
            chars_kept,
            blank,
            widths,
        } = read;
        // Only a text read whole and shown whole stands for the file.
        let partial = read_cut || chars_cut.is_some();
        let start = text.len() - text.trim_start().len();
        let trimmed = text.trim();
        // Step 2: blank. A file that is not blank by the policy's `trim`
        // may still show no text (a lone BOM, or a NEL, that the policy
        // counts as text): it is kept, as an empty block.
        if blank && ins.skip_blank {
            self.skip(i, cand, Reason::Empty);
            return;
        }
        if !blank {
            self.take_slot(cand, Pick::FirstNonBlank);
        }
        // Step 3: the same text as a kept file. A file read only in part
        // cannot be shown equal to anything.
        let text_key = xxhash_rust::xxh3::xxh3_128(trimmed.as_bytes());
        if ins.dedup_by_content
            && !partial
            && let Some(same) = self.kept_by_text.get(&text_key).cloned()
        {
            self.fold(i, cand, same.clone(), Status::Deduped(same));
            return;
        }
        // Step 4: the budget, for the files it counts.
        let charged = self.charged(cand.origin);
        let remaining = if charged {
            self.limit.saturating_sub(self.used)
        } else {
            u64::MAX
        };
        // Counting file bytes, the whitespace before the text uses budget.
        let by_file = ins.budget_counts == BudgetCounts::File;
        let room = if by_file {
            remaining.saturating_sub(start as u64)
        } else {
            remaining
        };
        let cut = match widths.filter(|_| by_file) {
            // The file's bytes: the prefix of the text they pay for.
            Some(widths) => text::floor_char_boundary(
                trimmed,
                widths
                    .fits(remaining, start + trimmed.len())
                    .saturating_sub(start),
            ),
            None => text::floor_char_boundary(trimmed, usize::try_from(room).unwrap_or(usize::MAX)),
        };
        if cut == 0 && (room == 0 || blank || !trimmed.is_empty()) {
            self.exhausted = true;
            self.skip(i, cand, Reason::BudgetExhausted);
            return;
        }
        // A file the per-file cap stopped is a budget cut when the bytes
        // read already reached the budget left: the file is larger than the
        // room, so the budget, not the cap, decided where it ends (the cap
        // names the cut only while the budget still had room after it).
        let fills_budget = charged && read_len >= room;
        let read_capped = file_limit_cut;
        let file_limit_cut = file_limit_cut && !fills_budget;
        // A read stopped short because the budget could not use more is a
        // budget cut too, even when what was read happened to fit.
        let budget_cut = cut < trimmed.len() || (read_cut && !file_limit_cut);
        self.exhausted |= budget_cut;
        if charged {
            let cost = if by_file {
                size.min(remaining)
            } else {
                cut as u64
            };
            self.used += cost;
            self.charged_bytes.insert(i, cost);
        }
        let text_bytes = trimmed.len() as u64;
        if !report.is_empty() {
            self.hidden.push((
                i,
                HiddenFinding {
                    path: cand.path.clone(),
                    report,
                },
            ));
        }
        let truncated = budget_cut || partial;
        if let Some(id) = stamp.identity() {
            self.kept_by_identity.insert(id, cand.path.clone());
        }
        // Only a file read whole can stand for its text: a later file equal
        // to the prefix of a cut one is not a copy of it.
        if !partial {
            self.kept_by_text.insert(text_key, cand.path.clone());
            self.longest_kept = self.longest_kept.max(size);
        }
        self.statuses[i] = Some(if truncated {
            Status::Truncated
        } else {
            Status::Included
        });
        // Keep the included part in the buffer already holding it.
        let mut kept = text;
        kept.truncate(start + cut);
        kept.drain(..start);
        // What the block's text takes of its source's character cap.
        if let Some(left) = &mut self.chars_left[char_source(cand.origin)] {
            *left = left.saturating_sub(chars_kept);
        }
        self.blocks.push(Block {
            path: cand.path.clone(),
            origin: cand.origin,
            root: self.policy.root_name(cand.root).to_string(),
            bytes: size,
            text_bytes,
            included_bytes: cut as u64,
            truncated,
            budget_cut,
            file_limit_cut,
            char_limit_cut: chars_cut.is_some(),
            text_chars: chars_cut.unwrap_or(0),
            char_limit: char_limit.0,
            char_source_cut: chars_cut.is_some() && char_limit.1,
            read_cut,
            read_capped,
            share_cut: false,
            text: kept.into(),
            order: i,
            granted: self.blocks.len(),
            charged: self.charged_bytes.get(&i).copied().unwrap_or(0),
        });
    }

    /// `rules.compat.one-per-name`: of the rules sharing a name (trimmed,
    /// compared without regard to case, and names that look alike taken as
    /// one: see `vocab::alike`), the home's wins over the project's, and
    /// among one side's the one read last; the others are taken out of the
    /// selection whatever their mode: a kept block goes (giving its budget
    /// back, with its imports and hidden-text findings), a scoped rule
    /// stops waiting for an access, a listed rule leaves the list. Each
    /// loser's `replaced_by` names the winner.
    fn one_per_name(&mut self) {
        if !self.policy.rules.one_per_name || self.rules.len() < 2 {
            return;
        }
        // Each rule's name, as the first rule's of its set of one name.
        let set = crate::vocab::alike::groups(self.rules.iter().map(|(_, r)| r.name.trim()), true);
        let mut by_order: Vec<usize> = (0..self.rules.len()).collect();
        by_order.sort_by_key(|&k| self.rules[k].0);
        let mut winner: FastMap<usize, usize> = FastMap::default();
        for k in by_order {
            let name = set[k];
            let home = self.rules[k].1.origin == Origin::Home;
            let take = match winner.get(&name) {
                None => true,
                // A later rule wins unless it would take a home rule's
                // place from the project.
                Some(&w) => home || self.rules[w].1.origin != Origin::Home,
            };
            if take {
                winner.insert(name, k);
            }
        }
        for (k, name) in set.iter().enumerate() {
            let Some(&w) = winner.get(name) else {
                continue;
            };
            if w == k {
                continue;
            }
            let by = self.rules[w].1.path.clone();
            let (i, rule) = &mut self.rules[k];
            let i = *i;
            rule.replaced_by = Some(by);
            let path = rule.path.clone();
            if let Some(pos) = self.blocks.iter().position(|b| b.order == i) {
                self.blocks.remove(pos);
                self.used -= self.charged_bytes.remove(&i).unwrap_or(0);
            }
            self.scoped.retain(|(j, _)| *j != i);
            self.hidden.retain(|(j, _)| *j != i);
            self.imports.retain(|(j, _)| *j != i);
            self.skipped.retain(|(j, _)| *j != i);
            self.skipped.push((
                i,
                Skipped {
                    path,
                    reason: Reason::RuleReplaced,
                },
            ));
            self.statuses[i] = Some(Status::Skipped(Reason::RuleReplaced));
        }
    }

    /// Puts every record in read order.
    fn finish(mut self, candidates: &[Candidate]) -> Selection {
        self.one_per_name();
        self.blocks.sort_by_key(|b| b.order);
        fn in_read_order<T>(mut v: Vec<(usize, T)>) -> Vec<T> {
            v.sort_by_key(|(i, _)| *i);
            v.into_iter().map(|(_, t)| t).collect()
        }
        let considered = candidates
            .iter()
            .zip(self.statuses)
            .filter_map(|(c, s)| {
                s.map(|status| Considered {
                    path: c.path.clone(),
                    origin: c.origin,
                    status,
                })
            })
            .collect();
        let (scoped, rule_matcher, glob_warnings) = rules::settle(in_read_order(self.scoped));
        let mut warnings = in_read_order(self.warnings);
        warnings.extend(glob_warnings);
        Selection {
            blocks: self.blocks,
            deduped: in_read_order(self.deduped),
            skipped: in_read_order(self.skipped),
            budget: Budget {
                limit: self.limit,
                used: self.used,
                exhausted: self.exhausted,
            },
            hidden: in_read_order(self.hidden),
            considered,
            warnings,
            imports: in_read_order(self.imports),
            scoped,
            rules: in_read_order(self.rules),
            rule_matcher,
        }
    }
}

/// Holds a rule's name to the length cap of a skill's name
/// (`skills.name-max-chars`, in characters): a longer one is cut and ends
/// with `…`, counted in the cap. What the prompt lists, `rules` records
/// and `rule show` answers to is this name.
fn cap_name(name: &mut String, policy: &Policy) {
    let max = usize::try_from(policy.skills.name_max_chars).unwrap_or(usize::MAX);
    if let Some((end, _)) = name.char_indices().nth(max) {
        // `max` characters fit; the cut one keeps `max - 1` and the mark.
        let keep = name
            .char_indices()
            .nth(max.saturating_sub(1))
            .map_or(end, |(at, _)| at);
        name.truncate(keep);
        name.push('…');
    }
}

/// Cuts `text` to `limit` characters counted in `unit` (0: no cap);
/// returns how many units the whole text had when it was cut, and how many
/// are left. A UTF-16 cap never splits a surrogate pair: a character that
/// would cross it is left out whole.
fn cut_chars(unit: CharUnit, text: &mut String, limit: u64) -> (Option<u64>, u64) {
    if limit == 0 {
        return (None, 0);
    }
    let width = |c: char| match unit {
        CharUnit::Scalar => 1,
        CharUnit::Utf16 => c.len_utf16() as u64,
    };
    let mut count = 0u64;
    let mut end = None;
    for (i, c) in text.char_indices() {
        let next = count + width(c);
        if next > limit && end.is_none() {
            end = Some((i, count));
        }
        count = next;
    }
    match end {
        Some((at, kept)) => {
            text.truncate(at);
            (Some(count), kept)
        }
        None => (None, count),
    }
}
