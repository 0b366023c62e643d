//! Opening a candidate under a root, and bounded reads from it.
//!
//! A candidate is opened without following its last component and without
//! blocking; its type is checked on the open handle, never on the path. Only
//! regular files are handed out, and they are read only up to a limit.

use std::cell::Cell;
use std::io::{self, Read};
use std::path::Path;

use cap_fs_ext::{FollowSymlinks, OpenOptionsFollowExt, OpenOptionsSyncExt};
use cap_std::fs::{Dir, Metadata, OpenOptions};

pub(crate) use super::errno::is_exhaustion;
use super::errno::{self, Failure, is_link_error};
use super::stamp::Stamp;
use crate::policy::SymlinkRule;
use crate::vocab::reason::Reason;

/// What opening a candidate found: nothing, a refusal, or the file.
#[derive(Debug)]
#[allow(
    clippy::large_enum_variant,
    reason = "a short-lived return value, moved once; a box would cost an allocation per file opened"
)]
pub(crate) enum Opened {
    /// Nothing at that path.
    Absent,
    /// Something there that will not be read.
    Refused(Reason),
    /// A regular file, open for reading.
    File(OpenFile),
}

/// A regular file opened under a root. The only thing to do with it is read
/// a bounded prefix.
#[derive(Debug)]
pub(crate) struct OpenFile {
    /// The handle: a plain `std` file once opened (the sandbox governs
    /// opening, and std reads into spare capacity without zero-filling it).
    #[allow(
        clippy::disallowed_types,
        reason = "a file the sandbox opened under a root, read only through this type"
    )]
    file: std::fs::File,
    /// Its metadata, taken from the handle.
    meta: Metadata,
    /// How many bytes the reads so far consumed.
    consumed: Cell<u64>,
    /// Whether a read found the end of the file.
    at_end: Cell<bool>,
}

impl OpenFile {
    /// The file's size, as fstat reported it when it was opened.
    pub(crate) fn len(&self) -> u64 {
        self.meta.len()
    }

    /// The stamp of the open handle.
    pub(crate) fn stamp(&self) -> Stamp {
        Stamp::of(&self.meta)
    }

    /// The open descriptor, to ask the kernel what it names.
    pub(super) fn handle(&self) -> std::os::fd::BorrowedFd<'_> {
        use std::os::fd::AsFd as _;
        self.file.as_fd()
    }

    /// Reads at most `limit` bytes from the start (or from where the last
    /// read stopped).
    pub(crate) fn read_at_most(&self, limit: u64) -> io::Result<Vec<u8>> {
        // Sized from fstat, so a small file costs one allocation; never more
        // than 64 KiB up front, whatever the file claims.
        let initial = limit.min(self.len().saturating_add(1)).min(64 * 1024);
        let mut buf = Vec::with_capacity(usize::try_from(initial).unwrap_or(0));
        self.read_into(&mut buf, limit)?;
        Ok(buf)
    }

    /// Appends at most `limit` more bytes to `buf`; returns how many came.
    ///
    /// The size fstat reported is trusted to say where the file ends: each
    /// read asks for what is left of it plus one byte, and a read that comes
    /// back short once that size is reached is the end (a regular file
    /// returns less than asked only at its end), so no second read is made
    /// only to hear "end of file". A file that grew since fstat fills the
    /// extra byte, and is then read on as far as `limit` allows, exactly as
    /// reading to the end would.
    pub(crate) fn read_into(&self, buf: &mut Vec<u8>, limit: u64) -> io::Result<usize> {
        let mut handle = &self.file;
        let start = buf.len();
        let mut got: u64 = 0;
        while got < limit {
            let left = self.len().saturating_sub(self.consumed.get());
            // Past the reported size, read on in pieces of up to 8 KiB.
            let ask = limit - got;
            let ask = ask.min(if left > 0 { left + 1 } else { 8 * 1024 });
            let ask = usize::try_from(ask).unwrap_or(usize::MAX).min(1 << 20);
            let at = buf.len();
            buf.resize(at + ask, 0);
            let n = loop {
                match handle.read(&mut buf[at..]) {
                    Ok(n) => break n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => {
                        buf.truncate(at);
                        return Err(e);
                    }
                }
            };
            buf.truncate(at + n);
            got += n as u64;
            self.consumed.set(self.consumed.get() + n as u64);
            if n == 0 || (n < ask && self.consumed.get() >= self.len()) {
                self.at_end.set(true);
                break;
            }
        }
        Ok(buf.len() - start)
    }

    /// Whether a read found the end of the file: nothing more will come.
    pub(crate) fn at_end(&self) -> bool {
        self.at_end.get()
    }
}

/// What an error from opening, listing or stating a path means for a
/// candidate (see [`errno::classify`]).
pub(crate) fn classify(e: &io::Error) -> Opened {
    match errno::classify(e) {
        Failure::Absent => Opened::Absent,
        Failure::Refused(reason) => Opened::Refused(reason),
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

/// Opens `rel` under `dir` as a candidate file, applying the symlink rule;
/// and whether the rule had a say: only when the last component is a link
/// do the rules open differently (without one, every rule gets the same
/// answer).
///
/// The last component is opened without following; if it is a link, it is
/// refused (`never`) or opened again following links, which cap-std confines
/// to the root (`within-root`). The type is then checked on the handle.
///
/// Every error met is shown to `note` first (the root counts descriptor
/// shortages there).
pub(super) fn open_candidate_telling(
    dir: &Dir,
    rel: &Path,
    rule: SymlinkRule,
    note: &dyn Fn(&io::Error),
) -> (Opened, bool) {
    let (file, linked) = match dir.open_with(rel, &options(FollowSymlinks::No)) {
        Ok(f) => (f, false),
        Err(e) if is_link_error(&e) => match rule {
            SymlinkRule::Never => return (Opened::Refused(Reason::SymlinkRefused), true),
            SymlinkRule::WithinRoot => match dir.open_with(rel, &options(FollowSymlinks::Yes)) {
                Ok(f) => (f, true),
                Err(e) => {
                    note(&e);
                    return (classify(&e), true);
                }
            },
        },
        Err(e) => {
            note(&e);
            return (classify(&e), false);
        }
    };
    (opened(file), linked)
}

/// A file opened as a candidate: kept when it is a regular file.
fn opened(file: cap_std::fs::File) -> Opened {
    match file.metadata() {
        Ok(meta) if meta.is_file() => Opened::File(OpenFile {
            file: file.into_std(),
            meta,
            consumed: Cell::new(0),
            at_end: Cell::new(false),
        }),
        Ok(_) => Opened::Refused(Reason::NotRegularFile),
        Err(_) => Opened::Refused(Reason::Unreadable),
    }
}

#[cfg(test)]
mod tests {
    use rustix::io::Errno;

    use super::*;

    #[test]
    fn errors_are_classified_by_errno_not_by_number() {
        let os = |errno: Errno| io::Error::from_raw_os_error(errno.raw_os_error());
        let reason = |e: &io::Error| match classify(e) {
            Opened::Refused(r) => Some(r),
            _ => None,
        };
        assert!(matches!(classify(&os(Errno::NOENT)), Opened::Absent));
        assert!(matches!(classify(&os(Errno::NOTDIR)), Opened::Absent));
        assert_eq!(reason(&os(Errno::LOOP)), Some(Reason::SymlinkEscape));
        assert_eq!(reason(&os(Errno::MLINK)), Some(Reason::SymlinkEscape));
        assert_eq!(reason(&os(Errno::NXIO)), Some(Reason::NotRegularFile));
        assert_eq!(reason(&os(Errno::ACCESS)), Some(Reason::Unreadable));
        let escape = io::Error::new(io::ErrorKind::PermissionDenied, "outside the root");
        assert_eq!(reason(&escape), Some(Reason::SymlinkEscape));
        assert!(is_exhaustion(&os(Errno::MFILE)));
        assert!(is_exhaustion(&os(Errno::NFILE)));
        assert!(!is_exhaustion(&os(Errno::ACCESS)));
    }
}

#[cfg(test)]
mod fast_paths {
    #![allow(
        clippy::disallowed_methods,
        clippy::disallowed_types,
        reason = "the tests build their trees on the real disk"
    )]

    use std::path::Path;
    use std::sync::Arc;

    use super::super::{Opened, Root, Shortage, ambient};
    use crate::policy::SymlinkRule;

    fn root(path: &Path) -> Root {
        Root {
            path: path.to_path_buf(),
            dir: Arc::new(ambient::open_root(path).expect("open root")),
            shortage: Arc::new(Shortage::default()),
            shield: super::super::Shield::standard(),
        }
    }

    #[test]
    fn the_fast_stamp_equals_the_sandboxed_one_where_no_link_is_met() {
        let tmp = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(tmp.path().join("a/b")).expect("mkdir");
        std::fs::write(tmp.path().join("a/b/AGENTS.md"), "text").expect("write");
        std::os::unix::fs::symlink("b/AGENTS.md", tmp.path().join("a/link")).expect("link");
        let r = root(tmp.path());
        for rel in [
            "a",
            "a/b",
            "a/b/AGENTS.md",
            "a/b/none",
            "none/x",
            "a/b/AGENTS.md/x",
        ] {
            let rel = Path::new(rel);
            assert_eq!(r.stamp_nofollow_unconfined(rel), r.stamp(rel), "{rel:?}");
        }
        // A link: the fast stamp is the link's own, never its target's.
        let link = Path::new("a/link");
        assert!(r.stamp(link).is_file());
        assert_ne!(r.stamp_nofollow_unconfined(link), r.stamp(link));
    }

    #[test]
    fn reads_stop_at_the_reported_size_and_follow_growth() {
        use std::io::Write as _;
        let tmp = tempfile::tempdir().expect("tempdir");
        let path = tmp.path().join("f");
        std::fs::write(&path, b"0123456789").expect("write");
        let r = root(tmp.path());
        let Opened::File(file) = r.open_file(Path::new("f"), SymlinkRule::Never) else {
            panic!("not opened");
        };
        // The file grows after fstat: the extra byte shows it, and the read
        // goes on to the end, as reading to EOF would.
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .expect("append");
        f.write_all(b"abcdef").expect("grow");
        assert_eq!(file.read_at_most(1024).expect("read"), b"0123456789abcdef");
        assert!(file.at_end());

        let Opened::File(file) = r.open_file(Path::new("f"), SymlinkRule::Never) else {
            panic!("not opened");
        };
        assert_eq!(file.read_at_most(4).expect("read"), b"0123");
        assert!(!file.at_end());
        let mut rest = Vec::new();
        assert_eq!(file.read_into(&mut rest, 100).expect("read"), 12);
        assert_eq!(rest, b"456789abcdef");
        assert!(file.at_end());
    }

    /// Every kind of thing a source path can name: the one-handle look
    /// gives the stamp and the listing the path-based calls give.
    #[test]
    fn one_handle_answers_what_the_path_calls_answer() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let base = tmp.path().join("root");
        let outside = tmp.path().join("outside");
        std::fs::create_dir_all(base.join("src/b")).expect("mkdir");
        std::fs::create_dir_all(&outside).expect("mkdir");
        std::fs::write(base.join("src/a"), "x").expect("write");
        std::fs::write(base.join("file"), "x").expect("write");
        std::os::unix::fs::symlink("b", base.join("src/link")).expect("link");
        std::os::unix::fs::symlink("src", base.join("inner")).expect("link");
        std::os::unix::fs::symlink(&outside, base.join("escape")).expect("link");
        std::os::unix::fs::symlink("nowhere", base.join("dangling")).expect("link");
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            base.join("fifo"),
            rustix::fs::Mode::from_raw_mode(0o600),
        )
        .expect("fifo");
        let r = root(&base);
        // (path, whether it opens for listing through one handle)
        let table = [
            ("src", true),
            ("src/b", true),
            ("inner", true),
            ("none", false),
            ("none/deeper", false),
            ("dangling", false),
            ("file", false),
            ("file/x", false),
            ("fifo", false),
            ("escape", false),
        ];
        for (rel, opens) in table {
            let rel = Path::new(rel);
            let looked = r.look_folder(rel);
            assert_eq!(looked.fd.is_some(), opens, "{rel:?}");
            assert_eq!(looked.stamp, r.stamp(rel), "{rel:?}");
            let sorted = |l: Result<Option<Vec<super::super::Listed>>, _>| {
                l.map(|l| {
                    l.map(|mut l| {
                        l.sort();
                        l
                    })
                })
            };
            assert_eq!(
                sorted(looked.list(&r, rel, usize::MAX)),
                sorted(r.list(rel, usize::MAX)),
                "{rel:?}"
            );
        }
        // The listing marks links and stops at the limit.
        let src = Path::new("src");
        let mut listed = r
            .look_folder(src)
            .list(&r, src, usize::MAX)
            .expect("listed")
            .expect("there");
        listed.sort();
        let names: Vec<(String, bool)> = listed
            .iter()
            .map(|l| (l.name.to_string_lossy().into_owned(), l.is_link))
            .collect();
        assert_eq!(
            names,
            [
                ("a".to_string(), false),
                ("b".to_string(), false),
                ("link".to_string(), true)
            ]
        );
        let two = r.look_folder(src).list(&r, src, 2).expect("listed");
        assert_eq!(two.map(|l| l.len()), Some(2));
    }

    /// The way to a folder is real when no link is met on it, whatever the
    /// link's target.
    #[test]
    fn a_real_way_meets_no_link() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let base = tmp.path();
        std::fs::create_dir_all(base.join("a/b/c")).expect("mkdir");
        std::fs::write(base.join("a/b/file"), "x").expect("write");
        std::os::unix::fs::symlink("b", base.join("a/inner")).expect("link");
        std::os::unix::fs::symlink(base.join("a"), base.join("abs")).expect("link");
        let r = root(base);
        for (rel, want) in [
            ("a", true),
            ("a/b", true),
            ("a/b/c", true),
            ("a/inner", false),
            ("a/inner/c", false),
            ("abs/b", false),
            ("a/b/file", false),
            ("a/b/none", false),
            // `..` that stays under the root is resolved (callers pass
            // plain paths only); one that leaves it is refused.
            ("a/../a/b", true),
            ("a/../../x", false),
        ] {
            assert_eq!(r.is_real_way(Path::new(rel)), want, "{rel}");
        }
    }
}
