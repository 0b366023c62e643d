//! Finding the home root's path: pure string work, no disk access.

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

/// Removes `.` components and resolves `..` lexically. The path names the
/// user's chosen directory; it is never canonicalized.
pub(crate) fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Expands one `roots.home` candidate: `$NAME` and `${NAME}` from `env`, a
/// leading `~` from `HOME`. `None` when a variable is unset or empty, or when
/// the result is not absolute.
pub(crate) fn expand_home(
    candidate: &str,
    env: &dyn Fn(&str) -> Option<OsString>,
) -> Option<PathBuf> {
    let var = |name: &str| env(name).filter(|v| !v.is_empty());
    let mut out = OsString::new();
    let mut rest = candidate;
    if rest == "~" || rest.starts_with("~/") {
        out.push(var("HOME")?);
        rest = &rest[1..];
    }
    while let Some(pos) = rest.find('$') {
        out.push(&rest[..pos]);
        let after = &rest[pos + 1..];
        let (name, tail) = if let Some(inner) = after.strip_prefix('{') {
            let end = inner.find('}')?;
            (&inner[..end], &inner[end + 1..])
        } else {
            let end = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            (&after[..end], &after[end..])
        };
        if name.is_empty() {
            return None;
        }
        out.push(var(name)?);
        rest = tail;
    }
    out.push(rest);
    let p = PathBuf::from(out);
    p.is_absolute().then_some(p)
}

/// The first candidate that expands, normalized.
pub(crate) fn first_candidate<'a>(
    candidates: impl IntoIterator<Item = &'a str>,
    env: &dyn Fn(&str) -> Option<OsString>,
) -> Option<PathBuf> {
    candidates
        .into_iter()
        .find_map(|c| expand_home(c, env))
        .map(|p| normalize(&p))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<OsString> {
        match name {
            "HOME" => Some("/home/u".into()),
            "LISA_HOME" => Some("/opt/lisa".into()),
            "EMPTY" => Some("".into()),
            _ => None,
        }
    }

    #[test]
    fn expands_candidates() {
        let cases: &[(&str, Option<&str>)] = &[
            ("$LISA_HOME", Some("/opt/lisa")),
            ("${LISA_HOME}/x", Some("/opt/lisa/x")),
            ("~/.lisa", Some("/home/u/.lisa")),
            ("$UNSET", None),
            ("$EMPTY", None),
            ("relative", None),
            ("/abs", Some("/abs")),
        ];
        for (input, want) in cases {
            assert_eq!(
                expand_home(input, &env),
                want.map(PathBuf::from),
                "candidate {input}"
            );
        }
    }

    #[test]
    fn the_first_candidate_that_expands_wins() {
        let got = first_candidate(["$UNSET", "$EMPTY", "~/.lisa/./x/.."], &env);
        assert_eq!(got, Some(PathBuf::from("/home/u/.lisa")));
        assert_eq!(first_candidate(["$UNSET"], &env), None);
    }

    #[test]
    fn normalizes_lexically() {
        assert_eq!(normalize(Path::new("/a/./b/../c")), PathBuf::from("/a/c"));
    }
}
