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
pub enum Origin {
    /// The user's home root: written by the user, for every project.
    Home,
    /// The repository root: the project's own stated conventions.
    Project,
}

impl Origin {
    /// `home` or `project`, as in JSON, `explain` and the `{origin}`
    /// placeholder.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// The word a policy writes for this root (`root = "home" | "repo"`).
    pub(crate) fn policy_word(self) -> &'static str {
        match self {
            Origin::Home => "home",
            Origin::Project => "repo",
        }
    }

    /// The root a policy's word names.
    pub(crate) fn from_policy_word(word: &str) -> Option<Origin> {
        [Origin::Home, Origin::Project]
            .into_iter()
            .find(|o| o.policy_word() == word)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_match_their_json() {
        for origin in [Origin::Home, Origin::Project] {
            let json = serde_json::to_string(&origin).unwrap_or_default();
            assert_eq!(json, format!("\"{}\"", origin.as_str()));
        }
    }
}
