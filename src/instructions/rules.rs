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
use crate::vocab::warning::{Warning, WarningKind};

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

/// The most `paths:` globs one rule keeps (the first ones, as written).
pub(crate) const MAX_GLOBS_PER_RULE: usize = 64;

/// The most globs the scoped rules of one build keep together (in read
/// order: a rule read later keeps what the earlier ones left).
pub(crate) const MAX_GLOBS: usize = 1024;

/// The longest glob kept, in bytes.
pub(crate) const MAX_GLOB_BYTES: usize = 1024;

/// The scoped rules' globs, compiled once for a build into one set: which
/// rule each glob of the set belongs to. An access asks it which rules
/// apply to a path; nothing is compiled then.
#[derive(Debug, Clone, Default)]
pub(crate) struct RuleMatcher {
    set: GlobSet,
    /// For each glob of `set`, the index of its rule.
    owner: Vec<usize>,
}

impl RuleMatcher {
    /// The globs of `rules` compiled (the ones that do not compile never
    /// match).
    pub(crate) fn new(rules: &[ScopedRule]) -> Self {
        if rules.is_empty() {
            return Self::default();
        }
        let mut set = GlobSetBuilder::new();
        let mut owner = Vec::new();
        for (i, rule) in rules.iter().enumerate() {
            for g in &rule.globs {
                if let Ok(glob) = crate::policy::compile_glob(g.trim_start_matches("./")) {
                    set.add(glob);
                    owner.push(i);
                }
            }
        }
        use crate::vocab::counters::{Counter, add, bump};
        bump(Counter::ScopedGlobSets);
        add(Counter::ScopedGlobs, owner.len() as u64);
        match set.build() {
            Ok(set) => Self { set, owner },
            Err(_) => Self::default(),
        }
    }

    /// How many globs were compiled.
    pub(crate) fn globs(&self) -> usize {
        self.owner.len()
    }

    /// The indices of the rules one of whose globs matches `path` (a
    /// root-relative path with `/` separators), in rule order.
    pub(crate) fn matching(&self, path: &str) -> Vec<usize> {
        if self.owner.is_empty() {
            return Vec::new();
        }
        crate::vocab::counters::bump(crate::vocab::counters::Counter::ScopedMatches);
        let mut rules: Vec<usize> = self
            .set
            .matches(path)
            .into_iter()
            .filter_map(|g| self.owner.get(g).copied())
            .collect();
        rules.sort_unstable();
        rules.dedup();
        rules
    }
}

/// The scoped rules of one build (in read order) held to the caps: each
/// keeps its first [`MAX_GLOBS_PER_RULE`] globs of at most
/// [`MAX_GLOB_BYTES`] bytes, and all of them together at most
/// [`MAX_GLOBS`]. A rule that lost globs gets a warning saying how many
/// (a rule left with none is still listed: it applies to no path). Returns
/// the rules, their globs compiled, and the warnings.
pub(crate) fn settle(mut rules: Vec<ScopedRule>) -> (Vec<ScopedRule>, RuleMatcher, Vec<Warning>) {
    let mut left = MAX_GLOBS;
    let mut warnings = Vec::new();
    for rule in &mut rules {
        let written = rule.globs.len();
        let room = left.min(MAX_GLOBS_PER_RULE);
        let kept: Vec<String> = std::mem::take(&mut rule.globs)
            .into_iter()
            .take(room)
            .filter(|g| g.len() <= MAX_GLOB_BYTES)
            .collect();
        left -= kept.len();
        if kept.len() < written {
            warnings.push(Warning::new(
                WarningKind::ScopedGlobLimit,
                &rule.path,
                format!(
                    "{} of this rule's {written} `paths:` globs are not used: a rule keeps its \
                     first {MAX_GLOBS_PER_RULE}, the rules of one build {MAX_GLOBS} in all, \
                     each of at most {MAX_GLOB_BYTES} bytes",
                    written - kept.len()
                ),
            ));
        }
        rule.globs = kept;
    }
    let matcher = RuleMatcher::new(&rules);
    (rules, matcher, warnings)
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

    fn rule(globs: &[&str]) -> ScopedRule {
        ScopedRule {
            path: PathBuf::from("/r/.claude/rules/a.md"),
            origin: Origin::Project,
            globs: globs.iter().map(|g| g.to_string()).collect(),
            root: crate::vocab::origin::RootId::Repo,
            rel: PathBuf::from(".claude/rules/a.md"),
        }
    }

    #[test]
    fn a_star_stays_in_one_folder() {
        let m = RuleMatcher::new(&[rule(&["src/*.ts"])]);
        assert_eq!(m.matching("src/a.ts"), vec![0]);
        assert!(m.matching("src/deep/a.ts").is_empty());
    }

    #[test]
    fn the_caps_cut_with_a_warning() {
        let many: Vec<String> = (0..MAX_GLOBS_PER_RULE + 5)
            .map(|i| format!("d{i}/**"))
            .collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        let long = "x".repeat(MAX_GLOB_BYTES + 1);
        let rules: Vec<ScopedRule> = (0..MAX_GLOBS / MAX_GLOBS_PER_RULE + 1)
            .map(|_| rule(&many))
            .chain([rule(&[long.as_str(), "ok/**"])])
            .collect();
        let (rules, m, warnings) = settle(rules);
        let kept: usize = rules.iter().map(|r| r.globs.len()).sum();
        assert_eq!(kept, MAX_GLOBS);
        assert_eq!(rules[0].globs.len(), MAX_GLOBS_PER_RULE);
        assert!(rules.last().is_some_and(|r| r.globs.is_empty()));
        assert_eq!(warnings.len(), rules.len());
        assert_eq!(m.matching("d3/x"), (0..rules.len() - 2).collect::<Vec<_>>());
    }
}
