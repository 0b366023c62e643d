//! The trust store's format: JSON a person can read.
//!
//! ```json
//! {
//!   "version": 3,
//!   "repositories": {
//!     "/work/app": {
//!       "AGENTS.md": {"kind": "instruction", "hash": "…", "text": "…",
//!                     "approvedAt": 1767225600, "policyDigest": "…"},
//!       ".lisa/skills/deploy/SKILL.md": {"kind": "skill", "hash": "…", "text": "…",
//!                     "files": {"SKILL.md": "sha256:…", "run.sh": "sha256:…"},
//!                     "approvedAt": 1767225600, "policyDigest": "…"}
//!     }
//!   }
//! }
//! ```
//!
//! Every approval keeps its hash; its text (for `trust diff`) only while
//! that text takes at most [`MAX_KEPT_TEXT_BYTES`] in the file, so no single
//! approval can grow the store by more than that. A skill approval keeps
//! its manifest (`files`: every file of the folder with its SHA-256 digest;
//! at most 512 files) and its hash is [`files_hash`](super::records::files_hash)
//! of that manifest; its text is its `SKILL.md`'s.
//!
//! Older stores are read and upgraded, never refused. Version 1 skill
//! approvals covered a skill's name and description only: marked
//! [`Covers::ListedFields`], they never match again. Version 2 skill
//! approvals covered the whole `SKILL.md` and nothing else of the folder:
//! marked [`Covers::SkillFile`], each keeps approving its skill while the
//! folder holds that `SKILL.md` alone (every byte there is was approved),
//! and approves nothing once the folder holds any other file.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::records::{ItemKind, MAX_KEPT_TEXT_BYTES};
use crate::sandbox::{MAX_STORE_BYTES, Root, Stamp, StoreBytes, StoreIoError, read_store};
use crate::vocab::reason::Reason;

/// The format version written (versions 1 and 2 are read too, and
/// upgraded).
const VERSION: u32 = 3;

/// What an approval was made over, when not over the item's whole content.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Covers {
    /// A skill approved by a version 1 store: its name and description
    /// only. It never matches; the skill must be approved again.
    ListedFields,
    /// A skill approved by a version 2 store: its whole `SKILL.md` (its
    /// hash is that file's content hash) and no other file. It matches
    /// only while the folder holds that `SKILL.md` and nothing else.
    SkillFile,
}

impl Covers {
    /// The one line shown beside an item whose approval this is.
    pub(crate) fn note(self) -> &'static str {
        match self {
            Covers::ListedFields => {
                "approved before whole-file pinning (only its name and description): approve it again"
            }
            Covers::SkillFile => {
                "approved before whole-folder pinning (its SKILL.md alone): it holds while the \
                 folder holds nothing else; approve it again to take in its other files"
            }
        }
    }
}

/// One approval.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Approval {
    /// Instruction file or skill.
    pub(crate) kind: ItemKind,
    /// xxh3-128 of the approved content, 32 hex digits.
    pub(crate) hash: String,
    /// The approved text, when it takes at most [`MAX_KEPT_TEXT_BYTES`] in
    /// the store.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) text: Option<String>,
    /// A skill's manifest as approved: every file of its folder (path below
    /// the folder) with its SHA-256 digest (`sha256:<hex>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) files: Option<BTreeMap<String, String>>,
    /// When, in seconds since the epoch.
    pub(crate) approved_at: u64,
    /// The digest of the policy in force then, 32 hex digits.
    pub(crate) policy_digest: String,
    /// Set when the approval was made over less than the whole content (an
    /// upgraded version 1 skill approval); such an approval approves
    /// nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) covers: Option<Covers>,
}

impl Approval {
    /// Whether this approval approves an instruction file whose content has
    /// `hash`.
    pub(crate) fn approves(&self, kind: ItemKind, hash: &str) -> bool {
        self.kind == kind && kind != ItemKind::Skill && self.hash == hash && self.covers.is_none()
    }

    /// Whether this approval approves a skill whose folder holds `files`
    /// (path below the folder → SHA-256 digest), hashed `hash`, and whose
    /// `SKILL.md` has the content hash `skill_md`: the whole manifest must
    /// be the approved one, digest for digest (an upgraded version 2
    /// approval: the approved `SKILL.md`, alone in its folder).
    pub(crate) fn approves_skill(
        &self,
        hash: &str,
        files: &BTreeMap<String, String>,
        skill_md: &str,
    ) -> bool {
        if self.kind != ItemKind::Skill {
            return false;
        }
        match self.covers {
            None => self.hash == hash && self.files.as_ref() == Some(files),
            Some(Covers::SkillFile) => {
                self.hash == skill_md && files.len() == 1 && files.contains_key(SKILL_MD)
            }
            Some(Covers::ListedFields) => false,
        }
    }
}

/// A skill's main file.
const SKILL_MD: &str = "SKILL.md";

/// Whether `text` takes at most [`MAX_KEPT_TEXT_BYTES`] in the store,
/// JSON-escaped (a control character takes six bytes there).
pub(crate) fn fits(text: &str) -> bool {
    // The escaped text is never shorter than the text: a cheap refusal first.
    text.len() <= MAX_KEPT_TEXT_BYTES
        && serde_json::to_string(text).is_ok_and(|s| s.len() <= MAX_KEPT_TEXT_BYTES)
}

/// The whole store.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct StoreFile {
    /// [`VERSION`].
    pub(crate) version: u32,
    /// Per repository root (absolute path), per root-relative item path.
    #[serde(default)]
    pub(crate) repositories: BTreeMap<String, BTreeMap<String, Approval>>,
}

impl Default for StoreFile {
    fn default() -> Self {
        Self {
            version: VERSION,
            repositories: BTreeMap::new(),
        }
    }
}

impl StoreFile {
    /// Parses the store's bytes (`None`: no store yet, an empty one).
    pub(crate) fn parse(bytes: Option<&[u8]>) -> Result<StoreFile, StoreProblem> {
        let Some(bytes) = bytes else {
            return Ok(StoreFile::default());
        };
        let mut store: StoreFile =
            serde_json::from_slice(bytes).map_err(|e| StoreProblem::NotJson(Arc::new(e)))?;
        match store.version {
            VERSION => {}
            1 => store.upgrade_from_v1(),
            2 => store.upgrade_from_v2(),
            other => return Err(StoreProblem::Version(other)),
        }
        Ok(store)
    }

    /// A version 1 store as version 2: its skill approvals covered the
    /// listed fields only, and are marked so (they approve nothing until
    /// the skill is approved again); instruction approvals mean what they
    /// meant.
    fn upgrade_from_v1(&mut self) {
        self.version = VERSION;
        for approval in self.repositories.values_mut().flat_map(|r| r.values_mut()) {
            if approval.kind == ItemKind::Skill {
                approval.covers = Some(Covers::ListedFields);
            }
        }
    }

    /// A version 2 store as version 3: its skill approvals covered the
    /// `SKILL.md` alone, and are marked so (each holds while its folder
    /// holds that file alone); instruction approvals mean what they meant.
    fn upgrade_from_v2(&mut self) {
        self.version = VERSION;
        for approval in self.repositories.values_mut().flat_map(|r| r.values_mut()) {
            if approval.kind == ItemKind::Skill && approval.covers.is_none() {
                approval.covers = Some(Covers::SkillFile);
            }
        }
    }

    /// Drops every text over [`MAX_KEPT_TEXT_BYTES`] (a version 1 store
    /// kept them whole), keeping the hashes.
    pub(crate) fn compact(&mut self) {
        for approval in self.repositories.values_mut().flat_map(|r| r.values_mut()) {
            if approval.text.as_deref().is_some_and(|t| !fits(t)) {
                approval.text = None;
            }
        }
    }

    /// The store as written: pretty JSON and a final newline.
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        let mut out = serde_json::to_vec_pretty(self).unwrap_or_default();
        out.push(b'\n');
        out
    }
}

/// The key of a repository root in the store.
pub(crate) fn repo_key(repo_root: &Path) -> String {
    repo_root.to_string_lossy().into_owned()
}

/// Reads the store in `home` and returns the approvals of `repo_root`, with
/// the store's stamp; why not when it cannot be used.
pub(crate) fn load_repo(
    home: &Root,
    rel: &Path,
    repo_root: &Path,
) -> Result<(BTreeMap<String, Approval>, Stamp), StoreProblem> {
    let StoreBytes { bytes, stamp } = read_store(home, rel)?;
    let mut store = StoreFile::parse(bytes.as_deref())?;
    let approvals = store
        .repositories
        .remove(&repo_key(repo_root))
        .unwrap_or_default();
    Ok((approvals, stamp))
}

/// Why the trust store cannot be used: nothing in it then counts as
/// approved.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum StoreProblem {
    /// Something other than a regular file sits at the store's name, or a
    /// link (never followed).
    #[error("it is not a regular file ({0})")]
    NotARegularFile(Reason),
    /// It is larger than the largest store read (bytes).
    #[error("it is larger than {0} bytes")]
    TooLarge(u64),
    /// Reading or writing it failed.
    #[error("{0}")]
    Io(Arc<io::Error>),
    /// Another update held its lock (this file) for too long.
    #[error(
        "another process holds its lock {}; if none is running, remove that file",
        crate::vocab::paths::shown(.0)
    )]
    Locked(PathBuf),
    /// It is not JSON of the store's shape.
    #[error("it is not a valid trust store ({0})")]
    NotJson(Arc<serde_json::Error>),
    /// It has another format version than the ones understood.
    #[error("it has version {0}, and only versions 1 to {VERSION} are understood")]
    Version(u32),
}

impl From<StoreIoError> for StoreProblem {
    fn from(e: StoreIoError) -> Self {
        match e {
            StoreIoError::Refused(reason) => Self::NotARegularFile(reason),
            StoreIoError::TooLarge => Self::TooLarge(MAX_STORE_BYTES),
            StoreIoError::Io(e) => Self::Io(Arc::new(e)),
            StoreIoError::Locked(path) => Self::Locked(path),
        }
    }
}
