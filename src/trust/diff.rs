//! The line diff `trust diff` shows, with its work and its output bounded by
//! counts, never by a clock: the same two texts give the same answer on any
//! machine.
//!
//! Texts of more than [`MAX_LINES`] lines together are not compared at all.
//! Otherwise the common first and last lines are set aside (linear work),
//! and the lines between are compared with Myers' greedy search for the shortest
//! edit script, which gives up once more than [`MAX_EDITS`] lines would have
//! to be inserted or deleted, or once it has made [`MAX_WORK`] steps
//! (diagonals tried plus lines compared). Beyond either bound there is no
//! line diff, only a summary: the line counts and both hashes. What is
//! printed is bounded too: at most [`MAX_SHOWN_LINES`] lines and
//! [`MAX_SHOWN_BYTES`] bytes per item, then one line saying how much was
//! left out.

use std::cell::Cell;
use std::fmt::Write as _;

use crate::vocab::hash::FastMap;
use crate::vocab::unicode::terminal_safe;

/// The most lines (old and new together) a diff is computed over.
pub(crate) const MAX_LINES: usize = 200_000;
/// The most lines (inserted plus deleted) the search looks for a diff with.
pub(crate) const MAX_EDITS: usize = 1_000;
/// The most steps the search makes (diagonals tried plus lines compared).
pub(crate) const MAX_WORK: u64 = 10_000_000;
/// The most lines of diff shown per item.
pub(crate) const MAX_SHOWN_LINES: usize = 2_000;
/// The most bytes of diff shown per item.
pub(crate) const MAX_SHOWN_BYTES: usize = 64 * 1024;
/// Unchanged lines shown around each change.
const CONTEXT: usize = 3;
/// Marks a diagonal no path reaches.
const NONE: u32 = u32::MAX;

thread_local! {
    /// The steps the searches on this thread have made (see [`work`]).
    static WORK: Cell<u64> = const { Cell::new(0) };
}

/// The steps every diff computed on this thread has made so far: what the
/// tests count instead of timing.
pub(crate) fn work() -> u64 {
    WORK.with(Cell::get)
}

/// One line of the edit script: indices into the old and new lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Edit {
    Equal(usize, usize),
    Delete(usize),
    Insert(usize),
}

/// Why there is no line diff.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TooHard {
    /// More than [`MAX_LINES`] lines in all.
    Lines,
    /// More than [`MAX_EDITS`] lines differ.
    Edits,
    /// The search reached [`MAX_WORK`] steps.
    Work,
}

impl TooHard {
    /// Why there is no line diff, in a few words.
    pub(crate) fn why(self) -> String {
        match self {
            TooHard::Lines => format!("more than {MAX_LINES} lines to compare"),
            TooHard::Edits => format!("more than {MAX_EDITS} lines differ"),
            TooHard::Work => format!("the comparison reached its bound of {MAX_WORK} steps"),
        }
    }
}

/// The lines of `text`, each with its line break.
fn lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

/// How many lines `text` has (a last line without a break counts).
pub(crate) fn line_count(text: &str) -> usize {
    let breaks = memchr::memchr_iter(b'\n', text.as_bytes()).count();
    breaks + usize::from(!text.is_empty() && !text.ends_with('\n'))
}

/// The edit script from `old` to `new`, or why the search gave up.
fn script<'t>(old: &[&'t str], new: &[&'t str]) -> Result<Vec<Edit>, TooHard> {
    // Lines as small numbers: equal lines, equal numbers.
    let mut ids: FastMap<&'t str, u32> = FastMap::default();
    let mut number = |lines: &[&'t str]| -> Vec<u32> {
        lines
            .iter()
            .map(|&l| {
                let next = u32::try_from(ids.len()).unwrap_or(NONE);
                *ids.entry(l).or_insert(next)
            })
            .collect()
    };
    let a = number(old);
    let b = number(new);
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    WORK.with(|w| w.set(w.get() + (prefix + suffix) as u64));
    let (mid_a, mid_b) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);
    let mut edits: Vec<Edit> = (0..prefix).map(|i| Edit::Equal(i, i)).collect();
    let middle = if mid_a.is_empty() || mid_b.is_empty() {
        // Only deletions or only insertions: no search needed.
        let mut only: Vec<Edit> = (0..mid_a.len()).map(Edit::Delete).collect();
        only.extend((0..mid_b.len()).map(Edit::Insert));
        only
    } else {
        myers(mid_a, mid_b)?
    };
    edits.extend(middle.into_iter().map(|e| match e {
        Edit::Equal(x, y) => Edit::Equal(x + prefix, y + prefix),
        Edit::Delete(x) => Edit::Delete(x + prefix),
        Edit::Insert(y) => Edit::Insert(y + prefix),
    }));
    let (tail_a, tail_b) = (a.len() - suffix, b.len() - suffix);
    edits.extend((0..suffix).map(|i| Edit::Equal(tail_a + i, tail_b + i)));
    Ok(edits)
}

/// Myers' greedy search, bounded: row `d` of `rows` holds, for each
/// diagonal `k = -d, -d+2, ..., d`, the furthest `x` a path with `d` edits
/// reaches on it (row `d` starts at `d(d+1)/2`).
fn myers(a: &[u32], b: &[u32]) -> Result<Vec<Edit>, TooHard> {
    let (n, m) = (a.len(), b.len());
    let mut rows: Vec<u32> = Vec::new();
    let mut steps: u64 = 0;
    let result = (|| {
        for d in 0..=MAX_EDITS {
            let prev = rows.len().saturating_sub(d);
            for i in 0..=d {
                steps += 1;
                let k = 2 * i as isize - d as isize;
                let Some(start) = (if d == 0 {
                    Some(0)
                } else {
                    choose(&rows, prev, d, i, k, n, m).map(|(x, _)| x)
                }) else {
                    rows.push(NONE);
                    continue;
                };
                let mut x = start;
                let mut y = x.wrapping_add_signed(-k);
                while x < n && y < m && a[x] == b[y] {
                    x += 1;
                    y += 1;
                    steps += 1;
                }
                rows.push(u32::try_from(x).unwrap_or(NONE));
                if x == n && y == m {
                    return Ok(backtrack(&rows, d, k, n, m));
                }
                if steps > MAX_WORK {
                    return Err(TooHard::Work);
                }
            }
        }
        Err(TooHard::Edits)
    })();
    WORK.with(|w| w.set(w.get() + steps));
    result
}

/// For diagonal `k` (index `i`) of row `d`: where its path starts after the
/// edit that brought it there, and whether that edit was an insertion (a
/// step down from diagonal `k + 1`) rather than a deletion (a step right
/// from `k - 1`); `None` when no path of `d - 1` edits leads there.
fn choose(
    rows: &[u32],
    prev: usize,
    d: usize,
    i: usize,
    k: isize,
    n: usize,
    m: usize,
) -> Option<(usize, bool)> {
    let at = |j: usize| {
        Some(rows[prev + j])
            .filter(|&x| x != NONE)
            .map(|x| x as usize)
    };
    // Down from k + 1 (index i of row d - 1): y grows, so y there < m.
    let down = (i < d)
        .then(|| at(i))
        .flatten()
        .filter(|&x| x.wrapping_add_signed(-(k + 1)) < m);
    // Right from k - 1 (index i - 1): x grows, so x there < n.
    let right = (i >= 1)
        .then(|| at(i - 1))
        .flatten()
        .filter(|&x| x < n)
        .map(|x| x + 1);
    match (down, right) {
        (Some(x), Some(r)) if x >= r => Some((x, true)),
        (_, Some(r)) => Some((r, false)),
        (Some(x), None) => Some((x, true)),
        (None, None) => None,
    }
}

/// The edit script of the path that reached the end on diagonal `k` of row
/// `d`, walked back row by row.
fn backtrack(rows: &[u32], mut d: usize, mut k: isize, n: usize, m: usize) -> Vec<Edit> {
    let mut out = Vec::new();
    let (mut x, mut y) = (n, m);
    while d > 0 {
        let base = d * (d + 1) / 2;
        let prev = base - d;
        let i = usize::try_from((k + d as isize) / 2).unwrap_or(0);
        let Some((start, down)) = choose(rows, prev, d, i, k, n, m) else {
            break;
        };
        let start_y = start.wrapping_add_signed(-k);
        while x > start && y > start_y {
            x -= 1;
            y -= 1;
            out.push(Edit::Equal(x, y));
        }
        if down {
            y -= 1;
            out.push(Edit::Insert(y));
            k += 1;
        } else {
            x -= 1;
            out.push(Edit::Delete(x));
            k -= 1;
        }
        d -= 1;
    }
    while x > 0 && y > 0 {
        x -= 1;
        y -= 1;
        out.push(Edit::Equal(x, y));
    }
    out.reverse();
    out
}

/// What is printed of one diff, bounded by [`MAX_SHOWN_LINES`] and
/// [`MAX_SHOWN_BYTES`].
struct Shown {
    out: String,
    lines: usize,
    /// Lines that did not fit.
    left_out: usize,
}

impl Shown {
    fn new() -> Self {
        Shown {
            out: String::new(),
            lines: 0,
            left_out: 0,
        }
    }

    /// Adds one line (`prefix` then `text` made terminal-safe), or counts it
    /// as left out once the bounds are reached. A line longer than the
    /// bytes left is cut at a character boundary.
    fn line(&mut self, prefix: &str, text: &str) {
        if self.left_out > 0 || self.lines >= MAX_SHOWN_LINES || self.out.len() >= MAX_SHOWN_BYTES {
            self.left_out += 1;
            return;
        }
        let (body, newline) = match text.strip_suffix('\n') {
            Some(body) => (body, true),
            None => (text, false),
        };
        let room = MAX_SHOWN_BYTES.saturating_sub(self.out.len() + prefix.len() + 1);
        // Escaping never shrinks text: only `room` bytes of it can show.
        let mut end = body.len().min(room);
        while !body.is_char_boundary(end) {
            end -= 1;
        }
        let safe = terminal_safe(&body[..end]);
        let mut cut = safe.len().min(room);
        while !safe.is_char_boundary(cut) {
            cut -= 1;
        }
        self.out.push_str(prefix);
        self.out.push_str(&safe[..cut]);
        self.out.push('\n');
        self.lines += 1;
        if end < body.len() || cut < safe.len() {
            // This line did not fit whole: what follows is left out.
            self.left_out += 1;
        } else if !newline {
            self.out.push_str("\\ No newline at end of file\n");
        }
    }
}

/// The unified diff from `old` to `new` (labels `approved/NAME` and
/// `current/NAME`), or why there is none. `Ok("")` when they are equal.
/// The text ends with a line break; when the bounds cut it, its last line
/// says so.
pub(crate) fn unified(old: &str, new: &str, name: &str) -> Result<String, TooHard> {
    if line_count(old).saturating_add(line_count(new)) > MAX_LINES {
        return Err(TooHard::Lines);
    }
    let (a, b) = (lines(old), lines(new));
    let edits = script(&a, &b)?;
    if edits.iter().all(|e| matches!(e, Edit::Equal(..))) {
        return Ok(String::new());
    }
    let mut shown = Shown::new();
    shown.line("--- ", &format!("approved/{name}\n"));
    shown.line("+++ ", &format!("current/{name}\n"));
    for hunk in hunks(&edits) {
        let (old_start, old_len, new_start, new_len) = extent(&edits[hunk.clone()]);
        shown.line(
            "",
            &format!(
                "@@ -{} +{} @@\n",
                range(old_start, old_len),
                range(new_start, new_len)
            ),
        );
        // Within a change, deletions first, then insertions.
        let mut pending: Vec<usize> = Vec::new();
        for e in &edits[hunk] {
            match *e {
                Edit::Equal(x, _) => {
                    for &y in &pending {
                        shown.line("+", b[y]);
                    }
                    pending.clear();
                    shown.line(" ", a[x]);
                }
                Edit::Delete(x) => shown.line("-", a[x]),
                Edit::Insert(y) => pending.push(y),
            }
        }
        for &y in &pending {
            shown.line("+", b[y]);
        }
        if shown.left_out > 0 {
            break;
        }
    }
    let mut out = shown.out;
    if shown.left_out > 0 {
        let _ = writeln!(
            out,
            "[diff cut: more than {MAX_SHOWN_LINES} lines or {MAX_SHOWN_BYTES} bytes; \
             the rest is not shown ({} lines approved, {} lines now)]",
            a.len(),
            b.len()
        );
    }
    Ok(out)
}

/// The hunks of `edits`: index ranges holding each run of changes with up to
/// [`CONTEXT`] equal lines on either side (runs closer than twice that are
/// one hunk).
fn hunks(edits: &[Edit]) -> Vec<std::ops::Range<usize>> {
    let mut out: Vec<std::ops::Range<usize>> = Vec::new();
    for (i, e) in edits.iter().enumerate() {
        if matches!(e, Edit::Equal(..)) {
            continue;
        }
        let start = i.saturating_sub(CONTEXT);
        let end = (i + 1 + CONTEXT).min(edits.len());
        match out.last_mut() {
            Some(last) if start <= last.end => last.end = end,
            _ => out.push(start..end),
        }
    }
    out
}

/// Where a hunk starts in the old and new lines, and how many of each it
/// spans.
fn extent(hunk: &[Edit]) -> (usize, usize, usize, usize) {
    let (mut old_start, mut new_start) = (None, None);
    let (mut old_len, mut new_len) = (0, 0);
    let mut next_old = 0;
    let mut next_new = 0;
    for e in hunk {
        match *e {
            Edit::Equal(x, y) => {
                old_start.get_or_insert(x);
                new_start.get_or_insert(y);
                old_len += 1;
                new_len += 1;
                next_old = x + 1;
                next_new = y + 1;
            }
            Edit::Delete(x) => {
                old_start.get_or_insert(x);
                old_len += 1;
                next_old = x + 1;
            }
            Edit::Insert(y) => {
                new_start.get_or_insert(y);
                new_len += 1;
                next_new = y + 1;
            }
        }
    }
    // A side with no line in the hunk starts where its next line would.
    (
        old_start.unwrap_or(next_old),
        old_len,
        new_start.unwrap_or(next_new),
        new_len,
    )
}

/// A hunk range as unified diffs write it: 1-based `start,len`, and for an
/// empty side the line before it.
fn range(start: usize, len: usize) -> String {
    match len {
        0 => format!("{start},0"),
        1 => format!("{}", start + 1),
        _ => format!("{},{len}", start + 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(old: &[&str], new: &[&str], edits: &[Edit]) -> Vec<String> {
        let mut out = Vec::new();
        let (mut x, mut y) = (0, 0);
        for e in edits {
            match *e {
                Edit::Equal(i, j) => {
                    assert_eq!((i, j), (x, y));
                    assert_eq!(old[i], new[j]);
                    out.push(old[i].to_string());
                    x += 1;
                    y += 1;
                }
                Edit::Delete(i) => {
                    assert_eq!(i, x);
                    x += 1;
                }
                Edit::Insert(j) => {
                    assert_eq!(j, y);
                    out.push(new[j].to_string());
                    y += 1;
                }
            }
        }
        assert_eq!((x, y), (old.len(), new.len()));
        out
    }

    fn edit_count(edits: &[Edit]) -> usize {
        edits
            .iter()
            .filter(|e| !matches!(e, Edit::Equal(..)))
            .count()
    }

    #[test]
    fn scripts_rebuild_the_new_text_with_the_fewest_edits() {
        let cases: &[(&str, &str, usize)] = &[
            ("", "", 0),
            ("a\n", "", 1),
            ("", "a\nb\n", 2),
            ("a\nb\nc\n", "a\nc\n", 1),
            ("a\nb\nc\na\nb\nb\na\n", "c\nb\na\nb\na\nc\n", 5),
            ("x\ny\nz", "x\nq\nz", 2),
            ("a\nb\n", "b\na\n", 2),
        ];
        for &(old, new, want) in cases {
            let (a, b) = (lines(old), lines(new));
            let edits = script(&a, &b).unwrap();
            assert_eq!(apply(&a, &b, &edits).concat(), new, "{old:?} -> {new:?}");
            assert_eq!(edit_count(&edits), want, "{old:?} -> {new:?}");
        }
    }

    /// The fewest edits, by dynamic programming (small inputs only).
    fn fewest(a: &[&str], b: &[&str]) -> usize {
        let mut lcs = vec![vec![0usize; b.len() + 1]; a.len() + 1];
        for i in (0..a.len()).rev() {
            for j in (0..b.len()).rev() {
                lcs[i][j] = if a[i] == b[j] {
                    lcs[i + 1][j + 1] + 1
                } else {
                    lcs[i + 1][j].max(lcs[i][j + 1])
                };
            }
        }
        a.len() + b.len() - 2 * lcs[0][0]
    }

    #[test]
    fn scripts_are_minimal_on_small_random_texts() {
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let words = ["a\n", "b\n", "c\n"];
        for _ in 0..2_000 {
            let mut text = |len: u64| -> String {
                let n = next() % len;
                (0..n).map(|_| words[(next() % 3) as usize]).collect()
            };
            let (old, new) = (text(12), text(12));
            let (a, b) = (lines(&old), lines(&new));
            let edits = script(&a, &b).unwrap();
            assert_eq!(apply(&a, &b, &edits).concat(), new, "{old:?} -> {new:?}");
            assert_eq!(edit_count(&edits), fewest(&a, &b), "{old:?} -> {new:?}");
        }
    }

    #[test]
    fn the_unified_form() {
        let old = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\n";
        let new = "one\ntwo\nthree\nfour\nFIVE\nsix\nseven\neight\nnine\nten";
        let out = unified(old, new, "A.md").unwrap();
        assert_eq!(
            out,
            "--- approved/A.md\n+++ current/A.md\n@@ -2,8 +2,9 @@\n two\n three\n four\n\
             -five\n+FIVE\n six\n seven\n eight\n nine\n+ten\n\\ No newline at end of file\n"
        );
        assert_eq!(
            unified("", "a\n", "N").unwrap(),
            "--- approved/N\n+++ current/N\n@@ -0,0 +1 @@\n+a\n"
        );
        assert_eq!(unified("same\n", "same\n", "N").unwrap(), "");
    }

    #[test]
    fn a_total_rewrite_gives_up_within_the_bounds() {
        let old: String = (0..5_000).map(|i| format!("old {i}\n")).collect();
        let new: String = (0..5_000).map(|i| format!("new {i}\n")).collect();
        let before = work();
        assert_eq!(unified(&old, &new, "N"), Err(TooHard::Edits));
        assert!(work() - before <= MAX_WORK + MAX_EDITS as u64 * 2);
    }

    #[test]
    fn output_is_bounded() {
        let new: String = (0..50_000).map(|i| format!("line {i}\n")).collect();
        let out = unified("", &new, "N").unwrap();
        assert!(out.len() <= MAX_SHOWN_BYTES + 512, "{}", out.len());
        assert!(out.ends_with("50000 lines now)]\n"), "{out}");
        let long = "\u{1b}".repeat(1 << 20);
        let out = unified("", &long, "N").unwrap();
        assert!(out.len() <= MAX_SHOWN_BYTES + 512, "{}", out.len());
        assert!(!out.contains('\u{1b}'));
    }
}
