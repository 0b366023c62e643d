//! What a skill source yields: the skills that passed every check, and
//! what was refused and why.

use std::path::PathBuf;
use std::sync::Arc;

use super::frontmatter::Frontmatter;
use crate::vocab::origin::{Origin, RootId};
use crate::vocab::reason::Reason;

/// A skill folder that passed every check.
#[derive(Debug, Clone)]
pub(crate) struct Found {
    /// The folder name, equal to the frontmatter name.
    pub(crate) name: String,
    /// The parsed frontmatter (shared by the policies that read the file
    /// the same way, unless a policy's own rules change its description).
    pub(crate) frontmatter: Arc<Frontmatter>,
    /// The root of its source.
    pub(crate) root: RootId,
    /// That root's trust.
    pub(crate) origin: Origin,
    /// The source's path, as the policy writes it.
    pub(crate) source: String,
    /// The source's rank.
    pub(crate) rank: i64,
    /// The `SKILL.md`, relative to its root.
    pub(crate) rel: PathBuf,
    /// The `SKILL.md`, absolute.
    pub(crate) path: PathBuf,
    /// A home skill shipping the policy's executable file.
    pub(crate) executable: bool,
    /// For a source looked for at several levels, the level it was found
    /// at (0 for the repository root): among equal ranks, the nearest
    /// level wins.
    pub(crate) level: usize,
    /// A project skill under `trust.project = "pinned"`: the content hash
    /// of its whole `SKILL.md`'s raw bytes (read once, with the
    /// frontmatter), which is what approval pins.
    pub(crate) pinned_hash: Option<String>,
    /// The same `SKILL.md`'s SHA-256 digest and size (its manifest entry).
    pub(crate) pinned_digest: Option<(String, u64)>,
    /// A pinned project skill the gate admitted: the hash of its whole
    /// folder's manifest as approved (see `trust::files_hash`).
    pub(crate) pinned_files: Option<String>,
}

/// A folder or file that was examined and refused.
#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct Rejected {
    /// What was refused (a skill folder, its `SKILL.md`, or a source).
    #[serde(serialize_with = "crate::vocab::paths::lossy")]
    pub path: PathBuf,
    /// Why.
    pub reason: Reason,
}
