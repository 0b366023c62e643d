//! Semantic checks on one policy file, after it parsed.
//!
//! Every check runs; every failure becomes a [`Problem`] labelled with the span
//! of the value at fault, so one report shows everything wrong with a file.

use std::collections::HashMap;
use std::ops::Range;

use toml::Spanned;

use super::diagnostic::{Problem, ProblemKind};
use super::rule::Rule;
use super::schema::{
    NamedRoot, Names, PolicyLayer, ROOT_WORDS, ROOTS, SkillSource, SourceLevels, TEMPLATES, Value,
};
use super::template::Template;

/// The schema version this build reads.
pub const SUPPORTED_VERSION: i64 = 1;

pub use super::schema::{MAX_BUDGET_BYTES, MAX_FILE_BYTES};

/// Whether a file name of the chain is a glob (it holds `*`, `?`, `[` or
/// `{`).
pub(crate) fn is_glob(name: &str) -> bool {
    name.contains(['*', '?', '[', '{'])
}

/// Compiles an `exclude-levels` glob: `*` never crosses a `/`.
pub(crate) fn compile_glob(pattern: &str) -> Result<globset::Glob, globset::Error> {
    globset::GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
}

/// How to fix a glob that does not compile: the fault's own fix, then the
/// syntax in one line.
pub(crate) fn glob_help(kind: &globset::ErrorKind) -> String {
    use globset::ErrorKind as K;
    let fix = match kind {
        K::InvalidRecursive => "`**` must be a whole path component (`a/**/b`, `**/*.md`); ",
        K::UnclosedClass => "close the `[` with `]` (or write `[[]` for a literal `[`); ",
        K::InvalidRange(..) => "a range runs from the lower character to the higher (`[a-z]`); ",
        K::UnopenedAlternates => "a `}` closes a `{` (write `[}]` for a literal `}`); ",
        K::UnclosedAlternates => "close the `{` with `}` (write `[{]` for a literal `{`); ",
        K::NestedAlternates => "a `{a,b}` cannot hold another `{`; ",
        K::DanglingEscape => "a `\\` escapes the character after it, and none follows; ",
        _ => "",
    };
    format!(
        "{fix}a glob matches paths inside the folder: `*` any characters but `/`, `**` \
         any folders, `?` one character, `[ab]` one of, `{{a,b}}` either"
    )
}

/// Compiles `skills.name-rule`, with a bound on the compiled size (a
/// loader keeps the last few it compiled: see `Memo::name_rule`).
pub(crate) fn compile_name_rule(rule: &str) -> Result<regex::Regex, regex::Error> {
    regex::RegexBuilder::new(rule).size_limit(1 << 20).build()
}

/// The matcher of a glob, as [`compile_glob`] reads it (a policy keeps the
/// matchers of its chain's globs: see `Policy::glob_matcher`).
pub(crate) fn glob_matcher(pattern: &str) -> Option<globset::GlobMatcher> {
    compile_glob(pattern).ok().map(|g| g.compile_matcher())
}

/// The last few things compiled from a text, with the text.
#[derive(Debug)]
pub(crate) struct Kept<T>(std::sync::Mutex<Vec<(String, T)>>);

impl<T> Default for Kept<T> {
    fn default() -> Self {
        Self(std::sync::Mutex::new(Vec::new()))
    }
}

impl<T: Clone> Kept<T> {
    /// What is kept for `text`, else what `compile` makes of it (kept, the
    /// oldest going past `most`; an error is not kept). A poisoned list is
    /// still a list of compiled things.
    pub(crate) fn or<E>(
        &self,
        most: usize,
        text: &str,
        compile: impl FnOnce() -> Result<T, E>,
    ) -> Result<T, E> {
        if let Some((_, t)) = self
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .find(|(k, _)| k == text)
        {
            return Ok(t.clone());
        }
        let made = compile()?;
        let mut list = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if list.len() >= most {
            list.remove(0);
        }
        list.push((text.to_string(), made.clone()));
        Ok(made)
    }
}

struct Checker<'a> {
    src: &'a super::diagnostic::Source,
    text: &'a str,
    problems: Vec<Problem>,
}

impl Checker<'_> {
    fn push(&mut self, kind: ProblemKind, span: Range<usize>, msg: String, label: &str) {
        self.problems
            .push(Problem::new(self.src, kind, span, msg, label));
    }

    fn push_help(
        &mut self,
        kind: ProblemKind,
        span: Range<usize>,
        msg: String,
        label: &str,
        help: String,
    ) {
        self.problems
            .push(Problem::new(self.src, kind, span, msg, label).with_help(help));
    }

    fn range(&mut self, key: &str, v: &Spanned<i64>, lo: i64, hi: i64) {
        let n = *v.get_ref();
        if n < lo || n > hi {
            self.push_help(
                ProblemKind::OutOfRange,
                v.span(),
                format!("`{key}` is {n}, outside {lo}..={hi}"),
                "out of range",
                format!("choose a value from {lo} to {hi}"),
            );
        }
    }

    /// Holds one value to the rule declared for its key.
    fn apply(&mut self, key: &str, rule: Rule, value: Value<'_>) {
        match (rule, value) {
            (Rule::Range(lo, hi), Value::Integer(v)) => self.range(key, v, lo, hi),
            (
                Rule::Template {
                    allowed,
                    required,
                    marks_lines,
                },
                Value::Template(t),
            ) => {
                self.template(key, t, allowed, required);
                if marks_lines {
                    self.line_marker(key, t);
                }
            }
            (Rule::FileName { empty, help }, Value::Text(v)) => self.file_name(key, v, empty, help),
            (Rule::Regex, Value::Text(v)) => self.regex(key, v),
            (Rule::FileNames, Value::Names(v)) => self.file_names(key, v),
            (Rule::Words, Value::Names(v)) => self.words(key, v),
            (Rule::RelativePaths, Value::Names(v)) => self.relative_names(key, v.get_ref()),
            (Rule::Globs, Value::Names(v)) => self.globs(key, v),
            (Rule::AbsolutePaths { globs }, Value::Names(v)) => self.absolute_paths(key, v, globs),
            (Rule::Candidates, Value::Names(v)) => self.candidates(key, v),
            (Rule::SkillSources, Value::SkillSources(v)) => self.sources(v),
            (Rule::NamedRoots, Value::NamedRoots(v)) => self.named_roots(v),
            (Rule::Shape | Rule::Text, _) => {}
            // The rule constructors take only the types they suit (see
            // `schema::rule`), and a unit test holds every declared rule
            // to its key's shape: nothing else reaches here.
            (rule, _) => debug_assert!(false, "{key}: rule {rule:?} does not fit its value"),
        }
    }

    /// A name used as one path component under a root.
    fn file_name(&mut self, key: &str, v: &Spanned<String>, empty: bool, help: Option<&str>) {
        let n = v.get_ref();
        if (n.is_empty() && !empty) || n == "." || n == ".." || n.contains(['/', '\\', '\0']) {
            let problem = Problem::new(
                self.src,
                ProblemKind::InvalidValue,
                v.span(),
                format!("`{key}` {n:?} is not a plain file name"),
                "not a plain name",
            );
            self.problems.push(match help {
                Some(help) => problem.with_help(help),
                None => problem,
            });
        }
    }

    /// A list that must name at least one candidate.
    fn candidates(&mut self, key: &str, v: &Spanned<Names>) {
        if v.get_ref().is_empty() {
            self.push(
                ProblemKind::InvalidValue,
                v.span(),
                format!("`{key}` must list at least one candidate"),
                "empty list",
            );
        }
    }

    /// Globs that compile.
    fn globs(&mut self, key: &str, v: &Spanned<Names>) {
        for g in v.get_ref() {
            if let Err(e) = compile_glob(g.get_ref()) {
                self.push_help(
                    ProblemKind::InvalidGlob,
                    g.span(),
                    format!("invalid glob in `{key}`: {}", e.kind()),
                    "invalid glob",
                    glob_help(e.kind()),
                );
            }
        }
    }

    /// A regular expression that compiles.
    fn regex(&mut self, key: &str, rule: &Spanned<String>) {
        let Err(e) = compile_name_rule(rule.get_ref()) else {
            return;
        };
        let msg = match e {
            regex::Error::Syntax(m) => m
                .lines()
                .last()
                .unwrap_or("syntax error")
                .trim()
                .trim_start_matches("error: ")
                .to_string(),
            regex::Error::CompiledTooBig(_) => "the expression is too large".to_string(),
            other => other.to_string(),
        };
        self.push(
            ProblemKind::InvalidRegex,
            rule.span(),
            format!("`{key}` is not a valid regular expression: {msg}"),
            "invalid regex",
        );
    }

    /// The prefix that marks file lines: not blank.
    fn line_marker(&mut self, key: &str, p: &Spanned<Template>) {
        if p.get_ref().source().trim().is_empty() {
            self.push_help(
                ProblemKind::InvalidValue,
                p.span(),
                format!("`{key}` must not be blank"),
                "blank prefix",
                "file lines that look like block boundaries are marked with this prefix; a blank one would leave them unmarked".into(),
            );
        }
    }

    /// Plain names, used as one path component under a root.
    fn file_names(&mut self, key: &str, list: &Spanned<Names>) {
        for name in list.get_ref() {
            let n = name.get_ref();
            let bad = n.is_empty() || n == "." || n == ".." || n.contains(['/', '\\', '\0']);
            if bad {
                self.push_help(
                    ProblemKind::InvalidValue,
                    name.span(),
                    format!("`{key}` entry {n:?} is not a plain file name"),
                    "not a plain name",
                    "use a single path component, such as \"AGENTS.md\"".into(),
                );
            }
        }
    }

    /// Words: each non-empty and on one line (a frontmatter key, a mode's
    /// word).
    fn words(&mut self, key: &str, list: &Spanned<Names>) {
        for word in list.get_ref() {
            let w = word.get_ref();
            if w.trim().is_empty() || w.contains(['\n', '\r', '\0']) {
                self.push_help(
                    ProblemKind::InvalidValue,
                    word.span(),
                    format!("`{key}` entry {w:?} is not a word"),
                    "not a word",
                    "write the frontmatter key or word as it appears, such as \"globs\"".into(),
                );
            }
        }
    }

    /// Paths relative to a place (the home root, a level): plain
    /// components, no `.` or `..`, and globs (`.claude/rules/**/*.md`)
    /// that compile.
    fn relative_names(&mut self, key: &str, list: &Names) {
        for name in list {
            let n = name.get_ref();
            let bad = n.is_empty()
                || n.starts_with('/')
                || n.contains(['\\', '\0'])
                || n.split('/').any(|c| c.is_empty() || c == "." || c == "..");
            if bad {
                self.push_help(
                    ProblemKind::InvalidValue,
                    name.span(),
                    format!("`{key}` entry {n:?} is not a path inside its folder"),
                    "not a relative path",
                    "use a name such as \"AGENTS.md\", a path such as \".claude/CLAUDE.md\", or a glob such as \".claude/rules/**/*.md\" (no `..`)".into(),
                );
            } else if is_glob(n)
                && let Err(e) = compile_glob(n)
            {
                self.push_help(
                    ProblemKind::InvalidGlob,
                    name.span(),
                    format!("invalid glob in `{key}`: {}", e.kind()),
                    "invalid glob",
                    glob_help(e.kind()),
                );
            }
        }
    }

    /// Absolute paths (globs when `globs`; `"*"` allowed then).
    fn absolute_paths(&mut self, key: &str, list: &Spanned<Names>, globs: bool) {
        for p in list.get_ref() {
            let v = p.get_ref();
            if globs && v == "*" {
                continue;
            }
            if !v.starts_with('/') || v.contains('\0') {
                let help = if globs {
                    "write an absolute path or glob, such as \"/srv/shared/*\", or \"*\" for every directory"
                } else {
                    "write an absolute path, such as \"/home\""
                };
                self.push_help(
                    ProblemKind::InvalidValue,
                    p.span(),
                    format!("`{key}` entry {v:?} is not an absolute path"),
                    "not absolute",
                    help.into(),
                );
            } else if globs && let Err(e) = compile_glob(v) {
                self.push_help(
                    ProblemKind::InvalidGlob,
                    p.span(),
                    format!("invalid glob in `{key}`: {}", e.kind()),
                    "invalid glob",
                    glob_help(e.kind()),
                );
            }
        }
    }

    /// A template: only the placeholders `allowed`, every one of `required`.
    fn template(&mut self, key: &str, t: &Spanned<Template>, allowed: &[&str], required: &[&str]) {
        let value_span = t.span();
        for (name, offset) in t.get_ref().placeholders() {
            if !allowed.contains(&name) {
                let span = self.inner_span(&value_span, t.get_ref().source(), offset, name.len());
                let allowed_list = if allowed.is_empty() {
                    "this template takes no placeholders".to_string()
                } else {
                    format!(
                        "this template accepts {}",
                        allowed
                            .iter()
                            .map(|a| format!("{{{a}}}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                };
                self.push_help(
                    ProblemKind::UnknownPlaceholder,
                    span,
                    format!("template `{key}` uses unknown placeholder {{{name}}}"),
                    "unknown placeholder",
                    format!("{allowed_list}; write {{{{ and }}}} for literal braces"),
                );
            }
        }
        for req in required {
            if !t.get_ref().uses(req) {
                let help = if *req == "nonce" {
                    "block delimiters carry the per-snapshot nonce so that file text cannot forge them".to_string()
                } else {
                    format!("this template must show {{{req}}}")
                };
                self.push_help(
                    ProblemKind::MissingPlaceholder,
                    value_span.clone(),
                    format!("template `{key}` must contain {{{req}}}"),
                    &format!("missing {{{req}}}"),
                    help,
                );
            }
        }
    }

    /// The span of `len` bytes at `offset` inside a string value, when the TOML
    /// text holds the string verbatim; the whole value otherwise.
    fn inner_span(
        &self,
        value: &Range<usize>,
        source: &str,
        offset: usize,
        len: usize,
    ) -> Range<usize> {
        let raw = self.text.get(value.clone()).unwrap_or("");
        for quote in ["\"\"\"", "'''", "\"", "'"] {
            if let Some(body) = raw.strip_prefix(quote).and_then(|r| r.strip_suffix(quote))
                && body == source
            {
                let start = value.start + quote.len() + offset;
                return start..start + len;
            }
        }
        value.clone()
    }

    fn sources(&mut self, list: &Spanned<Vec<SkillSource>>) {
        let mut seen: HashMap<i64, Range<usize>> = HashMap::new();
        for s in list.get_ref() {
            let rank = *s.rank.get_ref();
            if rank < 0 {
                self.push_help(
                    ProblemKind::NegativeRank,
                    s.rank.span(),
                    format!("skill source rank {rank} is negative"),
                    "negative rank",
                    "ranks start at 0; the lowest rank claims a skill name".into(),
                );
            } else if let Some(first) = seen.get(&rank) {
                let problem = Problem::new(
                    self.src,
                    ProblemKind::DuplicateRank,
                    s.rank.span(),
                    format!("two skill sources share rank {rank}"),
                    "duplicate rank",
                )
                .with_label(first.clone(), "first used here")
                .with_help("ranks must be distinct so that every name conflict has one winner");
                self.problems.push(problem);
            } else {
                seen.insert(rank, s.rank.span());
            }
            let depth = *s.depth.get_ref();
            if !(1..=MAX_SOURCE_DEPTH).contains(&depth) {
                self.push_help(
                    ProblemKind::OutOfRange,
                    s.depth.span(),
                    format!("skill source depth {depth} is outside 1..={MAX_SOURCE_DEPTH}"),
                    "out of range",
                    "1 looks for PATH/NAME/SKILL.md only".into(),
                );
            }
            if s.levels != SourceLevels::Root && s.root.get_ref() != "repo" {
                self.push_help(
                    ProblemKind::InvalidValue,
                    s.root.span(),
                    format!(
                        "`levels = \"{}\"` walks the repository's levels, but this source's root is `{}`",
                        s.levels.word(),
                        s.root.get_ref()
                    ),
                    "not the repository",
                    "use `root = \"repo\"`, or leave `levels` out".into(),
                );
            }
            let p = s.path.get_ref();
            let escapes = p.is_empty()
                || p.starts_with('/')
                || p.split('/').any(|c| c == ".." || c == ".")
                || p.contains(['\\', '\0']);
            if escapes {
                self.push_help(
                    ProblemKind::InvalidValue,
                    s.path.span(),
                    format!("skill source path {p:?} is not a relative path inside its root"),
                    "not root-relative",
                    "write a path relative to the root, such as \".lisa/skills\", without `..` or a leading `/`".into(),
                );
            }
        }
    }
}

/// The deepest skill source walk accepted.
pub const MAX_SOURCE_DEPTH: i64 = 16;

impl Checker<'_> {
    /// `[[roots.named]]`: names that are words, distinct and not `home` or
    /// `repo`; at least one candidate; plain file names.
    fn named_roots(&mut self, list: &Spanned<Vec<NamedRoot>>) {
        let mut seen: HashMap<&str, Range<usize>> = HashMap::new();
        for root in list.get_ref() {
            let name = root.name.get_ref();
            let word = !name.is_empty()
                && name.starts_with(|c: char| c.is_ascii_lowercase())
                && name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
            if !word {
                self.push_help(
                    ProblemKind::InvalidValue,
                    root.name.span(),
                    format!("named root {name:?} is not a name"),
                    "not a name",
                    "use lowercase letters, digits and `-`, starting with a letter".into(),
                );
            } else if ROOT_WORDS.contains(&name.as_str()) {
                self.push(
                    ProblemKind::InvalidValue,
                    root.name.span(),
                    format!("`{name}` is already a root; a named root needs a name of its own"),
                    "taken",
                );
            } else if let Some(first) = seen.get(name.as_str()) {
                let problem = Problem::new(
                    self.src,
                    ProblemKind::InvalidValue,
                    root.name.span(),
                    format!("two named roots are called `{name}`"),
                    "second",
                )
                .with_label(first.clone(), "first");
                self.problems.push(problem);
            } else {
                seen.insert(name, root.name.span());
            }
            if root.candidates.is_empty() {
                self.push(
                    ProblemKind::InvalidValue,
                    root.name.span(),
                    format!("named root `{name}` lists no candidates"),
                    "no candidates",
                );
            }
            self.relative_names(&format!("{}.files", ROOTS.named), &root.files);
            for other in &root.unless_found {
                let o = other.get_ref().as_str();
                let known = o == "home" || (o != name && seen.contains_key(o));
                if !known {
                    self.push_help(
                        ProblemKind::InvalidValue,
                        other.span(),
                        format!(
                            "`unless-found` names `{o}`, which is not a root read before `{name}`"
                        ),
                        "not an earlier root",
                        "name `home` or a named root listed above this one".into(),
                    );
                }
            }
        }
    }
}

/// Checks one parsed policy file; returns every problem found.
pub(crate) fn check_layer(
    layer: &PolicyLayer,
    src: &super::diagnostic::Source,
    text: &str,
) -> Vec<Problem> {
    let mut c = Checker {
        src,
        text,
        problems: Vec::new(),
    };
    let v = *layer.version.get_ref();
    if v != SUPPORTED_VERSION {
        c.push_help(
            ProblemKind::UnsupportedVersion,
            layer.version.span(),
            format!("policy version {v} is not supported"),
            "unsupported version",
            format!("this build of lisa-context reads `version = {SUPPORTED_VERSION}`"),
        );
    }

    // Every value the file sets, held to the rule declared with its key.
    for (key, rule, value) in layer.constrained() {
        c.apply(key, rule, value);
    }

    c.problems.sort_by_key(|p| p.span.start);
    c.problems
}

/// Whether the forged-line prefix fails to set a guarded line apart: what
/// a reader sees of it (see [`crate::vocab::unicode::as_seen`]) is nothing, or
/// starts with the character a header or footer starts with, so the prefix
/// and the line behind it could together read as a boundary (a prefix `<`
/// before a line `<<…` shows as `<<<…`). Returns the two keys concerned
/// (the prefix first) and what is wrong.
pub(super) fn forged_prefix_clash(t: &super::Templates) -> Option<([&'static str; 2], String)> {
    const PREFIX: &str = TEMPLATES.forged_line_prefix;
    let source = t.forged_line_prefix.source();
    let seen = crate::vocab::unicode::as_seen(&t.forged_line_prefix.fill(&[]));
    let Some(first) = seen.chars().next() else {
        return Some((
            [PREFIX, PREFIX],
            format!(
                "`{PREFIX}` {source:?} shows as nothing (each of its characters renders blank or is erased), so a file line that looks like a block boundary would not be set apart"
            ),
        ));
    };
    t.boundaries()
        .into_iter()
        .find_map(|(key, starts)| {
            starts.starts_with(first).then(|| {
                (
                    [PREFIX, key],
                    format!(
                        "`{PREFIX}` {source:?} starts with {first:?}, as `{key}` does: the prefix and a file line behind it could read as a block boundary; give the two different first visible characters"
                    ),
                )
            })
        })
}

#[cfg(test)]
mod tests {
    use crate::policy::memo::Memo;
    use crate::policy::rule::Rule;
    use crate::policy::schema::{
        InstructionsLayer, PolicyLayer, RootsLayer, RulesLayer, SKILLS, Shape, SkillsLayer, TRUST,
        TemplatesLayer, TrustLayer,
    };
    use crate::policy::{Layer, PolicySource, ProblemKind};

    fn problems(text: &str) -> Vec<(ProblemKind, String)> {
        match PolicySource::from_text(Layer::Home, "t.toml", text).check() {
            Ok(()) => Vec::new(),
            Err(inv) => inv
                .problems
                .iter()
                .map(|p| (p.kind, text[p.span.clone()].to_string()))
                .collect(),
        }
    }

    fn short(key: &str) -> (&str, &str) {
        key.split_once('.').expect("a dotted key")
    }

    /// No template goes unchecked: each refuses a placeholder it was not
    /// declared with, and each one declared with a required placeholder
    /// refuses a text without it.
    #[test]
    fn every_template_is_checked() {
        for (key, rule) in TemplatesLayer::RULES {
            let Rule::Template {
                allowed, required, ..
            } = rule
            else {
                panic!("{key}: {rule:?}");
            };
            let (table, name) = short(key);
            let fill: String = allowed.iter().map(|a| format!(" {{{a}}}")).collect();
            let good = format!("version = 1\n[{table}]\n{name} = \"x{fill}\"\n");
            assert_eq!(problems(&good), [], "{key}");
            let bad = format!("version = 1\n[{table}]\n{name} = \"x{fill} {{bogus}}\"\n");
            assert_eq!(
                problems(&bad),
                [(ProblemKind::UnknownPlaceholder, "bogus".to_string())],
                "{key}"
            );
            for req in *required {
                let without: String = allowed
                    .iter()
                    .filter(|a| *a != req)
                    .map(|a| format!(" {{{a}}}"))
                    .collect();
                let text = format!("version = 1\n[{table}]\n{name} = \"x{without}\"\n");
                assert_eq!(
                    problems(&text).first().map(|p| p.0),
                    Some(ProblemKind::MissingPlaceholder),
                    "{key}"
                );
            }
        }
    }

    /// No integer goes unchecked: each refuses a value one past either end
    /// of its declared range.
    #[test]
    fn every_integer_is_range_checked() {
        let rules = RootsLayer::RULES
            .iter()
            .chain(InstructionsLayer::RULES)
            .chain(SkillsLayer::RULES)
            .chain(TrustLayer::RULES)
            .chain(RulesLayer::RULES);
        let mut ranges = 0;
        for (key, rule) in rules {
            let Rule::Range(lo, hi) = rule else { continue };
            ranges += 1;
            let (table, name) = short(key);
            for n in [lo - 1, hi + 1] {
                let text = format!("version = 1\n[{table}]\n{name} = {n}\n");
                assert_eq!(
                    problems(&text),
                    [(ProblemKind::OutOfRange, n.to_string())],
                    "{key}"
                );
            }
            for n in [lo, hi] {
                let text = format!("version = 1\n[{table}]\n{name} = {n}\n");
                assert_eq!(problems(&text), [], "{key} = {n}");
            }
        }
        // Every integer of every table, from the policy's own declaration:
        // a table added later with an integer fails here until the loop
        // above reads its rules too.
        let integers = PolicyLayer::FIELDS
            .iter()
            .filter_map(|f| match f.shape {
                Shape::Table(fields) => Some(fields),
                _ => None,
            })
            .flatten()
            .filter(|f| matches!(f.shape, Shape::Integer))
            .count();
        assert_eq!(ranges, integers);
        // Not a count kept by hand: only a guard that the loop ran at all.
        assert!(ranges > 10, "{ranges}");
    }

    /// The four plain-file-name keys, each with its own rule for `""`.
    #[test]
    fn plain_file_names_follow_their_declared_rule() {
        for (key, empty_ok) in [
            (SKILLS.executable_file, true),
            (SKILLS.frontmatter_memo_file, true),
            (TRUST.nonce_key_file, false),
            (TRUST.store_file, false),
        ] {
            let (table, name) = short(key);
            let text = |v: &str| format!("version = 1\n[{table}]\n{name} = \"{v}\"\n");
            assert_eq!(problems(&text("")).is_empty(), empty_ok, "{key}");
            for bad in ["a/b", "..", "."] {
                assert_eq!(
                    problems(&text(bad)),
                    [(ProblemKind::InvalidValue, format!("\"{bad}\""))],
                    "{key}"
                );
            }
            assert_eq!(problems(&text("plain.name")), [], "{key}");
        }
    }

    #[test]
    fn name_rules_compiled_again_answer_the_same_and_errors_are_not_kept() {
        let rules = [
            "^[a-z]+$",
            "^x(-y)*$",
            "^[0-9]{2}$",
            "^a|b$",
            "^c$",
            "^[a-z]+$",
        ];
        let memo = Memo::default();
        let compile_name_rule = |rule: &str| memo.name_rule(rule);
        for rule in rules {
            let first = compile_name_rule(rule).expect("compiles");
            let again = compile_name_rule(rule).expect("compiles");
            assert_eq!(first.as_str(), rule);
            for name in ["abc", "x-y-y", "42", "a", "c", "A1", ""] {
                assert_eq!(
                    first.is_match(name),
                    again.is_match(name),
                    "{rule} on {name:?}"
                );
            }
        }
        for _ in 0..2 {
            assert!(compile_name_rule("^[a-z").is_err());
            assert!(compile_name_rule("(a{1000}){1000}").is_err());
        }
    }
}
