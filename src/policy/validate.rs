//! Semantic checks on one policy file, after it parsed.
//!
//! Every check runs; every failure becomes a [`Problem`] labelled with the span
//! of the value at fault, so one report shows everything wrong with a file.

use std::collections::HashMap;
use std::ops::Range;

use miette::NamedSource;
use toml::Spanned;

use super::diagnostic::{Problem, ProblemKind};
use super::schema::{NamedRoot, Names, PolicyLayer, ROOT_WORDS, SkillSource, SourceLevels};
use super::template::Template;

/// The schema version this build reads.
pub const SUPPORTED_VERSION: i64 = 1;

/// The largest instruction budget accepted (1 MiB): a prompt section larger
/// than this is a mistake, not a policy.
pub const MAX_BUDGET_BYTES: i64 = 1 << 20;

/// The largest per-file cap accepted, for instruction files and `SKILL.md`.
pub const MAX_FILE_BYTES: i64 = 16 << 20;
/// The largest `skills.frontmatter-memo-max-bytes` accepted (64 MiB).
pub const MAX_MEMO_BYTES: i64 = 64 << 20;

/// Placeholders each template accepts, and those it must carry.
pub(crate) const TEMPLATE_RULES: &[(&str, &[&str], &[&str])] = &[
    ("heading", &[], &[]),
    ("preamble", &["nonce"], &[]),
    ("home-header", &["path", "origin", "nonce"], &["nonce"]),
    ("project-header", &["path", "origin", "nonce"], &["nonce"]),
    ("ancestor-header", &["path", "origin", "nonce"], &["nonce"]),
    ("footer", &["path", "nonce"], &["nonce"]),
    ("forged-line-prefix", &[], &[]),
    (
        "truncation-note",
        &["path", "bytes", "total", "included"],
        &[],
    ),
    (
        "file-limit-note",
        &["path", "bytes", "limit", "included"],
        &[],
    ),
    ("hidden-marker", &["codepoint"], &[]),
    ("skills-heading", &["count"], &[]),
    (
        "skill-entry",
        &["name", "description", "label", "origin"],
        &[],
    ),
    ("project-skill-label", &[], &[]),
    ("more-skills", &["count"], &[]),
    ("unapproved-note", &["count", "command"], &[]),
    ("description-cut-suffix", &[], &[]),
    ("import-open", &["path"], &[]),
    ("import-close", &["path"], &[]),
    ("import-failed", &["path", "reason"], &[]),
];

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

/// Compiles `skills.name-rule`, with a bound on the compiled size.
///
/// A rule this process compiled before is not compiled again: the check of
/// the layer that sets it and the effective policy compile the same text,
/// and a loader builds its policy anew whenever a policy file changes. The
/// last few rules that compiled are kept (a compiled `Regex` is shared, so
/// a copy is cheap).
pub(crate) fn compile_name_rule(rule: &str) -> Result<regex::Regex, regex::Error> {
    const KEPT: usize = 4;
    static COMPILED: std::sync::Mutex<Vec<(String, regex::Regex)>> =
        std::sync::Mutex::new(Vec::new());
    // A poisoned list is still a list of compiled rules.
    let lock = || COMPILED.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, re)) = lock().iter().find(|(text, _)| text == rule) {
        return Ok(re.clone());
    }
    let re = regex::RegexBuilder::new(rule).size_limit(1 << 20).build()?;
    let mut kept = lock();
    if kept.len() >= KEPT {
        kept.remove(0);
    }
    kept.push((rule.to_string(), re.clone()));
    Ok(re)
}

struct Checker<'a> {
    src: &'a NamedSource<String>,
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

    fn range(&mut self, key: &str, value: &Option<Spanned<i64>>, lo: i64, hi: i64) {
        if let Some(v) = value {
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
    }

    /// Plain names, used as one path component under a root.
    fn file_names(&mut self, key: &str, names: &Option<Spanned<Names>>, allow_empty_list: bool) {
        let Some(list) = names else { return };
        if list.get_ref().is_empty() && !allow_empty_list {
            self.push(
                ProblemKind::InvalidValue,
                list.span(),
                format!("`{key}` must name at least one entry"),
                "empty list",
            );
        }
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

    /// Paths relative to a place (the home root, a level): plain
    /// components, no `.` or `..`, and globs (`.claude/rules/**/*.md`)
    /// that compile.
    fn relative_names(&mut self, key: &str, names: &Option<Spanned<Names>>) {
        let Some(list) = names else { return };
        for name in list.get_ref() {
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
                self.push(
                    ProblemKind::InvalidGlob,
                    name.span(),
                    format!("invalid glob in `{key}`: {}", e.kind()),
                    "invalid glob",
                );
            }
        }
    }

    /// Absolute paths (globs when `globs`; `"*"` allowed then).
    fn absolute_paths(&mut self, key: &str, paths: &Option<Spanned<Names>>, globs: bool) {
        let Some(list) = paths else { return };
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
                self.push(
                    ProblemKind::InvalidGlob,
                    p.span(),
                    format!("invalid glob in `{key}`: {}", e.kind()),
                    "invalid glob",
                );
            }
        }
    }

    fn template(&mut self, key: &str, t: &Option<Spanned<Template>>) {
        let Some(t) = t else { return };
        let Some((_, allowed, required)) = TEMPLATE_RULES.iter().find(|(k, _, _)| *k == key) else {
            return;
        };
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
                    format!("template `templates.{key}` uses unknown placeholder {{{name}}}"),
                    "unknown placeholder",
                    format!("{allowed_list}; write {{{{ and }}}} for literal braces"),
                );
            }
        }
        for req in *required {
            if !t.get_ref().uses(req) {
                self.push_help(
                    ProblemKind::MissingPlaceholder,
                    value_span.clone(),
                    format!("template `templates.{key}` must contain {{{req}}}"),
                    "missing {nonce}",
                    "block delimiters carry the per-snapshot nonce so that file text cannot forge them".into(),
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

    fn sources(&mut self, sources: &Option<Spanned<Vec<SkillSource>>>) {
        let Some(list) = sources else { return };
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
    fn named_roots(&mut self, named: &Option<Spanned<Vec<NamedRoot>>>) {
        let Some(list) = named else { return };
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
            let files = Some(Spanned::new(0..0, root.files.clone()));
            self.relative_names("roots.named.files", &files);
        }
    }
}

/// Checks one parsed policy file; returns every problem found.
pub(crate) fn check_layer(
    layer: &PolicyLayer,
    src: &NamedSource<String>,
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

    let r = &layer.roots;
    if let Some(home) = &r.home
        && home.get_ref().is_empty()
    {
        c.push(
            ProblemKind::InvalidValue,
            home.span(),
            "`roots.home` must list at least one candidate".into(),
            "empty list",
        );
    }
    // No marker at all: every cwd is its own root (Codex's `[]`).
    c.file_names("roots.repo-markers", &r.repo_markers, true);
    c.absolute_paths("roots.safe-directories", &r.safe_directories, true);
    c.absolute_paths("roots.ceiling-directories", &r.ceiling_directories, false);
    c.named_roots(&r.named);

    let i = &layer.instructions;
    c.relative_names("instructions.home-files", &i.home_files);
    c.relative_names("instructions.level-files", &i.level_files);
    c.relative_names("instructions.fallback-level-files", &i.fallback_level_files);
    c.relative_names("instructions.ancestor-files", &i.ancestor_files);
    c.range(
        "instructions.skip-larger-than",
        &i.skip_larger_than,
        0,
        1 << 40,
    );
    c.file_names("instructions.extra-home-files", &i.extra_home_files, true);
    c.file_names("instructions.extra-level-files", &i.extra_level_files, true);
    if let Some(globs) = &i.exclude_levels {
        for g in globs.get_ref() {
            if let Err(e) = compile_glob(g.get_ref()) {
                c.push(
                    ProblemKind::InvalidGlob,
                    g.span(),
                    format!(
                        "invalid glob in `instructions.exclude-levels`: {}",
                        e.kind()
                    ),
                    "invalid glob",
                );
            }
        }
    }
    c.range(
        "instructions.budget-bytes",
        &i.budget_bytes,
        1,
        MAX_BUDGET_BYTES,
    );
    c.range(
        "instructions.max-file-bytes",
        &i.max_file_bytes,
        1,
        MAX_FILE_BYTES,
    );
    c.range("instructions.import-depth", &i.import_depth, 0, 16);
    c.range(
        "instructions.access-budget-bytes",
        &i.access_budget_bytes,
        0,
        MAX_BUDGET_BYTES,
    );
    c.range(
        "instructions.import-max-files",
        &i.import_max_files,
        0,
        100_000,
    );
    c.range(
        "instructions.import-max-bytes",
        &i.import_max_bytes,
        0,
        MAX_FILE_BYTES,
    );

    let s = &layer.skills;
    c.sources(&s.sources);
    if let Some(rule) = &s.name_rule
        && let Err(e) = compile_name_rule(rule.get_ref())
    {
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
        c.push(
            ProblemKind::InvalidRegex,
            rule.span(),
            format!("`skills.name-rule` is not a valid regular expression: {msg}"),
            "invalid regex",
        );
    }
    c.range("skills.name-max-chars", &s.name_max_chars, 1, 255);
    c.range(
        "skills.description-max-chars",
        &s.description_max_chars,
        1,
        65_536,
    );
    c.range(
        "skills.max-skill-file-bytes",
        &s.max_skill_file_bytes,
        64,
        MAX_FILE_BYTES,
    );
    c.range(
        "skills.project-description-chars",
        &s.project_description_chars,
        1,
        65_536,
    );
    c.range(
        "skills.max-project-skills",
        &s.max_project_skills,
        0,
        100_000,
    );
    c.range(
        "skills.max-entries-per-source",
        &s.max_entries_per_source,
        1,
        1_000_000,
    );
    c.range(
        "skills.frontmatter-memo-max-bytes",
        &s.frontmatter_memo_max_bytes,
        0,
        MAX_MEMO_BYTES,
    );
    if let Some(memo) = &s.frontmatter_memo_file {
        let n = memo.get_ref();
        if n == "." || n == ".." || n.contains(['/', '\\', '\0']) {
            c.push_help(
                ProblemKind::InvalidValue,
                memo.span(),
                format!("`skills.frontmatter-memo-file` {n:?} is not a plain file name"),
                "not a plain name",
                "use a single path component, such as \"context-frontmatter.memo\", or \"\" for no memo"
                    .into(),
            );
        }
    }
    if let Some(exe) = &s.executable_file {
        let n = exe.get_ref();
        if n == "." || n == ".." || n.contains(['/', '\\', '\0']) {
            c.push(
                ProblemKind::InvalidValue,
                exe.span(),
                format!("`skills.executable-file` {n:?} is not a plain file name"),
                "not a plain name",
            );
        }
    }

    if let Some(key) = &layer.trust.nonce_key_file {
        let n = key.get_ref();
        if n.is_empty() || n == "." || n == ".." || n.contains(['/', '\\', '\0']) {
            c.push_help(
                ProblemKind::InvalidValue,
                key.span(),
                format!("`trust.nonce-key-file` {n:?} is not a plain file name"),
                "not a plain name",
                "use a single path component, such as \"context-nonce.key\"".into(),
            );
        }
    }

    if let Some(store) = &layer.trust.store_file {
        let n = store.get_ref();
        if n.is_empty() || n == "." || n == ".." || n.contains(['/', '\\', '\0']) {
            c.push_help(
                ProblemKind::InvalidValue,
                store.span(),
                format!("`trust.store-file` {n:?} is not a plain file name"),
                "not a plain name",
                "use a single path component, such as \"context-trust.json\"".into(),
            );
        }
    }

    let t = &layer.templates;
    c.template("heading", &t.heading);
    c.template("preamble", &t.preamble);
    c.template("home-header", &t.home_header);
    c.template("project-header", &t.project_header);
    c.template("footer", &t.footer);
    c.template("forged-line-prefix", &t.forged_line_prefix);
    if let Some(p) = &t.forged_line_prefix
        && p.get_ref().source().trim().is_empty()
    {
        c.push_help(
                ProblemKind::InvalidValue,
                p.span(),
                "`templates.forged-line-prefix` must not be blank".into(),
                "blank prefix",
                "file lines that look like block boundaries are marked with this prefix; a blank one would leave them unmarked".into(),
            );
    }
    c.template("truncation-note", &t.truncation_note);
    c.template("file-limit-note", &t.file_limit_note);
    c.template("hidden-marker", &t.hidden_marker);
    c.template("skills-heading", &t.skills_heading);
    c.template("skill-entry", &t.skill_entry);
    c.template("project-skill-label", &t.project_skill_label);
    c.template("more-skills", &t.more_skills);
    c.template("unapproved-note", &t.unapproved_note);

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
    const PREFIX: &str = "templates.forged-line-prefix";
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
    use super::compile_name_rule;

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
