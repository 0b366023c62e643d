//! Prompt templates: literal text with `{name}` placeholders.
//!
//! A template is parsed once, when the policy is loaded. Its placeholder names
//! are checked against the set its field allows at that moment, so a typo in a
//! team's policy is reported with its span instead of surfacing in a prompt.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A parsed template.
///
/// ```
/// use lisa_context::policy::Template;
///
/// let t = Template::parse("{count} more, {{literally}}").unwrap();
/// assert_eq!(t.render(|name| (name == "count").then(|| "3".to_string())), "3 more, {literally}");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    source: String,
    parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Text(String),
    Placeholder {
        name: String,
        /// Byte offset of the placeholder's name inside the template text.
        offset: usize,
    },
}

/// Why a template's text does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TemplateSyntaxError {
    /// A `{` with no matching `}`.
    #[error("unclosed `{{` at byte {0} (write `{{{{` for a literal brace)")]
    Unclosed(usize),
    /// A `}` with no `{` before it.
    #[error("stray `}}` at byte {0} (write `}}}}` for a literal brace)")]
    Stray(usize),
    /// `{}` or a name with characters other than letters, digits, `_` and `-`.
    #[error("placeholder at byte {0} is not a name of letters, digits, `_` or `-`")]
    BadName(usize),
}

impl Template {
    /// Parses `source`, splitting literal text from placeholders.
    pub fn parse(source: &str) -> Result<Self, TemplateSyntaxError> {
        let mut parts = Vec::new();
        let mut text = String::new();
        let bytes = source.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'{' if bytes.get(i + 1) == Some(&b'{') => {
                    text.push('{');
                    i += 2;
                }
                b'}' if bytes.get(i + 1) == Some(&b'}') => {
                    text.push('}');
                    i += 2;
                }
                b'{' => {
                    let close = source[i + 1..]
                        .find('}')
                        .ok_or(TemplateSyntaxError::Unclosed(i))?;
                    let name = &source[i + 1..i + 1 + close];
                    let valid = !name.is_empty()
                        && name
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
                    if !valid {
                        return Err(TemplateSyntaxError::BadName(i));
                    }
                    if !text.is_empty() {
                        parts.push(Part::Text(std::mem::take(&mut text)));
                    }
                    parts.push(Part::Placeholder {
                        name: name.to_string(),
                        offset: i + 1,
                    });
                    i += close + 2;
                }
                b'}' => return Err(TemplateSyntaxError::Stray(i)),
                _ => {
                    // Copy the run of literal text up to the next brace (a
                    // brace is ASCII, so the run ends on a char boundary).
                    let run = memchr::memchr2(b'{', b'}', &bytes[i..]).unwrap_or(bytes.len() - i);
                    text.push_str(&source[i..i + run]);
                    i += run;
                }
            }
        }
        if !text.is_empty() {
            parts.push(Part::Text(text));
        }
        Ok(Self {
            source: source.to_string(),
            parts,
        })
    }

    /// The template as written in the policy.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Every placeholder: its name and the byte offset of the name in [`source`](Self::source).
    pub fn placeholders(&self) -> impl Iterator<Item = (&str, usize)> {
        self.parts.iter().filter_map(|p| match p {
            Part::Placeholder { name, offset } => Some((name.as_str(), *offset)),
            Part::Text(_) => None,
        })
    }

    /// Whether the template uses placeholder `name`.
    pub fn uses(&self, name: &str) -> bool {
        self.placeholders().any(|(n, _)| n == name)
    }

    /// The literal text before the first placeholder.
    pub fn literal_prefix(&self) -> &str {
        match self.parts.first() {
            Some(Part::Text(t)) => t,
            _ => "",
        }
    }

    /// Fills the template. `value` answers each placeholder name; a name it
    /// does not know renders as nothing (load-time validation makes that
    /// unreachable for a validated policy).
    pub fn render(&self, value: impl Fn(&str) -> Option<String>) -> String {
        let mut out = String::with_capacity(self.source.len() + 32);
        for part in &self.parts {
            match part {
                Part::Text(t) => out.push_str(t),
                Part::Placeholder { name, .. } => {
                    if let Some(v) = value(name) {
                        out.push_str(&v);
                    }
                }
            }
        }
        out
    }

    /// Fills the template from a list of `(name, value)` pairs.
    pub fn fill(&self, values: &[(&str, &str)]) -> String {
        // Sized exactly first: a long value (a skill's description) would
        // otherwise grow the string, and copy it, on the way.
        let len = self
            .parts
            .iter()
            .map(|part| match part {
                Part::Text(t) => t.len(),
                Part::Placeholder { name, .. } => values
                    .iter()
                    .find(|(n, _)| n == name)
                    .map_or(0, |(_, v)| v.len()),
            })
            .sum();
        let mut out = String::with_capacity(len);
        self.fill_into(&mut out, values);
        out
    }

    /// [`fill`](Self::fill), appended to `out` (no string of its own, and
    /// no copy of any value).
    ///
    /// ```
    /// use lisa_context::policy::Template;
    ///
    /// let t = Template::parse("<{path}>").unwrap();
    /// let mut out = String::from("see ");
    /// t.fill_into(&mut out, &[("path", "a.md")]);
    /// assert_eq!(out, "see <a.md>");
    /// ```
    pub fn fill_into(&self, out: &mut String, values: &[(&str, &str)]) {
        for part in &self.parts {
            match part {
                Part::Text(t) => out.push_str(t),
                Part::Placeholder { name, .. } => {
                    if let Some((_, v)) = values.iter().find(|(n, _)| n == name) {
                        out.push_str(v);
                    }
                }
            }
        }
    }
}

impl fmt::Display for Template {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

impl<'de> Deserialize<'de> for Template {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Template::parse(&s).map_err(serde::de::Error::custom)
    }
}

impl Serialize for Template {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.source)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_renders() {
        let t = Template::parse("a {x} b {{y}} {z}").unwrap();
        let names: Vec<_> = t.placeholders().map(|(n, _)| n).collect();
        assert_eq!(names, ["x", "z"]);
        assert_eq!(t.fill(&[("x", "1"), ("z", "2")]), "a 1 b {y} 2");
        assert_eq!(t.literal_prefix(), "a ");
    }

    #[test]
    fn offsets_point_at_names() {
        let t = Template::parse("héllo {name}").unwrap();
        let (_, off) = t.placeholders().next().unwrap();
        assert_eq!(&t.source()[off..off + 4], "name");
    }

    #[test]
    fn syntax_errors() {
        assert_eq!(
            Template::parse("a {x"),
            Err(TemplateSyntaxError::Unclosed(2))
        );
        assert_eq!(Template::parse("a } b"), Err(TemplateSyntaxError::Stray(2)));
        assert_eq!(Template::parse("{}"), Err(TemplateSyntaxError::BadName(0)));
        assert_eq!(
            Template::parse("{a b}"),
            Err(TemplateSyntaxError::BadName(0))
        );
    }
}

#[cfg(test)]
mod properties {
    use super::*;
    use proptest::prelude::*;

    /// The definition, one character at a time: what `parse` must agree with.
    fn reference(source: &str) -> Result<Vec<Part>, TemplateSyntaxError> {
        let mut parts = Vec::new();
        let mut text = String::new();
        let mut chars = source.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            let doubled = chars.peek().map(|&(_, n)| n) == Some(c);
            match c {
                '{' | '}' if doubled => {
                    text.push(c);
                    chars.next();
                }
                '}' => return Err(TemplateSyntaxError::Stray(i)),
                '{' => {
                    let mut name = String::new();
                    loop {
                        match chars.next() {
                            None => return Err(TemplateSyntaxError::Unclosed(i)),
                            Some((_, '}')) => break,
                            Some((_, n)) => name.push(n),
                        }
                    }
                    let ok = !name.is_empty()
                        && name
                            .chars()
                            .all(|n| n.is_ascii_alphanumeric() || n == '_' || n == '-');
                    if !ok {
                        return Err(TemplateSyntaxError::BadName(i));
                    }
                    if !text.is_empty() {
                        parts.push(Part::Text(std::mem::take(&mut text)));
                    }
                    parts.push(Part::Placeholder {
                        name,
                        offset: i + 1,
                    });
                }
                _ => text.push(c),
            }
        }
        if !text.is_empty() {
            parts.push(Part::Text(text));
        }
        Ok(parts)
    }

    proptest! {
        #[test]
        fn parse_agrees_with_the_definition(source in "([{}a-z_ é\\n-]|\\{[a-z]{1,3}\\}){0,24}") {
            let ours = Template::parse(&source).map(|t| t.parts);
            prop_assert_eq!(ours, reference(&source));
        }
    }
}
