//! Stage 5a — choosing the instruction blocks: read each candidate (bounded),
//! fold duplicates, skip blanks, and grant the byte budget in policy order.

use std::collections::HashMap;
use std::path::PathBuf;

use serde::Serialize;

use crate::discovery::chain::{Candidate, Origin};
use crate::fingerprint::{Trace, TraceRoot};
use crate::hidden::{self, HiddenReport};
use crate::policy::{BudgetOrder, Policy};
use crate::read::{self, Opened, Reason, Stamp};
use crate::roots::Roots;

/// A block that goes into the prompt.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Block {
    /// Absolute path of the file.
    #[serde(serialize_with = "crate::paths::lossy")]
    pub path: PathBuf,
    /// Home or project.
    pub origin: Origin,
    /// The file's size on disk.
    pub bytes: u64,
    /// The file's text, in UTF-8 bytes, as it would enter the prompt: read
    /// (up to the per-file cap), trimmed, line breaks normalised, hidden text
    /// treated. Revealed hidden characters make it larger than the file.
    pub text_bytes: u64,
    /// The bytes of that text included in the prompt (at most `text_bytes`);
    /// this is what the budget counts.
    pub included_bytes: u64,
    /// Whether the text was cut (budget, or the per-file read cap).
    pub truncated: bool,
    /// The text included (trimmed, CRLF folded to LF, hidden text treated).
    #[serde(skip)]
    pub text: String,
    /// Position in read order.
    #[serde(skip)]
    pub order: usize,
}

/// A file folded into an earlier one.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Deduped {
    /// The folded file.
    #[serde(serialize_with = "crate::paths::lossy")]
    pub path: PathBuf,
    /// The kept file it repeats.
    #[serde(serialize_with = "crate::paths::lossy")]
    pub same_as: PathBuf,
}

/// A file not used, and why.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Skipped {
    /// The file.
    #[serde(serialize_with = "crate::paths::lossy")]
    pub path: PathBuf,
    /// Why.
    pub reason: Reason,
}

/// The budget after selection.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Budget {
    /// The limit in UTF-8 bytes.
    pub limit: u64,
    /// Bytes used.
    pub used: u64,
    /// Whether some text was cut or dropped for lack of budget.
    pub exhausted: bool,
}

/// A file where hidden text was found.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HiddenFinding {
    /// The file.
    #[serde(serialize_with = "crate::paths::lossy")]
    pub path: PathBuf,
    /// What was found.
    #[serde(flatten)]
    pub report: HiddenReport,
}

/// What happened to one candidate (for `explain`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// Nothing at the path.
    Absent,
    /// Included whole.
    Included,
    /// Included, cut.
    Truncated,
    /// Folded into another file.
    Deduped(PathBuf),
    /// Same file (device and inode) as another.
    SameFile(PathBuf),
    /// Not used.
    Skipped(Reason),
}

/// One row of `explain`.
#[derive(Debug, Clone)]
pub struct Considered {
    /// The path.
    pub path: PathBuf,
    /// Home or project.
    pub origin: Origin,
    /// The outcome.
    pub status: Status,
}

/// The instruction part of a snapshot.
#[derive(Debug, Clone)]
pub struct Selection {
    /// Kept blocks in read order.
    pub blocks: Vec<Block>,
    /// Folded files.
    pub deduped: Vec<Deduped>,
    /// Skipped files.
    pub skipped: Vec<Skipped>,
    /// The budget.
    pub budget: Budget,
    /// Files with hidden text.
    pub hidden: Vec<HiddenFinding>,
    /// Every candidate, in read order.
    pub considered: Vec<Considered>,
}

/// Bytes read beyond what the budget can still use, so that a BOM, leading
/// whitespace or a character straddling the limit does not make a file look
/// shorter than it is.
const READ_SLACK: u64 = 4096;

/// Runs the instruction stage over `candidates` (in read order).
pub fn select(
    policy: &Policy,
    roots: &Roots,
    candidates: &[Candidate],
    trace: &mut Trace,
) -> Selection {
    let ins = &policy.instructions;
    let limit = u64::try_from(ins.budget_bytes).unwrap_or(0);
    let file_cap = u64::try_from(ins.max_file_bytes)
        .unwrap_or(0)
        .min(limit + READ_SLACK);

    // Grant order: by level, outermost or nearest first; within a level, the
    // policy's name order.
    let mut grant: Vec<usize> = (0..candidates.len()).collect();
    if ins.budget_order == BudgetOrder::NearestFirst {
        grant.sort_by_key(|&i| (std::cmp::Reverse(candidates[i].level), i));
    }

    let mut statuses: Vec<Option<Status>> = vec![None; candidates.len()];
    let mut blocks = Vec::new();
    let mut deduped = Vec::new();
    let mut skipped = Vec::new();
    let mut hidden_found = Vec::new();
    let mut kept_by_identity: HashMap<(u64, u64), PathBuf> = HashMap::new();
    let mut kept_by_text: HashMap<u128, PathBuf> = HashMap::new();
    let mut used: u64 = 0;
    let mut exhausted = false;
    // The longest file kept so far: a later copy of it must be read far
    // enough to be recognised as one, whatever budget is left.
    let mut longest_kept: u64 = 0;

    for &i in &grant {
        let cand = &candidates[i];
        let (dir, troot) = match cand.origin {
            Origin::Home => match &roots.home {
                Some(h) => (&h.dir, TraceRoot::Home),
                None => continue,
            },
            Origin::Project => (&roots.repo.dir, TraceRoot::Repo),
        };
        let mut skip = |reason: Reason, statuses: &mut Vec<Option<Status>>| {
            skipped.push((
                i,
                Skipped {
                    path: cand.path.clone(),
                    reason,
                },
            ));
            statuses[i] = Some(Status::Skipped(reason));
        };
        if cand.excluded {
            skip(Reason::Excluded, &mut statuses);
            continue;
        }
        let (file, meta) = match read::open_candidate(dir, &cand.rel, policy.trust.symlinks) {
            Opened::Absent => {
                trace.push(troot, &cand.rel, Stamp::Absent, None);
                statuses[i] = Some(Status::Absent);
                continue;
            }
            Opened::Refused(reason) => {
                trace.push(troot, &cand.rel, Stamp::probe(dir, &cand.rel), None);
                skip(reason, &mut statuses);
                continue;
            }
            Opened::File { file, meta } => (file, meta),
        };
        let stamp = Stamp::of(&meta);
        if let Some(same) = stamp.identity().and_then(|id| kept_by_identity.get(&id)) {
            trace.push(
                troot,
                &cand.rel,
                stamp,
                Some(same.as_os_str().as_encoded_bytes()),
            );
            deduped.push((
                i,
                Deduped {
                    path: cand.path.clone(),
                    same_as: same.clone(),
                },
            ));
            statuses[i] = Some(Status::SameFile(same.clone()));
            continue;
        }
        // Reads are bounded by what the budget can still use: a huge file
        // late in the chain costs a few KiB, not the whole cap.
        let want = limit.saturating_sub(used).max(longest_kept) + READ_SLACK;
        let bytes = match read::read_at_most(&file, file_cap.min(want), meta.len()) {
            Ok(b) => b,
            Err(_) => {
                trace.push(troot, &cand.rel, stamp, None);
                skip(Reason::Unreadable, &mut statuses);
                continue;
            }
        };
        drop(file);
        trace.push(troot, &cand.rel, stamp, Some(&bytes));
        let size = meta.len();
        let read_cut = (bytes.len() as u64) < size;

        let Some(text) = decode(bytes, read_cut) else {
            skip(Reason::NotText, &mut statuses);
            continue;
        };
        let (text, report) = if hidden::is_plain(&text) {
            (text, HiddenReport::default())
        } else {
            hidden::treat(
                &text,
                policy.trust.hidden_text,
                &policy.templates.hidden_marker,
            )
        };
        let start = text.len() - text.trim_start().len();
        let trimmed = text.trim();
        if trimmed.is_empty() && ins.skip_blank {
            skip(Reason::Empty, &mut statuses);
            continue;
        }
        let text_key = xxhash_rust::xxh3::xxh3_128(trimmed.as_bytes());
        // A file read only in part cannot be shown equal to anything.
        if ins.dedup_by_content && !read_cut {
            if let Some(same) = kept_by_text.get(&text_key) {
                deduped.push((
                    i,
                    Deduped {
                        path: cand.path.clone(),
                        same_as: same.clone(),
                    },
                ));
                statuses[i] = Some(Status::Deduped(same.clone()));
                continue;
            }
        }
        let remaining = limit.saturating_sub(used);
        let cut = floor_char_boundary(trimmed, usize::try_from(remaining).unwrap_or(usize::MAX));
        if cut == 0 {
            exhausted = true;
            skip(Reason::BudgetExhausted, &mut statuses);
            continue;
        }
        let budget_cut = cut < trimmed.len();
        exhausted |= budget_cut;
        used += cut as u64;
        let text_bytes = trimmed.len() as u64;
        if !report.is_empty() {
            hidden_found.push((
                i,
                HiddenFinding {
                    path: cand.path.clone(),
                    report,
                },
            ));
        }
        let truncated = budget_cut || read_cut;
        if let Some(id) = stamp.identity() {
            kept_by_identity.insert(id, cand.path.clone());
        }
        // Only a file read whole can stand for its text: a later file equal
        // to the prefix of a cut one is not a copy of it.
        if !read_cut {
            kept_by_text.insert(text_key, cand.path.clone());
            longest_kept = longest_kept.max(size);
        }
        statuses[i] = Some(if truncated {
            Status::Truncated
        } else {
            Status::Included
        });
        blocks.push(Block {
            path: cand.path.clone(),
            origin: cand.origin,
            bytes: size,
            text_bytes,
            included_bytes: cut as u64,
            truncated,
            text: {
                // Keep the included part in the buffer already holding it.
                let mut owned = text;
                owned.truncate(start + cut);
                owned.drain(..start);
                owned
            },
            order: i,
        });
    }

    blocks.sort_by_key(|b| b.order);
    // Records were made in grant order; report them in read order.
    fn in_read_order<T>(mut v: Vec<(usize, T)>) -> Vec<T> {
        v.sort_by_key(|(i, _)| *i);
        v.into_iter().map(|(_, t)| t).collect()
    }
    let deduped = in_read_order(deduped);
    let skipped = in_read_order(skipped);
    let hidden_found = in_read_order(hidden_found);
    let considered = candidates
        .iter()
        .zip(statuses)
        .filter_map(|(c, s)| {
            s.map(|status| Considered {
                path: c.path.clone(),
                origin: c.origin,
                status,
            })
        })
        .collect();
    Selection {
        blocks,
        deduped,
        skipped,
        budget: Budget {
            limit,
            used,
            exhausted,
        },
        hidden: hidden_found,
        considered,
    }
}

/// Bytes to text: a leading BOM dropped, CRLF folded to LF. `None` for bytes
/// that are not text (invalid UTF-8 before the end, or a NUL byte). When the
/// read stopped early, a character cut in half at the end is dropped.
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
