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

use crate::instructions::{Activation, Block, RuleFile};
use crate::policy::Policy;
use crate::skills::Skill;
use crate::vocab::origin::Origin;
use crate::vocab::text::collapse_whitespace;
use crate::vocab::unicode::as_seen;

/// The nonce: 16 hex digits of a keyed BLAKE3 hash over the policy and
/// everything rendered (every block's path and text, every skill's name and
/// description). The key is a secret no repository can read (see
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
    // The note says what cut the block: the per-file limit, the character
    // cap, or the budget. No note states the size of a text that was not
    // read to its end: the per-file limit's note gives the file's size on
    // disk (also for a text the character cap cut after the cap stopped
    // the read); the character cap's is used only for a text read whole;
    // the budget's `{total}` is the file's size on disk when the read
    // stopped short (a file of 37,768 bytes read as far as 32,768 is not
    // "this file's 32768 bytes").
    if b.file_limit_cut || (b.char_limit_cut && b.read_capped) {
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
    }
}

/// Renders the whole section with the given `nonce` (see [`nonce`]). Empty
/// when there is nothing to show. Also returns where the instruction part
/// ends (the heading, the preamble and the blocks; the skills list and the
/// unapproved note follow it).
pub(crate) fn render(
    policy: &Policy,
    nonce: &str,
    blocks: &[Block],
    skills: &[Skill],
    hidden_project: usize,
    rules: &[RuleFile],
    unapproved: usize,
) -> (String, usize) {
    let t = &policy.templates;
    // Room for the whole section at once: every block's text and frame,
    // every skill's line (growing it by doubling copies the prompt over
    // and over).
    let frame = 2 * (t.project_header.source().len() + t.footer.source().len());
    let estimate = blocks
        .iter()
        .map(|b| b.text.len() + frame + 2 * b.path.as_os_str().len() + 64)
        .sum::<usize>()
        + skills
            .iter()
            .map(|s| s.name.len() + s.description.len() + t.skill_entry.source().len())
            .sum::<usize>()
        + 1024;
    let mut out = String::with_capacity(estimate);
    let guard = Guard::new(policy, nonce);
    if !blocks.is_empty() {
        t.heading.fill_into(&mut out, &[]);
        out.push_str("\n\n");
        t.preamble.fill_into(&mut out, &[("nonce", nonce)]);
        out.push('\n');
        for b in blocks {
            out.push('\n');
            render_block(policy, nonce, b, &guard, &mut out);
        }
    }
    let instructions_end = out.len();
    let listed: Vec<&Skill> = skills.iter().filter(|s| s.listed).collect();
    if !listed.is_empty() || hidden_project > 0 {
        if !out.is_empty() {
            out.push('\n');
        }
        t.skills_heading.fill_into(
            &mut out,
            &[("count", &(listed.len() + hidden_project).to_string())],
        );
        out.push('\n');
        let label = t.project_skill_label.fill(&[]);
        let cap = usize::try_from(policy.skills.project_description_chars).unwrap_or(usize::MAX);
        for s in listed {
            let one_line = collapse_whitespace(&s.description);
            let (description, label) = match s.origin {
                Origin::Home => (one_line, ""),
                // Skills never come from above the repository; were one to,
                // it would read as a project's.
                Origin::Project | Origin::Ancestor => (cut_chars(&one_line, cap), label.as_str()),
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
            guard.push_text(&mut out, &entry);
        }
        if hidden_project > 0 {
            t.more_skills
                .fill_into(&mut out, &[("count", &hidden_project.to_string())]);
            out.push('\n');
        }
    }
    // The listed rules: name, description and path, for the agent to read
    // the one that applies.
    let listed_rules: Vec<&RuleFile> = rules
        .iter()
        .filter(|r| r.mode == Activation::Listed && r.replaced_by.is_none())
        .collect();
    if !listed_rules.is_empty() {
        if !out.is_empty() {
            out.push('\n');
        }
        t.rules_heading
            .fill_into(&mut out, &[("count", &listed_rules.len().to_string())]);
        out.push('\n');
        let label = t.project_skill_label.fill(&[]);
        let cap = usize::try_from(policy.skills.project_description_chars).unwrap_or(usize::MAX);
        for r in listed_rules {
            let one_line = collapse_whitespace(r.description.as_deref().unwrap_or(""));
            let (description, label) = match r.origin {
                Origin::Home => (one_line, ""),
                Origin::Project | Origin::Ancestor => (cut_chars(&one_line, cap), label.as_str()),
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
            guard.push_text(&mut out, &entry);
        }
    }
    // Under a pinned policy: how many project items were left out, and
    // what the user runs to review them.
    if unapproved > 0 {
        if !out.is_empty() {
            out.push('\n');
        }
        t.unapproved_note.fill_into(
            &mut out,
            &[
                ("count", &unapproved.to_string()),
                ("command", &policy.trust.review_command),
            ],
        );
        out.push('\n');
    }
    (out, instructions_end)
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
