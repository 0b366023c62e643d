//! The trust vocabulary: what an approval is about, where an item stands,
//! and the content hashes the store keeps. Records only; the gate
//! ([`super::gate`]) and the store ([`super::store`]) use them.

use std::path::{Path, PathBuf};

use serde::Serialize;

/// What kind of project item an approval is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum ItemKind {
    /// An instruction file (`AGENTS.md`...).
    Instruction,
    /// A skill: its whole `SKILL.md` (frontmatter and body).
    Skill,
}

/// Why a project item is not in the prompt under `pinned` (`unapproved[].kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Change {
    /// Never approved.
    New,
    /// Its content differs from the approved one.
    Changed,
    /// Approved, and no longer there (nothing of it is in the prompt; the
    /// approval waits to be confirmed or revoked).
    Removed,
}

/// A project item left out of the prompt, or an approval whose item is gone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Unapproved {
    /// Absolute path: the instruction file, or the skill's `SKILL.md`.
    #[serde(serialize_with = "crate::vocab::paths::lossy")]
    pub path: PathBuf,
    /// New, changed or removed.
    pub kind: Change,
    /// Instruction file or skill.
    pub item: ItemKind,
    /// The hash approved (32 hex digits), if any.
    pub approved_hash: Option<String>,
    /// The hash of the current content, if the item is there.
    pub current_hash: Option<String>,
}

/// The most an approval's text may take in the store, JSON-escaped: a text
/// any longer is not kept (the approval keeps its hash, and `trust diff`
/// shows the hashes instead of lines).
pub(crate) const MAX_KEPT_TEXT_BYTES: usize = 256 * 1024;

/// A content hash as written in the store and the snapshot.
pub(crate) fn hex(hash: u128) -> String {
    format!("{hash:032x}")
}

/// The content hash of `bytes`.
pub(crate) fn content_hash(bytes: &[u8]) -> String {
    hex(xxhash_rust::xxh3::xxh3_128(bytes))
}

/// Where a project item stands with the user.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum TrustState {
    /// Its current content is the approved one.
    Approved,
    /// Never approved (pending).
    New,
    /// Changed since the approval (pending).
    Changed,
    /// Approved, and gone (stale).
    Removed,
}

impl TrustState {
    /// The kebab-case word.
    pub fn as_str(self) -> &'static str {
        match self {
            TrustState::Approved => "approved",
            TrustState::New => "new",
            TrustState::Changed => "changed",
            TrustState::Removed => "removed",
        }
    }

    /// Whether the item waits for a decision (new, changed or removed).
    pub fn is_pending(self) -> bool {
        self != TrustState::Approved
    }
}

/// One project item of a repository, with its approval.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TrustItem {
    /// Absolute path: the instruction file, or the skill's `SKILL.md`.
    #[serde(serialize_with = "crate::vocab::paths::lossy")]
    pub path: PathBuf,
    /// Instruction file or skill.
    pub kind: ItemKind,
    /// Approved, new, changed or removed.
    pub state: TrustState,
    /// The approved hash, if any (32 hex digits).
    pub approved_hash: Option<String>,
    /// The current content's hash, when the item is there.
    pub current_hash: Option<String>,
    /// When it was approved, in seconds since the epoch.
    pub approved_at: Option<u64>,
    /// The approved text, when the store kept it (texts over 256 KiB are
    /// not kept: the approval holds the hash alone).
    #[serde(skip)]
    pub approved_text: Option<String>,
    /// The current text (lossily decoded), when the item is there.
    #[serde(skip)]
    pub current_text: Option<String>,
    /// A one-line note on the approval, when it needs one: an approval made
    /// before whole-file pinning (over a skill's name and description only)
    /// approves nothing, and says so here.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The path relative to the repository root (the store's key).
    #[serde(skip)]
    pub(crate) rel: String,
}

impl TrustItem {
    /// A unified diff from the approved text to the current one (an absent
    /// side counts as empty), every line made safe for a terminal with
    /// [`terminal_safe`](crate::vocab::unicode::terminal_safe): control, bidi and invisible
    /// characters are shown as `\u{…}`.
    ///
    /// The work is bounded by counts, so the answer is the same on every
    /// machine: when the texts are too long or too different to compare
    /// line by line (more than 200,000 lines, more than 1,000 lines
    /// differing, or 10,000,000 steps of the search), or the approved text
    /// was not kept (over 256 KiB), the diff is one line: `changed, N lines
    /// (M approved), hashes A -> B` and why. What is shown is bounded as
    /// well: at most 2,000 lines and 64 KiB, then a line saying the rest is
    /// cut.
    pub fn diff(&self) -> String {
        if self.current_hash.is_some() && self.current_text.is_none() {
            return self.summary(
                self.approved_text.as_deref(),
                None,
                "the current text is not kept: the review's budget for skill texts ran out",
            );
        }
        let new = self.current_text.as_deref().unwrap_or("");
        let old = match (&self.approved_hash, &self.approved_text) {
            (Some(_), None) => {
                return self.summary(
                    None,
                    Some(new),
                    &format!(
                        "the approved text is not kept: it is over {} bytes",
                        MAX_KEPT_TEXT_BYTES
                    ),
                );
            }
            (_, old) => old.as_deref().unwrap_or(""),
        };
        match super::diff::unified(old, new, &terminal_safe_name(&self.rel)) {
            Ok(text) => text,
            Err(too_hard) => self.summary(Some(old), Some(new), &too_hard.why()),
        }
    }

    /// The one-line diff of an item too large or too changed to show line by
    /// line.
    fn summary(&self, old: Option<&str>, new: Option<&str>, why: &str) -> String {
        let count = |t: Option<&str>| t.map(super::diff::line_count);
        let lines = count(new).map_or_else(String::new, |n| format!(", {n} lines"));
        let approved = count(old).map_or_else(String::new, |n| format!(" ({n} approved)"));
        let hash = |h: &Option<String>| h.clone().unwrap_or_else(|| "-".into());
        format!(
            "{}: {}{lines}{approved}, hashes {} -> {} (no line diff: {why})\n",
            terminal_safe_name(&self.rel),
            self.state.as_str(),
            hash(&self.approved_hash),
            hash(&self.current_hash),
        )
    }
}

/// A store key as a terminal shows it.
fn terminal_safe_name(rel: &str) -> String {
    crate::vocab::unicode::terminal_safe(rel).into_owned()
}

/// The project items of one repository as seen from a cwd: its instruction
/// files on the chain to that cwd, and its skills.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TrustStatus {
    /// The repository root.
    #[serde(serialize_with = "crate::vocab::paths::lossy")]
    pub repo_root: PathBuf,
    /// The trust store, when there is a home root.
    #[serde(serialize_with = "crate::vocab::paths::lossy_opt")]
    pub store: Option<PathBuf>,
    /// Every item, in path order.
    pub items: Vec<TrustItem>,
}

/// A root-relative path as a store key.
pub(crate) fn key(rel: &Path) -> String {
    rel.to_string_lossy().into_owned()
}

/// Which items [`Loader::trust_approve`](crate::Loader::trust_approve)
/// approves.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Selection {
    /// Every pending item, as it is when the store is locked.
    All,
    /// The items at these absolute paths (an instruction file, a skill's
    /// `SKILL.md` or its folder), each with the hash the user was shown
    /// (`Some`): the approval fails, and nothing is approved, when the
    /// content is no longer the one with that hash. `None` takes the
    /// content as it is when the store is locked. For a removed item the
    /// expected hash is `"-"`.
    Paths(Vec<(PathBuf, Option<String>)>),
}
