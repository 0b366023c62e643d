//! Stage 2 — the sandbox: the home root and the repository root, each opened
//! once as a cap-std [`Dir`]. Every later file access goes through one of them
//! with a root-relative path, so nothing can name a file outside a root.

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use cap_std::ambient_authority;
use cap_std::fs::Dir;

use crate::error::SnapshotError;
use crate::policy::{MarkerKind, Policy};
use crate::read::Stamp;

/// One opened root.
#[derive(Debug)]
pub struct Root {
    /// The root's absolute path, as found (never canonicalized).
    pub path: PathBuf,
    /// The capability everything under the root is read through (shared
    /// between the cwds of one repository by the [`crate::Loader`]).
    pub dir: Arc<Dir>,
}

/// The roots for one working directory.
#[derive(Debug)]
pub struct Roots {
    /// The home root, when it exists.
    pub home: Option<Root>,
    /// The repository root (the cwd itself when no marker was found).
    pub repo: Root,
    /// The working directory, absolute.
    pub cwd: PathBuf,
    /// The working directory relative to the repository root.
    pub cwd_rel: PathBuf,
    /// Every marker path probed while looking for the repository root, with
    /// what was there (final links not followed): part of the fingerprint,
    /// since a new marker moves the root.
    pub marker_probes: Vec<(PathBuf, Stamp)>,
    /// The cwd and the home root's path (present or not), links followed: a
    /// removed cwd is an error, a home created later adds files.
    pub dir_probes: Vec<(PathBuf, Stamp)>,
}

/// Removes `.` components and resolves `..` lexically. The path names the
/// user's chosen working directory; it is never canonicalized.
pub fn normalize(path: &Path) -> PathBuf {
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
/// leading `~` from `HOME`. `None` when a variable is unset or empty.
pub fn expand_home(candidate: &str, env: &dyn Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
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

/// Resolves the home root's path: `explicit` when given, otherwise the first
/// policy candidate that expands.
pub fn home_path(
    policy: &Policy,
    explicit: Option<&Path>,
    env: &dyn Fn(&str) -> Option<OsString>,
) -> Option<PathBuf> {
    if let Some(p) = explicit {
        return Some(normalize(p));
    }
    policy
        .roots
        .home
        .iter()
        .find_map(|c| expand_home(c.get_ref(), env))
        .map(|p| normalize(&p))
}

fn marker_matches(stamp: &Stamp, kind: MarkerKind, path: &Path) -> bool {
    let Stamp::Present { mode, .. } = *stamp else {
        return false;
    };
    let fmt = mode & 0o170000;
    let (is_dir, is_file) = if fmt == 0o120000 {
        // A symlinked marker counts for what it points at; this is the one
        // place a path outside every root is examined, and only its type.
        match std::fs::metadata(path) {
            Ok(m) => (m.is_dir(), m.is_file()),
            Err(_) => return false,
        }
    } else {
        (fmt == 0o040000, fmt == 0o100000)
    };
    match kind {
        MarkerKind::Any => is_dir || is_file,
        MarkerKind::File => is_file,
        MarkerKind::Dir => is_dir,
    }
}

/// Opens the roots for `cwd`.
///
/// `root` names the repository root explicitly (it must contain `cwd`);
/// otherwise the nearest ancestor of `cwd` holding a policy marker is the root,
/// and a cwd with none above it is its own root.
pub fn open(
    policy: &Policy,
    home: Option<&Path>,
    cwd: &Path,
    root: Option<&Path>,
) -> Result<Roots, SnapshotError> {
    open_with(policy, home, cwd, root, &mut |p| {
        Dir::open_ambient_dir(p, ambient_authority()).map(Arc::new)
    })
}

/// Like [`open`], with the function that opens a root directory supplied, so
/// a cache can share one handle between many cwds.
pub fn open_with(
    policy: &Policy,
    home: Option<&Path>,
    cwd: &Path,
    root: Option<&Path>,
    open_dir: &mut dyn FnMut(&Path) -> std::io::Result<Arc<Dir>>,
) -> Result<Roots, SnapshotError> {
    if !cwd.is_absolute() {
        return Err(SnapshotError::RelativeCwd(cwd.to_path_buf()));
    }
    let cwd = normalize(cwd);
    match std::fs::metadata(&cwd) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return Err(SnapshotError::CwdNotADirectory(cwd)),
        Err(e) => {
            return Err(SnapshotError::Cwd {
                path: cwd,
                source: e,
            });
        }
    }

    let mut dir_probes = vec![(cwd.clone(), Stamp::probe_ambient_dir(&cwd))];
    if let Some(h) = home {
        dir_probes.push((h.to_path_buf(), Stamp::probe_ambient_dir(h)));
    }
    let mut marker_probes = Vec::new();
    let repo_path = match root {
        Some(r) => {
            let r = normalize(r);
            if !cwd.starts_with(&r) {
                return Err(SnapshotError::RootDoesNotContainCwd { root: r, cwd });
            }
            r
        }
        None => {
            let mut found = None;
            'up: for dir in cwd.ancestors() {
                for marker in &policy.roots.repo_markers {
                    let p = dir.join(marker.get_ref());
                    let stamp = Stamp::probe_ambient(&p);
                    let hit = marker_matches(&stamp, policy.roots.repo_marker_kind, &p);
                    marker_probes.push((p, stamp));
                    if hit {
                        found = Some(dir.to_path_buf());
                        break 'up;
                    }
                }
            }
            found.unwrap_or_else(|| cwd.clone())
        }
    };
    if repo_path != cwd {
        dir_probes.push((repo_path.clone(), Stamp::probe_ambient_dir(&repo_path)));
    }
    let repo_dir = open_dir(&repo_path).map_err(|e| SnapshotError::OpenRoot {
        path: repo_path.clone(),
        source: e,
    })?;
    let cwd_rel = cwd
        .strip_prefix(&repo_path)
        .map(Path::to_path_buf)
        .unwrap_or_default();

    let home = match home {
        Some(h) => match open_dir(h) {
            Ok(dir) => Some(Root {
                path: h.to_path_buf(),
                dir,
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => {
                return Err(SnapshotError::OpenRoot {
                    path: h.to_path_buf(),
                    source: e,
                });
            }
        },
        None => None,
    };

    Ok(Roots {
        home,
        repo: Root {
            path: repo_path,
            dir: repo_dir,
        },
        cwd,
        cwd_rel,
        marker_probes,
        dir_probes,
    })
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
    fn normalizes_lexically() {
        assert_eq!(normalize(Path::new("/a/./b/../c")), PathBuf::from("/a/c"));
    }
}
