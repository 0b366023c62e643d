//! What the instruction stage reports: the blocks kept, the files folded or
//! skipped, the budget, and one row per candidate for `explain`.

use std::path::PathBuf;
use std::sync::Arc;

use serde::Serialize;

use crate::vocab::origin::Origin;
use crate::vocab::reason::Reason;

/// An instruction file that goes into the prompt.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Block {
    /// Absolute path of the file.
    #[serde(serialize_with = "crate::vocab::paths::lossy")]
    pub path: PathBuf,
    /// Home or project.
    pub origin: Origin,
    /// The root it was read under: `home`, `repo`, or a named root's name.
    pub root: String,
    /// The file's size on disk.
    pub bytes: u64,
    /// The file's text, in UTF-8 bytes, as it would enter the prompt:
    /// trimmed, line breaks normalised, hidden text treated (revealed hidden
    /// characters make it larger than the file). For a file not read to its
    /// end (`max-file-bytes`, or a read the budget left stopped), the text
    /// of the part read: the whole text's size is then unknown.
    pub text_bytes: u64,
    /// The bytes of that text included in the prompt (at most `text_bytes`);
    /// this is what the budget counts.
    pub included_bytes: u64,
    /// Whether the text was cut (budget, or the per-file read cap).
    pub truncated: bool,
    /// Whether the budget cut the text (`budget.exhausted` is then true).
    pub budget_cut: bool,
    /// Whether `instructions.max-file-bytes` stopped the read before the end
    /// of the file while the budget still had room after what it read (a
    /// read that reached the budget left is a budget cut: `budget_cut`).
    pub file_limit_cut: bool,
    /// Whether `instructions.compat.max-file-chars` cut the text.
    pub char_limit_cut: bool,
    /// Whether the repository's share of the prompt
    /// (`instructions.project-prompt-bytes`) cut the text: the block that
    /// crossed it (`truncated` too).
    pub share_cut: bool,
    /// When it did: how many characters (`char-unit`s) the text had.
    #[serde(skip)]
    pub(crate) text_chars: u64,
    /// When it did: the cap that cut it (`max-file-chars`, or what its
    /// source's `home-max-chars`/`project-max-chars` had left).
    #[serde(skip)]
    pub(crate) char_limit: u64,
    /// Whether that cap was its source's rather than the file's own.
    #[serde(skip)]
    pub(crate) char_source_cut: bool,
    /// Whether the read stopped before the end of the file (the per-file
    /// cap, or the budget left): no note then states the size of a text
    /// that was never read whole.
    #[serde(skip)]
    pub(crate) read_cut: bool,
    /// Whether it was the per-file cap that stopped it (`file_limit_cut`
    /// also when the budget then decided the cut).
    #[serde(skip)]
    pub(crate) read_capped: bool,
    /// The text included (trimmed, line breaks normalised, hidden text
    /// treated). A loader holds each distinct text once, however many of
    /// its cached snapshots show it.
    #[serde(skip)]
    pub text: Arc<str>,
    /// Position in read order.
    #[serde(skip)]
    pub(crate) order: usize,
    /// Position in the order the budget was granted in (the repository's
    /// share of the prompt is granted in the same order).
    #[serde(skip)]
    pub(crate) granted: usize,
    /// What it charged the budget (0: the budget does not count it).
    #[serde(skip)]
    pub(crate) charged: u64,
}

/// A file folded into an earlier one.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Deduped {
    /// The folded file.
    #[serde(serialize_with = "crate::vocab::paths::lossy")]
    pub path: PathBuf,
    /// The kept file it repeats.
    #[serde(serialize_with = "crate::vocab::paths::lossy")]
    pub same_as: PathBuf,
}

/// A file not used, and why.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Skipped {
    /// The file.
    #[serde(serialize_with = "crate::vocab::paths::lossy")]
    pub path: PathBuf,
    /// Why.
    pub reason: Reason,
}

/// The budget after selection.
#[derive(Debug, Clone, Copy, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Budget {
    /// The limit in UTF-8 bytes.
    pub limit: u64,
    /// Bytes used.
    pub used: u64,
    /// Whether some text was cut or dropped for lack of budget.
    pub exhausted: bool,
}

/// What happened to one candidate (for `explain`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Status {
    /// Nothing at the path.
    Absent,
    /// Included whole.
    Included,
    /// Included, cut.
    Truncated,
    /// Folded into another file with the same text.
    Deduped(PathBuf),
    /// Same file (device and inode) as another.
    SameFile(PathBuf),
    /// Not used.
    Skipped(Reason),
    /// Not looked at: its place uses one name, and this file took it.
    NotPicked(PathBuf),
}

/// One candidate and what happened to it.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Considered {
    /// The path.
    pub path: PathBuf,
    /// Home or project.
    pub origin: Origin,
    /// The outcome.
    pub status: Status,
}
