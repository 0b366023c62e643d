//! Warnings: things that did not stop the snapshot but that the user should
//! know about, each with a stable kind word, the path concerned and a
//! sentence.

use std::path::PathBuf;

use serde::Serialize;

/// What a warning is about. The kebab-case words are part of the JSON
/// contract (`warnings[].kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, strum::IntoStaticStr)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
#[non_exhaustive]
pub enum WarningKind {
    /// A repository marker in a directory another user owns was ignored
    /// (`roots.safe-directories` can trust it).
    UnsafeRepository,
    /// The home root lies inside the repository.
    HomeInsideRepository,
    /// The repository lies inside the home root.
    RepositoryInsideHome,
    /// The home root and the repository root are the same directory.
    HomeIsRepository,
    /// A project file with more than one hard link (it may be a link to a
    /// file outside the repository).
    HardLink,
    /// A `SKILL.md` whose frontmatter is not strict YAML, read by the
    /// lenient fallback (`skills.frontmatter = "lenient"`).
    LenientFrontmatter,
    /// Under `trust.project = "pinned"`, the trust store in the home root
    /// could not be used (not a regular file, unreadable, not valid JSON):
    /// no project item counts as approved.
    TrustStore,
    /// A folder above the repository root, or a file or folder in one,
    /// that another user owns (root excepted) was not read as an ancestor
    /// file (`roots.safe-directories` can trust the folder).
    UnsafeAncestor,
    /// The state folder (`roots.state`: the home root under Lisa's policy,
    /// a folder of the loader's own under the others) is not used: another
    /// user owns it or a file of it (the nonce key, the trust store, the
    /// frontmatter memo), or group or others may write it or such a file.
    /// None of its files is read or written: the nonce comes from this
    /// process's own key, and under `trust.project = "pinned"` nothing
    /// counts as approved.
    UnsafeState,
    /// A scoped rule with more `paths:` globs than a rule (or the rules of
    /// its side together: the home's, above the repository, the
    /// repository's) may keep, or with globs too long: only the first ones
    /// are used.
    ScopedGlobLimit,
    /// A scoped rule's glob that this engine cannot compile: one that does
    /// not parse is left out of its rule; when a rule's globs are more
    /// than the engine compiles, the rule loads on no path. Either way it
    /// costs that rule only.
    ScopedGlobInvalid,
    /// A policy file writes a key in a spelling read for one release only
    /// (a compat key at its section's top level: `instructions.trim` for
    /// `instructions.compat.trim`). The value is used; the message names
    /// the new spelling and where the old one is (`policy::deprecated-key`).
    DeprecatedPolicyKey,
}

impl WarningKind {
    /// The kebab-case word.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// One warning.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct Warning {
    /// What it is about.
    pub kind: WarningKind,
    /// The directory or file concerned.
    #[serde(serialize_with = "crate::vocab::paths::lossy")]
    pub path: PathBuf,
    /// A sentence for a person.
    pub message: String,
}

impl Warning {
    pub(crate) fn new(
        kind: WarningKind,
        path: impl Into<PathBuf>,
        message: impl Into<String>,
    ) -> Self {
        Self {
            kind,
            path: path.into(),
            message: message.into(),
        }
    }

    /// The warning for a project file with more than one hard link.
    pub(crate) fn hard_link(path: &std::path::Path) -> Self {
        Self::new(
            WarningKind::HardLink,
            path,
            "this project file has more than one hard link: it may be a link to a file \
             outside the repository (trust.hard-links decides whether it is read)",
        )
    }
}
