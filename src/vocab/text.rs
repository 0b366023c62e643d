//! From bytes to the text that may enter the prompt.

/// Bytes to text: a leading BOM dropped, every line break normalised to LF.
/// `None` for bytes that are not text (invalid UTF-8 before the end, or a NUL
/// byte). When the read stopped early (`read_cut`), a character cut in half
/// at the end is dropped.
pub(crate) fn decode(mut bytes: Vec<u8>, read_cut: bool) -> Option<String> {
    if bytes.starts_with(b"\xEF\xBB\xBF") {
        bytes.drain(..3);
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
    use super::*;

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
}
