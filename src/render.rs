//! Rendering: the framed prompt section, every word from the
//! policy's templates.
//!
//! Provenance cannot be forged. Each block is opened and closed by lines that
//! carry a nonce derived from everything rendered (the policy and the text of
//! every block, home files included); a file cannot contain the hash of its
//! own content, and a repository cannot know the user's home files. On top of
//! that, any file line that starts like a header or footer, or that contains
//! the nonce, is prefixed with the policy's `forged-line-prefix`, so no file
//! line can pass for a boundary even to a reader that ignores the nonce.

use std::borrow::Cow;

use crate::instructions::{Activation, Block, Budget, RuleFile};
use crate::policy::Policy;
use crate::skills::Skill;
use crate::vocab::origin::Origin;
use crate::vocab::text::collapse_whitespace;
use crate::vocab::unicode::as_seen;

/// The nonce: 16 hex digits of a keyed BLAKE3 hash over the policy and
/// everything the stages kept for rendering (every block's path and text,
/// every skill's name and description, every listed rule's; an item the
/// repository's share of the prompt then leaves out counts too). The key is a secret no repository can read (see
/// `sandbox::home_key`), so a file cannot carry the real marker; the same
/// key and content give the same nonce, so the prompt stays byte-stable
/// while nothing changes.
pub(crate) fn nonce(
    key: &[u8; 32],
    policy: &Policy,
    blocks: &[Block],
    skills: &[Skill],
    rules: &[RuleFile],
) -> String {
    // The fields are laid end to end first and hashed in one call: BLAKE3
    // takes a long input a chunk at a time at vector speed, where hundreds
    // of small updates (two per skill) each pay its buffering.
    let mut input = Vec::with_capacity(
        64 + blocks
            .iter()
            .map(|b| 16 + b.path.as_os_str().len() + b.text.len())
            .sum::<usize>()
            + skills
                .iter()
                .map(|s| 16 + s.name.len() + s.description.len())
                .sum::<usize>(),
    );
    let mut field = |bytes: &[u8]| {
        input.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        input.extend_from_slice(bytes);
    };
    field(&policy.digest().to_le_bytes());
    for b in blocks {
        field(b.path.as_os_str().as_encoded_bytes());
        field(b.text.as_bytes());
    }
    for s in skills {
        field(s.name.as_bytes());
        field(s.description.as_bytes());
    }
    for r in rules
        .iter()
        .filter(|r| r.mode == Activation::Listed && r.replaced_by.is_none())
    {
        field(r.path.as_os_str().as_encoded_bytes());
        field(r.name.as_bytes());
        field(r.description.as_deref().unwrap_or("").as_bytes());
    }
    let digest = blake3::keyed_hash(key, &input);
    digest.as_bytes()[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Renders blocks alone (no heading, no preamble), framed with `nonce`:
/// what on-access loading adds to a session whose section already carries
/// that nonce. Blocks are separated by a blank line.
pub(crate) fn render_blocks(policy: &Policy, nonce: &str, blocks: &[Block]) -> String {
    let guard = Guard::new(policy, nonce);
    let mut out = String::new();
    for (i, b) in blocks.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        render_block(policy, nonce, b, &guard, &mut out);
    }
    out
}

/// One block: header, guarded lines, footer, and the note of a cut.
fn render_block(policy: &Policy, nonce: &str, b: &Block, guard: &Guard, out: &mut String) {
    let t = &policy.templates;
    let path = crate::vocab::paths::for_prompt(&b.path);
    let header = match b.origin {
        Origin::Home => &t.home_header,
        Origin::Project => &t.project_header,
        Origin::Ancestor => &t.ancestor_header,
    };
    header.fill_into(
        out,
        &[
            ("path", &path),
            ("origin", b.origin.as_str()),
            ("nonce", nonce),
        ],
    );
    out.push('\n');
    guard.push_text(out, &b.text);
    t.footer
        .fill_into(out, &[("path", &path), ("nonce", nonce)]);
    out.push('\n');
    // The note says what cut the block: the repository's share of the
    // prompt, the per-file limit, the character cap, or the budget. No note
    // states the size of a text that was not read to its end: the per-file
    // limit's note gives the file's size on disk (also for a text the
    // character cap cut after the cap stopped the read); the character
    // cap's is used only for a text read whole; the budget's and the
    // share's `{total}` is the file's size on disk when the read stopped
    // short (a file of 37,768 bytes read as far as 32,768 is not "this
    // file's 32768 bytes").
    let budget_note = |out: &mut String| {
        let total = if b.read_cut { b.bytes } else { b.text_bytes };
        t.truncation_note.fill_into(
            out,
            &[
                ("path", &path),
                ("bytes", &b.bytes.to_string()),
                ("total", &total.to_string()),
                ("included", &b.included_bytes.to_string()),
            ],
        );
        out.push('\n');
    };
    if b.share_cut {
        // The repository's share of the prompt ran out in it.
        budget_note(out);
    } else if b.file_limit_cut || (b.char_limit_cut && b.read_capped) {
        t.file_limit_note.fill_into(
            out,
            &[
                ("path", &path),
                ("bytes", &b.bytes.to_string()),
                ("limit", &policy.instructions.max_file_bytes.to_string()),
                ("included", &b.included_bytes.to_string()),
            ],
        );
        out.push('\n');
    } else if b.char_limit_cut && !b.read_cut {
        let unit = policy.instructions.char_unit;
        t.char_limit_note.fill_into(
            out,
            &[
                ("path", &path),
                ("chars", &b.text_chars.to_string()),
                ("limit", &b.char_limit.to_string()),
                ("unit", unit.word()),
            ],
        );
        out.push('\n');
    } else if b.truncated {
        budget_note(out);
    }
}

/// The rendered section, and what the repository's share of it
/// (`instructions.project-prompt-bytes`) changed.
#[derive(Debug)]
pub(crate) struct Rendered {
    /// The section, exactly as it goes into the prompt.
    pub(crate) prompt: String,
    /// Where the instruction part ends (the heading, the preamble and the
    /// blocks; the skills list and the notes follow it).
    pub(crate) instructions_end: usize,
    /// The blocks in the prompt, in read order (the block the share cut
    /// holds the text shown, `share_cut`).
    pub(crate) blocks: Vec<Block>,
    /// The blocks the share left out, in read order.
    pub(crate) dropped: Vec<Block>,
    /// The listed rules the share left out: their indices in `rules`.
    pub(crate) dropped_rules: Vec<usize>,
    /// The share: its limit, the bytes charged for the repository's items
    /// (at least what they take of `prompt`), and whether something was
    /// cut or left out for it.
    pub(crate) share: Budget,
}

/// Renders the whole section with the given `nonce` (see [`nonce`]). Empty
/// when there is nothing to show.
///
/// The repository's items (its blocks, its listed skills and rules, the
/// headings, separators and notes they bring) take at most
/// `instructions.project-prompt-bytes` of it: each is rendered alone first
/// and charged every byte it adds, in order (the notes, the blocks in the
/// order the budget was granted, the skills in name order, the rules in
/// read order); the block that crosses the share is cut to what is left,
/// and what comes after it is left out, which the policy's share note
/// says. A listed skill left out joins `hidden_project`; the blocks and
/// rules left out are in the answer. The user's own items are never
/// charged nor left out.
pub(crate) fn render(
    policy: &Policy,
    nonce: &str,
    blocks: Vec<Block>,
    skills: &mut [Skill],
    hidden_project: &mut usize,
    rules: &[RuleFile],
    unapproved: usize,
) -> Rendered {
    let t = &policy.templates;
    let guard = Guard::new(policy, nonce);
    let cap = u64::try_from(policy.instructions.project_prompt_bytes).unwrap_or(0);
    let items = Items {
        blocks: &blocks,
        skills,
        hidden_project: *hidden_project,
        rules,
        unapproved,
        opening: true,
    };
    let ours = Ours::new(policy, nonce, &guard, cap, &items);
    let (plan, note, share) = ours.fit();
    let Ours {
        pieces,
        project_skills,
        project_rules,
        ..
    } = ours;
    let (kept, dropped) = keep(blocks, pieces, plan.fates);
    let shown_hidden = match plan.skills_shown {
        Some(k) => {
            for &i in project_skills.get(k..).unwrap_or_default() {
                if let Some(s) = skills.get_mut(i) {
                    s.listed = false;
                    *hidden_project += 1;
                }
            }
            *hidden_project
        }
        None => {
            for &i in &project_skills {
                if let Some(s) = skills.get_mut(i) {
                    s.listed = false;
                    *hidden_project += 1;
                }
            }
            0
        }
    };
    let dropped_rules: Vec<usize> = project_rules
        .get(plan.rules_shown..)
        .unwrap_or_default()
        .to_vec();

    // Room for the whole section at once: every block's text and frame,
    // every skill's line (growing it by doubling copies the prompt over
    // and over).
    let frame = 2 * (t.project_header.source().len() + t.footer.source().len());
    let estimate = kept
        .iter()
        .map(|(b, piece)| {
            piece.as_ref().map_or(
                b.text.len() + frame + 2 * b.path.as_os_str().len() + 64,
                |p| p.len() + 1,
            )
        })
        .sum::<usize>()
        + skills
            .iter()
            .map(|s| s.name.len() + s.description.len() + t.skill_entry.source().len())
            .sum::<usize>()
        + 1024;
    let mut out = String::with_capacity(estimate);
    if !kept.is_empty() {
        t.heading.fill_into(&mut out, &[]);
        out.push_str("\n\n");
        t.preamble.fill_into(&mut out, &[("nonce", nonce)]);
        out.push('\n');
        for (b, piece) in &kept {
            out.push('\n');
            match piece {
                Some(text) => out.push_str(text),
                None => render_block(policy, nonce, b, &guard, &mut out),
            }
        }
    }
    let instructions_end = out.len();
    let listed: Vec<&Skill> = skills.iter().filter(|s| s.listed).collect();
    if !listed.is_empty() || shown_hidden > 0 {
        if !out.is_empty() {
            out.push('\n');
        }
        t.skills_heading.fill_into(
            &mut out,
            &[("count", &(listed.len() + shown_hidden).to_string())],
        );
        out.push('\n');
        let label = t.project_skill_label.fill(&[]);
        for s in listed {
            out.push_str(&skill_entry(policy, &guard, s, &label));
        }
        if shown_hidden > 0 {
            t.more_skills
                .fill_into(&mut out, &[("count", &shown_hidden.to_string())]);
            out.push('\n');
        }
    }
    // The listed rules: name, description and path, for the agent to read
    // the one that applies.
    let listed_rules: Vec<&RuleFile> = listed_rules(rules)
        .filter(|(i, _)| !dropped_rules.contains(i))
        .map(|(_, r)| r)
        .collect();
    if !listed_rules.is_empty() {
        if !out.is_empty() {
            out.push('\n');
        }
        t.rules_heading
            .fill_into(&mut out, &[("count", &listed_rules.len().to_string())]);
        out.push('\n');
        let label = t.project_skill_label.fill(&[]);
        for r in listed_rules {
            out.push_str(&rule_entry(policy, &guard, r, &label));
        }
    }
    // Under a pinned policy: how many project items were left out, and
    // what the user runs to review them.
    if plan.unapproved {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&unapproved_note(policy, unapproved));
        out.push('\n');
    }
    if let Some(note) = note {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&note);
        out.push('\n');
    }
    Rendered {
        prompt: out,
        instructions_end,
        blocks: kept.into_iter().map(|(b, _)| b).collect(),
        dropped,
        dropped_rules,
        share,
    }
}

/// Renders the blocks an access loads, framed with `nonce` (see
/// [`render_blocks`]), within `share`: what is left of the repository's
/// share of the prompt (`instructions.project-prompt-bytes`) after the
/// session's section and what earlier accesses gave. The project blocks
/// are charged as [`render`] charges them, in the order the budget was
/// granted; the block that crosses what is left is cut, the ones after it
/// are left out, and the share note says so.
pub(crate) fn render_access(
    policy: &Policy,
    nonce: &str,
    blocks: Vec<Block>,
    share: u64,
) -> Rendered {
    let guard = Guard::new(policy, nonce);
    let items = Items {
        blocks: &blocks,
        skills: &[],
        hidden_project: 0,
        rules: &[],
        unapproved: 0,
        opening: false,
    };
    let ours = Ours::new(policy, nonce, &guard, share, &items);
    let (plan, note, share) = ours.fit();
    let pieces = ours.pieces;
    let (kept, dropped) = keep(blocks, pieces, plan.fates);
    let mut out = String::new();
    for (i, (b, piece)) in kept.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        match piece {
            Some(text) => out.push_str(text),
            None => render_block(policy, nonce, b, &guard, &mut out),
        }
    }
    if let Some(note) = note {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&note);
        out.push('\n');
    }
    Rendered {
        prompt: out,
        instructions_end: 0,
        blocks: kept.into_iter().map(|(b, _)| b).collect(),
        dropped,
        dropped_rules: Vec::new(),
        share,
    }
}

/// The blocks a plan keeps (each project block with its text as rendered,
/// a cut one in its cut form), and the ones it leaves out, in read order.
#[allow(clippy::type_complexity)]
fn keep(
    blocks: Vec<Block>,
    pieces: Vec<std::cell::OnceCell<String>>,
    fates: Vec<Fate>,
) -> (Vec<(Block, Option<String>)>, Vec<Block>) {
    let mut kept = Vec::with_capacity(blocks.len());
    let mut dropped = Vec::new();
    for ((b, piece), fate) in blocks.into_iter().zip(pieces).zip(fates) {
        match fate {
            Fate::Whole => kept.push((b, piece.into_inner())),
            Fate::Cut(cut, text) => kept.push((*cut, Some(text))),
            Fate::Dropped => dropped.push(b),
        }
    }
    (kept, dropped)
}

/// What a section is made of, for the share to charge.
struct Items<'a> {
    blocks: &'a [Block],
    skills: &'a [Skill],
    hidden_project: usize,
    rules: &'a [RuleFile],
    unapproved: usize,
    /// Whether the blocks open the section (heading and preamble) when no
    /// home block does; an access's blocks follow a section already there.
    opening: bool,
}

/// The rules the prompt lists (mode `listed`, not replaced), with their
/// indices.
fn listed_rules(rules: &[RuleFile]) -> impl Iterator<Item = (usize, &RuleFile)> {
    rules
        .iter()
        .enumerate()
        .filter(|(_, r)| r.mode == Activation::Listed && r.replaced_by.is_none())
}

/// One skill's line in the list, guarded, with its line feed.
fn skill_entry(policy: &Policy, guard: &Guard, s: &Skill, label: &str) -> String {
    let t = &policy.templates;
    let cap = usize::try_from(policy.skills.project_description_chars).unwrap_or(usize::MAX);
    let one_line = collapse_whitespace(&s.description);
    let (description, label) = match s.origin {
        Origin::Home => (one_line, ""),
        // Skills never come from above the repository; were one to,
        // it would read as a project's.
        Origin::Project | Origin::Ancestor => (cut_chars(&one_line, cap), label),
    };
    let entry = t.skill_entry.fill(&[
        ("name", &s.name),
        ("description", &description),
        ("label", label),
        ("origin", s.origin.as_str()),
    ]);
    // A description is one line, but under a team's own template it
    // may start the line: it gets the same guard as file text. Names
    // holding a line break were refused when the skill was found and
    // descriptions are folded, so the entry is normally one line;
    // every break a reader might honour is still made a line feed
    // first, so that none passes the guard unseen.
    let entry = crate::vocab::text::normalize_line_breaks(entry);
    let mut out = String::with_capacity(entry.len() + 1);
    guard.push_text(&mut out, &entry);
    out
}

/// One listed rule's line, guarded, with its line feed.
fn rule_entry(policy: &Policy, guard: &Guard, r: &RuleFile, label: &str) -> String {
    let t = &policy.templates;
    let cap = usize::try_from(policy.skills.project_description_chars).unwrap_or(usize::MAX);
    let one_line = collapse_whitespace(r.description.as_deref().unwrap_or(""));
    let (description, label) = match r.origin {
        Origin::Home => (one_line, ""),
        Origin::Project | Origin::Ancestor => (cut_chars(&one_line, cap), label),
    };
    let path = crate::vocab::paths::for_prompt(&r.path);
    let entry = t.rule_entry.fill(&[
        ("name", &collapse_whitespace(&r.name)),
        ("description", &description),
        ("label", label),
        ("origin", r.origin.as_str()),
        ("path", &path),
    ]);
    let entry = crate::vocab::text::normalize_line_breaks(entry);
    let mut out = String::with_capacity(entry.len() + 1);
    guard.push_text(&mut out, &entry);
    out
}

/// The note of the items awaiting approval (without its line feed).
fn unapproved_note(policy: &Policy, count: usize) -> String {
    policy.templates.unapproved_note.fill(&[
        ("count", &count.to_string()),
        ("command", &policy.trust.review_command),
    ])
}

/// One block rendered alone, as the section holds it.
fn block_text(policy: &Policy, nonce: &str, b: &Block, guard: &Guard) -> String {
    let mut out = String::with_capacity(b.text.len() + 256 + 2 * b.path.as_os_str().len());
    render_block(policy, nonce, b, guard, &mut out);
    out
}

/// What becomes of one block under the repository's share.
#[derive(Debug)]
enum Fate {
    /// In the prompt as it is.
    Whole,
    /// In the prompt, cut to what was left of the share: the cut block and
    /// its text as rendered.
    Cut(Box<Block>, String),
    /// Left out.
    Dropped,
}

/// What the share keeps of the repository's items (see [`Ours::plan`]).
#[derive(Debug)]
struct Plan {
    /// The bytes charged.
    used: u64,
    /// Each block's fate, by its index (a home block's is always whole).
    fates: Vec<Fate>,
    /// How many of the listed project skills stay listed (in name order);
    /// `None`: there was no room for their part of the list at all (its
    /// heading's count, the "more" line), so none of it is shown.
    skills_shown: Option<usize>,
    /// How many of the listed project rules stay listed (in read order).
    rules_shown: usize,
    /// Whether the note of the items awaiting approval is shown.
    unapproved: bool,
    /// How many items were left out.
    left_out: usize,
    /// Whether a block was cut.
    cut: bool,
}

/// Bytes granted in order until one does not fit; from then on nothing is.
struct Meter {
    left: u64,
    used: u64,
    full: bool,
}

impl Meter {
    fn take(&mut self, cost: u64) -> bool {
        if self.full || cost > self.left {
            self.full = true;
            return false;
        }
        self.left -= cost;
        self.used += cost;
        true
    }
}

/// The repository's items in the prompt, each with what it costs, and the
/// share they are granted (`instructions.project-prompt-bytes`).
struct Ours<'a> {
    policy: &'a Policy,
    nonce: &'a str,
    guard: &'a Guard<'a>,
    blocks: &'a [Block],
    cap: u64,
    /// Each project block rendered alone, when the share first weighs it
    /// (the blocks after the share ran out are never rendered); a home
    /// block's stays empty.
    pieces: Vec<std::cell::OnceCell<String>>,
    /// The project blocks' indices, in the order the budget was granted.
    grant: Vec<usize>,
    /// What the first project block brings when no home block opened the
    /// section: its separator, the heading and the preamble.
    opening: u64,
    /// The listed project skills' indices (name order) and their lines'
    /// bytes.
    project_skills: Vec<usize>,
    skill_costs: Vec<u64>,
    /// What the project's part of the skills list brings besides its
    /// lines: the heading (or what its count adds to the home's), the
    /// "more" line; 0 when the project has no skill to list or count.
    skills_opening: u64,
    /// The listed project rules' indices (read order) and their lines'
    /// bytes.
    project_rules: Vec<usize>,
    rule_costs: Vec<u64>,
    /// What the project's listed rules bring besides their lines.
    rules_opening: u64,
    /// What the note of the items awaiting approval takes (0: none).
    unapproved: u64,
    /// How many project skills are counted, listed or not.
    skills_counted: usize,
}

impl<'a> Ours<'a> {
    /// The repository's part of `items`, each piece rendered alone, under
    /// a share of `cap` bytes.
    fn new(
        policy: &'a Policy,
        nonce: &'a str,
        guard: &'a Guard<'a>,
        cap: u64,
        items: &Items<'a>,
    ) -> Self {
        let Items {
            blocks,
            skills,
            hidden_project,
            rules,
            unapproved,
            opening,
        } = *items;
        let t = &policy.templates;
        let ours = |o: Origin| o != Origin::Home;
        let len = |s: &str| s.len() as u64;
        let pieces = blocks.iter().map(|_| std::cell::OnceCell::new()).collect();
        let mut grant: Vec<usize> = (0..blocks.len())
            .filter(|&i| ours(blocks[i].origin))
            .collect();
        grant.sort_by_key(|&i| blocks[i].granted);
        // A new section is charged a separator (a line feed before it),
        // whatever comes before it.
        let opening = if !opening || blocks.iter().any(|b| !ours(b.origin)) {
            0
        } else {
            1 + len(&t.heading.fill(&[])) + 2 + len(&t.preamble.fill(&[("nonce", nonce)])) + 1
        };
        let label = t.project_skill_label.fill(&[]);
        let project_skills: Vec<usize> = (0..skills.len())
            .filter(|&i| skills[i].listed && ours(skills[i].origin))
            .collect();
        let skill_costs = project_skills
            .iter()
            .map(|&i| len(&skill_entry(policy, guard, &skills[i], &label)))
            .collect();
        let home_skills = skills
            .iter()
            .filter(|s| s.listed && !ours(s.origin))
            .count();
        let skills_counted = project_skills.len() + hidden_project;
        let count_line = |tpl: &crate::policy::Template, count: usize| {
            len(&tpl.fill(&[("count", &count.to_string())]))
        };
        let skills_opening = if skills_counted == 0 {
            0
        } else {
            // The heading's count is the same whatever the share leaves
            // out (a skill left out is counted in the "more" line), which
            // is charged for as many as there are.
            let heading = if home_skills == 0 {
                1 + count_line(&t.skills_heading, skills_counted) + 1
            } else {
                count_line(&t.skills_heading, home_skills + skills_counted)
                    .saturating_sub(count_line(&t.skills_heading, home_skills))
            };
            heading + count_line(&t.more_skills, skills_counted) + 1
        };
        let (home_rules, project_rules): (Vec<usize>, Vec<usize>) = listed_rules(rules)
            .map(|(i, _)| i)
            .partition(|&i| !ours(rules[i].origin));
        let rule_costs = project_rules
            .iter()
            .map(|&i| len(&rule_entry(policy, guard, &rules[i], &label)))
            .collect();
        let rules_opening = if project_rules.is_empty() {
            0
        } else if home_rules.is_empty() {
            1 + count_line(&t.rules_heading, project_rules.len()) + 1
        } else {
            count_line(&t.rules_heading, home_rules.len() + project_rules.len())
                .saturating_sub(count_line(&t.rules_heading, home_rules.len()))
        };
        let unapproved = if unapproved == 0 {
            0
        } else {
            1 + len(&unapproved_note(policy, unapproved)) + 1
        };
        Ours {
            policy,
            nonce,
            guard,
            blocks,
            cap,
            pieces,
            grant,
            opening,
            project_skills,
            skill_costs,
            skills_opening,
            project_rules,
            rule_costs,
            rules_opening,
            unapproved,
            skills_counted,
        }
    }

    /// How many items of the repository there are (blocks, skills counted,
    /// listed rules).
    fn items(&self) -> usize {
        self.grant.len() + self.skills_counted + self.project_rules.len()
    }

    /// The plan for the share, the note saying what it left out (when
    /// there is room for it), and the share's account.
    fn fit(&self) -> (Plan, Option<String>, Budget) {
        let t = &self.policy.templates;
        let cap = self.cap;
        let note_for = |count: usize| {
            t.share_note
                .fill(&[("count", &count.to_string()), ("limit", &cap.to_string())])
        };
        let mut plan = self.plan(0);
        // Something was left out: the note saying so is charged too, room
        // made for it first (for as many items as the repository has).
        let mut note = None;
        if plan.left_out > 0 {
            let reserve = note_for(self.items()).len() as u64 + 2;
            if reserve <= cap {
                plan = self.plan(reserve);
                let text = note_for(plan.left_out);
                plan.used += text.len() as u64 + 2;
                note = Some(text);
            }
        }
        let share = Budget {
            limit: cap,
            used: plan.used,
            exhausted: plan.left_out > 0 || plan.cut,
        };
        (plan, note, share)
    }

    /// What the share keeps, `reserve` bytes of it set aside: the note of
    /// the items awaiting approval, then the blocks in the order the
    /// budget was granted, the skills, the rules, each while it fits. The
    /// first block that does not fit is cut to what is left (when some of
    /// its text fits); from the first item that does not fit on, nothing
    /// more is kept.
    fn plan(&self, reserve: u64) -> Plan {
        let mut meter = Meter {
            left: self.cap.saturating_sub(reserve),
            used: 0,
            full: false,
        };
        let mut left_out = 0;
        let mut cut = false;
        let unapproved = self.unapproved > 0 && meter.take(self.unapproved);
        let mut fates: Vec<Fate> = self.blocks.iter().map(|_| Fate::Whole).collect();
        let mut opening = self.opening;
        for &i in &self.grant {
            let first_miss = !meter.full;
            if !first_miss {
                // Nothing fits any more: left out without being rendered.
                fates[i] = Fate::Dropped;
                left_out += 1;
                continue;
            }
            let piece = self.piece(i).map_or(0, |p| p.len() as u64);
            if meter.take(opening + 1 + piece) {
                opening = 0;
                continue;
            }
            if first_miss {
                let room = meter.left.saturating_sub(opening + 1);
                if let Some((block, text)) = self.cut(i, room) {
                    let cost = opening + 1 + text.len() as u64;
                    meter.left -= cost;
                    meter.used += cost;
                    opening = 0;
                    cut = true;
                    fates[i] = Fate::Cut(Box::new(block), text);
                    continue;
                }
            }
            fates[i] = Fate::Dropped;
            left_out += 1;
        }
        let skills_shown = if self.skills_opening == 0 {
            Some(0)
        } else if meter.take(self.skills_opening) {
            let shown = self
                .skill_costs
                .iter()
                .take_while(|&&c| meter.take(c))
                .count();
            left_out += self.project_skills.len() - shown;
            Some(shown)
        } else {
            left_out += self.skills_counted;
            None
        };
        let rules_shown = if self.rules_opening > 0 && meter.take(self.rules_opening) {
            self.rule_costs
                .iter()
                .take_while(|&&c| meter.take(c))
                .count()
        } else {
            0
        };
        left_out += self.project_rules.len() - rules_shown;
        Plan {
            used: meter.used,
            fates,
            skills_shown,
            rules_shown,
            unapproved,
            left_out,
            cut,
        }
    }

    /// Project block `i` rendered alone (`None` for a home block).
    fn piece(&self, i: usize) -> Option<&String> {
        let b = self.blocks.get(i).filter(|b| b.origin != Origin::Home)?;
        let cell = self.pieces.get(i)?;
        Some(cell.get_or_init(|| block_text(self.policy, self.nonce, b, self.guard)))
    }

    /// Block `i` cut so that it renders in at most `room` bytes, with the
    /// truncation note; `None` when none of its text fits.
    fn cut(&self, i: usize, room: u64) -> Option<(Block, String)> {
        let whole = self.blocks.get(i)?;
        let room = usize::try_from(room).unwrap_or(usize::MAX);
        let mut block = whole.clone();
        block.truncated = true;
        block.share_cut = true;
        block.text = "".into();
        block.included_bytes = 0;
        // The frame and the note, with room for the note's number to grow.
        let frame = block_text(self.policy, self.nonce, &block, self.guard).len() + 20;
        let text = &whole.text;
        let mut end = crate::vocab::text::floor_char_boundary(text, room.saturating_sub(frame));
        // Each try is shorter than the one before; the guard's prefixes
        // make a try longer than its text, rarely by much.
        for _ in 0..64 {
            if end == 0 {
                return None;
            }
            block.text = text.get(..end)?.into();
            block.included_bytes = end as u64;
            let rendered = block_text(self.policy, self.nonce, &block, self.guard);
            if rendered.len() <= room {
                return Some((block, rendered));
            }
            let over = rendered.len() - room;
            end = crate::vocab::text::floor_char_boundary(text, end.saturating_sub(over));
        }
        None
    }
}

/// The guards: the boundary templates' visible literal starts that are not
/// empty.
fn guard_prefixes(policy: &Policy) -> Vec<String> {
    policy
        .templates
        .boundaries()
        .into_iter()
        .map(|(_, start)| start)
        .filter(|p| !p.is_empty())
        .collect()
}

/// What guards file text against passing for a block's boundary, set up
/// once per render: the guards (see [`guard_prefixes`]), the bytes a guard
/// can start with, the forged-line prefix, and a searcher for the nonce.
struct Guard<'n> {
    guards: Vec<String>,
    /// `first[b]`: some guard starts with the byte `b`.
    first: [bool; 256],
    forged_prefix: String,
    nonce: memchr::memmem::Finder<'n>,
}

impl<'n> Guard<'n> {
    fn new(policy: &Policy, nonce: &'n str) -> Self {
        Self::from_parts(
            guard_prefixes(policy),
            policy.templates.forged_line_prefix.fill(&[]),
            nonce,
        )
    }

    fn from_parts(guards: Vec<String>, forged_prefix: String, nonce: &'n str) -> Self {
        let mut first = [false; 256];
        for g in &guards {
            if let Some(&b) = g.as_bytes().first() {
                first[usize::from(b)] = true;
            }
        }
        Self {
            guards,
            first,
            forged_prefix,
            nonce: memchr::memmem::Finder::new(nonce.as_bytes()),
        }
    }

    /// What the check of `text`'s lines needs to know of it as a whole.
    fn scan(&self, text: &str) -> Scan {
        let bytes = text.as_bytes();
        Scan {
            nonce: self.nonce.find(bytes).is_some(),
            erase: memchr::memchr2(0x08, 0x7f, bytes).is_some(),
        }
    }

    /// Whether a line of file text could pass for a header or footer: it
    /// carries the nonce, or what a reader sees of it starts like one (see
    /// [`as_seen`](crate::vocab::unicode::as_seen); the guards are taken the same way). `scan` is the
    /// [`Guard::scan`] of the line's text (or of the line alone).
    fn looks_like_boundary(&self, scan: &Scan, line: &str) -> bool {
        if scan.nonce && self.nonce.find(line.as_bytes()).is_some() {
            return true;
        }
        if scan.erase && memchr::memchr2(0x08, 0x7f, line.as_bytes()).is_some() {
            let seen = as_seen(line);
            return self.guards.iter().any(|g| seen.starts_with(g.as_str()));
        }
        // Most lines start with a printable ASCII character that no guard
        // starts with: what a reader sees of them starts with it too.
        if let Some(&b) = line.as_bytes().first()
            && b.is_ascii_graphic()
            && !self.first[usize::from(b)]
        {
            return false;
        }
        self.guards.iter().any(|g| {
            let mut visible = line
                .chars()
                .filter(|c| !crate::vocab::unicode::renders_blank(*c));
            g.chars().all(|want| visible.next() == Some(want))
        })
    }

    /// Writes `text` and a line feed after it, each line that could pass
    /// for a boundary behind the forged-line prefix (see
    /// [`push_guarded`]). The lines between two guarded ones are copied in
    /// one piece.
    fn push_text(&self, out: &mut String, text: &str) {
        let scan = self.scan(text);
        out.reserve(text.len() + 1);
        // `text[..copied]` is written; lines are `text[start..end]`.
        let mut copied = 0;
        let mut start = 0;
        // Every line ends at a line feed, the last one at the text's end.
        let ends = memchr::memchr_iter(b'\n', text.as_bytes()).chain(std::iter::once(text.len()));
        for end in ends {
            let line = &text[start..end];
            if self.looks_like_boundary(&scan, line) {
                out.push_str(&text[copied..start]);
                push_guarded(out, &self.forged_prefix, line);
                // The line feed after it goes with the next stretch.
                copied = end;
            }
            start = end + 1;
        }
        out.push_str(&text[copied..]);
        out.push('\n');
    }
}

/// A line that could pass for a boundary, behind the forged-line prefix.
/// A backspace or DEL in it is shown as U+FFFD: as a terminal renders
/// them, they take back the character before them, and enough of them at
/// the start of the line would take back the prefix itself.
fn push_guarded(out: &mut String, forged_prefix: &str, line: &str) {
    out.push_str(forged_prefix);
    let mut rest = line;
    while let Some(i) = memchr::memchr2(0x08, 0x7f, rest.as_bytes()) {
        out.push_str(&rest[..i]);
        out.push('\u{FFFD}');
        rest = &rest[i + 1..];
    }
    out.push_str(rest);
}

/// What a whole text holds that the check of its lines needs: whether the
/// nonce, or a character that erases the one before it (backspace, DEL),
/// occurs anywhere in it. Neither can span a line break, so the lines of a
/// text without them skip those searches: one pass over the text instead
/// of one per line.
struct Scan {
    nonce: bool,
    erase: bool,
}

/// At most `max` characters; a cut string ends with an ellipsis (which counts
/// toward `max`).
pub(crate) fn cut_chars(s: &str, max: usize) -> Cow<'_, str> {
    if s.chars().count() <= max {
        return Cow::Borrowed(s);
    }
    let keep = max.saturating_sub(1);
    let mut out: String = s.chars().take(keep).collect();
    out.push('…');
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Scanning the whole text first changes no line's answer, and
        /// copying the unguarded lines in stretches writes what a line at
        /// a time does.
        #[test]
        fn lines_are_judged_and_written_as_one_at_a_time(
            lines in proptest::collection::vec(
                proptest::string::string_regex("(<<<|>|x|0123456789abcdef|\u{8}|\u{7f}| |\u{200b}|a|\u{e9}){0,6}").unwrap(),
                0..8,
            ),
        ) {
            let nonce = "0123456789abcdef";
            let guards = vec!["<<<".to_string(), "\u{e9}x".to_string(), "a".to_string()];
            let guard = Guard::from_parts(guards.clone(), "\\".to_string(), nonce);
            let text = lines.join("\n");
            let scan = guard.scan(&text);
            let mut one_at_a_time = String::new();
            for line in text.split('\n') {
                // The definition, without shortcuts.
                let naive = line.contains(nonce)
                    || if line.contains(['\u{8}', '\u{7f}']) {
                        guards.iter().any(|g| as_seen(line).starts_with(g.as_str()))
                    } else {
                        guards.iter().any(|g| {
                            let mut visible =
                                line.chars().filter(|c| !crate::vocab::unicode::renders_blank(*c));
                            g.chars().all(|want| visible.next() == Some(want))
                        })
                    };
                proptest::prop_assert_eq!(guard.looks_like_boundary(&scan, line), naive, "{:?}", line);
                proptest::prop_assert_eq!(
                    guard.looks_like_boundary(&guard.scan(line), line),
                    naive,
                    "{:?}", line
                );
                if naive {
                    push_guarded(&mut one_at_a_time, "\\", line);
                } else {
                    one_at_a_time.push_str(line);
                }
                one_at_a_time.push('\n');
            }
            let mut stretches = String::new();
            guard.push_text(&mut stretches, &text);
            proptest::prop_assert_eq!(stretches, one_at_a_time);
        }
    }

    #[test]
    fn cuts_on_characters() {
        assert_eq!(cut_chars("abcdef", 4), "abc…");
        assert_eq!(cut_chars("漢字漢字漢字", 3), "漢字…");
        assert_eq!(cut_chars("abc", 3), "abc");
    }

    #[test]
    fn collapses() {
        assert_eq!(collapse_whitespace(" a\n b\t\tc "), "a b c");
    }
}
