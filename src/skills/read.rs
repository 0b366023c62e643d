//! Reading a `SKILL.md` through the sandbox: only the frontmatter while
//! listing skills, the whole file when the agent asks for one.

use std::path::Path;

use super::frontmatter;
use crate::policy::{Fences, Policy};
use crate::sandbox::{OpenFile, Opened, Root};
use crate::vocab::reason::Reason;
use crate::vocab::text;

/// How much of a `SKILL.md` is read at a time while looking for the end of
/// its frontmatter.
const CHUNK: u64 = 4096;

/// The largest `SKILL.md` the policy considers, in bytes.
pub(super) fn file_cap(policy: &Policy) -> u64 {
    u64::try_from(policy.skills.max_skill_file_bytes).unwrap_or(0)
}

/// Reads `file` only as far as its frontmatter goes (in chunks, never past
/// `cap`), and returns the bytes up to the end of the closing fence, or all
/// that was read when no fence closed. With `body` (`description-from-body`)
/// the read goes on past the fence to the end of the body's first line
/// that is not blank (or the end of the file), still never past `cap`.
pub(super) fn frontmatter_bytes(
    file: &OpenFile,
    cap: u64,
    fences: Fences,
    body: bool,
) -> Result<Vec<u8>, Reason> {
    SCRATCH.with(|scratch| match scratch.try_borrow_mut() {
        Ok(mut buf) => {
            buf.clear();
            let read = read_frontmatter(file, cap, fences, body, &mut buf).map(|()| buf.to_vec());
            if buf.capacity() > SCRATCH_KEPT {
                *buf = Vec::new();
            }
            read
        }
        // Not reentered in practice; a fresh buffer does the same work.
        Err(_) => {
            let mut buf = Vec::new();
            read_frontmatter(file, cap, fences, body, &mut buf).map(|()| buf)
        }
    })
}

thread_local! {
    /// The buffer frontmatter is read into, one per thread and reused: the
    /// frontmatter alone is then copied out. A fresh chunk-sized buffer per
    /// file, freed soon after, leaves the allocator a trail of new pages to
    /// fault in when skills are examined by the thousand.
    static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The largest scratch buffer kept between files (a file whose frontmatter
/// never closes is read up to the cap).
const SCRATCH_KEPT: usize = 64 * 1024;

/// Reads into `buf` as far as the frontmatter goes (and with `body` the
/// body's first line that is not blank), then cuts `buf` there (all that
/// was read when no fence closed).
fn read_frontmatter(
    file: &OpenFile,
    cap: u64,
    fences: Fences,
    body: bool,
    buf: &mut Vec<u8>,
) -> Result<(), Reason> {
    // Each chunk is searched for the closing fence once: the search goes on
    // where it stopped.
    let mut scan = frontmatter::EndScan::new(fences);
    // The body is searched from where the blank lines searched so far end.
    let mut body_from = None;
    let end = loop {
        let room = CHUNK.min(cap.saturating_sub(buf.len() as u64));
        let got = file.read_into(buf, room).map_err(|_| Reason::Unreadable)?;
        let done = got == 0 || file.at_end() || buf.len() as u64 >= cap;
        let end = match scan.feed(buf) {
            Some(fence_end) if body => {
                let from = *body_from.get_or_insert(fence_end);
                let found = frontmatter::body_line_end(buf, from, done);
                // What the search looked at: up to the line, or all of it.
                crate::vocab::counters::add(
                    crate::vocab::counters::Counter::FrontmatterScanBytes,
                    (found.unwrap_or(buf.len()) - from) as u64,
                );
                match found {
                    Some(line_end) => Some(line_end),
                    None => {
                        // Only blank lines so far: the search goes on from
                        // the last complete one.
                        body_from = Some(last_line_start(buf, from));
                        None
                    }
                }
            }
            end => end,
        };
        if done || end.is_some() {
            break end;
        }
    };
    if let Some(end) = end {
        buf.truncate(end);
    }
    Ok(())
}

/// Where the last line of `buf` from `from` on starts (just past its last
/// `\n`; `from` when there is none).
fn last_line_start(buf: &[u8], from: usize) -> usize {
    buf.get(from..)
        .and_then(|rest| memchr::memrchr(b'\n', rest))
        .map_or(from, |n| from + n + 1)
}

/// Why a whole `SKILL.md` could not be read.
#[derive(Debug)]
pub(crate) enum WholeFileError {
    /// Nothing there any more.
    Gone,
    /// Refused or not usable, with the reason word.
    Refused(Reason),
    /// Reading failed.
    Io(std::io::Error),
}

impl std::fmt::Display for WholeFileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WholeFileError::Gone => f.write_str("it no longer exists"),
            WholeFileError::Refused(r) => f.write_str(r.as_str()),
            WholeFileError::Io(e) => write!(f, "{e}"),
        }
    }
}

/// The raw bytes of a whole `SKILL.md`, under the listing's symlink rule and
/// size cap.
pub(crate) fn whole_bytes(
    policy: &Policy,
    root: &Root,
    rel: &Path,
) -> Result<Vec<u8>, WholeFileError> {
    let cap = file_cap(policy);
    let file = match root.open_file(rel, policy.trust.symlinks) {
        Opened::File(file) => file,
        Opened::Absent => return Err(WholeFileError::Gone),
        Opened::Refused(r) => return Err(WholeFileError::Refused(r)),
    };
    if file.len() > cap {
        return Err(WholeFileError::Refused(Reason::TooLarge));
    }
    file.read_at_most(cap).map_err(WholeFileError::Io)
}

/// Reads a whole `SKILL.md` (frontmatter and body) under the same rules as
/// listing: the symlink rule, the size cap, text only. A pinned project
/// skill (`pinned`: the approved hash) must still have exactly the approved
/// bytes, else it is refused as `unapproved`.
pub(crate) fn whole_file(
    policy: &Policy,
    root: &Root,
    rel: &Path,
    pinned: Option<&str>,
) -> Result<String, WholeFileError> {
    let bytes = whole_bytes(policy, root, rel)?;
    if pinned.is_some_and(|hash| crate::trust::content_hash(&bytes) != hash) {
        return Err(WholeFileError::Refused(Reason::Unapproved));
    }
    text::decode(bytes, false).ok_or(WholeFileError::Refused(Reason::NotText))
}
