//! Where a file comes from: the one vocabulary for roots.
//!
//! Every file lisa-context reads lives under one of two roots, and the root
//! decides how far it is trusted: the user's home root holds the user's own
//! words, the repository root holds whatever was cloned. Instruction blocks,
//! skills, skill sources in the policy and traced paths all name their root
//! with this one type.

use serde::Serialize;

/// The root a file was read under.
///
/// Serialized as `"home"` or `"project"` in snapshots; a policy's skill
/// source writes the repository root as `root = "repo"`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, strum::IntoStaticStr,
)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
#[non_exhaustive]
pub enum Origin {
    /// The user's home root: written by the user, for every project.
    Home,
    /// The repository root: the project's own stated conventions.
    Project,
    /// A folder above the repository root (`instructions.compat.ancestor-files`):
    /// neither the user's home nor this repository.
    Ancestor,
}

impl Origin {
    /// `home` or `project`, as in JSON, `explain` and the `{origin}`
    /// placeholder.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// Which opened root a file lives under: the home root, the repository
/// root, or one of the policy's named roots (`[[roots.named]]`, by its
/// index there). Named roots hold the user's or an administrator's files,
/// so they are trusted as the home is: their [`Origin`] is `Home`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum RootId {
    /// The home root.
    Home,
    /// The repository root.
    Repo,
    /// `roots.named[i]`.
    Named(usize),
    /// The `k`th folder above the repository root, root-most first.
    Ancestor(usize),
    /// The state root (`roots.state`), where the loader keeps its own files,
    /// when it is not the home root.
    State,
}

impl RootId {
    /// How far files under this root are trusted.
    pub(crate) fn origin(self) -> Origin {
        match self {
            RootId::Repo => Origin::Project,
            RootId::Home | RootId::Named(_) | RootId::State => Origin::Home,
            RootId::Ancestor(_) => Origin::Ancestor,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_match_their_json() {
        for origin in [Origin::Home, Origin::Project, Origin::Ancestor] {
            let json = serde_json::to_string(&origin).unwrap_or_default();
            assert_eq!(json, format!("\"{}\"", origin.as_str()));
        }
    }
}
