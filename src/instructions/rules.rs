//! Scoped rules: an instruction file whose frontmatter carries `paths:`
//! globs applies only to those paths. Under `instructions.scoped-rules`,
//! such a file is not loaded with the chain; it is listed in the snapshot
//! with its globs (`scopedRules`) and loaded on access, when the agent
//! touches a path one of its globs matches (globs are relative to the
//! repository root; `*` stays within one folder).

use std::path::PathBuf;

use globset::{GlobSet, GlobSetBuilder};
use regex::bytes::{RegexBuilder, RegexSet, RegexSetBuilder};
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
    /// How many leading components of `rel` are the folder it was found
    /// in (see `Candidate::at`): a `[rules]` file is known again by its
    /// name there when an access loads it.
    #[serde(skip)]
    pub(crate) at: usize,
    /// Its content patterns (`rules.regex-keys`), compiled: when present,
    /// a touched file must also match one of them (an empty set: none
    /// compiled, so the rule never loads).
    #[serde(skip)]
    pub(crate) content: Option<RegexSet>,
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

/// The text of a file's frontmatter: the block between a `---` line at the
/// very start of the file and the next `---` line, when there is one.
pub(crate) fn frontmatter_of(text: &str) -> Option<&str> {
    let rest = text.strip_prefix("---\n")?;
    let end = if rest.starts_with("---\n") || rest == "---" {
        0
    } else {
        rest.find("\n---\n")
            .map(|e| e + 1)
            .or_else(|| rest.ends_with("\n---").then(|| rest.len() - 3))?
    };
    Some(&rest[..end])
}

/// Where the body of a file with a frontmatter starts (after the closing
/// `---` line), when it has one.
pub(crate) fn body_start(text: &str) -> Option<usize> {
    let fm = frontmatter_of(text)?;
    let close = "---\n".len() + fm.len();
    let rest = text.get(close..)?.strip_prefix("---")?;
    if rest.is_empty() {
        Some(text.len())
    } else {
        rest.starts_with('\n').then_some(close + 4)
    }
}

/// The `paths:` globs of a file's frontmatter (a `---` block at its very
/// start), when it has any. A frontmatter that does not parse, or without
/// `paths`, makes an ordinary file.
pub(crate) fn scope_of(text: &str) -> Option<Vec<String>> {
    let meta: RuleMeta = serde_saphyr::from_str(frontmatter_of(text)?).ok()?;
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

/// When a rule (`[rules]`) applies: what its frontmatter says, read as the
/// policy declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, strum::IntoStaticStr)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
#[non_exhaustive]
pub enum Activation {
    /// A block of the chain, in every prompt.
    Always,
    /// Loaded when a touched path matches one of its globs (also listed in
    /// `scopedRules`).
    OnAccess,
    /// Listed in the prompt by name and description; the agent reads it
    /// when it wants it.
    Listed,
    /// Not in the prompt: loaded only when the user names it.
    Manual,
}

impl Activation {
    /// The kebab-case word of the JSON.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// A rule file (`[rules]`) and the mode its frontmatter gave it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct RuleFile {
    /// The rule's file.
    #[serde(serialize_with = "crate::vocab::paths::lossy")]
    pub path: PathBuf,
    /// Home or project.
    pub origin: Origin,
    /// Its mode.
    pub mode: Activation,
    /// Its name: the frontmatter's `rules.name-key`, else the file name
    /// without its extension.
    pub name: String,
    /// Its description (`rules.description-key`), when it has one.
    pub description: Option<String>,
    /// Its globs (`rules.globs-keys`, `rules.globs-prefix` applied), as
    /// matched against repository-relative paths.
    pub globs: Vec<String>,
    /// Its patterns over a touched file's content (`rules.regex-keys`), as
    /// written; empty when none.
    pub regex: Vec<String>,
    /// Why this mode, in words: which key decided (`alwaysApply: true`,
    /// `trigger: glob`, `globs`, `no mode in the frontmatter, a
    /// description`...).
    pub why: String,
    /// What in the frontmatter this reading does not take as its author
    /// likely meant (a quoted boolean, a mode word the harness does not
    /// know, an on-access mode without globs): `null` when nothing.
    pub misread: Option<String>,
    /// The rule of the same name that replaces this one
    /// (`rules.one-per-name`): this one is then left out whatever its
    /// mode. `null` when it stands.
    #[serde(serialize_with = "crate::vocab::paths::lossy_opt")]
    pub replaced_by: Option<PathBuf>,
    /// Where the rule lives, for reading it when it is asked for by name.
    #[serde(skip)]
    pub(crate) root: crate::vocab::origin::RootId,
    /// Its path relative to that root.
    #[serde(skip)]
    pub(crate) rel: PathBuf,
    /// How many leading components of `rel` are the folder it was found in.
    #[serde(skip)]
    pub(crate) at: usize,
    /// Its level (0 for home, 1 for the repository root, one more per
    /// folder below): of two rules of one name, the deeper one is served.
    #[serde(skip)]
    pub(crate) level: usize,
    /// `regex`, compiled (see [`ScopedRule::content`]).
    #[serde(skip)]
    pub(crate) content: Option<RegexSet>,
}

/// A frontmatter value as the policy's keys read it.
type Meta = serde_json::Map<String, serde_json::Value>;

/// The first of `keys` present in `meta`, with its key.
fn first_present<'m>(
    meta: &'m Meta,
    keys: &'m [String],
) -> Option<(&'m str, &'m serde_json::Value)> {
    keys.iter()
        .find_map(|k| meta.get(k.as_str()).map(|v| (k.as_str(), v)))
}

/// Globs from a list of strings, or from one string of comma-separated
/// globs (a comma inside `{...}` stays in its glob: `*.{ts,tsx}`).
fn globs_of(value: &serde_json::Value) -> Vec<String> {
    let parts: Vec<String> = match value {
        serde_json::Value::String(s) => split_commas(s),
        serde_json::Value::Array(items) => items
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    };
    parts
        .into_iter()
        .map(|g| g.trim().to_string())
        .filter(|g| !g.is_empty())
        .collect()
}

/// `s` split at the commas outside braces.
fn split_commas(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push(s[start..i].to_string());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(s[start..].to_string());
    out
}

/// A scalar as text (a description or name written as a number stays as
/// written by YAML's reading).
fn text_of(value: &serde_json::Value) -> Option<String> {
    match value {
        serde_json::Value::String(s) => Some(s.trim().to_string()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        serde_json::Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
    .filter(|s| !s.is_empty())
}

/// The most content patterns one rule keeps.
pub(crate) const MAX_PATTERNS_PER_RULE: usize = 16;

/// The most content patterns one build compiles, every rule together: a
/// repository of many rules cannot make a build compile without end.
pub(crate) const MAX_PATTERNS: usize = 256;

/// The compiled size one pattern may reach (the `regex` crate's
/// `size_limit`): matching is linear in the text, and this bounds the
/// automaton a pattern builds.
const PATTERN_SIZE_LIMIT: usize = 1 << 20;

/// Patterns from one string (one pattern: commas are the pattern's) or a
/// list of strings.
fn patterns_of(value: &serde_json::Value) -> Vec<String> {
    match value {
        serde_json::Value::String(s) => vec![s.clone()],
        serde_json::Value::Array(items) => items
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    }
}

/// `written` compiled into one set, within the bounds: each pattern at most
/// `max_bytes` long, [`MAX_PATTERNS_PER_RULE`] per rule, `left` in the
/// build. A pattern that is too long, past a count, or that this engine
/// does not read (look-around, backreferences: the `regex` crate matches
/// in linear time and has neither) is left out, and the second value says
/// so. `None` when nothing was written; an empty set (never matching) when
/// nothing compiled.
fn compile_patterns(
    written: &[String],
    max_bytes: usize,
    left: &mut usize,
) -> (Option<RegexSet>, Option<String>) {
    if written.is_empty() {
        return (None, None);
    }
    let mut kept = Vec::new();
    let mut problems = Vec::new();
    for (n, p) in written.iter().enumerate() {
        let shown: String = p.chars().take(40).collect();
        if n >= MAX_PATTERNS_PER_RULE || *left == 0 {
            problems.push(format!(
                "{} pattern(s) past the first {MAX_PATTERNS_PER_RULE} of a rule ({MAX_PATTERNS}                  in a build) are not used",
                written.len() - n
            ));
            break;
        }
        if p.len() > max_bytes {
            problems.push(format!(
                "the pattern {shown:?}... is longer than {max_bytes} bytes (rules.regex-max-bytes)"
            ));
            continue;
        }
        *left -= 1;
        match RegexBuilder::new(p)
            .size_limit(PATTERN_SIZE_LIMIT)
            .dfa_size_limit(PATTERN_SIZE_LIMIT)
            .build()
        {
            Ok(_) => kept.push(p.as_str()),
            Err(_) => problems.push(format!(
                "the pattern {shown:?} does not compile here (no look-around or backreferences)"
            )),
        }
    }
    let set = RegexSetBuilder::new(&kept)
        .size_limit(PATTERN_SIZE_LIMIT * MAX_PATTERNS_PER_RULE)
        .dfa_size_limit(PATTERN_SIZE_LIMIT)
        .build()
        .unwrap_or_else(|_| RegexSet::empty());
    let misread = (!problems.is_empty()).then(|| {
        let mut m = problems.join("; ");
        if set.is_empty() {
            m.push_str(": the rule never loads");
        } else {
            m.push_str(": it never matches");
        }
        m
    });
    (Some(set), misread)
}

/// The mode of the rule file `cand` whose text is `text`, under `rules`.
///
/// The order in which the keys decide: the `mode-key` word (unknown words
/// and `on-access` without globs give `manual`); then `always-key` true
/// (`always`); then globs (`on-access`); then, with `always-key` false, or
/// with neither key present, `absent` (by the description, or one mode).
pub(crate) fn activation(
    rules: &crate::policy::Rules,
    text: &str,
    cand: &super::chain::Candidate,
    patterns_left: &mut usize,
) -> RuleFile {
    let path = cand.path.as_path();
    use crate::policy::{RuleAbsent, RuleMode};
    let meta: Meta = frontmatter_of(text)
        .and_then(|fm| serde_saphyr::from_str::<serde_json::Value>(fm).ok())
        .and_then(|v| match v {
            serde_json::Value::Object(m) => Some(m),
            _ => None,
        })
        .unwrap_or_default();
    let key = |k: &String| (!k.is_empty()).then(|| meta.get(k.as_str())).flatten();
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = key(&rules.name_key).and_then(text_of).unwrap_or(stem);
    let description = key(&rules.description_key).and_then(text_of);
    let keys: Vec<String> = rules
        .globs_keys
        .iter()
        .map(|k| k.get_ref().clone())
        .collect();
    let found_globs = first_present(&meta, &keys);
    let prefix = rules.globs_prefix.as_str();
    let globs: Vec<String> = found_globs
        .map(|(_, v)| globs_of(v))
        .unwrap_or_default()
        .into_iter()
        .map(|g| {
            if prefix.is_empty() || g.starts_with(prefix) {
                g
            } else {
                format!("{prefix}{g}")
            }
        })
        .collect();
    let regex_keys: Vec<String> = rules
        .regex_keys
        .iter()
        .map(|k| k.get_ref().clone())
        .collect();
    let found_patterns = first_present(&meta, &regex_keys);
    let regex: Vec<String> = found_patterns
        .map(|(_, v)| patterns_of(v))
        .unwrap_or_default();
    let max_bytes = usize::try_from(rules.regex_max_bytes).unwrap_or(0);
    let (content, mut misread) = compile_patterns(&regex, max_bytes, patterns_left);
    let triggered = !globs.is_empty() || content.is_some();
    let globs_word = match (found_globs, found_patterns) {
        (Some((g, _)), Some((r, _))) if content.is_some() => format!("{g} and {r}"),
        (_, Some((r, _))) if globs.is_empty() && content.is_some() => r.to_string(),
        (g, _) => g.map_or("globs", |(k, _)| k).to_string(),
    };
    let in_list = |list: &crate::policy::Names, w: &str| list.iter().any(|x| x.get_ref() == w);
    let (mode, why) = 'decide: {
        if let Some(word) = key(&rules.mode_key) {
            let shown = text_of(word).unwrap_or_default();
            let k = &rules.mode_key;
            let mode = if in_list(&rules.always_words, &shown) {
                Activation::Always
            } else if in_list(&rules.on_access_words, &shown) {
                if !triggered {
                    break 'decide (
                        Activation::Manual,
                        format!("{k}: {shown}, but no {globs_word}"),
                    );
                }
                Activation::OnAccess
            } else if in_list(&rules.listed_words, &shown) {
                Activation::Listed
            } else if in_list(&rules.manual_words, &shown) {
                Activation::Manual
            } else {
                break 'decide (
                    Activation::Manual,
                    format!("{k}: {shown:?} is no mode word"),
                );
            };
            break 'decide (mode, format!("{k}: {shown}"));
        }
        let always = key(&rules.always_key);
        if let Some(serde_json::Value::Bool(true)) = always {
            break 'decide (Activation::Always, format!("{}: true", rules.always_key));
        }
        if triggered {
            break 'decide (Activation::OnAccess, globs_word.clone());
        }
        let by_description = |said: String| {
            let (mode, has) = match &description {
                Some(_) => (rules.described, "a description"),
                None => (rules.undescribed, "no description"),
            };
            let mode = match mode {
                RuleMode::Always => Activation::Always,
                RuleMode::Listed => Activation::Listed,
                RuleMode::Manual => Activation::Manual,
            };
            (mode, format!("{said}, {has}"))
        };
        match always {
            Some(serde_json::Value::Bool(false)) => {
                by_description(format!("{}: false, no {globs_word}", rules.always_key))
            }
            Some(other) => {
                misread.get_or_insert(format!(
                    "`{}: {other}` is not a boolean (write true or false unquoted)",
                    rules.always_key
                ));
                by_description(format!(
                    "{}: {other} is not a boolean, no {globs_word}",
                    rules.always_key
                ))
            }
            None => match rules.absent {
                RuleAbsent::ByDescription => by_description("no mode in the frontmatter".into()),
                RuleAbsent::Always => (Activation::Always, "no mode in the frontmatter".into()),
                RuleAbsent::Listed => (Activation::Listed, "no mode in the frontmatter".into()),
                RuleAbsent::Manual => (Activation::Manual, "no mode in the frontmatter".into()),
            },
        }
    };
    RuleFile {
        path: path.to_path_buf(),
        origin: cand.origin,
        mode,
        name,
        description,
        globs,
        regex,
        why,
        misread,
        replaced_by: None,
        content,
        root: cand.root,
        rel: cand.rel.clone(),
        at: cand.at,
        level: cand.level,
    }
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
    /// The rules with content patterns and no globs: every path is theirs
    /// (their patterns decide).
    anywhere: Vec<usize>,
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
        let mut anywhere = Vec::new();
        for (i, rule) in rules.iter().enumerate() {
            if rule.globs.is_empty() && rule.content.is_some() {
                anywhere.push(i);
            }
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
            Ok(set) => Self {
                set,
                owner,
                anywhere,
            },
            Err(_) => Self {
                anywhere,
                ..Self::default()
            },
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
            return self.anywhere.clone();
        }
        crate::vocab::counters::bump(crate::vocab::counters::Counter::ScopedMatches);
        let mut rules: Vec<usize> = self
            .set
            .matches(path)
            .into_iter()
            .filter_map(|g| self.owner.get(g).copied())
            .chain(self.anywhere.iter().copied())
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

    #[test]
    fn the_body_starts_after_the_closing_fence() {
        fn at(t: &str) -> Option<&str> {
            body_start(t).map(|i| &t[i..])
        }
        assert_eq!(at("---\na: 1\n---\nbody\n"), Some("body\n"));
        assert_eq!(at("---\n---\nbody"), Some("body"));
        assert_eq!(at("---\na: 1\n---"), Some(""));
        assert_eq!(at("no frontmatter\n"), None);
        assert_eq!(at("---\na: 1\n---x\n"), None);
    }

    fn rule(globs: &[&str]) -> ScopedRule {
        ScopedRule {
            path: PathBuf::from("/r/.claude/rules/a.md"),
            origin: Origin::Project,
            globs: globs.iter().map(|g| g.to_string()).collect(),
            root: crate::vocab::origin::RootId::Repo,
            rel: PathBuf::from(".claude/rules/a.md"),
            at: 0,
            content: None,
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
