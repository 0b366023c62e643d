//! Paths as they appear in JSON and in the prompt.
//!
//! File names come from the repository, so they may hold bytes that are not
//! UTF-8, or control characters such as a newline. JSON gets a lossy UTF-8
//! rendering (an unencodable name must not make the whole snapshot fail), and
//! the prompt gets a rendering with every control character escaped, so a
//! directory name cannot break a header line in two.

use std::path::{Path, PathBuf};

use serde::Serializer;

/// Serializes a path as a (lossy) UTF-8 string.
pub fn lossy<S: Serializer>(path: &Path, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&path.to_string_lossy())
}

/// Serializes an optional path as a (lossy) UTF-8 string or null.
pub fn lossy_opt<S: Serializer>(path: &Option<PathBuf>, s: S) -> Result<S::Ok, S::Error> {
    match path {
        Some(p) => s.serialize_str(&p.to_string_lossy()),
        None => s.serialize_none(),
    }
}

/// The path for a prompt line: lossy UTF-8, with control characters and
/// Unicode line or paragraph separators written as `\u{..}` escapes.
///
/// ```
/// use std::path::Path;
/// assert_eq!(lisa_context::paths::for_prompt(Path::new("/a/x\ny")), "/a/x\\u{a}y");
/// ```
pub fn for_prompt(path: &Path) -> String {
    let s = path.to_string_lossy();
    if !s.chars().any(needs_escape) {
        return s.into_owned();
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if needs_escape(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

fn needs_escape(c: char) -> bool {
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}')
}
