//! The lenient reading of a frontmatter block that is not strict YAML.
//!
//! Many skills written for other loaders open with lines such as
//! `description: Use when: the user asks to deploy`: the second `: ` makes
//! the line invalid YAML, yet those loaders (Lisa's own line reader among
//! them) list the skill. When the policy says `skills.frontmatter =
//! "lenient"`, a block the strict parser refused is read again under this
//! narrow subset, and anything outside it stays `bad-frontmatter`:
//!
//! - every line is blank, a comment starting with `#` in its first column,
//!   a top-level `key: value` line, or a continuation;
//! - a key is letters, digits, `-` and `_`, in the first column, followed by
//!   `:` and a space (or the end of the line: a null value);
//! - the value is everything after the first `: `, verbatim (a `#` or a
//!   further `: ` included), trailing blanks removed; a value wholly wrapped
//!   in one pair of matching quotes loses the quotes (no escapes are
//!   interpreted), and one that opens a quote without closing it is refused;
//! - a value may not start a flow collection, an anchor, an alias, a tag or
//!   a block scalar (`[`, `{`, `&`, `*`, `!`, `|`, `>`): those are YAML this
//!   subset does not read;
//! - a line indented by spaces or tabs continues the value of the key above
//!   it (which must not be null), joined with one space, as a plain scalar
//!   folds;
//! - a key given twice is refused, as in strict mode.
//!
//! The subset has its own limits: at most [`MAX_BYTES`] bytes and
//! [`MAX_LINES`] lines.

use std::collections::BTreeMap;

use serde_json::Value;

use super::frontmatter::{
    Frontmatter, FrontmatterError, Reading, locate, parse_fields_with, parse_yaml,
};
use crate::policy::FrontmatterMode;

/// The most bytes of frontmatter the lenient reading accepts.
pub const MAX_BYTES: usize = 64 * 1024;

/// The most lines of frontmatter the lenient reading accepts.
pub const MAX_LINES: usize = 512;

/// Characters a value may not start with: YAML this subset does not read.
const NOT_PLAIN: &[char] = &['[', '{', '&', '*', '!', '|', '>'];

/// Why a block is outside the subset (for tests and the record).
fn outside(line: usize, why: &str) -> FrontmatterError {
    FrontmatterError::Yaml(format!("line {line} is outside the lenient subset: {why}"))
}

/// Reads the YAML text between the fences (`yaml`) under the subset.
/// `first_line` is the file line number of the block's first line, for
/// messages.
/// With `body`, a missing or blank description is left empty for the body
/// to fill (`description-from-body`), not refused.
pub(crate) fn read(
    yaml: &str,
    first_line: usize,
    body: bool,
) -> Result<Frontmatter, FrontmatterError> {
    if yaml.len() > MAX_BYTES {
        return Err(FrontmatterError::Yaml(format!(
            "the frontmatter is longer than the {MAX_BYTES} bytes the lenient reading accepts"
        )));
    }
    let mut entries: Vec<(String, Option<String>)> = Vec::new();
    for (n, raw) in yaml.split('\n').enumerate() {
        let at = first_line + n;
        if n >= MAX_LINES {
            return Err(outside(at, "more lines than the lenient reading accepts"));
        }
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        if line.starts_with([' ', '\t']) {
            let Some((_, Some(value))) = entries.last_mut() else {
                return Err(outside(at, "an indented line that continues no value"));
            };
            value.push(' ');
            value.push_str(line.trim());
            continue;
        }
        let Some((key, rest)) = line.split_once(':') else {
            return Err(outside(at, "not a `key: value` line"));
        };
        if key.is_empty()
            || !key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(outside(at, "the key is not a plain word"));
        }
        if entries.iter().any(|(k, _)| k == key) {
            return Err(FrontmatterError::Yaml(format!(
                "line {at}: the key `{key}` is given twice"
            )));
        }
        let value = if rest.trim().is_empty() {
            None
        } else if let Some(v) = rest.strip_prefix([' ', '\t']) {
            Some(value_of(v.trim(), at)?)
        } else {
            return Err(outside(at, "no space after the `:`"));
        };
        entries.push((key.to_string(), value));
    }
    build(entries, body)
}

/// A value after its key: verbatim, but for one pair of matching quotes.
fn value_of(v: &str, at: usize) -> Result<String, FrontmatterError> {
    if v.starts_with(NOT_PLAIN) {
        return Err(outside(
            at,
            "the value starts a collection, anchor, alias, tag or block scalar",
        ));
    }
    for quote in ['"', '\''] {
        if let Some(inner) = v.strip_prefix(quote) {
            return match inner.strip_suffix(quote) {
                Some(inner) if !inner.contains(quote) => Ok(inner.to_string()),
                _ => Err(outside(
                    at,
                    "a quote that does not close at the end of the line",
                )),
            };
        }
    }
    Ok(v.to_string())
}

/// Sorts the entries into a [`Frontmatter`], as the strict reading does for
/// text values.
fn build(
    entries: Vec<(String, Option<String>)>,
    body: bool,
) -> Result<Frontmatter, FrontmatterError> {
    let mut fm = Frontmatter::default();
    let mut name = None;
    let mut description = None;
    let mut extra = BTreeMap::new();
    for (key, value) in entries {
        match key.as_str() {
            "name" => name = value,
            "description" => description = value,
            "license" => fm.license = value,
            "compatibility" => fm.compatibility = value,
            "version" => fm.version = value,
            "allowed-tools" => fm.allowed_tools = value,
            _ => {
                extra.insert(key, value.map_or(Value::Null, Value::String));
            }
        }
    }
    fm.extra = extra;
    // As the strict reader: a missing name is reported first, and a
    // frontmatter with only a description comes back nameless.
    fm.name = name.filter(|n| !n.trim().is_empty()).unwrap_or_default();
    let missing = if fm.name.is_empty() {
        FrontmatterError::MissingName
    } else {
        FrontmatterError::MissingDescription
    };
    fm.description = match description {
        Some(d) if !super::frontmatter::is_blank(&d, body) => d,
        _ if body => String::new(),
        _ => return Err(missing),
    };
    Ok(fm)
}

/// Parses like [`parse`](super::frontmatter::parse); when the strict reading fails on the YAML itself
/// and `lenient` is set, reads the block again under the lenient subset
/// (see this module). A block read that way comes back with the
/// strict parser's error, for the record.
pub fn parse_or_lenient(
    text: &str,
    lenient: bool,
) -> Result<(Frontmatter, Option<String>), FrontmatterError> {
    let mode = if lenient {
        FrontmatterMode::Lenient
    } else {
        FrontmatterMode::Strict
    };
    parse_or_fallback(text, mode)
}

/// Parses like [`parse_or_lenient`], with `fallback` (any
/// `skills.frontmatter` value) as the reading used when strict YAML fails;
/// the other parts of the reading are the defaults.
pub fn parse_or_fallback(
    text: &str,
    fallback: FrontmatterMode,
) -> Result<(Frontmatter, Option<String>), FrontmatterError> {
    let reading = Reading {
        fallback,
        ..Reading::default()
    };
    let (mut fm, strict) = parse_or_lenient_fields(text, reading)?;
    if fm.name.is_empty() {
        return Err(FrontmatterError::MissingName);
    }
    super::frontmatter::cut_final_breaks(&mut fm);
    Ok((fm, strict))
}

/// [`parse_or_lenient`], but a missing name comes back empty (see
/// [`parse_fields`](super::frontmatter::parse_fields)).
pub(crate) fn parse_or_lenient_fields(
    text: &str,
    reading: Reading,
) -> Result<(Frontmatter, Option<String>), FrontmatterError> {
    let parsed = fallback_fields(text, reading);
    if !reading.body {
        return parsed;
    }
    // `description-from-body`: a description that is no text, or a block
    // that no reading takes, is the body's first line (Claude Code reads a
    // block that is not YAML as no keys).
    let body = || {
        let start = super::frontmatter::body_start(text, reading.fences).unwrap_or(text.len());
        super::frontmatter::body_description(text.get(start..).unwrap_or_default())
    };
    match parsed {
        Ok((mut fm, strict)) => {
            if fm.description.is_empty() {
                fm.description = body();
            }
            Ok((fm, strict))
        }
        Err(FrontmatterError::Yaml(strict)) => Ok((
            Frontmatter {
                description: body(),
                ..Frontmatter::default()
            },
            Some(strict),
        )),
        Err(e @ FrontmatterError::NotAMapping) => Ok((
            Frontmatter {
                description: body(),
                ..Frontmatter::default()
            },
            Some(e.to_string()),
        )),
        Err(e) => Err(e),
    }
}

/// [`parse_or_lenient_fields`] before `description-from-body`: the strict
/// reading, then the policy's fallback.
fn fallback_fields(
    text: &str,
    reading: Reading,
) -> Result<(Frontmatter, Option<String>), FrontmatterError> {
    match parse_fields_with(text, reading) {
        // Gemini CLI's fallback: the YAML refused, or not giving a string
        // name and description, the two lines are read as plain text.
        Err(
            strict @ (FrontmatterError::Yaml(_)
            | FrontmatterError::NotAMapping
            | FrontmatterError::MissingName
            | FrontmatterError::MissingDescription),
        ) if reading.fallback == FrontmatterMode::NameDescriptionLines => {
            let block = locate(text.as_bytes(), true, reading.fences)?;
            let yaml = text.get(block.yaml.clone()).ok_or_else(|| strict.clone())?;
            match name_description_lines(yaml) {
                Some(fm) => Ok((fm, Some(strict.to_string()))),
                None => Err(strict),
            }
        }
        // Codex's retry: the YAML again, each plain value made a quoted one.
        Err(FrontmatterError::Yaml(strict))
            if reading.fallback == FrontmatterMode::ValuesAsText =>
        {
            let block = locate(text.as_bytes(), true, reading.fences)?;
            let quoted = text
                .get(block.yaml.clone())
                .and_then(values_as_text)
                .ok_or_else(|| FrontmatterError::Yaml(strict.clone()))?;
            match parse_yaml(&quoted, reading) {
                Ok(fm) => Ok((fm, Some(strict))),
                Err(FrontmatterError::Yaml(_)) => Err(FrontmatterError::Yaml(strict)),
                Err(other) => Err(other),
            }
        }
        // Claude Code's retry: the YAML again, each value YAML would read
        // otherwise quoted, the tabs opening a line made spaces.
        Err(FrontmatterError::Yaml(strict))
            if reading.fallback == FrontmatterMode::QuoteSpecialValues =>
        {
            let block = locate(text.as_bytes(), true, reading.fences)?;
            let quoted = text
                .get(block.yaml.clone())
                .and_then(quote_special_values)
                .ok_or_else(|| FrontmatterError::Yaml(strict.clone()))?;
            match parse_yaml(&quoted, reading) {
                Ok(fm) => Ok((fm, Some(strict))),
                Err(FrontmatterError::Yaml(_)) => Err(FrontmatterError::Yaml(strict)),
                Err(other) => Err(other),
            }
        }
        Err(FrontmatterError::Yaml(strict)) if reading.fallback == FrontmatterMode::Lenient => {
            let block = locate(text.as_bytes(), true, reading.fences)?;
            let yaml = text
                .get(block.yaml.clone())
                .ok_or_else(|| FrontmatterError::Yaml(strict.clone()))?;
            let first_line = 1 + text.as_bytes()[..block.yaml.start]
                .iter()
                .filter(|&&b| b == b'\n')
                .count();
            match read(yaml, first_line, reading.body) {
                Ok(fm) => Ok((fm, Some(strict))),
                // Outside the subset too: the strict parser's word stands,
                // unless the subset found a missing field.
                Err(FrontmatterError::Yaml(_)) => Err(FrontmatterError::Yaml(strict)),
                Err(other) => Err(other),
            }
        }
        other => other.map(|fm| (fm, None)),
    }
}

/// Rewrites a frontmatter block for the `values-as-text` retry: the value
/// of every `key: value` line (after an indentation of spaces; the key not
/// quoted) becomes a double-quoted YAML string holding it as written, cut
/// at its first ` #` and trimmed. Left as they are: blank and comment
/// lines, a value that is empty (a map or list follows), that is spelled
/// as YAML's null (`null`, `Null`, `NULL`, `~`), that opens a
/// block scalar (`|`, `>`) or a quoted string, the lines of a block
/// scalar, and every other line (a tab-indented one, a line with no `: `),
/// which the YAML then judges. `None` past [`MAX_BYTES`].
fn values_as_text(yaml: &str) -> Option<String> {
    if yaml.len() > MAX_BYTES {
        return None;
    }
    let mut out = String::with_capacity(yaml.len() + yaml.len() / 4);
    // The indentation of the key whose block scalar is being read.
    let mut block_of: Option<usize> = None;
    for raw in yaml.split_inclusive('\n') {
        let (line, end) = match raw.strip_suffix("\r\n") {
            Some(l) => (l, "\r\n"),
            None => match raw.strip_suffix('\n') {
                Some(l) => (l, "\n"),
                None => (raw, ""),
            },
        };
        let indent = line.len() - line.trim_start_matches(' ').len();
        let body = &line[indent..];
        if let Some(key_indent) = block_of {
            if body.trim().is_empty() || indent > key_indent {
                out.push_str(raw);
                continue;
            }
            block_of = None;
        }
        let split = body
            .split_once(": ")
            .filter(|(key, _)| !key.is_empty() && !key.starts_with(['"', '\'', '#', '\t']));
        let Some((key, value)) = split else {
            out.push_str(raw);
            continue;
        };
        let value = value.trim_start_matches([' ', '\t']);
        let value = value.split_once(" #").map_or(value, |(v, _)| v).trim_end();
        // A value spelled as YAML's null stays null: Codex 0.171.0 then
        // takes the folder's name for `name: null` (fixture
        // `skills-codex-retry-null`).
        if value.is_empty()
            || value.starts_with(['"', '\''])
            || matches!(value, "null" | "Null" | "NULL" | "~")
        {
            out.push_str(raw);
            continue;
        }
        if value.starts_with(['|', '>']) {
            block_of = Some(indent);
            out.push_str(raw);
            continue;
        }
        out.push_str(&line[..indent]);
        out.push_str(key);
        out.push_str(": \"");
        for c in value.chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                '"' => out.push_str("\\\""),
                '\t' => out.push_str("\\t"),
                c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
                c => out.push(c),
            }
        }
        out.push('"');
        out.push_str(end);
    }
    Some(out)
}

/// Rewrites a frontmatter block for the `quote-special-values` retry, as
/// Claude Code 2.1.332 rewrites one its YAML parser refused: each line
/// (split at `\n` alone) that is a key of letters, `_` and `-`, a `:`,
/// white space and a value holding no line terminator (so not a CRLF
/// line: JavaScript's `.` takes no `\r`) has its value made a
/// double-quoted string when it holds one of `{}[]*&#!|>%@` and the
/// backtick, or `: `, unless it is wholly quoted already or a flow list;
/// then every run of tabs that opens a line (after any line terminator)
/// becomes two spaces per tab. `None` past [`MAX_BYTES`].
fn quote_special_values(yaml: &str) -> Option<String> {
    if yaml.len() > MAX_BYTES {
        return None;
    }
    let js = crate::vocab::text::is_javascript_white_space;
    let terminator = |c: char| matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}');
    let special = |c: char| "{}[]*&#!|>%@`".contains(c);
    let mut lines = Vec::new();
    for line in yaml.split('\n') {
        let key_len = line
            .find(|c: char| !(c.is_ascii_alphabetic() || c == '_' || c == '-'))
            .unwrap_or(line.len());
        let (key, rest) = line.split_at(key_len);
        let value = rest
            .strip_prefix(':')
            .filter(|after| after.starts_with(js))
            .map(|after| after.trim_start_matches(js))
            .filter(|value| !value.is_empty() && !value.contains(terminator));
        let Some(value) = value.filter(|_| !key.is_empty()) else {
            lines.push(line.to_string());
            continue;
        };
        let quoted = (value.starts_with('"') && value.ends_with('"'))
            || (value.starts_with('\'') && value.ends_with('\''))
            || (value.starts_with('[')
                && value.ends_with(']')
                && super::frontmatter::is_yaml_list(value));
        if quoted || !(value.contains(special) || value.contains(": ")) {
            lines.push(line.to_string());
            continue;
        }
        let escaped = value.replace('\\', "\\\\").replace('"', "\\\"");
        lines.push(format!("{key}: \"{escaped}\""));
    }
    let joined = lines.join("\n");
    let mut out = String::with_capacity(joined.len());
    let mut line_start = true;
    for c in joined.chars() {
        if line_start && c == '\t' {
            out.push_str("  ");
            continue;
        }
        line_start = terminator(c);
        out.push(c);
    }
    Some(out)
}

/// Reads only the `name:` and `description:` lines of a frontmatter, as
/// plain text (Gemini CLI's fallback reader): a line that, after any
/// indentation, starts with `name:` or `description:` sets that field to
/// the rest of the line, trimmed, quotes and all; the last such line wins.
/// A description goes on over the indented lines that follow it (a space
/// or tab, then text), each trimmed, joined with single spaces. Both must
/// be found, or there is nothing (`None`). The field names are matched
/// exactly, in lower case.
fn name_description_lines(yaml: &str) -> Option<Frontmatter> {
    if yaml.len() > MAX_BYTES {
        return None;
    }
    let trim = |text: &str| {
        text.trim_matches(crate::vocab::text::is_javascript_white_space)
            .to_string()
    };
    let mut name = None;
    let mut description = None;
    let mut lines = yaml
        .split('\n')
        .map(|line| line.strip_suffix('\r').unwrap_or(line))
        .take(MAX_LINES)
        .peekable();
    while let Some(line) = lines.next() {
        let content = line.trim_start_matches(crate::vocab::text::is_javascript_white_space);
        if let Some(rest) = content.strip_prefix("name:") {
            name = Some(trim(rest));
            continue;
        }
        let Some(rest) = content.strip_prefix("description:") else {
            continue;
        };
        let mut parts = vec![trim(rest)];
        while let Some(next) = lines.peek() {
            let indented = next.starts_with([' ', '\t'])
                && next
                    .trim_start_matches([' ', '\t'])
                    .starts_with(|c: char| !crate::vocab::text::is_javascript_white_space(c));
            if !indented {
                break;
            }
            parts.push(trim(next));
            lines.next();
        }
        parts.retain(|part| !part.is_empty());
        description = Some(parts.join(" "));
    }
    Some(Frontmatter {
        name: name?,
        description: description?,
        ..Frontmatter::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(yaml: &str) -> Frontmatter {
        read(yaml, 2, false).unwrap_or_else(|e| panic!("{yaml:?}: {e}"))
    }

    fn refused(yaml: &str) -> String {
        match read(yaml, 2, false) {
            Ok(fm) => panic!("{yaml:?} was read: {fm:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn quote_special_values_rewrites_as_claude_code_does() {
        let cases = [
            // A value with `: ` is quoted, its quotes and backslashes escaped.
            (
                "description: say \"hi\": a\\b",
                "description: \"say \\\"hi\\\": a\\\\b\"",
            ),
            // Quoted already, a flow list, or nothing special: as it is.
            ("description: \"a: b\"", "description: \"a: b\""),
            ("tags: [a, b]", "tags: [a, b]"),
            ("description: plain words", "description: plain words"),
            // An unclosed list is special text.
            ("description: [open", "description: \"[open\""),
            // A CRLF line, or a key with a digit, is left to the YAML.
            ("description: a: b\r", "description: a: b\r"),
            ("k1: a: b", "k1: a: b"),
            // Tabs opening a line, after any line terminator, are spaces;
            // a block indicator is special text too (so that block no
            // longer parses: Claude Code then takes the body).
            (
                "description: >\n\t\tfolded",
                "description: \">\"\n    folded",
            ),
            ("a: b\r\n\tc", "a: b\r\n  c"),
        ];
        for (yaml, want) in cases {
            assert_eq!(
                quote_special_values(yaml).as_deref(),
                Some(want),
                "{yaml:?}"
            );
        }
        assert_eq!(quote_special_values(&"x".repeat(MAX_BYTES + 1)), None);
    }

    #[test]
    fn the_subset() {
        let fm = ok("name: deploy\ndescription: Use when: the user asks to deploy\n");
        assert_eq!(fm.description, "Use when: the user asks to deploy");
        let fm = ok("name: a\ndescription: C# and F#: # not a comment\n");
        assert_eq!(fm.description, "C# and F#: # not a comment");
        let fm = ok("name: a\ndescription: see https://example.com/x: docs\n");
        assert_eq!(fm.description, "see https://example.com/x: docs");
        let fm = ok("name: a\ndescription: first: part\n\tcontinued: here\n  and here\n");
        assert_eq!(fm.description, "first: part continued: here and here");
        let fm =
            ok("# a comment\nname: 'a'\ndescription: \"quoted: yes\"\nowner: me: you\nempty:\n");
        assert_eq!(fm.name, "a");
        assert_eq!(fm.description, "quoted: yes");
        assert_eq!(fm.extra["owner"], Value::String("me: you".into()));
        assert_eq!(fm.extra["empty"], Value::Null);
    }

    #[test]
    fn outside_the_subset() {
        for yaml in [
            "name: a\ndescription: \"open: quote\n",
            "name: a\ndescription: |\n  block: scalar\n",
            "name: a\ndescription: [x: y]\n",
            "name: a\nmetadata:\n  nested: value\n",
            "name: a\ndescription: x: y\nname: b\n",
            "name: a\n - item: x\n",
            "- name: a\n",
            "name:a\n",
        ] {
            refused(yaml);
        }
        assert!(refused("name: a\nname: b: c\n").contains("given twice"));
    }

    #[test]
    fn limits() {
        let long = format!("name: a\ndescription: x: {}\n", "y".repeat(MAX_BYTES));
        refused(&long);
        let many = "name: a\ndescription: x: y\n".to_string() + &"# c\n".repeat(MAX_LINES);
        refused(&many);
    }
}
