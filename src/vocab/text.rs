//! From bytes to the text that may enter the prompt.

/// Bytes to text: a leading BOM dropped, every line break normalised to LF.
/// `None` for bytes that are not text (invalid UTF-8 before the end, or a NUL
/// byte). When the read stopped early (`read_cut`), a character cut in half
/// at the end is dropped.
pub(crate) fn decode(mut bytes: Vec<u8>, read_cut: bool) -> Option<String> {
    if bytes.starts_with(BOM) {
        bytes.drain(..BOM.len());
    }
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) if read_cut && e.utf8_error().error_len().is_none() => {
            let valid = e.utf8_error().valid_up_to();
            let mut bytes = e.into_bytes();
            bytes.truncate(valid);
            String::from_utf8(bytes).ok()?
        }
        Err(_) => return None,
    };
    if memchr::memchr(0, text.as_bytes()).is_some() {
        return None;
    }
    Some(normalize_line_breaks(text))
}

/// Every line break a reader might honour (CRLF, lone CR, vertical tab, form
/// feed, NEL, and the Unicode line and paragraph separators) becomes `\n`, so
/// that the renderer sees every line a model might see, and can escape any that
/// imitates a block boundary.
pub(crate) fn normalize_line_breaks(text: String) -> String {
    const BREAKS: [char; 6] = ['\r', '\u{0B}', '\u{0C}', '\u{85}', '\u{2028}', '\u{2029}'];
    // Fast byte scan: every break above starts with one of these bytes
    // (U+0085 is C2 85, U+2028/U+2029 are E2 80 A8/A9).
    let bytes = text.as_bytes();
    let maybe = memchr::memchr3(b'\r', 0x0B, 0x0C, bytes).is_some()
        || memchr::memchr2(0xC2, 0xE2, bytes).is_some();
    if !maybe || !text.contains(BREAKS) {
        return text;
    }
    text.replace("\r\n", "\n").replace(BREAKS, "\n")
}

/// Where a file's own bytes are wider than the text [`decode`] makes of
/// them: the byte order mark it drops, and each line break that became one
/// `\n` from more bytes (CRLF, NEL, U+2028, U+2029). What a budget that
/// counts the file's bytes (Codex's) needs to cut the text where the file's
/// bytes run out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct RawWidths {
    /// The bytes of a leading byte order mark (3, or 0).
    pub(crate) bom: usize,
    /// Each such line break: its offset in the decoded text, and how many
    /// bytes more than one it took in the file; in offset order.
    pub(crate) wider: Vec<(usize, usize)>,
}

impl RawWidths {
    /// The widths of `bytes`, as [`decode`] would read them.
    pub(crate) fn of(bytes: &[u8]) -> Self {
        let (bom, body) = match bytes.strip_prefix(BOM) {
            Some(rest) => (BOM.len(), rest),
            None => (0, bytes),
        };
        let mut wider = Vec::new();
        let (mut i, mut at) = (0, 0);
        while i < body.len() {
            let (width, extra) = match body[i..] {
                [b'\r', b'\n', ..] => (2, 1),
                [0xC2, 0x85, ..] => (2, 1),
                [0xE2, 0x80, 0xA8 | 0xA9, ..] => (3, 2),
                _ => (1, 0),
            };
            if extra > 0 {
                wider.push((at, extra));
            }
            i += width;
            // A multi-byte character other than those is as long decoded.
            at += if extra > 0 { 1 } else { width };
        }
        RawWidths { bom, wider }
    }

    /// The longest prefix of the decoded text (at most `len` bytes of it)
    /// whose bytes in the file, byte order mark included, are at most
    /// `budget`. Not floored to a character boundary.
    pub(crate) fn fits(&self, budget: u64, len: usize) -> usize {
        let budget = usize::try_from(budget)
            .unwrap_or(usize::MAX)
            .saturating_sub(self.bom);
        let mut extra = 0usize;
        for &(at, more) in &self.wider {
            let longest = budget.saturating_sub(extra).min(len);
            if at >= longest {
                return longest;
            }
            // The break at `at` is inside the prefix: all of its bytes
            // must fit, or the prefix stops before it.
            if at + 1 + extra + more > budget {
                return at;
            }
            extra += more;
        }
        budget.saturating_sub(extra).min(len)
    }
}

/// The UTF-8 byte order mark.
pub(crate) const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Whether `c` is white space to ECMAScript's `String.prototype.trim`: its
/// WhiteSpace set (tab, vertical tab, form feed, U+FEFF and every space
/// separator, general category Zs, by Unicode's data) and its
/// LineTerminator set (LF, CR, U+2028, U+2029). U+0085 is neither.
pub(crate) fn is_javascript_white_space(c: char) -> bool {
    use icu_properties::CodePointMapData;
    use icu_properties::props::GeneralCategory;
    matches!(
        c,
        '\t' | '\u{0B}' | '\u{0C}' | '\u{FEFF}' | '\n' | '\r' | '\u{2028}' | '\u{2029}'
    ) || CodePointMapData::<GeneralCategory>::new().get(c) == GeneralCategory::SpaceSeparator
}

/// Whether the bytes of a file hold nothing but white space, as
/// `white_space` says what white space is; a leading byte order mark is
/// skipped first when `drop_bom`. Bytes that are not UTF-8 are judged up
/// to the first one that is not (then they are not text, and not blank; a
/// character cut short at the very end does not count).
pub(crate) fn is_blank(bytes: &[u8], drop_bom: bool, white_space: fn(char) -> bool) -> bool {
    let bytes = match bytes.strip_prefix(BOM) {
        Some(rest) if drop_bom => rest,
        _ => bytes,
    };
    let (text, whole) = match std::str::from_utf8(bytes) {
        Ok(text) => (text, true),
        Err(e) => (
            // Valid up to there by the error's own word.
            std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or_default(),
            // A character cut short at the end (a read stopped inside it)
            // is not a wrong byte.
            e.error_len().is_none(),
        ),
    };
    whole && text.chars().all(white_space)
}

/// `s` with each tab and line break (`\r\n` is one) made one space and the
/// whitespace at its ends trimmed, runs of spaces kept; borrowed when there
/// is nothing to change.
pub(crate) fn breaks_to_spaces(s: &str) -> std::borrow::Cow<'_, str> {
    let trimmed = s.trim_matches(is_javascript_white_space);
    if !trimmed.contains(['\t', '\n', '\r']) {
        return std::borrow::Cow::Borrowed(trimmed);
    }
    let mut out = String::with_capacity(trimmed.len());
    let mut chars = trimmed.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
                out.push(' ');
            }
            '\t' | '\n' => out.push(' '),
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// `s` with every run of whitespace (line breaks included) made one space
/// and none at either end; borrowed when `s` is already so (a description
/// written on one line, the common case).
pub(crate) fn collapse_whitespace(s: &str) -> std::borrow::Cow<'_, str> {
    // Already one line of single spaces: no space first, none after
    // another, none last, no other whitespace.
    let single = if s.is_ascii() {
        // One pass, no searcher to set up: every ASCII whitespace byte is
        // at or below the space, so a printable byte is judged by one
        // comparison.
        let mut after_space = false;
        s.bytes().all(|c| {
            let fine = c > b' '
                || if c == b' ' {
                    !after_space
                } else {
                    !(c.is_ascii_whitespace() || c == 0x0b)
                };
            after_space = c == b' ';
            fine
        })
    } else {
        let mut after_space = false;
        s.chars().all(|c| {
            let fine = if c == ' ' {
                !after_space
            } else {
                !c.is_whitespace()
            };
            after_space = c == ' ';
            fine
        })
    };
    if s.is_empty() || (single && !s.starts_with(' ') && !s.ends_with(' ')) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    for word in s.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    std::borrow::Cow::Owned(out)
}

/// The largest character boundary of `s` at or below `max`.
///
/// `str::floor_char_boundary` does this but is not stable on the declared
/// minimum Rust version; this copy goes when it is.
pub(crate) fn floor_char_boundary(s: &str, max: usize) -> usize {
    if max >= s.len() {
        return s.len();
    }
    let mut i = max;
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {

    #[test]
    fn breaks_to_spaces_keeps_runs_of_spaces_and_trims_the_ends() {
        assert_eq!(super::breaks_to_spaces("a\tb  c  "), "a b  c");
        assert_eq!(
            super::breaks_to_spaces("one\ntwo\r\nthree\rfour\n\n"),
            "one two three four"
        );
        assert!(matches!(
            super::breaks_to_spaces("plain  text"),
            std::borrow::Cow::Borrowed("plain  text")
        ));
    }

    use super::*;

    proptest::proptest! {
        /// Borrowed or not, the answer is the words joined by single spaces.
        #[test]
        fn collapsing_joins_the_words_with_one_space(s in "[ a\\t\\n\\r\\u{1}\\u{b}\\u{c}\\u{1f}\\u{a0}\\u{2028}é]{0,12}") {
            let words: Vec<&str> = s.split_whitespace().collect();
            let collapsed = collapse_whitespace(&s);
            proptest::prop_assert_eq!(&*collapsed, words.join(" "));
            proptest::prop_assert_eq!(
                matches!(collapsed, std::borrow::Cow::Borrowed(_)),
                *collapsed == *s
            );
        }
    }

    #[test]
    fn boundary_never_splits_a_character() {
        let s = "ab漢字";
        assert_eq!(floor_char_boundary(s, 2), 2);
        assert_eq!(floor_char_boundary(s, 3), 2);
        assert_eq!(floor_char_boundary(s, 4), 2);
        assert_eq!(floor_char_boundary(s, 5), 5);
        assert_eq!(floor_char_boundary(s, 100), s.len());
    }

    #[test]
    fn decode_rules() {
        let d = |b: &[u8], cut| decode(b.to_vec(), cut);
        assert_eq!(d(b"\xEF\xBB\xBFhi\r\nyo", false).as_deref(), Some("hi\nyo"));
        assert_eq!(d(b"a\0b", false), None);
        assert_eq!(d(b"a\xff", false), None);
        // A 3-byte character cut after 2 bytes by the read cap.
        assert_eq!(d(b"ab\xe6\xbc", true).as_deref(), Some("ab"));
        assert_eq!(d(b"ab\xe6\xbc", false), None);
        // Every line break a reader might honour becomes `\n`.
        assert_eq!(
            d(b"a\rb\x0bc\xc2\x85d\xe2\x80\xa8e\xe2\x80\xa9f\x0cg", false).as_deref(),
            Some("a\nb\nc\nd\ne\nf\ng")
        );
    }

    #[test]
    fn raw_widths_count_the_bom_and_wide_breaks() {
        let w = RawWidths::of(b"\xEF\xBB\xBF\r\nab\r\ncd\xC2\x85e\xE2\x80\xA8f\rg");
        assert_eq!(w.bom, 3);
        // decoded: "\nab\ncd\ne\nf\ng"
        assert_eq!(w.wider, vec![(0, 1), (3, 1), (6, 1), (8, 2)]);
        let len = "\nab\ncd\ne\nf\ng".len();
        // Nothing fits in the BOM alone.
        assert_eq!(w.fits(3, len), 0);
        // BOM + CRLF: the first break whole.
        assert_eq!(w.fits(5, len), 1);
        // BOM + CRLF + "ab" + CR (half a break): the break is left out.
        assert_eq!(w.fits(8, len), 3);
        assert_eq!(w.fits(9, len), 4);
        // Every byte of the file: the whole text.
        assert_eq!(w.fits(20, len), len);
        assert_eq!(w.fits(19, len), len - 1);
        assert_eq!(w.fits(1000, len), len);
        // No wide break: the budget is the length.
        let plain = RawWidths::of(b"abc\ndef");
        assert_eq!(plain.fits(5, 7), 5);
    }
}

/// `bytes` in base64 (RFC 4648, with padding): how bytes that are not text
/// travel in JSON.
pub(crate) fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod base64_tests {
    #[test]
    fn base64_matches_rfc_4648() {
        for (raw, encoded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(super::base64(raw.as_bytes()), encoded);
        }
    }
}
