//! The trust vocabulary: what an approval is about, where an item stands,
//! and the content hashes the store keeps. Records only; the gate
//! ([`super::gate`]) and the store ([`super::store`]) use them.

use std::collections::BTreeMap;
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
    /// A skill: every file of its folder (its `SKILL.md`, frontmatter and
    /// body, and each supporting file), as its manifest lists them.
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

/// A skill's main file, the one its approval's text is.
const SKILL_MD: &str = "SKILL.md";

/// A content hash as written in the store and the snapshot.
pub(crate) fn hex(hash: u128) -> String {
    format!("{hash:032x}")
}

/// The content hash of `bytes`.
pub(crate) fn content_hash(bytes: &[u8]) -> String {
    hex(xxhash_rust::xxh3::xxh3_128(bytes))
}

/// `sha256:` and the 64 lowercase hex digits of the SHA-256 of `bytes`: a
/// file's digest in a skill's manifest.
pub(crate) fn sha256_digest(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    let sum = sha2::Sha256::digest(bytes);
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for b in sum {
        out.push(char::from(b"0123456789abcdef"[usize::from(b >> 4)]));
        out.push(char::from(b"0123456789abcdef"[usize::from(b & 15)]));
    }
    out
}

/// A skill's hash: the content hash of its manifest, every file (path
/// below the skill's folder, in path order) with its SHA-256 digest. It is
/// what `trust diff` shows and `trust approve --expect` checks, so one hash
/// covers every file of the folder.
pub(crate) fn files_hash<'a>(files: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    for (path, digest) in files {
        h.update(path.as_bytes());
        h.update(b"\0");
        h.update(digest.as_bytes());
        h.update(b"\n");
    }
    hex(h.digest128())
}

/// How one file of a skill stands against the approved manifest (a
/// changed skill's `files` in `trust status` and `trust diff`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct FileChange {
    /// The path below the skill's folder, `/`-separated (`SKILL.md`,
    /// `scripts/run.py`).
    pub path: String,
    /// New (not in the approved manifest), changed, or removed (approved,
    /// and no longer a file of the skill).
    pub change: Change,
    /// The approved SHA-256 digest (`sha256:<hex>`), when known.
    pub approved_digest: Option<String>,
    /// The current digest, when the file is there.
    pub current_digest: Option<String>,
}

/// The files of a skill that differ between `approved` (`None`: an approval
/// that kept no manifest, over its `SKILL.md` alone; `skill_md_same` says
/// whether that file still has the approved bytes) and `current`, in path
/// order.
pub(crate) fn file_changes(
    approved: Option<&BTreeMap<String, String>>,
    current: &BTreeMap<String, String>,
    skill_md_same: bool,
) -> Vec<FileChange> {
    let mut out = Vec::new();
    let Some(approved) = approved else {
        for (path, digest) in current {
            let skill_md = path == SKILL_MD;
            if skill_md && skill_md_same {
                continue;
            }
            out.push(FileChange {
                path: path.clone(),
                change: if skill_md {
                    Change::Changed
                } else {
                    Change::New
                },
                approved_digest: None,
                current_digest: Some(digest.clone()),
            });
        }
        return out;
    };
    for (path, digest) in current {
        let change = match approved.get(path) {
            Some(a) if a == digest => continue,
            Some(_) => Change::Changed,
            None => Change::New,
        };
        out.push(FileChange {
            path: path.clone(),
            change,
            approved_digest: approved.get(path).cloned(),
            current_digest: Some(digest.clone()),
        });
    }
    for (path, digest) in approved {
        if !current.contains_key(path) {
            out.push(FileChange {
                path: path.clone(),
                change: Change::Removed,
                approved_digest: Some(digest.clone()),
                current_digest: None,
            });
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
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
    /// approves nothing, one made before whole-folder pinning (over a
    /// skill's `SKILL.md` alone) holds only while the folder holds nothing
    /// else, and a skill that cannot be approved says why here.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// For a changed skill: each file of its folder that is new, changed or
    /// removed since the approval; for a new skill, every file of its folder
    /// (as `new`); in path order (empty otherwise).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub files: Vec<FileChange>,
    /// Why this skill cannot be approved as it is (more files or bytes than
    /// a skill may have, a file name that is not UTF-8); `None` when it
    /// can. Such a skill has no current hash.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unapprovable: Option<String>,
    /// The path relative to the repository root (the store's key).
    #[serde(skip)]
    pub(crate) rel: String,
    /// A skill's current manifest (path below its folder → SHA-256
    /// digest), recorded with its approval.
    #[serde(skip)]
    pub(crate) manifest: Option<BTreeMap<String, String>>,
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
    /// cut. For a skill, the diff is its `SKILL.md`'s, followed by one line
    /// per file of its folder that is new, changed or removed since the
    /// approval (its digests and size; the file itself is on disk to read).
    pub fn diff(&self) -> String {
        let mut out = self.text_diff();
        for f in &self.files {
            let digest = |d: &Option<String>| d.clone().unwrap_or_else(|| "-".into());
            out.push_str(&format!(
                "file {}: {}, {} -> {}\n",
                terminal_safe_name(&f.path),
                match f.change {
                    Change::New => "new",
                    Change::Changed => "changed",
                    Change::Removed => "removed",
                },
                digest(&f.approved_digest),
                digest(&f.current_digest),
            ));
        }
        if let Some(why) = &self.unapprovable {
            out.push_str(&format!(
                "{}: cannot be approved: {}\n",
                terminal_safe_name(&self.rel),
                terminal_safe_name(why)
            ));
        }
        out
    }

    /// The diff of the item's text (a skill's `SKILL.md`).
    fn text_diff(&self) -> String {
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
