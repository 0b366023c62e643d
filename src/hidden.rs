//! Hidden text: characters and markup a person reading a file does not see,
//! but a model reading its raw text does.
//!
//! Instruction files and skill descriptions end up in the system prompt. A
//! rules file can carry instructions its reviewers never saw, written with
//! zero-width characters, bidi controls that reorder what is displayed, the
//! Unicode tag block (an invisible copy of ASCII), or HTML comments, which
//! vanish when the markdown is rendered. [`treat`] finds all of these and
//! applies the policy's [`HiddenText`] mode to them.
//!
//! The hidden characters:
//!
//! | Code points         | Kind          | What they are                                   |
//! |---------------------|---------------|-------------------------------------------------|
//! | U+00AD              | zero-width    | soft hyphen (shown only at a line break)        |
//! | U+034F              | zero-width    | combining grapheme joiner                       |
//! | U+061C              | bidi-control  | Arabic letter mark                              |
//! | U+180E              | zero-width    | Mongolian vowel separator                       |
//! | U+200B..U+200D      | zero-width    | zero-width space, non-joiner, joiner            |
//! | U+200E, U+200F      | bidi-control  | left-to-right and right-to-left marks           |
//! | U+202A..U+202E      | bidi-control  | embeddings, pop, overrides                      |
//! | U+2060..U+2064      | zero-width    | word joiner, invisible math operators           |
//! | U+2066..U+2069      | bidi-control  | isolates and pop isolate                        |
//! | U+FEFF              | zero-width    | zero-width no-break space (byte order mark)     |
//! | U+E0000..U+E007F    | tag-character | tag block: invisible copies of ASCII            |
//! | U+0000..U+001F, U+007F..U+009F, except tab and line feed | control-character | C0 and C1 controls and DEL: a terminal acts on them (ESC sequences, backspace, carriage return) |
//!
//! U+FEFF counts wherever it appears: a byte order mark at the start of a file
//! is removed by the reader before the text gets here. U+200D is also the
//! joiner inside emoji sequences such as families; those sequences are
//! revealed or broken apart too, which is the price of catching the character
//! when it is used to hide text.
//!
//! Variation selectors (U+FE00..U+FE0F, U+E0100..U+E01EF) are deliberately
//! absent: emoji and CJK text use them all the time, and on their own they only
//! pick a glyph form.
//!
//! HTML comments are found the way a renderer finds them: `<!--` opens one and
//! the first `-->` after it closes it, so `<!-->` and `<!--->` are complete
//! (empty) comments, comments do not nest, and a `<!--` with no `-->` runs to
//! the end of the text. Detection happens on the text as given, in one pass.

use crate::policy::{HiddenText, Template};

/// A family of hidden text. Declaration order is the order of
/// [`HiddenReport::kinds`]; the words come from the variants (strum).
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr, strum::VariantArray)]
#[strum(serialize_all = "kebab-case")]
enum Kind {
    ZeroWidth,
    BidiControl,
    TagCharacter,
    HtmlComment,
    ControlCharacter,
}

impl Kind {
    const ALL: &'static [Kind] = <Kind as strum::VariantArray>::VARIANTS;

    fn as_str(self) -> &'static str {
        self.into()
    }
}

/// Every hidden character, as inclusive ranges of code points with their kind:
/// the table in the module documentation, which must say the same.
/// Sorted, with no overlaps (a unit test checks).
const HIDDEN_RANGES: &[(char, char, Kind)] = &[
    ('\u{00AD}', '\u{00AD}', Kind::ZeroWidth),
    ('\u{034F}', '\u{034F}', Kind::ZeroWidth),
    ('\u{061C}', '\u{061C}', Kind::BidiControl),
    ('\u{180E}', '\u{180E}', Kind::ZeroWidth),
    ('\u{200B}', '\u{200D}', Kind::ZeroWidth),
    ('\u{200E}', '\u{200F}', Kind::BidiControl),
    ('\u{202A}', '\u{202E}', Kind::BidiControl),
    ('\u{2060}', '\u{2064}', Kind::ZeroWidth),
    ('\u{2066}', '\u{2069}', Kind::BidiControl),
    ('\u{FEFF}', '\u{FEFF}', Kind::ZeroWidth),
    ('\u{E0000}', '\u{E007F}', Kind::TagCharacter),
];

/// The kind of `c` if it is a hidden character.
fn classify(c: char) -> Option<Kind> {
    if crate::vocab::unicode::is_control(c) && c != '\t' && c != '\n' {
        return Some(Kind::ControlCharacter);
    }
    // Everything else hidden is outside ASCII; most characters are ASCII.
    if c.is_ascii() {
        return None;
    }
    HIDDEN_RANGES
        .iter()
        .find(|(first, last, _)| (*first..=*last).contains(&c))
        .map(|&(_, _, kind)| kind)
}

/// A file (an instruction file, or a skill's `SKILL.md` for its description)
/// where hidden text was found.
#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct HiddenFinding {
    /// The file.
    #[serde(serialize_with = "crate::vocab::paths::lossy")]
    pub path: std::path::PathBuf,
    /// What was found.
    #[serde(flatten)]
    pub report: HiddenReport,
}

/// What was found in one text.
#[derive(Debug, Clone, Default, serde::Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct HiddenReport {
    /// Number of hidden characters (invisible/bidi/tag) found.
    pub characters: usize,
    /// Number of HTML comments found.
    pub html_comments: usize,
    /// Distinct kinds found, stable kebab-case words in a fixed order:
    /// "zero-width", "bidi-control", "tag-character", "html-comment", "control-character".
    pub kinds: Vec<&'static str>,
    /// See [`positions`](Self::positions). Boxed: most reports have
    /// none, and reports travel inside answers kept small.
    #[serde(skip)]
    #[cfg_attr(feature = "schema", schemars(skip))]
    pub(crate) places: Option<Box<[(u64, u64)]>>,
}

/// The most positions a [`HiddenReport`] keeps.
pub const MAX_POSITIONS: usize = 64;

/// Two reports are equal when they found the same (their
/// [`positions`](HiddenReport::positions) aside: where, not what).
impl PartialEq for HiddenReport {
    fn eq(&self, other: &Self) -> bool {
        self.characters == other.characters
            && self.html_comments == other.html_comments
            && self.kinds == other.kinds
    }
}

impl Eq for HiddenReport {}

impl HiddenReport {
    /// Where each hidden character and each comment's `<!--` is in the
    /// text treated, in order: its line and column (from 1, the column in
    /// characters), the first [`MAX_POSITIONS`] of them. Not part of any
    /// JSON output (the survey shows them); an imported file's findings
    /// added to its importer's bring none, and a skill's or a listed
    /// rule's description (not its file's text) has none.
    pub fn positions(&self) -> &[(u64, u64)] {
        self.places.as_deref().unwrap_or_default()
    }

    /// Forgets the positions (of a text that is not its file's).
    pub(crate) fn clear_positions(&mut self) {
        self.places = None;
    }

    /// Whether nothing hidden was found.
    pub fn is_empty(&self) -> bool {
        self.characters == 0 && self.html_comments == 0
    }

    /// Adds what `other` found (an imported file's findings to its
    /// importing file's), keeping the kinds in their fixed order.
    pub(crate) fn absorb(&mut self, other: HiddenReport) {
        self.characters += other.characters;
        self.html_comments += other.html_comments;
        let kinds: Vec<&'static str> = Kind::ALL
            .iter()
            .map(|k| k.as_str())
            .filter(|k| self.kinds.contains(k) || other.kinds.contains(k))
            .collect();
        self.kinds = kinds;
    }
}

/// `text` treated under `policy`'s hidden-text rule, with what was found
/// (the plain case costs one scan).
pub(crate) fn treat_for(text: String, policy: &crate::policy::Policy) -> (String, HiddenReport) {
    if is_plain(&text) {
        (text, HiddenReport::default())
    } else {
        treat(
            &text,
            policy.trust.hidden_text,
            &policy.templates.hidden_marker,
        )
    }
}

/// Counts gathered during one pass, turned into a [`HiddenReport`] at the end.
#[derive(Default)]
struct Tally {
    characters: usize,
    html_comments: usize,
    seen: [bool; Kind::ALL.len()],
    /// Byte offsets in the text of what was found (the first
    /// [`MAX_POSITIONS`]).
    offsets: Vec<usize>,
}

impl Tally {
    fn note_at(&mut self, kind: Kind, offset: usize) {
        if self.offsets.len() < MAX_POSITIONS {
            self.offsets.push(offset);
        }
        self.note(kind);
    }

    fn note(&mut self, kind: Kind) {
        self.seen[kind as usize] = true;
        if kind == Kind::HtmlComment {
            self.html_comments += 1;
        } else {
            self.characters += 1;
        }
    }

    fn into_report(self, text: &str) -> HiddenReport {
        // Lines and columns, in one pass over the text up to the last offset.
        let mut offsets = self.offsets;
        offsets.sort_unstable();
        let mut positions = Vec::with_capacity(offsets.len());
        let (mut line, mut col) = (1u64, 1u64);
        let mut chars = text.char_indices().peekable();
        for target in offsets {
            while let Some(&(i, c)) = chars.peek() {
                if i >= target {
                    break;
                }
                if c == '\n' {
                    line += 1;
                    col = 1;
                } else {
                    col += 1;
                }
                chars.next();
            }
            positions.push((line, col));
        }
        HiddenReport {
            characters: self.characters,
            html_comments: self.html_comments,
            kinds: Kind::ALL
                .iter()
                .filter(|k| self.seen[**k as usize])
                .map(|k| k.as_str())
                .collect(),
            places: (!positions.is_empty()).then(|| positions.into_boxed_slice()),
        }
    }
}

/// What to write for a stretch of text outside or inside a comment.
#[derive(Clone, Copy)]
enum Emit {
    /// Copy the text, with each hidden character replaced by the marker.
    Reveal,
    /// Copy the text without its hidden characters.
    Strip,
    /// Copy the text as it is.
    Keep,
    /// Write nothing (the stretch is a comment being stripped); only count.
    Nothing,
}

/// Whether `text` certainly holds nothing hidden (printable ASCII, tabs and
/// line feeds, without an HTML comment), so [`treat`] would return it
/// unchanged.
pub fn is_plain(text: &str) -> bool {
    // Each chunk is judged without an early exit, which the compiler turns
    // into vector instructions; a chunk that fails ends the scan.
    let bytes = text.as_bytes();
    bytes.chunks(64).all(|chunk| {
        chunk.iter().fold(true, |plain, &b| {
            plain & ((0x20..0x7f).contains(&b) | (b == b'\t') | (b == b'\n'))
        })
    }) && COMMENT_OPEN.find(bytes).is_none()
}

/// The searcher for an HTML comment's opening, built once.
static COMMENT_OPEN: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
    std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"<!--"));

/// Applies `mode` to `text`, and reports what was found.
///
/// - [`HiddenText::Reveal`]: each hidden character becomes `marker` filled with
///   `{codepoint}`, the code point in uppercase hexadecimal with at least four
///   digits (`200B`, `E0041`); one marker per character, tag characters
///   included. HTML comments stay verbatim, since the model reads the raw
///   markdown and so already sees them; hidden characters inside them are
///   still revealed.
/// - [`HiddenText::Strip`]: hidden characters are removed and HTML comments
///   are removed whole, delimiters included.
/// - [`HiddenText::Keep`]: the text is returned unchanged.
///
/// The report is the same in every mode: it counts every hidden character,
/// inside comments too, and every comment.
///
/// Stripping is a single pass over the text as given, so it leaves what a
/// renderer would show. Text that was visible may join up into a new `<!--`
/// once something between its pieces is removed (`<!\u{200B}--`); that text
/// was on screen in the original and is kept.
///
/// The marker comes from the policy and is written as is.
///
/// ```
/// use lisa_context::internals::treat_hidden as treat;
/// use lisa_context::policy::{HiddenText, Template};
///
/// let marker = Template::parse("[hidden U+{codepoint}]").unwrap();
/// let (out, report) = treat("a\u{200B}b<!-- c -->", HiddenText::Reveal, &marker);
/// assert_eq!(out, "a[hidden U+200B]b<!-- c -->");
/// assert_eq!(report.kinds, ["zero-width", "html-comment"]);
/// let (out, _) = treat("a\u{200B}b<!-- c -->", HiddenText::Strip, &marker);
/// assert_eq!(out, "ab");
/// ```
pub fn treat(text: &str, mode: HiddenText, marker: &Template) -> (String, HiddenReport) {
    // The usual case: plain ASCII without comments has nothing to find.
    if is_plain(text) {
        return (text.to_owned(), HiddenReport::default());
    }

    let outside = match mode {
        HiddenText::Reveal => Emit::Reveal,
        HiddenText::Strip => Emit::Strip,
        HiddenText::Keep => Emit::Keep,
    };
    let inside = match mode {
        HiddenText::Strip => Emit::Nothing,
        _ => outside,
    };

    let mut out = String::with_capacity(text.len());
    let mut tally = Tally::default();
    let mut rest = text;
    while let Some(open) = rest.find("<!--") {
        let base = text.len() - rest.len();
        let (before, from_open) = rest.split_at(open);
        characters(before, base, outside, marker, &mut out, &mut tally);
        // Search for the close from just after `<!`, so `<!-->` and `<!--->`
        // end where they begin. `-->` is ASCII, so `end` is a char boundary.
        let end = from_open[2..]
            .find("-->")
            .map_or(from_open.len(), |at| 2 + at + 3);
        let (comment, after) = from_open.split_at(end);
        tally.note_at(Kind::HtmlComment, base + open);
        characters(comment, base + open, inside, marker, &mut out, &mut tally);
        rest = after;
    }
    let base = text.len() - rest.len();
    characters(rest, base, outside, marker, &mut out, &mut tally);
    (out, tally.into_report(text))
}

/// Counts the hidden characters of `segment` (at byte `base` of the text)
/// and writes it to `out` as `emit` says. Unchanged stretches are copied
/// whole, never split inside a character.
fn characters(
    segment: &str,
    base: usize,
    emit: Emit,
    marker: &Template,
    out: &mut String,
    tally: &mut Tally,
) {
    let mut copied = 0;
    for (at, c) in segment.char_indices() {
        let Some(kind) = classify(c) else { continue };
        tally.note_at(kind, base + at);
        match emit {
            Emit::Reveal | Emit::Strip => {
                out.push_str(&segment[copied..at]);
                if let Emit::Reveal = emit {
                    let codepoint = format!("{:04X}", u32::from(c));
                    out.push_str(&marker.fill(&[("codepoint", &codepoint)]));
                }
                copied = at + c.len_utf8();
            }
            Emit::Keep | Emit::Nothing => {}
        }
    }
    match emit {
        Emit::Reveal | Emit::Strip | Emit::Keep => out.push_str(&segment[copied..]),
        Emit::Nothing => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_sorted_and_disjoint() {
        for pair in HIDDEN_RANGES.windows(2) {
            assert!(pair[0].0 <= pair[0].1);
            assert!(
                pair[0].1 < pair[1].0,
                "{:?} overlaps {:?}",
                pair[0],
                pair[1]
            );
        }
    }

    #[test]
    fn variation_selectors_are_not_hidden() {
        for c in ['\u{FE00}', '\u{FE0F}', '\u{E0100}', '\u{E01EF}'] {
            assert_eq!(classify(c), None);
        }
    }

    #[test]
    fn range_ends_are_hidden() {
        for &(first, last, kind) in HIDDEN_RANGES {
            assert_eq!(classify(first), Some(kind));
            assert_eq!(classify(last), Some(kind));
        }
    }
}
