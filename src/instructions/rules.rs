//! Scoped rules: an instruction file whose frontmatter carries `paths:`
//! globs applies only to those paths. Under `instructions.compat.scoped-rules`,
//! such a file is not loaded with the chain; it is listed in the snapshot
//! with its globs (`scopedRules`) and loaded on access, when the agent
//! touches a path one of its globs matches (globs are relative to the
//! repository root; `*` stays within one folder).

use std::path::PathBuf;

use globset::{GlobSet, GlobSetBuilder};
use regex::bytes::{RegexBuilder, RegexSet, RegexSetBuilder};
use serde::Serialize;

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
    /// The globs it is matched by, as its frontmatter writes them (its
    /// `paths:`, or a `[rules]` file's globs keys), less those the caps or
    /// the engine leave out (`warnings` names each rule that lost some).
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
    /// Its content patterns (`rules.compat.regex-keys`), compiled: when present,
    /// a touched file must also match one of them (an empty set: none
    /// compiled, so the rule never loads).
    #[serde(skip)]
    pub(crate) content: Option<RegexSet>,
    /// What in its frontmatter this reading does not take as its author
    /// likely meant (a `paths:` in a frontmatter that does not parse, a key
    /// given twice, a value that is not a glob): the rule is then scoped to
    /// no path. `null` when nothing.
    pub misread: Option<String>,
}

/// The frontmatter block of `text`: the lines between a `---` line at its
/// very start and the next `---` line (a line may end in `\r\n`), and where
/// the body starts (after the closing line), when it has one.
fn fenced(text: &str) -> Option<(&str, usize)> {
    let open = if text.starts_with("---\n") {
        4
    } else if text.starts_with("---\r\n") {
        5
    } else {
        return None;
    };
    let mut at = open;
    while at < text.len() {
        let rest = &text[at..];
        let (line, next) = match rest.find('\n') {
            Some(n) => (&rest[..n], at + n + 1),
            None => (rest, text.len()),
        };
        if line.strip_suffix('\r').unwrap_or(line) == "---" {
            return Some((&text[open..at], next));
        }
        at = next;
    }
    None
}

/// The text of a file's frontmatter: the block between a `---` line at the
/// very start of the file and the next `---` line, when there is one.
pub(crate) fn frontmatter_of(text: &str) -> Option<&str> {
    fenced(text).map(|(fm, _)| fm)
}

/// Where the body of a file with a frontmatter starts (after the closing
/// `---` line), when it has one.
pub(crate) fn body_start(text: &str) -> Option<usize> {
    fenced(text).map(|(_, body)| body)
}

/// A frontmatter as a rule is read for: its keys, or why it has none the
/// engine can trust.
enum Front {
    /// No frontmatter block.
    Absent,
    /// The block's keys (none for an empty block).
    Keys(Meta),
    /// A block that is there but is not a set of keys this engine reads
    /// one way only (not YAML, a key given twice, not a mapping): why, in
    /// words, with the line where the parser says.
    Unread(String),
}

/// The file line of the frontmatter's first line (the opening `---` is
/// line 1).
const FIRST_FRONTMATTER_LINE: usize = 2;

/// Reads the frontmatter of `text`.
fn front_of(text: &str) -> Front {
    let Some(fm) = frontmatter_of(text) else {
        return Front::Absent;
    };
    let mut options = serde_saphyr::Options::default();
    options.duplicate_keys = serde_saphyr::DuplicateKeyPolicy::Error;
    options.with_snippet = false;
    match serde_saphyr::from_str_with_options::<serde_json::Value>(fm, options) {
        Ok(serde_json::Value::Object(m)) => Front::Keys(m),
        Ok(serde_json::Value::Null) => Front::Keys(Meta::new()),
        Ok(_) => Front::Unread("the frontmatter is not a set of `key: value` lines".into()),
        Err(err) => Front::Unread(duplicate_key(fm).unwrap_or_else(|| {
            let mut render = serde_saphyr::RenderOptions::default();
            render.snippets = serde_saphyr::SnippetMode::Off;
            render.line_offset = (FIRST_FRONTMATTER_LINE - 1) as u64;
            let said = err.render_with_options(render);
            let said: String = said.split_whitespace().collect::<Vec<_>>().join(" ");
            format!(
                "the frontmatter does not parse as YAML ({})",
                shown(&said, 200)
            )
        })),
    }
}

/// The first top-level key given twice in a frontmatter `fm`, said with
/// its lines: the parser refuses such a block, and which of the two a
/// harness takes is anyone's guess.
fn duplicate_key(fm: &str) -> Option<String> {
    let mut seen: Vec<(&str, usize)> = Vec::new();
    for (n, line) in fm.split('\n').enumerate() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let Some(key) = top_level_key(line) else {
            continue;
        };
        let at = FIRST_FRONTMATTER_LINE + n;
        if let Some((_, first)) = seen.iter().find(|(k, _)| *k == key) {
            return Some(format!(
                "the key `{}` is given twice (lines {first} and {at})",
                shown(key, 80)
            ));
        }
        seen.push((key, at));
    }
    None
}

/// The key a frontmatter line starts at its first column (`key:` followed
/// by a blank or the end of the line; quotes around the key removed).
fn top_level_key(line: &str) -> Option<&str> {
    if line.starts_with([' ', '\t', '#', '-']) || line.is_empty() {
        return None;
    }
    let (key, rest) = line.split_once(':')?;
    if !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
        return None;
    }
    let key = key.trim_end();
    let unquoted = ['"', '\'']
        .iter()
        .find_map(|q| key.strip_prefix(*q).and_then(|k| k.strip_suffix(*q)));
    Some(unquoted.unwrap_or(key)).filter(|k| !k.is_empty())
}

/// `text` cut to `most` characters, with `…` when cut.
fn shown(text: &str, most: usize) -> String {
    match text.char_indices().nth(most) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

/// Whether a globs or patterns value holds what is not text (a number, a
/// boolean, a mapping, a list item that is not a string): that part is
/// not read.
fn holds_non_text(value: &serde_json::Value) -> bool {
    match value {
        serde_json::Value::Null | serde_json::Value::String(_) => false,
        serde_json::Value::Array(items) => items.iter().any(|i| !i.is_string()),
        _ => true,
    }
}

/// What a file's frontmatter says of its scope under
/// `instructions.compat.scoped-rules`.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Scope {
    /// No `paths:` with a glob: an ordinary file.
    Unscoped,
    /// Scoped to these globs.
    Paths(Vec<String>),
    /// A `paths:` this engine cannot read one way only (the frontmatter
    /// does not parse, a key is given twice, the value is not a glob or a
    /// list of globs): scoped to no path (the least a reading loads), and
    /// why.
    Unread(String),
}

/// The `paths:` globs of a file's frontmatter (a `---` block at its very
/// start). Without `paths`, an ordinary file. A frontmatter that does not
/// parse is an ordinary file too, unless one of its top-level lines is a
/// `paths:` key: then the file meant a scope this reading cannot tell, and
/// it loads on no path.
pub(crate) fn scope_of(text: &str) -> Scope {
    let meta = match front_of(text) {
        Front::Absent => return Scope::Unscoped,
        Front::Keys(meta) => meta,
        Front::Unread(why) => {
            let has_paths = frontmatter_of(text).is_some_and(|fm| {
                fm.split('\n')
                    .any(|l| top_level_key(l.strip_suffix('\r').unwrap_or(l)) == Some("paths"))
            });
            return if has_paths {
                Scope::Unread(format!("{why}: its `paths:` is not read"))
            } else {
                Scope::Unscoped
            };
        }
    };
    let Some(value) = meta.get("paths") else {
        return Scope::Unscoped;
    };
    if holds_non_text(value) {
        return Scope::Unread(format!(
            "`paths: {}` is not a glob or a list of globs",
            shown(&value.to_string(), 80)
        ));
    }
    let globs: Vec<String> = match value {
        serde_json::Value::String(g) => vec![g.clone()],
        serde_json::Value::Array(items) => items
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    };
    let globs: Vec<String> = globs
        .into_iter()
        .map(|g| g.trim().to_string())
        .filter(|g| !g.is_empty())
        .collect();
    if globs.is_empty() {
        Scope::Unscoped
    } else {
        Scope::Paths(globs)
    }
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
    /// Its globs (`rules.globs-keys`, `rules.compat.globs-prefix` applied), as
    /// matched against repository-relative paths.
    pub globs: Vec<String>,
    /// Its patterns over a touched file's content (`rules.compat.regex-keys`), as
    /// written; empty when none.
    pub regex: Vec<String>,
    /// Why this mode, in words: which key decided (`alwaysApply: true`,
    /// `trigger: glob`, `globs`, `no mode in the frontmatter, a
    /// description`...).
    pub why: String,
    /// What in the frontmatter this reading does not take as its author
    /// likely meant (a frontmatter that does not parse or gives a key
    /// twice, a quoted boolean, a mode word the harness does not know, an
    /// on-access mode without globs, globs that are not text): the rule
    /// then has the mode that loads least. `null` when nothing.
    pub misread: Option<String>,
    /// With [`misread`](Self::misread), the line (from 1) of the
    /// frontmatter key it is about (the first one it names), else of the
    /// frontmatter's opening. Not part of any JSON output (the survey
    /// shows it).
    #[serde(skip)]
    #[cfg_attr(feature = "schema", schemars(skip))]
    pub misread_line: Option<u64>,
    /// The rule of the same name that replaces this one
    /// (`rules.compat.one-per-name`): this one is then left out whatever its
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
                "{} pattern(s) past the first {MAX_PATTERNS_PER_RULE} of a rule ({MAX_PATTERNS} \
                 in a build) are not used",
                written.len() - n
            ));
            break;
        }
        if p.len() > max_bytes {
            problems.push(format!(
                "the pattern {shown:?}... is longer than {max_bytes} bytes ({})",
                crate::policy::keys::RULES.regex_max_bytes
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
    // Each pattern compiled alone; together they may still be too much
    // for one set: then this rule's patterns never match (no other rule's
    // are touched).
    let set = RegexSetBuilder::new(&kept)
        .size_limit(PATTERN_SIZE_LIMIT * MAX_PATTERNS_PER_RULE)
        .dfa_size_limit(PATTERN_SIZE_LIMIT)
        .build()
        .unwrap_or_else(|_| {
            problems.push(format!(
                "its {} patterns together are more than this engine compiles for one rule",
                kept.len()
            ));
            RegexSet::empty()
        });
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

/// The line (from 1) of the first frontmatter key of `text` that one of
/// the `misread` messages names (a message names the key it is about
/// first: `alwaysApply: "true" is ...`), else of the frontmatter's
/// opening (line 1).
fn misread_line(text: &str, misread: &[String]) -> u64 {
    let mut lines = text.lines().enumerate();
    if lines.next().is_none_or(|(_, l)| l.trim_end() != "---") {
        return 1;
    }
    let mut keyed = Vec::new();
    for (i, l) in lines {
        if l.trim_end() == "---" {
            break;
        }
        if l.starts_with([' ', '\t', '-', '#']) {
            continue;
        }
        let Some((key, _)) = l.split_once(':') else {
            continue;
        };
        let key = key.trim().trim_matches(['"', '\'']);
        if !key.is_empty() {
            keyed.push((key, i as u64 + 1));
        }
    }
    // The key a message starts with, else the first key it names.
    for m in misread {
        if let Some((_, line)) = keyed.iter().find(|(k, _)| m.starts_with(k)) {
            return *line;
        }
    }
    for m in misread {
        if let Some((_, line)) = keyed.iter().find(|(k, _)| m.contains(k)) {
            return *line;
        }
    }
    1
}

/// The mode of the rule file `cand` whose text is `text`, under `rules`.
///
/// The order in which the keys decide: a frontmatter that cannot be read
/// one way only (not YAML, a key given twice, not a mapping) gives
/// `manual`; then the `mode-key` word (unknown words and `on-access`
/// without globs give `manual`); then `always-key` true (`always`); then
/// globs (`on-access`); then a globs or patterns key that holds nothing
/// this reading takes (`manual`); then, with `always-key` false, or with
/// neither key present, `absent` (by the description, or one mode).
///
/// Whatever the frontmatter says that this reading does not take as its
/// author likely meant is said in `misread`, and the mode it then gets is
/// the one that loads least: never more than a plain reading would.
pub(crate) fn activation(
    rules: &crate::policy::Rules,
    text: &str,
    cand: &super::chain::Candidate,
    patterns_left: &mut usize,
) -> RuleFile {
    let path = cand.path.as_path();
    use crate::policy::{RuleAbsent, RuleMode};
    let (meta, unread) = match front_of(text) {
        Front::Absent => (Meta::new(), None),
        Front::Keys(meta) => (meta, None),
        Front::Unread(why) => (Meta::new(), Some(why)),
    };
    let mut misread: Vec<String> = Vec::new();
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
        .map(|g| {
            if rules.bare_globs_any_depth && !g.contains('/') {
                format!("**/{g}")
            } else {
                g
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
    // A globs or patterns key whose value is not text (a number, a
    // mapping, list items that are not strings): that part is not read.
    let mut unread_trigger = false;
    for (k, v) in [found_globs, found_patterns].into_iter().flatten() {
        if holds_non_text(v) {
            unread_trigger = true;
            misread.push(format!(
                "`{k}: {}` is not text or a list of text: what is not text is not read",
                shown(&v.to_string(), 80)
            ));
        }
    }
    let max_bytes = usize::try_from(rules.regex_max_bytes).unwrap_or(0);
    let (content, patterns_misread) = compile_patterns(&regex, max_bytes, patterns_left);
    misread.extend(patterns_misread);
    let triggered = !globs.is_empty() || content.is_some();
    let globs_word = match (found_globs, found_patterns) {
        (Some((g, _)), Some((r, _))) if content.is_some() => format!("{g} and {r}"),
        (_, Some((r, _))) if globs.is_empty() && content.is_some() => r.to_string(),
        (g, _) => g.map_or("globs", |(k, _)| k).to_string(),
    };
    let in_list = |list: &crate::policy::Names, w: &str| list.iter().any(|x| x.get_ref() == w);
    let (mode, why) = 'decide: {
        if let Some(why) = unread {
            misread.insert(0, why);
            break 'decide (
                Activation::Manual,
                "a frontmatter that cannot be read one way only".to_string(),
            );
        }
        if let Some(word) = key(&rules.mode_key) {
            let shown_word = text_of(word).unwrap_or_else(|| shown(&word.to_string(), 80));
            let k = &rules.mode_key;
            let mode = if in_list(&rules.always_words, &shown_word) {
                Activation::Always
            } else if in_list(&rules.on_access_words, &shown_word) {
                if !triggered {
                    misread.push(format!(
                        "`{k}: {shown_word}` loads on access, but the rule has no {globs_word}: \
                         it would load on no path"
                    ));
                    break 'decide (
                        Activation::Manual,
                        format!("{k}: {shown_word}, but no {globs_word}"),
                    );
                }
                Activation::OnAccess
            } else if in_list(&rules.listed_words, &shown_word) {
                Activation::Listed
            } else if in_list(&rules.manual_words, &shown_word) {
                Activation::Manual
            } else {
                misread.push(format!(
                    "`{k}: {shown_word}` is no mode word this harness knows"
                ));
                break 'decide (
                    Activation::Manual,
                    format!("{k}: {shown_word:?} is no mode word"),
                );
            };
            break 'decide (mode, format!("{k}: {shown_word}"));
        }
        let always = key(&rules.always_key);
        if let Some(serde_json::Value::Bool(true)) = always {
            break 'decide (Activation::Always, format!("{}: true", rules.always_key));
        }
        if triggered {
            break 'decide (Activation::OnAccess, globs_word.clone());
        }
        if unread_trigger {
            break 'decide (Activation::Manual, format!("{globs_word} that is not read"));
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
                misread.push(format!(
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
        misread_line: (!misread.is_empty()).then(|| misread_line(text, &misread)),
        misread: (!misread.is_empty()).then(|| misread.join("; ")),
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

/// The sides of a build's scoped rules, each capped and compiled on its
/// own: the home's (and the named roots'), those of the folders above the
/// repository, the repository's. No side's globs can take a count from
/// another's or make another's fail to compile: a repository never
/// changes which of the user's rules apply.
const SIDES: [Origin; 3] = [Origin::Home, Origin::Ancestor, Origin::Project];

/// The most globs the scoped rules of one side (see [`SIDES`]) keep
/// together (in read order: a rule read later keeps what the earlier ones
/// left).
pub(crate) const MAX_GLOBS: usize = 1024;

/// The longest glob kept, in bytes.
pub(crate) const MAX_GLOB_BYTES: usize = 1024;

/// The most bytes of glob text one rule keeps: what the compiled automaton
/// grows with, so that one rule's globs stay a small share of its side's.
pub(crate) const MAX_RULE_GLOB_BYTES: usize = 8 * 1024;

/// The most bytes of glob text the rules of one side keep together, so
/// that the size of the compiled automaton (and the time to build it)
/// stays bounded however the globs are written.
pub(crate) const MAX_GLOB_TOTAL_BYTES: usize = 32 * 1024;

/// One compiled set of globs, and for each of its globs the index of its
/// rule.
#[derive(Debug, Clone)]
struct Compiled {
    set: GlobSet,
    owner: Vec<usize>,
}

/// The scoped rules' globs, compiled once for a build: which rule each
/// glob belongs to. An access asks it which rules apply to a path; nothing
/// is compiled then.
///
/// Each side ([`SIDES`]) is compiled apart from the others, so that nothing
/// a repository writes can make the user's own globs fail to compile; when
/// one side's globs together are more than the engine compiles, each rule
/// of that side is compiled alone, and a rule that still fails loses its
/// globs (it loads on no path), itself only.
#[derive(Debug, Clone, Default)]
pub(crate) struct RuleMatcher {
    /// The compiled sets: one per side, or one per rule of a side whose
    /// set failed.
    sets: Vec<Compiled>,
    /// How many globs the sets hold.
    globs: usize,
    /// The rules with content patterns and no globs: every path is theirs
    /// (their patterns decide).
    anywhere: Vec<usize>,
}

/// The globs of `g` compiled into one set, when the engine can.
fn build_set(globs: &[&globset::Glob]) -> Result<GlobSet, globset::Error> {
    let mut set = GlobSetBuilder::new();
    for g in globs {
        set.add((*g).clone());
    }
    crate::vocab::counters::bump(crate::vocab::counters::Counter::ScopedGlobSets);
    set.build()
}

impl RuleMatcher {
    /// The globs of `rules` compiled (the ones that do not compile never
    /// match, as [`settle`] says).
    #[cfg(test)]
    pub(crate) fn new(rules: &[ScopedRule]) -> Self {
        let mut rules = rules.to_vec();
        Self::compile(&mut rules).0
    }

    /// The globs of `rules` compiled, each side on its own: a glob that
    /// does not parse is left out of its rule, and a rule whose globs the
    /// engine cannot compile (alone, or together once its side's set
    /// failed) loses them all. What is left out is taken out of the rule's
    /// `globs` and named in a warning.
    fn compile(rules: &mut [ScopedRule]) -> (Self, Vec<Warning>) {
        let mut warnings = Vec::new();
        let mut matcher = Self::default();
        // Each rule's globs, parsed.
        let mut parsed: Vec<Vec<globset::Glob>> = Vec::with_capacity(rules.len());
        for (i, rule) in rules.iter_mut().enumerate() {
            if rule.globs.is_empty() && rule.content.is_some() {
                matcher.anywhere.push(i);
            }
            let mut kept = Vec::with_capacity(rule.globs.len());
            let mut globs = Vec::with_capacity(rule.globs.len());
            for g in std::mem::take(&mut rule.globs) {
                match crate::policy::compile_glob(g.trim_start_matches("./")) {
                    Ok(glob) => {
                        globs.push(glob);
                        kept.push(g);
                    }
                    Err(e) => warnings.push(Warning::new(
                        WarningKind::ScopedGlobInvalid,
                        &rule.path,
                        format!(
                            "the glob {:?} is not used: it does not parse ({}); the rule's \
                             other globs still apply",
                            shown(&g, 80),
                            e.kind()
                        ),
                    )),
                }
            }
            rule.globs = kept;
            parsed.push(globs);
        }
        for side_origin in SIDES {
            let side: Vec<usize> = (0..rules.len())
                .filter(|&i| rules[i].origin == side_origin && !parsed[i].is_empty())
                .collect();
            if side.is_empty() {
                continue;
            }
            let all: Vec<&globset::Glob> = side.iter().flat_map(|&i| &parsed[i]).collect();
            if let Ok(set) = build_set(&all) {
                let owner = side
                    .iter()
                    .flat_map(|&i| std::iter::repeat_n(i, parsed[i].len()))
                    .collect();
                matcher.push(Compiled { set, owner });
                continue;
            }
            // Too much for one set: each rule alone, so that one rule's
            // globs cost that rule only.
            for &i in &side {
                let own: Vec<&globset::Glob> = parsed[i].iter().collect();
                match build_set(&own) {
                    Ok(set) => matcher.push(Compiled {
                        set,
                        owner: vec![i; own.len()],
                    }),
                    Err(_) => {
                        let rule = &mut rules[i];
                        // Name the globs that fail even alone, if any.
                        let alone: Vec<String> = own
                            .iter()
                            .filter(|g| build_set(&[**g]).is_err())
                            .map(|g| format!("{:?}", shown(g.glob(), 80)))
                            .collect();
                        let what = if alone.is_empty() {
                            format!(
                                "its {} globs together are more than this engine compiles",
                                own.len()
                            )
                        } else {
                            format!(
                                "the glob(s) {} are more than this engine compiles",
                                alone.join(", ")
                            )
                        };
                        warnings.push(Warning::new(
                            WarningKind::ScopedGlobInvalid,
                            &rule.path,
                            format!("{what}: the rule loads on no path"),
                        ));
                        rule.globs.clear();
                    }
                }
            }
        }
        use crate::vocab::counters::{Counter, add};
        add(Counter::ScopedGlobs, matcher.globs as u64);
        (matcher, warnings)
    }

    fn push(&mut self, compiled: Compiled) {
        self.globs += compiled.owner.len();
        self.sets.push(compiled);
    }

    /// How many globs were compiled.
    pub(crate) fn globs(&self) -> usize {
        self.globs
    }

    /// The indices of the rules one of whose globs matches `path` (a
    /// root-relative path with `/` separators), in rule order.
    pub(crate) fn matching(&self, path: &str) -> Vec<usize> {
        if self.sets.is_empty() {
            return self.anywhere.clone();
        }
        crate::vocab::counters::bump(crate::vocab::counters::Counter::ScopedMatches);
        let candidate = globset::Candidate::new(path);
        let mut rules: Vec<usize> = self.anywhere.clone();
        for compiled in &self.sets {
            rules.extend(
                compiled
                    .set
                    .matches_candidate(&candidate)
                    .into_iter()
                    .filter_map(|g| compiled.owner.get(g).copied()),
            );
        }
        rules.sort_unstable();
        rules.dedup();
        rules
    }
}

/// The scoped rules of one build (in read order) held to the caps, each
/// side ([`SIDES`]) on its own counts: each keeps its first
/// [`MAX_GLOBS_PER_RULE`] globs of at most [`MAX_GLOB_BYTES`] bytes, and
/// [`MAX_RULE_GLOB_BYTES`] bytes of them; the rules of one side together
/// at most [`MAX_GLOBS`] globs and [`MAX_GLOB_TOTAL_BYTES`] bytes. A rule that lost globs gets a
/// warning saying how many (a rule left with none is still listed: it
/// applies to no path). Then the globs are compiled ([`RuleMatcher`]).
/// Returns the rules, their globs compiled, and the warnings.
pub(crate) fn settle(mut rules: Vec<ScopedRule>) -> (Vec<ScopedRule>, RuleMatcher, Vec<Warning>) {
    let mut warnings = Vec::new();
    for side_origin in SIDES {
        let mut left = MAX_GLOBS;
        let mut bytes_left = MAX_GLOB_TOTAL_BYTES;
        for rule in rules.iter_mut().filter(|r| r.origin == side_origin) {
            let written = rule.globs.len();
            let room = left.min(MAX_GLOBS_PER_RULE);
            let mut rule_bytes_left = bytes_left.min(MAX_RULE_GLOB_BYTES);
            let mut kept = Vec::new();
            for g in std::mem::take(&mut rule.globs) {
                if kept.len() == room {
                    break;
                }
                if g.len() > MAX_GLOB_BYTES || g.len() > rule_bytes_left {
                    continue;
                }
                rule_bytes_left -= g.len();
                bytes_left -= g.len();
                kept.push(g);
            }
            left -= kept.len();
            if kept.len() < written {
                warnings.push(Warning::new(
                    WarningKind::ScopedGlobLimit,
                    &rule.path,
                    format!(
                        "{} of this rule's {written} `paths:` globs are not used: a rule keeps \
                         its first {MAX_GLOBS_PER_RULE}, each of at most {MAX_GLOB_BYTES} bytes, \
                         {MAX_RULE_GLOB_BYTES} bytes in all, and the {} rules {MAX_GLOBS} in \
                         all, of {MAX_GLOB_TOTAL_BYTES} bytes in all",
                        written - kept.len(),
                        match side_origin {
                            Origin::Home => "home's",
                            Origin::Ancestor => "above-the-repository",
                            Origin::Project => "repository's",
                        },
                    ),
                ));
            }
            rule.globs = kept;
        }
    }
    let (matcher, compile_warnings) = RuleMatcher::compile(&mut rules);
    warnings.extend(compile_warnings);
    (rules, matcher, warnings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_come_from_the_frontmatter_only() {
        let paths = |gs: &[&str]| Scope::Paths(gs.iter().map(|g| g.to_string()).collect());
        assert_eq!(
            scope_of("---\npaths:\n  - \"src/**/*.ts\"\n  - lib/*.rs\n---\nRule.\n"),
            paths(&["src/**/*.ts", "lib/*.rs"])
        );
        assert_eq!(scope_of("---\npaths: docs/**\n---\n"), paths(&["docs/**"]));
        assert_eq!(
            scope_of("---\r\npaths: docs/**\r\n---\r\nRule.\r\n"),
            paths(&["docs/**"])
        );
        assert_eq!(scope_of("---\ntitle: x\n---\nRule.\n"), Scope::Unscoped);
        assert_eq!(scope_of("Rule.\n---\npaths: x\n---\n"), Scope::Unscoped);
        assert_eq!(scope_of("---\npaths: []\n---\n"), Scope::Unscoped);
        // A frontmatter that does not parse is no scope, unless it has a
        // `paths:` key: then it scopes the file to no path.
        assert_eq!(scope_of("---\ntitle: [x\n---\nRule.\n"), Scope::Unscoped);
        for unread in [
            "---\npaths: [unclosed\n---\n",
            "---\npaths: \"**/*.tf\"\ntitle: a\ntitle: b\n---\n",
            "---\npaths: 5\n---\n",
            "---\npaths: [a/**, {b: c}]\n---\n",
        ] {
            assert!(matches!(scope_of(unread), Scope::Unread(_)), "{unread:?}");
        }
        let Scope::Unread(why) = scope_of("---\npaths: \"**/*.tf\"\ntitle: a\ntitle: b\n---\n")
        else {
            unreachable!()
        };
        assert!(
            why.contains("`title` is given twice (lines 3 and 4)"),
            "{why}"
        );
    }

    #[test]
    fn a_key_given_twice_is_named_with_its_lines() {
        assert_eq!(
            duplicate_key("a: 1\n  a: 2\n'b': 3\n# b: 4\nb: 5\n"),
            Some("the key `b` is given twice (lines 4 and 6)".to_string())
        );
        assert_eq!(duplicate_key("a: 1\nb: 2\n"), None);
        let Front::Unread(why) = front_of("---\ntrigger: manual\ntrigger: manual\n---\nx") else {
            unreachable!()
        };
        assert_eq!(why, "the key `trigger` is given twice (lines 2 and 3)");
        let Front::Unread(why) = front_of("---\na:\n  b: 1\n  b: 2\n---\nx") else {
            unreachable!()
        };
        assert!(
            why.starts_with("the frontmatter does not parse as YAML"),
            "{why}"
        );
        assert!(matches!(
            front_of("---\njust words\n---\n"),
            Front::Unread(_)
        ));
        assert!(matches!(front_of("---\n# a comment\n---\n"), Front::Keys(m) if m.is_empty()));
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
        assert_eq!(at("---\r\na: 1\r\n---\r\nbody\r\n"), Some("body\r\n"));
        assert_eq!(at("---\na: 1\n---x\n---\nbody"), Some("body"));
    }

    fn rule(globs: &[&str]) -> ScopedRule {
        rule_of(Origin::Project, "a", globs)
    }

    fn rule_of(origin: Origin, name: &str, globs: &[&str]) -> ScopedRule {
        ScopedRule {
            path: PathBuf::from(format!("/r/.claude/rules/{name}.md")),
            origin,
            globs: globs.iter().map(|g| g.to_string()).collect(),
            root: crate::vocab::origin::RootId::Repo,
            rel: PathBuf::from(".claude/rules/a.md"),
            at: 0,
            content: None,
            misread: None,
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

    /// A glob of about a kilobyte whose automaton is large: some hundred of
    /// them are more than one set compiles, 64 are not.
    fn heavy(i: usize) -> String {
        format!("{i}{}", "*a".repeat(500))
    }

    #[test]
    fn a_project_set_too_big_to_compile_leaves_the_home_rules_alone() {
        let heavy: Vec<String> = (0..64).map(heavy).collect();
        let heavy: Vec<&str> = heavy.iter().map(String::as_str).collect();
        let mut rules = vec![
            rule_of(Origin::Project, "p1", &heavy),
            rule_of(Origin::Home, "home", &["**/*.tf"]),
            rule_of(Origin::Project, "p2", &heavy),
            rule_of(Origin::Project, "p3", &heavy),
            rule_of(Origin::Project, "docs", &["docs/**"]),
        ];
        let (m, warnings) = RuleMatcher::compile(&mut rules);
        // The project's 193 globs are too many for one set: each rule is
        // compiled alone, and each alone compiles.
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(m.matching("infra/main.tf"), vec![1]);
        assert_eq!(m.matching("docs/a.md"), vec![4]);
        assert_eq!(m.matching(&format!("0{}", "xa".repeat(500))), vec![0, 2, 3]);
    }

    #[test]
    fn a_rule_the_engine_cannot_compile_costs_that_rule_only() {
        let heavy: Vec<String> = (0..256).map(heavy).collect();
        let heavy: Vec<&str> = heavy.iter().map(String::as_str).collect();
        let mut rules = vec![
            rule_of(Origin::Project, "big", &heavy),
            rule_of(Origin::Project, "bad", &["src/[oops", "src/*.rs"]),
            rule_of(Origin::Home, "home", &["**/*.tf"]),
            rule_of(Origin::Project, "docs", &["docs/**"]),
        ];
        let (m, warnings) = RuleMatcher::compile(&mut rules);
        let said: Vec<(String, WarningKind, String)> = warnings
            .iter()
            .map(|w| {
                (
                    w.path.to_string_lossy().into_owned(),
                    w.kind,
                    w.message.clone(),
                )
            })
            .collect();
        assert_eq!(said.len(), 2, "{said:?}");
        assert_eq!(said[0].0, "/r/.claude/rules/bad.md");
        assert_eq!(said[0].1, WarningKind::ScopedGlobInvalid);
        assert!(said[0].2.contains("\"src/[oops\" is not used"), "{said:?}");
        assert_eq!(said[1].0, "/r/.claude/rules/big.md");
        assert!(said[1].2.contains("the rule loads on no path"), "{said:?}");
        assert!(rules[0].globs.is_empty());
        assert_eq!(rules[1].globs, ["src/*.rs"]);
        assert_eq!(m.matching("infra/main.tf"), vec![2]);
        assert_eq!(m.matching("docs/a.md"), vec![3]);
        assert_eq!(m.matching("src/a.rs"), vec![1]);
    }

    #[test]
    fn the_repository_takes_no_glob_from_the_home_rules() {
        let many: Vec<String> = (0..MAX_GLOBS_PER_RULE)
            .map(|i| format!("d{i}/**"))
            .collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        let long = "x".repeat(MAX_GLOB_BYTES);
        let longs: Vec<&str> = vec![long.as_str(); MAX_GLOBS_PER_RULE];
        // The repository's rules, read first, use up every count of their
        // side; the home's rule, read last, keeps its glob.
        let rules: Vec<ScopedRule> = (0..MAX_GLOBS / MAX_GLOBS_PER_RULE)
            .map(|i| rule_of(Origin::Project, &format!("p{i}"), &many))
            .chain([rule_of(Origin::Project, "long", &longs)])
            .chain([rule_of(Origin::Home, "home", &["**/*.tf"])])
            .collect();
        let (rules, m, warnings) = settle(rules);
        assert_eq!(rules.last().map(|r| r.globs.len()), Some(1));
        assert_eq!(m.matching("a/b.tf"), vec![rules.len() - 1]);
        assert!(warnings.iter().all(|w| !w.path.ends_with("home.md")));
        // The byte counts: a rule keeps 8 KiB of globs, a side 32 KiB.
        let per_rule = MAX_RULE_GLOB_BYTES / MAX_GLOB_BYTES;
        let sides = MAX_GLOB_TOTAL_BYTES / MAX_RULE_GLOB_BYTES;
        let (rules, _, warnings) = settle(
            (0..=sides)
                .map(|i| rule_of(Origin::Project, &format!("l{i}"), &longs))
                .collect(),
        );
        let kept: Vec<usize> = rules.iter().map(|r| r.globs.len()).collect();
        assert_eq!(kept, [vec![per_rule; sides], vec![0]].concat());
        assert_eq!(warnings.len(), sides + 1);
    }
}
