//! Paths as they appear in JSON and in the prompt.
//!
//! File names come from the repository, so they may hold bytes that are not
//! UTF-8, or control characters such as a newline. JSON gets a lossy UTF-8
//! rendering (an unencodable name must not make the whole snapshot fail), and
//! the prompt gets a percent-encoded rendering, so a directory name cannot
//! break a header line in two or smuggle words into it.

use std::path::{Path, PathBuf};

use serde::Serializer;

/// Serializes a path as a (lossy) UTF-8 string.
pub(crate) fn lossy<S: Serializer>(path: &Path, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&path.to_string_lossy())
}

/// Serializes an optional path as a (lossy) UTF-8 string or null.
pub(crate) fn lossy_opt<S: Serializer>(path: &Option<PathBuf>, s: S) -> Result<S::Ok, S::Error> {
    match path {
        Some(p) => s.serialize_str(&p.to_string_lossy()),
        None => s.serialize_none(),
    }
}

/// Serializes a list of paths as (lossy) UTF-8 strings.
pub(crate) fn lossy_list<S: Serializer>(paths: &[PathBuf], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(paths.iter().map(|p| p.to_string_lossy()))
}

/// A path for a human-readable message: lossy UTF-8, with everything a
/// terminal would act on or not show escaped (see [`crate::terminal_safe`]).
pub(crate) fn shown(path: &Path) -> String {
    crate::vocab::unicode::terminal_safe(&path.to_string_lossy()).into_owned()
}

/// The path for a prompt line. Characters outside a conservative set —
/// letters and digits of any script, and `. _ / ~ + @ , = -` — are
/// percent-encoded (`%20` for a space), so a directory name can neither break
/// a header line, nor hide characters, nor carry a sentence such as "written
/// by the user" into a line that states where a block comes from.
///
/// ```
/// use std::path::Path;
/// use lisa_context::internals::for_prompt;
/// assert_eq!(for_prompt(Path::new("/src/app-1/AGENTS.md")), "/src/app-1/AGENTS.md");
/// assert_eq!(for_prompt(Path::new("/a/x\ny")), "/a/x%0Ay");
/// assert_eq!(for_prompt(Path::new("/a/by the user>>>")), "/a/by%20the%20user%3E%3E%3E");
/// assert_eq!(for_prompt(Path::new("/文档/AGENTS.md")), "/文档/AGENTS.md");
/// ```
///
/// Hand-written rather than the `percent-encoding` crate: that crate's sets
/// are ASCII sets and it encodes every non-ASCII byte, while here letters and
/// digits of every script stay readable and only other characters (including
/// invisible and control ones outside ASCII) are encoded.
pub fn for_prompt(path: &Path) -> String {
    // The usual path is plain ASCII: judged a byte at a time, it is copied
    // as it is.
    let bytes = path.as_os_str().as_encoded_bytes();
    if bytes.iter().all(|&b| PLAIN_ASCII[usize::from(b)])
        && let Ok(s) = std::str::from_utf8(bytes)
    {
        return s.to_owned();
    }
    let s = path.to_string_lossy();
    if s.chars().all(is_plain) {
        return s.into_owned();
    }
    let mut out = String::with_capacity(s.len() + 16);
    let mut buf = [0u8; 4];
    for c in s.chars() {
        if is_plain(c) {
            out.push(c);
        } else {
            for b in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("%{b:02X}"));
            }
        }
    }
    out
}

fn is_plain(c: char) -> bool {
    match u8::try_from(c) {
        Ok(b) if b.is_ascii() => PLAIN_ASCII[usize::from(b)],
        _ => c.is_alphanumeric(),
    }
}

/// [`is_plain`] for each byte value: true for the plain ASCII characters,
/// false for every other byte.
const PLAIN_ASCII: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0u8;
    while b < 128 {
        table[b as usize] = b.is_ascii_alphanumeric()
            || matches!(
                b,
                b'.' | b'_' | b'/' | b'~' | b'+' | b'@' | b',' | b'=' | b'-'
            );
        b += 1;
    }
    table
};

/// `base.join(rest)`, allocated once at its final size: `Path::join` copies
/// `base` at its exact length and then grows the copy for `rest`, two
/// allocations where one does. Same result in every case (an absolute
/// `rest` replaces `base`).
pub(crate) fn join(base: &Path, rest: impl AsRef<Path>) -> PathBuf {
    let rest = rest.as_ref();
    let mut out = PathBuf::with_capacity(base.as_os_str().len() + 1 + rest.as_os_str().len());
    out.push(base);
    out.push(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `for_prompt` as first written: one character at a time.
    fn by_chars(path: &Path) -> String {
        let s = path.to_string_lossy();
        let mut out = String::new();
        for c in s.chars() {
            if is_plain(c) {
                out.push(c);
            } else {
                let mut buf = [0u8; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    out.push_str(&format!("%{b:02X}"));
                }
            }
        }
        out
    }

    proptest! {
        #[test]
        fn join_is_path_join(
            base in "(/)?([a-z.]{0,3}/?){0,4}",
            rest in "(/)?([a-z.]{0,3}/?){0,4}",
        ) {
            let (base, rest) = (Path::new(&base), Path::new(&rest));
            prop_assert_eq!(join(base, rest), base.join(rest));
        }

        #[test]
        fn the_ascii_fast_path_changes_nothing(
            bytes in proptest::collection::vec(
                prop_oneof![
                    4 => proptest::sample::select(b"az09./_-~ \n%<>\x7f\x1b".to_vec()),
                    1 => any::<u8>(),
                ],
                0..40,
            )
        ) {
            use std::os::unix::ffi::OsStrExt;
            let path = Path::new(std::ffi::OsStr::from_bytes(&bytes));
            prop_assert_eq!(for_prompt(path), by_chars(path));
        }
    }
}
