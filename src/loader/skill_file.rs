//! The record [`Loader::skill`](super::Loader::skill) answers.

use std::path::PathBuf;

use serde::Serialize;

use crate::hidden::HiddenReport;
use crate::vocab::origin::Origin;

/// The `SKILL.md` of the skill that wins a name.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SkillFile {
    /// The skill's name.
    pub name: String,
    /// Home or project.
    pub origin: Origin,
    /// The file's absolute path.
    #[serde(serialize_with = "crate::vocab::paths::lossy")]
    pub path: PathBuf,
    /// The whole file: frontmatter and body, its hidden text treated under
    /// the policy's `trust.hidden-text` rule as an instruction file's is
    /// (revealed as markers by default).
    pub content: String,
    /// What hidden text the file held (zero-width, bidi, tag and control
    /// characters, HTML comments): empty counts when none. Counted in every
    /// mode, `keep` included.
    pub hidden_text: HiddenReport,
}
