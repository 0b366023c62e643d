//! The trust store's format: JSON a person can read.
//!
//! ```json
//! {
//!   "version": 1,
//!   "repositories": {
//!     "/work/app": {
//!       "AGENTS.md": {"kind": "instruction", "hash": "…", "text": "…",
//!                     "approvedAt": 1767225600, "policyDigest": "…"}
//!     }
//!   }
//! }
//! ```

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::records::ItemKind;
use crate::sandbox::{MAX_STORE_BYTES, Root, Stamp, StoreBytes, StoreIoError, read_store};
use crate::vocab::reason::Reason;

/// The format version written and accepted.
const VERSION: u32 = 1;

/// One approval.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Approval {
    /// Instruction file or skill.
    pub(crate) kind: ItemKind,
    /// xxh3-128 of the approved content, 32 hex digits.
    pub(crate) hash: String,
    /// The approved text.
    pub(crate) text: String,
    /// When, in seconds since the epoch.
    pub(crate) approved_at: u64,
    /// The digest of the policy in force then, 32 hex digits.
    pub(crate) policy_digest: String,
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
        let store: StoreFile =
            serde_json::from_slice(bytes).map_err(|e| StoreProblem::NotJson(Arc::new(e)))?;
        if store.version != VERSION {
            return Err(StoreProblem::Version(store.version));
        }
        Ok(store)
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
    /// It has another format version than the one understood.
    #[error("it has version {0}, and only version {VERSION} is understood")]
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
