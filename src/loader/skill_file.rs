//! The record [`Loader::skill`](super::Loader::skill) answers.

use std::path::PathBuf;

use serde::Serialize;

use crate::error::{ErrorCode, SkillReadError, SnapshotError, operation_diagnostic};
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

/// Why the skill asked for by name ([`Loader::skill`](super::Loader::skill))
/// could not be given.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SkillError {
    /// The snapshot the skill is resolved in could not be built, or a
    /// root could not be read under.
    #[error(transparent)]
    Snapshot(#[from] SnapshotError),
    /// A skill name that fails the policy's name rule, or holds a character
    /// a reader does not see (checked before any file is touched).
    #[error(
        "{0:?} is not a valid skill name: it fails the policy's name rule or holds a character a reader does not see"
    )]
    InvalidName(String),
    /// No skill of that name wins for this cwd.
    #[error(
        "no skill named {name:?} is available from {}",
        crate::vocab::paths::shown(cwd)
    )]
    NotFound {
        /// The name asked for.
        name: String,
        /// The cwd it was resolved for.
        cwd: PathBuf,
        /// The skills available from that cwd, in name order (the help
        /// names the nearest and lists them).
        available: Vec<String>,
    },
    /// The winning skill's file could not be read in full.
    #[error(
        "cannot read skill file {}: {reason}",
        crate::vocab::paths::shown(path)
    )]
    Unreadable {
        /// The SKILL.md.
        path: PathBuf,
        /// Why.
        reason: SkillReadError,
    },
}

impl SkillError {
    /// The snapshot error inside, when that is the case.
    pub fn snapshot(&self) -> Option<&SnapshotError> {
        match self {
            Self::Snapshot(inner) => Some(inner),
            _ => None,
        }
    }

    /// The one table of this error's own codes: diagnostic and wire.
    fn codes(&self) -> (&'static str, ErrorCode) {
        match self {
            Self::Snapshot(_) => ("", ErrorCode::BadRequest),
            Self::InvalidName(_) => ("skill::invalid-name", ErrorCode::InvalidSkillName),
            Self::NotFound { .. } => ("skill::not-found", ErrorCode::SkillNotFound),
            Self::Unreadable { .. } => ("skill::unreadable", ErrorCode::SkillUnreadable),
        }
    }

    fn own_code(&self) -> &'static str {
        self.codes().0
    }

    fn own_help(&self) -> Option<String> {
        match self {
            Self::NotFound {
                name, available, ..
            } => Some(crate::vocab::suggest::name_advice("skill", name, available)),
            _ => None,
        }
    }

    /// The wire code of this error (`error.code` in `serve`'s responses).
    pub fn wire_code(&self) -> ErrorCode {
        match self.snapshot() {
            Some(inner) => inner.wire_code(),
            None => self.codes().1,
        }
    }
}

operation_diagnostic!(SkillError);
