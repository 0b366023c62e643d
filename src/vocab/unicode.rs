//! What a reader cannot see: Unicode properties, from Unicode's own data
//! (icu_properties), never a hand-kept list.
//!
//! Two questions are answered here. *Does this character render as nothing,
//! or as blank?* decides whether a line only looks like it starts with a
//! block boundary (the forged-line guard). *Would a terminal act on it, or
//! show nothing for it?* decides what human-readable output escapes.

use std::borrow::Cow;
use std::fmt::Write as _;

use icu_properties::props::{DefaultIgnorableCodePoint, GeneralCategory, WhiteSpace};
use icu_properties::{CodePointMapData, CodePointSetData};

/// U+2800 BRAILLE PATTERN BLANK: a visible character by its properties
/// (general category So), drawn as an empty cell.
const BRAILLE_BLANK: char = '\u{2800}';

fn category(c: char) -> GeneralCategory {
    CodePointMapData::<GeneralCategory>::new().get(c)
}

/// Whether `c` renders as nothing or as blank space: default-ignorable code
/// points (zero-width characters, bidi controls, variation selectors, the
/// Hangul fillers, tag characters...), white space, controls, format
/// characters, space separators, and the braille blank.
pub(crate) fn renders_blank(c: char) -> bool {
    if c.is_ascii_graphic() {
        return false;
    }
    c == BRAILLE_BLANK
        || CodePointSetData::new::<DefaultIgnorableCodePoint>().contains(c)
        || CodePointSetData::new::<WhiteSpace>().contains(c)
        || matches!(
            category(c),
            GeneralCategory::Control | GeneralCategory::Format | GeneralCategory::SpaceSeparator
        )
}

/// Whether `name` (a skill's name) holds a character a reader does not see
/// as written: one that renders as nothing or as blank (see
/// [`renders_blank`]: controls and DEL, every line break, format characters
/// such as bidi controls, zero-width and tag characters, default-ignorable
/// code points, white space other than the plain space, the braille blank).
/// Such a name is refused under every policy: it could break the skills
/// list's line, hide words from the person reading the prompt, or pass for
/// another name.
pub(crate) fn name_hides_text(name: &str) -> bool {
    name.chars().any(|c| c != ' ' && renders_blank(c))
}

/// Whether `c` is a C0 or C1 control character or DEL.
pub(crate) fn is_control(c: char) -> bool {
    c.is_control()
}

/// Whether a terminal would act on `c` or show nothing for it: controls,
/// format characters, line and paragraph separators, default-ignorable code
/// points. A plain space is fine.
fn unsafe_for_terminal(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_control();
    }
    CodePointSetData::new::<DefaultIgnorableCodePoint>().contains(c)
        || matches!(
            category(c),
            GeneralCategory::Control
                | GeneralCategory::Format
                | GeneralCategory::LineSeparator
                | GeneralCategory::ParagraphSeparator
                | GeneralCategory::Unassigned
                | GeneralCategory::PrivateUse
        )
}

/// `text` with every character a terminal would act on, or not show,
/// written as `\u{…}`, so repository-controlled names (paths, skill names)
/// cannot erase lines, move the cursor, set the window title or reorder
/// what a person reads. A backslash is written `\\` so the escapes cannot be
/// imitated.
///
/// ```
/// use lisa_context::snapshot::terminal_safe;
///
/// assert_eq!(terminal_safe("skills/deploy"), "skills/deploy");
/// assert_eq!(terminal_safe("a\u{1b}[2K\rb"), "a\\u{1b}[2K\\u{d}b");
/// assert_eq!(terminal_safe("abc\u{202e}fdp.exe"), "abc\\u{202e}fdp.exe");
/// ```
pub fn terminal_safe(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| c == '\\' || unsafe_for_terminal(c)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if c == '\\' {
            out.push_str("\\\\");
        } else if unsafe_for_terminal(c) {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// What a reader sees of `text`: every character that renders as nothing or
/// as blank dropped (by Unicode's data: default-ignorable code points, white
/// space, controls, format characters, the Hangul fillers, the braille
/// blank...), and a backspace or DEL taking back the character before it,
/// as a terminal does.
pub fn as_seen(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c == '\u{8}' || c == '\u{7f}' {
            out.pop();
        } else if !renders_blank(c) {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_rendering_characters_come_from_unicode_data() {
        for c in [
            ' ',
            '\t',
            '\u{1b}',
            '\u{7f}',
            '\u{85}',
            '\u{a0}',
            '\u{ad}',
            '\u{115f}',
            '\u{17b4}',
            '\u{200b}',
            '\u{202e}',
            '\u{2060}',
            '\u{3000}',
            '\u{3164}',
            '\u{fe0f}',
            '\u{feff}',
            '\u{ffa0}',
            '\u{1d173}',
            '\u{e0041}',
            '\u{e0100}',
            '\u{2800}',
        ] {
            assert!(renders_blank(c), "U+{:04X} renders blank", u32::from(c));
        }
        for c in ['<', 'a', '漢', '-', '\u{2014}', '\u{2801}'] {
            assert!(!renders_blank(c), "U+{:04X} is visible", u32::from(c));
        }
    }

    #[test]
    fn terminal_escapes() {
        assert_eq!(terminal_safe("plain/path.md"), "plain/path.md");
        assert_eq!(terminal_safe("a\\b"), "a\\\\b");
        assert_eq!(
            terminal_safe("x\u{1b}]0;pwned\u{7}y"),
            "x\\u{1b}]0;pwned\\u{7}y"
        );
        assert_eq!(terminal_safe("漢字"), "漢字");
        assert_eq!(terminal_safe("a\u{2028}b"), "a\\u{2028}b");
    }
}
