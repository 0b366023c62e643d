//! Stage 4 — bounded reads through a root's `Dir` handle.
//!
//! A candidate is opened without following its last component and without
//! blocking; its type is checked on the open handle, never on the path. Only
//! regular files are read, and never more than the caller's limit.

use std::io::{self, Read};
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use cap_fs_ext::{FollowSymlinks, OpenOptionsFollowExt, OpenOptionsSyncExt};
use cap_std::fs::{Dir, Metadata, MetadataExt, OpenOptions};
use serde::Serialize;

use crate::policy::SymlinkRule;

/// Why a candidate was not used. The kebab-case words are part of the JSON
/// contract (`skipped[].reason`, `rejectedSkills[].reason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reason {
    /// A symlink (at the candidate or on the way to it) leads outside its root,
    /// or is absolute.
    SymlinkEscape,
    /// A symlink, refused because the policy follows none.
    SymlinkRefused,
    /// A FIFO, socket, device or directory where a file was expected.
    NotRegularFile,
    /// The file exists but could not be opened or read (permissions, I/O).
    Unreadable,
    /// The file is larger than the policy allows.
    TooLarge,
    /// The text is blank.
    Empty,
    /// Not UTF-8 text (invalid bytes, or NUL bytes).
    NotText,
    /// The budget had no room left.
    BudgetExhausted,
    /// The directory level is excluded by `instructions.exclude-levels`.
    Excluded,
    /// A skill folder whose name fails the policy's name rule.
    InvalidName,
    /// A folder whose name starts with a dot.
    DotFolder,
    /// A skill folder without a `SKILL.md`.
    MissingSkillFile,
    /// Something other than a folder in a skills source.
    NotADirectory,
    /// `SKILL.md` frontmatter that does not parse.
    BadFrontmatter,
    /// Frontmatter without a usable `name`.
    MissingName,
    /// Frontmatter without a usable `description`.
    MissingDescription,
    /// A description longer than the policy allows.
    DescriptionTooLong,
    /// The frontmatter `name` differs from the folder name.
    Impostor,
    /// The source holds more entries than the policy examines.
    ScanLimit,
}

impl Reason {
    /// Every reason, for documentation and tests.
    pub const ALL: [Reason; 19] = [
        Reason::SymlinkEscape,
        Reason::SymlinkRefused,
        Reason::NotRegularFile,
        Reason::Unreadable,
        Reason::TooLarge,
        Reason::Empty,
        Reason::NotText,
        Reason::BudgetExhausted,
        Reason::Excluded,
        Reason::InvalidName,
        Reason::DotFolder,
        Reason::MissingSkillFile,
        Reason::NotADirectory,
        Reason::BadFrontmatter,
        Reason::MissingName,
        Reason::MissingDescription,
        Reason::DescriptionTooLong,
        Reason::Impostor,
        Reason::ScanLimit,
    ];

    /// The kebab-case word used in JSON and in `explain`.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::SymlinkEscape => "symlink-escape",
            Reason::SymlinkRefused => "symlink-refused",
            Reason::NotRegularFile => "not-regular-file",
            Reason::Unreadable => "unreadable",
            Reason::TooLarge => "too-large",
            Reason::Empty => "empty",
            Reason::NotText => "not-text",
            Reason::BudgetExhausted => "budget-exhausted",
            Reason::Excluded => "excluded",
            Reason::InvalidName => "invalid-name",
            Reason::DotFolder => "dot-folder",
            Reason::MissingSkillFile => "missing-skill-file",
            Reason::NotADirectory => "not-a-directory",
            Reason::BadFrontmatter => "bad-frontmatter",
            Reason::MissingName => "missing-name",
            Reason::MissingDescription => "missing-description",
            Reason::DescriptionTooLong => "description-too-long",
            Reason::Impostor => "impostor",
            Reason::ScanLimit => "scan-limit",
        }
    }
}

/// What opening a candidate found.
#[derive(Debug)]
pub enum Opened {
    /// Nothing at that path.
    Absent,
    /// Something there that will not be read.
    Refused(Reason),
    /// A regular file, open for reading.
    File {
        /// The open handle (a plain `std` file once opened: the sandbox
        /// governs opening, and std reads into spare capacity without
        /// zero-filling it first).
        file: std::fs::File,
        /// Its metadata, taken from the handle.
        meta: Metadata,
    },
}

const ELOOP: i32 = 40;
const ENOTDIR: i32 = 20;
const ENXIO: i32 = 6;
const EMLINK: i32 = 31;

impl Opened {
    /// What an error from opening or listing a path means for a candidate.
    pub fn from_error(e: &io::Error) -> Opened {
        classify(e)
    }
}

fn classify(e: &io::Error) -> Opened {
    match (e.kind(), e.raw_os_error()) {
        (io::ErrorKind::NotFound, _) => Opened::Absent,
        (_, Some(ENOTDIR)) => Opened::Absent,
        // cap-std reports a path that would leave the root as PermissionDenied
        // without an OS error number; a real EACCES carries one.
        (io::ErrorKind::PermissionDenied, None) => Opened::Refused(Reason::SymlinkEscape),
        (_, Some(ENXIO)) => Opened::Refused(Reason::NotRegularFile),
        (_, Some(ELOOP)) | (_, Some(EMLINK)) => Opened::Refused(Reason::SymlinkEscape),
        _ => Opened::Refused(Reason::Unreadable),
    }
}

fn options(follow: FollowSymlinks) -> OpenOptions {
    let mut o = OpenOptions::new();
    o.read(true);
    o.follow(follow);
    // A FIFO opened for reading would wait for a writer; non-blocking mode
    // makes the open return at once, and the type check below refuses it.
    o.nonblock(true);
    o
}

/// Opens `rel` under `dir` as a candidate file, applying the symlink rule.
///
/// The last component is opened without following; if it is a link, it is
/// refused (`never`) or opened again following links, which cap-std confines to
/// the root (`within-root`). The type is then checked on the handle.
pub fn open_candidate(dir: &Dir, rel: &Path, rule: SymlinkRule) -> Opened {
    let file = match dir.open_with(rel, &options(FollowSymlinks::No)) {
        Ok(f) => f,
        Err(e) if is_symlink_error(&e) => match rule {
            SymlinkRule::Never => return Opened::Refused(Reason::SymlinkRefused),
            SymlinkRule::WithinRoot => match dir.open_with(rel, &options(FollowSymlinks::Yes)) {
                Ok(f) => f,
                Err(e) => return classify(&e),
            },
        },
        Err(e) => return classify(&e),
    };
    match file.metadata() {
        Ok(meta) if meta.is_file() => Opened::File {
            file: file.into_std(),
            meta,
        },
        Ok(_) => Opened::Refused(Reason::NotRegularFile),
        Err(_) => Opened::Refused(Reason::Unreadable),
    }
}

fn is_symlink_error(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(ELOOP) | Some(EMLINK))
}

/// Reads at most `limit` bytes from `file`; `size_hint` (the size fstat
/// reported) sizes the buffer.
pub fn read_at_most(file: &std::fs::File, limit: u64, size_hint: u64) -> io::Result<Vec<u8>> {
    let initial = limit.min(size_hint.saturating_add(1)).min(64 * 1024);
    let mut buf = Vec::with_capacity(usize::try_from(initial).unwrap_or(0));
    let mut handle = file;
    (&mut handle).take(limit).read_to_end(&mut buf)?;
    Ok(buf)
}

/// What a path looked like when it was last examined: enough to tell,
/// without reading, that nothing about it changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stamp {
    /// Nothing there.
    Absent,
    /// An error other than absence (escape, permission), by kind.
    Error(u8),
    /// Something there.
    Present {
        /// File type and permission bits.
        mode: u32,
        /// Device.
        dev: u64,
        /// Inode.
        ino: u64,
        /// Size in bytes.
        size: u64,
        /// Modification time, nanoseconds since the epoch.
        mtime_ns: i128,
        /// Status-change time, nanoseconds since the epoch.
        ctime_ns: i128,
    },
}

/// How close to the moment of reading a timestamp may be before a stamp is
/// distrusted (git's "racily clean" problem): a file written twice within one
/// timestamp tick keeps its metadata, so only a re-read can tell. Two seconds
/// covers the coarsest common file systems.
pub const RACY_WINDOW: Duration = Duration::from_secs(2);

impl Stamp {
    /// The stamp of `meta`.
    pub fn of(meta: &Metadata) -> Stamp {
        Stamp::Present {
            mode: meta.mode(),
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size(),
            mtime_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
            ctime_ns: i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec()),
        }
    }

    /// Stats `rel` under `dir`, following links within the root.
    pub fn probe(dir: &Dir, rel: &Path) -> Stamp {
        match dir.metadata(rel) {
            Ok(m) => Stamp::of(&m),
            Err(e) => Stamp::from_error(&e),
        }
    }

    /// Stats an absolute path outside any root (repository markers only),
    /// without following a final symlink.
    pub fn probe_ambient(path: &Path) -> Stamp {
        Stamp::of_std(std::fs::symlink_metadata(path))
    }

    /// Stats a directory the user named (the cwd, the home root), following
    /// links: it decides which roots are opened, and is never read.
    pub fn probe_ambient_dir(path: &Path) -> Stamp {
        Stamp::of_std(std::fs::metadata(path))
    }

    fn of_std(meta: io::Result<std::fs::Metadata>) -> Stamp {
        use std::os::unix::fs::MetadataExt as _;
        match meta {
            Ok(m) => Stamp::Present {
                mode: m.mode(),
                dev: m.dev(),
                ino: m.ino(),
                size: m.size(),
                mtime_ns: i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec()),
                ctime_ns: i128::from(m.ctime()) * 1_000_000_000 + i128::from(m.ctime_nsec()),
            },
            Err(e) => Stamp::from_error(&e),
        }
    }

    fn from_error(e: &io::Error) -> Stamp {
        match classify(e) {
            Opened::Absent => Stamp::Absent,
            Opened::Refused(r) => Stamp::Error(r as u8),
            Opened::File { .. } => Stamp::Error(u8::MAX),
        }
    }

    /// Whether the stamp was taken too close to `observed` to vouch for the
    /// content (see [`RACY_WINDOW`]).
    pub fn is_racy(&self, observed: SystemTime) -> bool {
        let Stamp::Present {
            mtime_ns, ctime_ns, ..
        } = *self
        else {
            return false;
        };
        let observed_ns = observed
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as i128);
        let window = RACY_WINDOW.as_nanos() as i128;
        mtime_ns.max(ctime_ns) + window >= observed_ns
    }

    /// Device and inode, when present.
    pub fn identity(&self) -> Option<(u64, u64)> {
        match *self {
            Stamp::Present { dev, ino, .. } => Some((dev, ino)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reason_words_match_their_json() {
        for r in Reason::ALL {
            let json = serde_json::to_string(&r).unwrap_or_default();
            assert_eq!(json, format!("\"{}\"", r.as_str()));
        }
    }

    #[test]
    fn stamps_of_recent_files_are_racy() {
        let now = SystemTime::now();
        let ns = now
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as i128);
        let stamp = |t: i128| Stamp::Present {
            mode: 0o100644,
            dev: 1,
            ino: 2,
            size: 3,
            mtime_ns: t,
            ctime_ns: t,
        };
        assert!(stamp(ns).is_racy(now));
        assert!(stamp(ns - 1_000_000_000).is_racy(now));
        assert!(!stamp(ns - 3_000_000_000).is_racy(now));
        assert!(!Stamp::Absent.is_racy(now));
    }
}
