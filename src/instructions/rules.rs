//! Scoped rules: an instruction file whose frontmatter carries `paths:`
//! globs applies only to those paths. Under `instructions.scoped-rules`,
//! such a file is not loaded with the chain; it is listed in the snapshot
//! with its globs (`scopedRules`) and loaded on access, when the agent
//! touches a path one of its globs matches (globs are relative to the
//! repository root; `*` stays within one folder).

use std::path::PathBuf;

use globset::{GlobSet, GlobSetBuilder};
use serde::{Deserialize, Serialize};

use crate::vocab::origin::Origin;

/// A rule that applies only to some paths.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ScopedRule {
    /// The rule's file.
    #[serde(serialize_with = "crate::vocab::paths::lossy")]
    pub path: PathBuf,
    /// Home or project.
    pub origin: Origin,
    /// The globs of its `paths:` frontmatter, as written.
    pub globs: Vec<String>,
    /// Where the rule lives, for loading it on access.
    #[serde(skip)]
    pub(crate) root: crate::vocab::origin::RootId,
    /// The rule's path relative to its root.
    #[serde(skip)]
    pub(crate) rel: PathBuf,
}

/// `paths:` as a string or a list of strings.
#[derive(Deserialize)]
#[serde(untagged)]
enum Globs {
    One(String),
    Many(Vec<String>),
}

/// The frontmatter fields a rule file is read for.
#[derive(Deserialize)]
struct RuleMeta {
    #[serde(default)]
    paths: Option<Globs>,
}

/// The `paths:` globs of a file's frontmatter (a `---` block at its very
/// start), when it has any. A frontmatter that does not parse, or without
/// `paths`, makes an ordinary file.
pub(crate) fn scope_of(text: &str) -> Option<Vec<String>> {
    let rest = text.strip_prefix("---\n")?;
    let end = if rest.starts_with("---\n") || rest == "---" {
        0
    } else {
        rest.find("\n---\n")
            .map(|e| e + 1)
            .or_else(|| rest.ends_with("\n---").then(|| rest.len() - 3))?
    };
    let meta: RuleMeta = serde_saphyr::from_str(&rest[..end]).ok()?;
    let globs = match meta.paths? {
        Globs::One(g) => vec![g],
        Globs::Many(gs) => gs,
    };
    let globs: Vec<String> = globs
        .into_iter()
        .map(|g| g.trim().to_string())
        .filter(|g| !g.is_empty())
        .collect();
    (!globs.is_empty()).then_some(globs)
}

/// The globs compiled (the ones that do not compile never match).
pub(crate) fn matcher(globs: &[String]) -> GlobSet {
    let mut set = GlobSetBuilder::new();
    for g in globs {
        if let Ok(glob) = crate::policy::compile_glob(g.trim_start_matches("./")) {
            set.add(glob);
        }
    }
    set.build().unwrap_or_else(|_| GlobSet::empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_come_from_the_frontmatter_only() {
        assert_eq!(
            scope_of("---\npaths:\n  - \"src/**/*.ts\"\n  - lib/*.rs\n---\nRule.\n"),
            Some(vec!["src/**/*.ts".to_string(), "lib/*.rs".to_string()])
        );
        assert_eq!(
            scope_of("---\npaths: docs/**\n---\n"),
            Some(vec!["docs/**".to_string()])
        );
        assert_eq!(scope_of("---\ntitle: x\n---\nRule.\n"), None);
        assert_eq!(scope_of("Rule.\n---\npaths: x\n---\n"), None);
        assert_eq!(scope_of("---\npaths: [unclosed\n---\n"), None);
    }

    #[test]
    fn a_star_stays_in_one_folder() {
        let m = matcher(&["src/*.ts".to_string()]);
        assert!(m.is_match("src/a.ts"));
        assert!(!m.is_match("src/deep/a.ts"));
    }
}
