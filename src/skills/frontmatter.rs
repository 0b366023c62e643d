//! The YAML frontmatter at the top of a `SKILL.md`.
//!
//! A skill file opens with a YAML block set between two lines that read
//! `---`:
//!
//! ```text
//! ---
//! name: pdf-tools
//! description: Fill in and merge PDF forms.
//! ---
//! # The body, which this module does not read
//! ```
//!
//! [`frontmatter_end`] tells a reader where that block stops, so a file can be
//! read in chunks and the read abandoned as soon as the block is whole.
//! [`parse`] turns the block into a [`Frontmatter`].
//!
//! The YAML comes from whatever repository is being loaded, so it is treated
//! as hostile. It is read by `serde-saphyr` under a small resource budget:
//! alias bombs, deep nesting, floods of nodes and oversized scalars all stop
//! the parser early with [`FrontmatterError::Yaml`] instead of costing memory,
//! time or stack.
//!
//! Field rules, beyond "it must be YAML":
//!
//! - `name` and `description` must be strings that are not blank; they are
//!   returned as written (no trimming), except that trailing line breaks are
//!   cut from `description` (a `|` or `>` block scalar ends with one; skill
//!   discovery keeps them under `skills.compat.keep-final-breaks`).
//! - Every other known text field (`license`, `compatibility`, `version`,
//!   the items of `tags` and `allowed-tools`, the values of `metadata`) takes
//!   a string, a number or a boolean. Numbers and booleans keep their spelling
//!   from the file, so `version: 1.10` gives `"1.10"`, not `"1.1"`.
//! - A known key set to null (`license:` with nothing after it) counts as
//!   absent.
//! - A known key whose value has some other shape (say `tags: {a: b}`) is not
//!   an error and is not dropped either: it lands in [`Frontmatter::extra`]
//!   with the unknown keys.
//! - Repeated keys are an error. Only `true`/`false` are booleans (the YAML
//!   1.2 core schema), so `yes`, `no`, `on` and `off` stay strings.

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Number, Value};
use serde_saphyr::{
    Budget, DuplicateKeyPolicy, NonFiniteFloatPolicy, Options, RenderOptions, SnippetMode, Spanned,
};

use crate::policy::{DuplicateKeys, Fences, FrontmatterMode, Policy, Scalars};

/// How a policy reads frontmatter: the `skills` keys that change what a
/// parse of the same bytes gives (so the memo keys on them too).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Reading {
    /// `skills.frontmatter`: the fallback for a block strict YAML refuses.
    pub(crate) fallback: FrontmatterMode,
    /// `skills.compat.scalars`.
    pub(crate) scalars: Scalars,
    /// `skills.fences`.
    pub(crate) fences: Fences,
    /// `skills.compat.duplicate-keys`.
    pub(crate) duplicates: DuplicateKeys,
    /// `skills.compat.description-from-body`: a description that is no
    /// text is made up from the body's first line (the bytes parsed hold
    /// it: see [`body_line_end`]).
    pub(crate) body: bool,
    /// `skills.compat.tab-indent = "none"`: a tab opening a line is no
    /// indentation (see [`tabs_as_no_indent`]).
    pub(crate) tabs: bool,
}

/// The first [`Reading::code`] of the `values-as-text` fallback.
const VALUES_AS_TEXT: u8 = 18;

/// The first [`Reading::code`] of the `quote-special-values` fallback.
const QUOTE_SPECIAL_VALUES: u8 = 24;

/// What a reading that takes a duplicated key's last value adds to its
/// [`Reading::code`].
const LAST_KEY: u8 = 32;

/// What a reading that describes a skill by its body adds to its
/// [`Reading::code`].
const BODY: u8 = 64;

/// What a reading to which a tab is no indentation adds to its
/// [`Reading::code`].
const TABS: u8 = 128;

impl Default for Reading {
    /// Strict YAML, strings only, `---` with trailing blanks.
    fn default() -> Self {
        Reading {
            fallback: FrontmatterMode::Strict,
            scalars: Scalars::Strings,
            fences: Fences::TrailingBlanks,
            duplicates: DuplicateKeys::Refuse,
            body: false,
            tabs: false,
        }
    }
}

impl Reading {
    /// The reading `policy` asks for.
    pub(crate) fn of(policy: &Policy) -> Self {
        Reading {
            fallback: policy.skills.frontmatter,
            scalars: policy.skills.scalars,
            fences: policy.skills.fences,
            duplicates: policy.skills.duplicate_keys,
            body: policy.skills.description_from_body,
            tabs: policy.skills.tab_indent == crate::policy::TabIndent::None,
        }
    }

    /// The default reading, with or without the lenient fallback (tests).
    #[cfg(test)]
    pub(crate) fn lenient(lenient: bool) -> Self {
        Reading {
            fallback: if lenient {
                FrontmatterMode::Lenient
            } else {
                FrontmatterMode::Strict
            },
            ..Reading::default()
        }
    }

    /// One small number per reading, for the memo's keys: 0 and 1 are the
    /// default reading without and with the lenient fallback.
    ///
    /// Codes 0 to 17 are the first three fallbacks (as memos written before
    /// `values-as-text` existed spell them); 18 to 23 are `values-as-text`,
    /// 24 to 29 `quote-special-values`;
    /// a reading that takes a duplicated key's last value is its code under
    /// `refuse` plus [`LAST_KEY`]; one that describes a skill by its body
    /// adds [`BODY`].
    pub(crate) fn code(self) -> u8 {
        let last = match self.duplicates {
            DuplicateKeys::Refuse => 0,
            DuplicateKeys::Last => LAST_KEY,
        };
        let body = if self.body { BODY } else { 0 };
        let tabs = if self.tabs { TABS } else { 0 };
        tabs + body + last + self.code_refusing()
    }

    /// [`code`](Self::code) as if duplicated keys were refused.
    fn code_refusing(self) -> u8 {
        let scalars = match self.scalars {
            Scalars::Strings => 0,
            Scalars::AsWritten => 1,
        };
        let fences = match self.fences {
            Fences::TrailingBlanks => 0,
            Fences::Trimmed => 1,
            Fences::ExactOpen => 2,
        };
        let fallback = match self.fallback {
            FrontmatterMode::Strict => 0,
            FrontmatterMode::Lenient => 1,
            FrontmatterMode::NameDescriptionLines => 2,
            FrontmatterMode::ValuesAsText => return VALUES_AS_TEXT + scalars + 2 * fences,
            FrontmatterMode::QuoteSpecialValues => {
                return QUOTE_SPECIAL_VALUES + scalars + 2 * fences;
            }
        };
        fallback + 3 * scalars + 6 * fences
    }

    /// The reading a [`Reading::code`] stands for.
    pub(crate) fn from_code(code: u8) -> Option<Self> {
        if let Some(rest) = code.checked_sub(TABS) {
            return Some(Reading {
                tabs: true,
                ..Self::from_code(rest)?
            });
        }
        if let Some(rest) = code.checked_sub(BODY) {
            if rest >= BODY {
                return None;
            }
            return Some(Reading {
                body: true,
                ..Self::from_code(rest)?
            });
        }
        if let Some(rest) = code.checked_sub(LAST_KEY) {
            if rest >= LAST_KEY {
                return None;
            }
            return Some(Reading {
                duplicates: DuplicateKeys::Last,
                ..Self::from_code(rest)?
            });
        }
        let fences = |n: u8| match n {
            0 => Some(Fences::TrailingBlanks),
            1 => Some(Fences::Trimmed),
            2 => Some(Fences::ExactOpen),
            _ => None,
        };
        let scalars = |n: u8| match n % 2 {
            0 => Scalars::Strings,
            _ => Scalars::AsWritten,
        };
        if let Some(rest) = code.checked_sub(QUOTE_SPECIAL_VALUES) {
            return Some(Reading {
                fallback: FrontmatterMode::QuoteSpecialValues,
                scalars: scalars(rest),
                fences: fences(rest / 2)?,
                duplicates: DuplicateKeys::Refuse,
                body: false,
                tabs: false,
            });
        }
        if let Some(rest) = code.checked_sub(VALUES_AS_TEXT) {
            return Some(Reading {
                fallback: FrontmatterMode::ValuesAsText,
                scalars: scalars(rest),
                fences: fences(rest / 2)?,
                duplicates: DuplicateKeys::Refuse,
                body: false,
                tabs: false,
            });
        }
        let fallback = match code % 3 {
            0 => FrontmatterMode::Strict,
            1 => FrontmatterMode::Lenient,
            _ => FrontmatterMode::NameDescriptionLines,
        };
        let scalars = scalars(code / 3);
        let fences = fences(code / 6)?;
        Some(Reading {
            fallback,
            scalars,
            fences,
            duplicates: DuplicateKeys::Refuse,
            body: false,
            tabs: false,
        })
    }
}

/// Parsed frontmatter of a SKILL.md.
///
/// ```
/// use lisa_context::snapshot::Frontmatter;
///
/// let fm = Frontmatter::parse("---\nname: pdf-tools\ndescription: Merge PDFs.\nversion: 1.10\n---\nbody").unwrap();
/// assert_eq!(fm.name, "pdf-tools");
/// assert_eq!(fm.version.as_deref(), Some("1.10"));
/// ```
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Frontmatter {
    /// `name`: the skill's name, as written. Whether it follows the naming
    /// rule is checked elsewhere.
    pub name: String,
    /// `description`: what the skill does and when to use it, without the
    /// trailing line breaks a block scalar leaves (kept in a skill found
    /// under `skills.compat.keep-final-breaks`).
    pub description: String,
    /// `license`, if given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub license: Option<String>,
    /// `compatibility`: the environment the skill expects, if given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compatibility: Option<String>,
    /// `metadata`: free-form string pairs.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub metadata: BTreeMap<String, String>,
    /// `allowed-tools`, as one space-separated string. A YAML list is joined
    /// with single spaces; an empty list gives an empty string.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allowed_tools: Option<String>,
    /// `version`, as spelled in the file whether it was a string or a number.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// `tags`, in file order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Other keys, kept verbatim as their YAML-as-JSON value, for completeness.
    ///
    /// A known key whose value has a shape this parser cannot use is kept
    /// here too, rather than lost.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<String, Value>,
}

impl Frontmatter {
    /// Parses the frontmatter at the start of a `SKILL.md`'s text (see
    /// `skills::frontmatter::parse` for the rules).
    pub fn parse(text: &str) -> Result<Frontmatter, FrontmatterError> {
        parse(text)
    }
}

/// Why the frontmatter of a SKILL.md could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FrontmatterError {
    /// The text does not start with a `---` line (after an optional UTF-8 BOM).
    #[error("the file does not open with a `---` frontmatter line")]
    NoOpeningFence,
    /// No closing `---` line within the bytes given.
    #[error("the frontmatter has no closing `---` line")]
    NoClosingFence,
    /// The YAML does not parse, or breaks the resource budget (alias bomb, depth).
    #[error("the frontmatter is not acceptable YAML: {0}")]
    Yaml(String),
    /// The YAML is not a mapping.
    #[error("the frontmatter is not a YAML mapping of keys to values")]
    NotAMapping,
    /// `name` missing or empty / not a string.
    #[error("the frontmatter has no `name`, or it is blank or not a string")]
    MissingName,
    /// `description` missing or empty (after trimming) / not a string.
    #[error("the frontmatter has no `description`, or it is blank or not a string")]
    MissingDescription,
}

impl FrontmatterError {
    /// The reason a skill with this error is rejected for:
    /// `bad-frontmatter`, `missing-name` or `missing-description`.
    pub fn reason(&self) -> crate::vocab::reason::Reason {
        use crate::vocab::reason::Reason;
        match self {
            Self::NoOpeningFence | Self::NoClosingFence | Self::Yaml(_) | Self::NotAMapping => {
                Reason::BadFrontmatter
            }
            Self::MissingName => Reason::MissingName,
            Self::MissingDescription => Reason::MissingDescription,
        }
    }
}

/// Where the frontmatter block ends inside `bytes`: Some(byte offset just past the closing fence line) once a closing `---` line is present, None if not (yet). Lets the caller read a SKILL.md in chunks and stop as soon as the frontmatter is complete.
///
/// `bytes` is taken to be a prefix of the file, so only lines ended by a
/// `\n` count: a trailing `---` with nothing after it might still grow into
/// `----`. `None` is also the answer when the text cannot hold frontmatter at
/// all (no opening fence); [`parse`] on the bytes read says which case it is.
// Reading goes through `EndScan`; this one answer for a whole prefix is
// for the fuzz target and the tests (through `internals`).
pub fn frontmatter_end(bytes: &[u8]) -> Option<usize> {
    frontmatter_end_with(bytes, Fences::TrailingBlanks)
}

/// [`frontmatter_end`] under the policy's fence rule.
pub(crate) fn frontmatter_end_with(bytes: &[u8], fences: Fences) -> Option<usize> {
    locate(bytes, false, fences).ok().map(|block| block.end)
}

/// [`frontmatter_end`] over a prefix of a file that grows as it is read,
/// each byte looked at once however many times it is asked: a file read in
/// chunks up to a large cap costs its length, not its length times the
/// number of chunks.
#[derive(Debug)]
pub(crate) struct EndScan {
    /// The fence rule.
    fences: Fences,
    /// Where the next line to look at starts (no line break lies between
    /// the start of that line and `seen`).
    line: usize,
    /// How far the bytes have been searched for a line break.
    seen: usize,
    /// The opening fence was found.
    opened: bool,
    /// The first line is not a fence: the bytes hold no frontmatter.
    none: bool,
    /// Where the closing fence line ends, once found.
    found: Option<usize>,
}

impl Default for EndScan {
    fn default() -> Self {
        EndScan::new(Fences::TrailingBlanks)
    }
}

impl EndScan {
    /// A scan under the fence rule `fences`.
    pub(crate) fn new(fences: Fences) -> Self {
        EndScan {
            fences,
            line: 0,
            seen: 0,
            opened: false,
            none: false,
            found: None,
        }
    }

    /// What [`frontmatter_end`] answers for `bytes`, which extend the bytes
    /// given before.
    pub(crate) fn feed(&mut self, bytes: &[u8]) -> Option<usize> {
        if self.none || self.found.is_some() {
            return self.found;
        }
        loop {
            let from = self.seen.max(self.line);
            let rest = bytes.get(from..)?;
            let found = memchr::memchr(b'\n', rest);
            // What the search looked at: up to the line break, or all of it.
            let looked = found.map_or(rest.len(), |n| n + 1);
            crate::vocab::counters::add(
                crate::vocab::counters::Counter::FrontmatterScanBytes,
                looked as u64,
            );
            let Some(newline) = found else {
                self.seen = bytes.len();
                return None;
            };
            let end = from + newline + 1;
            let mut start = self.line;
            if !self.opened && bytes.starts_with(BOM) {
                start = start.max(BOM.len());
            }
            let text = bytes.get(start..end - 1).unwrap_or_default();
            self.line = end;
            self.seen = end;
            if !self.opened {
                if !opens(self.fences, text) {
                    self.none = true;
                    return None;
                }
                self.opened = true;
            } else if closes(self.fences, text) {
                self.found = Some(end);
                return self.found;
            }
        }
    }
}

/// Parses the frontmatter at the start of `text` (the body after it is ignored).
///
/// `text` is taken to be everything there is, so a closing `---` on the last
/// line counts even without a line break after it. A block with nothing in
/// it (or only comments) reads as an empty mapping, and so fails with
/// [`FrontmatterError::MissingName`].
pub fn parse(text: &str) -> Result<Frontmatter, FrontmatterError> {
    let mut fm = parse_fields(text)?;
    if fm.name.is_empty() {
        return Err(FrontmatterError::MissingName);
    }
    cut_final_breaks(&mut fm);
    Ok(fm)
}

/// Parses like [`parse`], but a frontmatter without a `name` (or with a
/// blank one) comes back with an empty `name`: the caller decides whether
/// a name is required (a policy may take the folder's name instead).
pub(crate) fn parse_fields(text: &str) -> Result<Frontmatter, FrontmatterError> {
    parse_fields_with(text, Reading::default())
}

/// [`parse_fields`] under a policy's reading (its fences and scalars; the
/// fallback is the caller's).
pub(crate) fn parse_fields_with(
    text: &str,
    reading: Reading,
) -> Result<Frontmatter, FrontmatterError> {
    let block = locate(text.as_bytes(), true, reading.fences)?;
    // Both ends of the range sit just after a `\n` or the BOM, or on the
    // start of a line, so they are character boundaries; `get` keeps that
    // from being a panic if it were ever not so.
    let yaml = text
        .get(block.yaml)
        .ok_or_else(|| FrontmatterError::Yaml("frontmatter split inside a character".into()))?;
    let yaml = match reading.fences {
        Fences::ExactOpen => without_blank_last_line(yaml),
        _ => yaml,
    };
    parse_yaml(yaml, reading)
}

/// The YAML of a block as Gemini CLI's reader hands it on: its text ends
/// before the line break ahead of the closing fence, and its YAML parser
/// reads the end of the text as a line break. So the two differ only when
/// the block's last line is empty: a `|+` block ending in one blank line
/// keeps one final line break there, not two (recorded:
/// `skills-gemini-keep-blank`). `yaml` is that line dropped then, as is.
fn without_blank_last_line(yaml: &str) -> &str {
    let cut = yaml
        .strip_suffix('\n')
        .map(|y| y.strip_suffix('\r').unwrap_or(y));
    match cut {
        Some(cut) if cut.ends_with('\n') => cut,
        _ => yaml,
    }
}

/// Whether `text` is YAML for a list (a `[...]` flow sequence that parses).
pub(super) fn is_yaml_list(text: &str) -> bool {
    matches!(
        serde_saphyr::from_str_with_options::<Node>(text, yaml_options(DuplicateKeys::Refuse)),
        Ok(Node::Seq(_))
    )
}

/// Reads the YAML between the fences under `reading`'s scalars (the
/// fallback is the caller's).
pub(super) fn parse_yaml(yaml: &str, reading: Reading) -> Result<Frontmatter, FrontmatterError> {
    let untabbed;
    let yaml = if reading.tabs && yaml.contains('\t') {
        untabbed = tabs_as_no_indent(yaml).ok_or_else(|| {
            FrontmatterError::Yaml(
                "a line opened by a tab is no key, or opens the frontmatter (a tab is no \
                 indentation under skills.compat.tab-indent = \"none\")"
                    .to_string(),
            )
        })?;
        untabbed.as_str()
    } else {
        yaml
    };
    let root: Node = serde_saphyr::from_str_with_options(yaml, yaml_options(reading.duplicates))
        .map_err(|err| yaml_error(&err))?;
    let entries = match root {
        Node::Map(entries) => entries,
        Node::Null => Vec::new(),
        _ => return Err(FrontmatterError::NotAMapping),
    };
    // Gemini CLI takes its YAML reading only when both fields are text:
    // a name that is missing or not text goes to its fallback.
    let name_required = reading.fallback == FrontmatterMode::NameDescriptionLines;
    build(entries, yaml, reading, name_required)
}

/// The YAML text as js-yaml 3 reads its tabs (`skills.compat.tab-indent =
/// "none"`, OpenCode): a line opened by tabs (and any blanks after them)
/// stands at the left margin, so a key there is a top-level key even where
/// the line would continue the value above. `None` (not YAML) when such a
/// line is no `key:` line, or is the first key of the block. Blank and
/// comment lines pass as they are.
pub(super) fn tabs_as_no_indent(yaml: &str) -> Option<String> {
    let mut out = String::with_capacity(yaml.len());
    let mut seen_key = false;
    for line in yaml.split_inclusive('\n') {
        let content = line.trim_end_matches(['\n', '\r']);
        let rest = content.trim_start_matches([' ', '\t']);
        if rest.is_empty() || rest.starts_with('#') {
            out.push_str(line);
            continue;
        }
        if line.starts_with('\t') {
            if !seen_key || !is_key_line(rest) {
                return None;
            }
            out.push_str(line.trim_start_matches([' ', '\t']));
        } else {
            out.push_str(line);
        }
        seen_key = true;
    }
    Some(out)
}

/// Whether `line` (its indentation off) opens with a plain `key:`.
fn is_key_line(line: &str) -> bool {
    let Some((key, after)) = line.split_once(':') else {
        return false;
    };
    !key.is_empty()
        && !key.starts_with(['-', '?', '[', '{', '"', '\'', '|', '>'])
        && (after.is_empty() || after.starts_with([' ', '\t']))
}

// ---------------------------------------------------------------------------
// Fences

/// The UTF-8 byte order mark, allowed before the opening fence.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The frontmatter block found in a text.
pub(super) struct Block {
    /// The YAML between the fences.
    pub(super) yaml: Range<usize>,
    /// Just past the closing fence line (and its line break, if any).
    end: usize,
}

/// Finds the fenced block at the start of `bytes`. With `whole` false the
/// bytes may be cut short, so a last line without a `\n` is not looked at.
pub(super) fn locate(bytes: &[u8], whole: bool, fences: Fences) -> Result<Block, FrontmatterError> {
    let start = if bytes.starts_with(BOM) { BOM.len() } else { 0 };
    let mut lines = Lines {
        bytes,
        pos: start,
        whole,
    };
    let opening = lines
        .next()
        .filter(|line| opens(fences, line.text))
        .ok_or(FrontmatterError::NoOpeningFence)?;
    lines
        .find(|line| closes(fences, line.text))
        .map(|closing| Block {
            yaml: opening.end..closing.start,
            end: closing.end,
        })
        .ok_or(FrontmatterError::NoClosingFence)
}

/// A fence is `---` alone on its line; trailing blanks and the `\r` of a
/// CRLF line ending are allowed.
fn is_fence(line: &[u8]) -> bool {
    line.trim_ascii_end() == b"---"
}

/// Whether `line` (without its `\n`) opens the frontmatter under `fences`.
fn opens(fences: Fences, line: &[u8]) -> bool {
    match fences {
        Fences::TrailingBlanks => is_fence(line),
        Fences::Trimmed => trims_to_fence(line),
        Fences::ExactOpen => line == b"---" || line == b"---\r",
    }
}

/// Whether `line` (without its `\n`) closes the frontmatter under `fences`.
fn closes(fences: Fences, line: &[u8]) -> bool {
    match fences {
        Fences::TrailingBlanks => is_fence(line),
        Fences::Trimmed => trims_to_fence(line),
        Fences::ExactOpen => line.starts_with(b"---"),
    }
}

/// Whether `line` is `---` once Unicode white space is trimmed from both
/// ends (a line that is not UTF-8 is not).
fn trims_to_fence(line: &[u8]) -> bool {
    std::str::from_utf8(line).is_ok_and(|text| text.trim() == "---")
}

/// One line of the input, without its `\n`.
struct Line<'a> {
    text: &'a [u8],
    /// Offset of the line's first byte.
    start: usize,
    /// Offset just past the line's `\n` (or the end of the input).
    end: usize,
}

/// Splits bytes into lines from `pos` on.
struct Lines<'a> {
    bytes: &'a [u8],
    pos: usize,
    /// Whether a last line with no `\n` is complete.
    whole: bool,
}

impl<'a> Iterator for Lines<'a> {
    type Item = Line<'a>;

    fn next(&mut self) -> Option<Line<'a>> {
        let rest = self.bytes.get(self.pos..).filter(|rest| !rest.is_empty())?;
        let (text, taken) = match rest.iter().position(|&b| b == b'\n') {
            Some(newline) => (rest.split_at(newline).0, newline + 1),
            None if self.whole => (rest, rest.len()),
            None => return None,
        };
        let start = self.pos;
        self.pos += taken;
        Some(Line {
            text,
            start,
            end: self.pos,
        })
    }
}

// ---------------------------------------------------------------------------
// YAML

/// Deepest nesting of sequences and mappings (block or flow) accepted.
const MAX_DEPTH: usize = 32;
/// Most `*alias` uses accepted.
const MAX_ALIASES: usize = 32;
/// Most `&anchor` definitions accepted.
const MAX_ANCHORS: usize = 32;
/// Most `<<` merge keys accepted.
const MAX_MERGE_KEYS: usize = 32;
/// Most parser events accepted, alias replays included.
const MAX_EVENTS: usize = 10_000;
/// Most nodes (scalars, sequences, mappings) accepted.
const MAX_NODES: usize = 10_000;
/// Most bytes of scalar text accepted, summed over all scalars (256 KiB).
const MAX_SCALAR_BYTES: usize = 256 * 1024;

/// The `serde-saphyr` settings for frontmatter: a budget sized for a few
/// dozen keys, one document, duplicate keys refused, YAML 1.2 booleans.
fn yaml_options(duplicates: DuplicateKeys) -> Options {
    // Both structs are `#[non_exhaustive]`: start from the defaults and set
    // the fields that matter here.
    let mut budget = Budget::default();
    budget.max_documents = 1;
    budget.max_depth = MAX_DEPTH;
    // The parser's own flow-nesting check runs ahead of the budget's depth
    // count, so it needs the same cap or `[[[[…` is stopped only at 255.
    budget.flow_nesting_limit = MAX_DEPTH;
    budget.max_aliases = MAX_ALIASES;
    budget.max_anchors = MAX_ANCHORS;
    budget.max_merge_keys = MAX_MERGE_KEYS;
    budget.max_events = MAX_EVENTS;
    budget.max_nodes = MAX_NODES;
    budget.max_recorded_anchor_events = MAX_EVENTS;
    budget.max_recorded_anchor_bytes = MAX_SCALAR_BYTES;
    budget.max_total_scalar_bytes = MAX_SCALAR_BYTES;
    budget.max_inclusion_depth = 0;

    let mut options = Options::default();
    options.budget = Some(budget);
    options.alias_limits.max_total_replayed_events = MAX_EVENTS;
    options.alias_limits.max_replay_stack_depth = MAX_DEPTH;
    // Every entry reaches `build`, which keeps the last value of a key.
    options.duplicate_keys = match duplicates {
        DuplicateKeys::Refuse => DuplicateKeyPolicy::Error,
        DuplicateKeys::Last => DuplicateKeyPolicy::PassThrough,
    };
    options.strict_booleans = true;
    // `.nan` and `.inf` become strings instead of failing the whole block.
    options.non_finite_float_policy = NonFiniteFloatPolicy::AsString;
    // Comments are never used; do not keep their text.
    options.emit_comments = false;
    // Errors are flattened to one line below; no source excerpts.
    options.with_snippet = false;
    options
}

/// One line of text for a `serde-saphyr` error, with line numbers counted
/// from the top of the file rather than from the line after the fence.
fn yaml_error(err: &serde_saphyr::Error) -> FrontmatterError {
    let mut render = RenderOptions::default();
    render.snippets = SnippetMode::Off;
    render.line_offset = 1;
    FrontmatterError::Yaml(err.render_with_options(render))
}

/// A YAML value as read, with the place in the text of every value below
/// the root, so that numbers can be given back as they were spelled.
#[derive(Debug)]
enum Node {
    Null,
    Bool(bool),
    Number(Number),
    String(String),
    Seq(Vec<Spanned<Node>>),
    Map(Vec<(String, Spanned<Node>)>),
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(NodeVisitor)
    }
}

/// Builds a [`Node`] from whatever the YAML holds.
struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any YAML value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Node, E> {
        Ok(Node::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Node, E> {
        Ok(Node::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Node, E> {
        Ok(Node::Number(v.into()))
    }

    fn visit_i128<E>(self, v: i128) -> Result<Node, E> {
        Ok(Number::from_i128(v).map_or_else(|| Node::String(v.to_string()), Node::Number))
    }

    fn visit_u128<E>(self, v: u128) -> Result<Node, E> {
        Ok(Number::from_u128(v).map_or_else(|| Node::String(v.to_string()), Node::Number))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Node, E> {
        Ok(Number::from_f64(v).map_or_else(|| Node::String(v.to_string()), Node::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Node, E> {
        Ok(Node::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Node, E> {
        Ok(Node::String(v))
    }

    fn visit_unit<E>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }

    fn visit_none<E>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Node, D::Error> {
        Node::deserialize(deserializer)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        // No `size_hint` preallocation: the budget, not the hint, bounds the
        // length.
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Node::Seq(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut entries = Vec::new();
        while let Some(entry) = map.next_entry()? {
            entries.push(entry);
        }
        Ok(Node::Map(entries))
    }
}

impl Node {
    /// The value as JSON, for [`Frontmatter::extra`].
    fn to_json(&self) -> Value {
        match self {
            Node::Null => Value::Null,
            Node::Bool(b) => Value::Bool(*b),
            Node::Number(n) => Value::Number(n.clone()),
            Node::String(s) => Value::String(s.clone()),
            Node::Seq(items) => {
                Value::Array(items.iter().map(|item| item.value.to_json()).collect())
            }
            Node::Map(entries) => Value::Object(
                entries
                    .iter()
                    .map(|(key, value)| (key.clone(), value.value.to_json()))
                    .collect(),
            ),
        }
    }
}

// ---------------------------------------------------------------------------
// Fields

/// Sorts the top-level entries into a [`Frontmatter`].
fn build(
    entries: Vec<(String, Spanned<Node>)>,
    yaml: &str,
    reading: Reading,
    name_required: bool,
) -> Result<Frontmatter, FrontmatterError> {
    let scalars = reading.scalars;
    let mut name = None;
    let mut description = None;
    let mut fm = Frontmatter::default();
    for (key, node) in entries {
        let kept = match key.as_str() {
            "name" => {
                name = Some(field_text(node, yaml, scalars));
                continue;
            }
            "description" => {
                // Claude Code's text of a number or boolean: JavaScript's.
                let text = match javascript_text(&node.value) {
                    Some(text) if reading.body => Some(text),
                    _ => field_text(node, yaml, scalars),
                };
                description = Some(text);
                continue;
            }
            "license" => optional(&node, yaml, |text| fm.license = text),
            "compatibility" => optional(&node, yaml, |text| fm.compatibility = text),
            "version" => optional(&node, yaml, |text| fm.version = text),
            "allowed-tools" => match &node.value {
                Node::Seq(items) => text_items(items, yaml)
                    .map(|tools| fm.allowed_tools = Some(tools.join(" ")))
                    .is_some(),
                _ => optional(&node, yaml, |text| fm.allowed_tools = text),
            },
            "tags" => match &node.value {
                Node::Null => true,
                Node::Seq(items) => text_items(items, yaml).map(|tags| fm.tags = tags).is_some(),
                _ => false,
            },
            "metadata" => match &node.value {
                Node::Null => true,
                Node::Map(pairs) => text_pairs(pairs, yaml)
                    .map(|metadata| fm.metadata = metadata)
                    .is_some(),
                _ => false,
            },
            _ => false,
        };
        if !kept {
            fm.extra.insert(key, node.value.to_json());
        }
    }

    // A missing name is reported before a missing description; a
    // frontmatter with a description but no name comes back nameless.
    let name = name.flatten();
    if name_required && name.is_none() {
        return Err(FrontmatterError::MissingName);
    }
    fm.name = name
        .filter(|name| !name.trim().is_empty())
        .unwrap_or_default();
    let missing = if fm.name.is_empty() {
        FrontmatterError::MissingName
    } else {
        FrontmatterError::MissingDescription
    };
    // The description as YAML gives it, final line breaks and all (a `|`
    // or `>` block scalar ends with one): the public parses cut them
    // ([`cut_final_breaks`]), skill discovery cuts them unless the policy
    // keeps them (`skills.compat.keep-final-breaks`), so what the parse
    // cache and the memo hold serves both.
    fm.description = match description {
        Some(Some(text)) if !is_blank(&text, reading.body) => text,
        // Made up from the body by the caller (`description-from-body`).
        _ if reading.body => String::new(),
        _ => return Err(missing),
    };
    Ok(fm)
}

/// Whether a description is blank: white space alone, as Rust trims it,
/// or as JavaScript does under `description-from-body` (Claude Code trims
/// a description with `String.prototype.trim`).
pub(super) fn is_blank(text: &str, javascript: bool) -> bool {
    if javascript {
        text.chars()
            .all(crate::vocab::text::is_javascript_white_space)
    } else {
        text.trim().is_empty()
    }
}

/// A number's or boolean's text as JavaScript's `String` gives it (Claude
/// Code's description of `42`, `1.10` or `true`); `None` for anything else.
fn javascript_text(node: &Node) -> Option<String> {
    match node {
        Node::Bool(b) => Some(b.to_string()),
        Node::Number(n) => n.as_f64().map(javascript_number),
        _ => None,
    }
}

/// `x` as ECMAScript's `Number::toString` writes it: the shortest digits
/// that read back as `x`, in plain notation from 1e-6 up to below 1e21,
/// else as `d.ddde+N`.
pub(crate) fn javascript_number(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x == 0.0 {
        return "0".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    if x < 0.0 {
        return format!("-{}", javascript_number(-x));
    }
    // Rust's `{:e}` gives the shortest round-trip digits too.
    let spelled = format!("{x:e}");
    let (mantissa, exponent) = spelled.split_once('e').unwrap_or((spelled.as_str(), "0"));
    let exponent: i64 = exponent.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let k = digits.len() as i64;
    let n = exponent + 1;
    let zeros = |count: i64| "0".repeat(usize::try_from(count).unwrap_or(0));
    if k <= n && n <= 21 {
        format!("{digits}{}", zeros(n - k))
    } else if 0 < n && n <= 21 {
        let (int, frac) = digits.split_at(usize::try_from(n).unwrap_or(0));
        format!("{int}.{frac}")
    } else if -6 < n && n <= 0 {
        format!("0.{}{digits}", zeros(-n))
    } else {
        let sign = if n - 1 < 0 { '-' } else { '+' };
        let (first, rest) = digits.split_at(1);
        let dot = if rest.is_empty() { "" } else { "." };
        format!("{first}{dot}{rest}e{sign}{}", (n - 1).abs())
    }
}

/// Where the bytes a reading under `description-from-body` parses end:
/// just past the first line after the closing fence (at `fence_end`) that
/// is not blank, white space as JavaScript trims it. `None` while no such
/// line is complete in `bytes` (with `whole`, the bytes are all there is:
/// the end of the bytes then ends the last line, or the body).
pub(crate) fn body_line_end(bytes: &[u8], fence_end: usize, whole: bool) -> Option<usize> {
    let mut pos = fence_end;
    while let Some(rest) = bytes.get(pos..).filter(|rest| !rest.is_empty()) {
        let (line, next) = match memchr::memchr(b'\n', rest) {
            Some(n) => (&rest[..n], pos + n + 1),
            None if whole => (rest, bytes.len()),
            None => return None,
        };
        // A line cut inside a character is not blank: the read may stop.
        let blank = std::str::from_utf8(line).is_ok_and(|line| {
            line.chars()
                .all(crate::vocab::text::is_javascript_white_space)
        });
        if !blank {
            return Some(next);
        }
        pos = next;
    }
    whole.then_some(bytes.len())
}

/// The most UTF-16 units a description taken from the body keeps whole.
const BODY_LINE_UNITS: usize = 100;

/// How many UTF-16 units a cut description taken from the body keeps,
/// before its `...`.
const BODY_LINE_CUT_UNITS: usize = 97;

/// A skill's description made up from its body (`body`: the text after
/// the closing fence), as Claude Code 2.1.332 makes it: the first line
/// that is not blank, trimmed (JavaScript's white space), without the
/// `#` marks and the space of a Markdown heading, its first 97 UTF-16
/// units and `...` when it is longer than 100 (a character is never cut
/// in two: one that would be is left out); `Skill` for a body with no
/// such line.
pub(crate) fn body_description(body: &str) -> String {
    let js = crate::vocab::text::is_javascript_white_space;
    let Some(line) = body
        .split('\n')
        .map(|line| line.trim_matches(js))
        .find(|line| !line.is_empty())
    else {
        return "Skill".into();
    };
    let text = heading_text(line).unwrap_or(line);
    if text.encode_utf16().count() <= BODY_LINE_UNITS {
        return text.to_string();
    }
    let mut units = 0;
    let mut cut = String::with_capacity(BODY_LINE_CUT_UNITS + 3);
    for c in text.chars() {
        units += c.len_utf16();
        if units > BODY_LINE_CUT_UNITS {
            break;
        }
        cut.push(c);
    }
    cut.push_str("...");
    cut
}

/// The text of a trimmed line that JavaScript's `/^#+\s+(\S.*)$/` takes
/// for a heading: after the `#` marks and white space, with no line
/// terminator (`.` matches none) in it.
fn heading_text(line: &str) -> Option<&str> {
    let js = crate::vocab::text::is_javascript_white_space;
    let marks = line.trim_start_matches('#');
    if marks.len() == line.len() {
        return None;
    }
    let text = marks.trim_start_matches(js);
    if text.len() == marks.len() || text.is_empty() {
        return None;
    }
    (!text.contains(['\r', '\n', '\u{2028}', '\u{2029}'])).then_some(text)
}

/// The end of the frontmatter block of `text` (just past the closing
/// fence line), where its body starts.
pub(super) fn body_start(text: &str, fences: Fences) -> Option<usize> {
    locate(text.as_bytes(), true, fences)
        .ok()
        .map(|block| block.end)
}

/// Cuts the line breaks at the end of `fm`'s description (what a `|` or
/// `>` block scalar leaves), as every public parse returns it.
pub(crate) fn cut_final_breaks(fm: &mut Frontmatter) {
    let kept = fm.description.trim_end_matches(['\n', '\r']).len();
    fm.description.truncate(kept);
}

/// The text of `name` or `description`: a string, or under
/// `scalars = "as-written"` a number or boolean as spelled. `None` for
/// anything else (null, a collection, a number under `strings`).
fn field_text(node: Spanned<Node>, yaml: &str, scalars: Scalars) -> Option<String> {
    match node.value {
        Node::String(text) => Some(text),
        Node::Number(_) | Node::Bool(_) if scalars == Scalars::AsWritten => {
            scalar_text(&node, yaml)
        }
        _ => None,
    }
}

/// Hands an optional text field to `set`: `None` for null, the text for a
/// scalar. Returns false, setting nothing, for any other shape.
fn optional(node: &Spanned<Node>, yaml: &str, set: impl FnOnce(Option<String>)) -> bool {
    if matches!(node.value, Node::Null) {
        set(None);
        return true;
    }
    match scalar_text(node, yaml) {
        Some(text) => {
            set(Some(text));
            true
        }
        None => false,
    }
}

/// The texts of a list whose items are all scalars.
fn text_items(items: &[Spanned<Node>], yaml: &str) -> Option<Vec<String>> {
    items.iter().map(|item| scalar_text(item, yaml)).collect()
}

/// The pairs of a mapping whose values are all scalars.
fn text_pairs(pairs: &[(String, Spanned<Node>)], yaml: &str) -> Option<BTreeMap<String, String>> {
    pairs
        .iter()
        .map(|(key, value)| scalar_text(value, yaml).map(|text| (key.clone(), text)))
        .collect()
}

/// A scalar's text: a string as it is, a number or a boolean as spelled in
/// the file. `None` for null and for collections.
fn scalar_text(node: &Spanned<Node>, yaml: &str) -> Option<String> {
    match &node.value {
        Node::String(s) => Some(s.clone()),
        Node::Number(n) => Some(spelling(node, yaml).map_or_else(|| n.to_string(), str::to_owned)),
        Node::Bool(b) => Some(spelling(node, yaml).map_or_else(|| b.to_string(), str::to_owned)),
        Node::Null | Node::Seq(_) | Node::Map(_) => None,
    }
}

/// The source text of a plain scalar, found through its span. `None` when
/// the span is unknown or covers anything but a bare word (quotes, a tag, an
/// anchor), in which case the caller falls back to the parsed value.
fn spelling<'a>(node: &Spanned<Node>, yaml: &'a str) -> Option<&'a str> {
    let span = node.defined.span();
    let start = usize::try_from(span.byte_offset()?).ok()?;
    let len = usize::try_from(span.byte_len()?).ok()?;
    let text = yaml.get(start..start.checked_add(len)?)?;
    let bare = !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'+' | b'-' | b'_'));
    bare.then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fence_lines() {
        for line in ["---", "---   ", "---\r", "--- \t\r"] {
            assert!(is_fence(line.as_bytes()), "{line:?}");
        }
        for line in ["", "--", "----", " ---", "--- x", "-- -", "\u{feff}---"] {
            assert!(!is_fence(line.as_bytes()), "{line:?}");
        }
    }

    #[test]
    fn the_growing_scan_answers_what_frontmatter_end_answers() {
        let texts: [&[u8]; 8] = [
            b"---\nname: a\n---\nbody\n",
            b"\xEF\xBB\xBF---\r\nname: a\r\n---   \r\nbody",
            b"---\n---\n",
            b"no fence\n---\n---\n",
            b"---\nname: a\nnever closed\n",
            b"---\n----\n--- \n",
            b"\xEF\xBB\n---\n---\n",
            b"",
        ];
        for text in texts {
            // Every way of cutting the text in two chunks, and byte by byte.
            for cut in 0..=text.len() {
                let mut scan = EndScan::default();
                scan.feed(&text[..cut]);
                assert_eq!(
                    scan.feed(text),
                    frontmatter_end(text),
                    "{text:?} cut at {cut}"
                );
            }
            let mut scan = EndScan::default();
            for n in 0..=text.len() {
                let got = scan.feed(&text[..n]);
                assert_eq!(got, frontmatter_end(&text[..n]), "{text:?} at {n}");
                if got.is_some() {
                    break;
                }
            }
        }
    }

    #[test]
    fn locate_gives_the_yaml_and_the_end() {
        let text = b"\xEF\xBB\xBF---\r\na: 1\r\n---\r\nbody";
        let block = locate(text, true, Fences::TrailingBlanks).unwrap();
        assert_eq!(&text[block.yaml], b"a: 1\r\n");
        assert_eq!(&text[block.end..], b"body");
    }

    #[test]
    fn locate_on_a_prefix_ignores_the_unfinished_last_line() {
        assert_eq!(
            locate(b"---\na: 1\n---", false, Fences::TrailingBlanks).err(),
            Some(FrontmatterError::NoClosingFence)
        );
        assert_eq!(
            locate(b"---\na: 1\n---", true, Fences::TrailingBlanks)
                .map(|b| b.end)
                .ok(),
            Some(12)
        );
        assert_eq!(
            locate(b"---", false, Fences::TrailingBlanks).err(),
            Some(FrontmatterError::NoOpeningFence)
        );
    }

    #[test]
    fn budget_is_the_small_one() {
        let options = yaml_options(DuplicateKeys::Refuse);
        let budget = options.budget.unwrap();
        assert_eq!(budget.max_documents, 1);
        assert_eq!(budget.max_depth, MAX_DEPTH);
        assert_eq!(budget.flow_nesting_limit, MAX_DEPTH);
        assert_eq!(budget.max_aliases, MAX_ALIASES);
        assert_eq!(budget.max_total_scalar_bytes, MAX_SCALAR_BYTES);
        assert!(matches!(options.duplicate_keys, DuplicateKeyPolicy::Error));
    }

    #[test]
    fn spelling_falls_back_when_the_span_is_not_a_bare_word() {
        // An explicit tag makes the quoted text a number; the quotes are not
        // part of the spelling, so the parsed value is used instead.
        let yaml = "v: !!float \"1.50\"\n";
        let Node::Map(entries) =
            serde_saphyr::from_str_with_options(yaml, yaml_options(DuplicateKeys::Refuse)).unwrap()
        else {
            panic!("not a mapping");
        };
        assert_eq!(scalar_text(&entries[0].1, yaml).as_deref(), Some("1.5"));
    }

    #[test]
    fn numbers_are_spelled_as_javascript_spells_them() {
        let cases: [(f64, &str); 16] = [
            (42.0, "42"),
            (1.1, "1.1"),
            (2.75, "2.75"),
            (31.0, "31"),
            (1000.0, "1000"),
            (-0.0, "0"),
            (-2.5, "-2.5"),
            (1e21, "1e+21"),
            (1.5e21, "1.5e+21"),
            (123456789012345680000.0, "123456789012345680000"),
            (1e-6, "0.000001"),
            (1.5e-7, "1.5e-7"),
            (1e-7, "1e-7"),
            (0.1, "0.1"),
            (f64::INFINITY, "Infinity"),
            (f64::NAN, "NaN"),
        ];
        for (x, js) in cases {
            assert_eq!(javascript_number(x), js, "{x}");
        }
    }

    #[test]
    fn the_body_line_is_trimmed_unmarked_and_cut_as_claude_code_does() {
        let cases = [
            ("\n  \n  #   A heading  line  \nNext.\n", "A heading  line"),
            ("##NoSpace heading\n", "##NoSpace heading"),
            ("#   \nNext.\n", "#"),
            ("\r\n# CRLF heading\r\n", "CRLF heading"),
            ("#\tTab heading", "Tab heading"),
            ("# a\u{2028}b\n", "# a\u{2028}b"),
            ("\tA\tline with\ttabs\t\n", "A\tline with\ttabs"),
            ("\n \n", "Skill"),
            ("", "Skill"),
        ];
        for (body, want) in cases {
            assert_eq!(body_description(body), want, "{body:?}");
        }
        let hundred = "0123456789".repeat(10);
        assert_eq!(body_description(&hundred), hundred);
        let long = "abcdefghij".repeat(15);
        assert_eq!(body_description(&long), format!("{}...", &long[..97]));
        // A character that would be cut in two is left out.
        let astral = format!("{}\u{1F680}tail{}", "a".repeat(96), "z".repeat(10));
        assert_eq!(body_description(&astral), format!("{}...", "a".repeat(96)));
    }

    #[test]
    fn the_body_line_ends_where_its_first_non_blank_line_does() {
        let text = b"---\nname: a\n---\n\n \t\nBody line\nmore\n";
        let fence = frontmatter_end(text).unwrap();
        let end = body_line_end(text, fence, false).unwrap();
        assert_eq!(&text[..end], b"---\nname: a\n---\n\n \t\nBody line\n");
        // Not complete yet, unless the bytes are all there is.
        assert_eq!(body_line_end(b"---\n---\nBody", 8, false), None);
        assert_eq!(body_line_end(b"---\n---\nBody", 8, true), Some(12));
        assert_eq!(body_line_end(b"---\n---\n\n  ", 8, false), None);
        assert_eq!(body_line_end(b"---\n---\n\n  ", 8, true), Some(11));
    }

    #[test]
    fn every_reading_has_its_own_code_and_reads_back() {
        use crate::policy::{DuplicateKeys, Fences, FrontmatterMode, Scalars};
        let mut seen = std::collections::BTreeSet::new();
        for fallback in [
            FrontmatterMode::Strict,
            FrontmatterMode::Lenient,
            FrontmatterMode::NameDescriptionLines,
            FrontmatterMode::ValuesAsText,
            FrontmatterMode::QuoteSpecialValues,
        ] {
            for scalars in [Scalars::Strings, Scalars::AsWritten] {
                for fences in [Fences::TrailingBlanks, Fences::Trimmed, Fences::ExactOpen] {
                    for duplicates in [DuplicateKeys::Refuse, DuplicateKeys::Last] {
                        for (body, tabs) in
                            [(false, false), (true, false), (false, true), (true, true)]
                        {
                            let reading = Reading {
                                fallback,
                                scalars,
                                fences,
                                duplicates,
                                body,
                                tabs,
                            };
                            let code = reading.code();
                            assert!(seen.insert(code), "{reading:?} shares code {code}");
                            assert_eq!(Reading::from_code(code), Some(reading));
                        }
                    }
                }
            }
        }
        // The codes memos wrote before `duplicate-keys` existed keep their
        // meaning: the default reading is 0, the lenient one 1.
        assert_eq!(Reading::default().code(), 0);
        assert_eq!(Reading::lenient(true).code(), 1);
        assert_eq!(Reading::from_code(BODY + BODY - 1), None);
    }

    #[test]
    fn a_tab_is_no_indentation_as_js_yaml_reads_it() {
        let read = super::tabs_as_no_indent;
        // A later key opened by a tab is a top-level key, also where it
        // would continue the value above.
        assert_eq!(
            read("name: second\n\tdescription: d\n").as_deref(),
            Some("name: second\ndescription: d\n")
        );
        assert_eq!(
            read("name: cont\ndescription: first\n\tsecond: own\n").as_deref(),
            Some("name: cont\ndescription: first\nsecond: own\n")
        );
        // The first key so opened, or a tab-led line that is no key: not YAML.
        assert_eq!(read("\tname: tabbed\n\tdescription: d\n"), None);
        assert_eq!(read("\t name: mixed\n"), None);
        assert_eq!(read("name: plain\ndescription: first\n\tand more\n"), None);
        // Blank and comment lines, and space indentation, pass.
        assert_eq!(
            read("  name: spaced\n\t\n\t# note\n  description: d\n").as_deref(),
            Some("  name: spaced\n\t\n\t# note\n  description: d\n")
        );
    }
}
