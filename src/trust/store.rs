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
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::records::ItemKind;
use crate::sandbox::{Root, Stamp, StoreBytes, read_store};

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
    pub(crate) fn parse(bytes: Option<&[u8]>) -> Result<StoreFile, String> {
        let Some(bytes) = bytes else {
            return Ok(StoreFile::default());
        };
        let store: StoreFile = serde_json::from_slice(bytes)
            .map_err(|e| format!("it is not a valid trust store ({e})"))?;
        if store.version != VERSION {
            return Err(format!(
                "it has version {}, and only version {VERSION} is understood",
                store.version
            ));
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
/// the store's stamp; a sentence saying why when it cannot be used.
pub(crate) fn load_repo(
    home: &Root,
    rel: &Path,
    repo_root: &Path,
) -> Result<(BTreeMap<String, Approval>, Stamp), String> {
    let StoreBytes { bytes, stamp } = read_store(home, rel).map_err(|e| e.to_string())?;
    let mut store = StoreFile::parse(bytes.as_deref())?;
    let approvals = store
        .repositories
        .remove(&repo_key(repo_root))
        .unwrap_or_default();
    Ok((approvals, stamp))
}
