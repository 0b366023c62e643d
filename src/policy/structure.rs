//! The schema walk: a policy file's TOML document, checked key by key against
//! the schema's shapes before anything is deserialized.
//!
//! serde stops at the first key it cannot take, so a file with six mistakes
//! used to need six runs. The walk instead visits every key of the parsed
//! document (which keeps the span of every key and value), records every
//! unknown key, wrong type, unknown word, unparsable template and missing
//! required key, and removes the values at fault. What remains deserializes
//! cleanly, so the semantic checks (`validate.rs`) still run on it and their
//! problems join the same report.
//!
//! The walk knows the schema only through [`PolicyLayer::FIELDS`], which the
//! `section!` and `words!` declarations build from the schema's own types.

use std::borrow::Cow;
use std::ops::Range;

use serde::de::Unexpected;
use toml::Spanned;
use toml::de::{DeArray, DeTable, DeValue};

use super::diagnostic::{Problem, ProblemKind};
use super::schema::{Field, PolicyLayer, Shape};
use super::template::Template;
use super::validate::SUPPORTED_VERSION;

/// The name of the table that holds a section's compat part
/// (`[instructions.compat]`).
pub(crate) const COMPAT: &str = "compat";

/// Keys that left their section's compat part for its core when a second
/// shipped policy came to set them (the criterion of docs/policy.md): their
/// compat spelling is read for one release with a `policy::deprecated-key`
/// warning.
pub(crate) const LEFT_COMPAT: &[&str] = &["instructions.access-level-files"];

/// What the walk found in one policy file.
pub(crate) struct Checked {
    /// Every structural problem: the file is refused.
    pub(crate) problems: Vec<Problem>,
    /// Every key written in a spelling that is read for one more release
    /// (`policy::deprecated-key`): the file is taken, with these warnings.
    pub(crate) deprecations: Vec<Problem>,
}

/// Walks a parsed policy file against the schema. Returns every structural
/// problem found, and every key written in its deprecated spelling; the
/// values at fault are removed from `doc`, and each section's compat part
/// (`[instructions.compat]`) is laid flat into its section, where the
/// layer types read it.
pub(crate) fn check(doc: &mut Spanned<DeTable<'_>>, src: &super::diagnostic::Source) -> Checked {
    let mut walk = Walk {
        src,
        problems: Vec::new(),
        deprecations: Vec::new(),
    };
    let span = doc.span();
    walk.table("", PolicyLayer::FIELDS, doc.get_mut(), span);
    Checked {
        problems: walk.problems,
        deprecations: walk.deprecations,
    }
}

struct Walk<'a> {
    src: &'a super::diagnostic::Source,
    problems: Vec<Problem>,
    deprecations: Vec<Problem>,
}

impl Walk<'_> {
    fn push(&mut self, problem: Problem) {
        self.problems.push(problem);
    }

    /// Checks the keys of one table, whose dotted path is `path` ("" for the
    /// document) and whose span (for a missing key) is `span`. Returns whether
    /// the table lost anything: a key at fault or a missing required key.
    fn table(
        &mut self,
        path: &str,
        fields: &[Field],
        table: &mut DeTable<'_>,
        span: Range<usize>,
    ) -> bool {
        let before = self.problems.len();
        // A section's compat part is a table of its own, whose keys are
        // checked as a plain table's.
        let compat: Vec<Field> = fields
            .iter()
            .filter(|f| f.compat || LEFT_COMPAT.contains(&dotted(path, f.key).as_str()))
            .map(|f| Field {
                compat: false,
                ..*f
            })
            .collect();
        let mut remove = Vec::new();
        // The compat keys written at the section's top level: their old
        // spelling, with the key's span.
        let mut old = Vec::new();
        for (key, value) in table.iter_mut() {
            let name: &str = key.get_ref();
            if name == COMPAT && !compat.is_empty() {
                let value_span = value.span();
                match value.get_mut() {
                    DeValue::Table(inner) => {
                        self.table(&dotted(path, COMPAT), &compat, inner, value_span);
                    }
                    _ => {
                        self.wrong_type(value, "a table");
                        remove.push(name.to_string());
                    }
                }
                continue;
            }
            let Some(field) = fields.iter().find(|f| f.key == name) else {
                self.unknown_key(name, key.span(), fields);
                remove.push(name.to_string());
                continue;
            };
            if field.compat {
                old.push((field.key, key.span()));
            }
            let dotted = dotted(path, field.key);
            if !self.value(&dotted, field.shape, value) {
                remove.push(name.to_string());
            }
        }
        for key in &remove {
            table.remove(key.as_str());
        }
        if !compat.is_empty() {
            self.lay_compat_flat(path, table, &old);
        }
        for field in fields.iter().filter(|f| f.required) {
            // A key present but at fault was reported as such, not as missing.
            let present = table.contains_key(field.key) || remove.iter().any(|k| k == field.key);
            if !present {
                self.missing(path, field.key, span.clone());
            }
        }
        self.problems.len() > before
    }

    /// Checks one value against its shape. Returns whether the value may stay
    /// in the document (a table that lost some keys stays; anything else at
    /// fault goes).
    fn value(&mut self, path: &str, shape: Shape, value: &mut Spanned<DeValue<'_>>) -> bool {
        let span = value.span();
        match (shape, value.get_mut()) {
            (Shape::Integer, DeValue::Integer(n)) => {
                if i64::from_str_radix(n.as_str(), n.radix()).is_ok() {
                    return true;
                }
                let problem = Problem::new(
                    self.src,
                    ProblemKind::OutOfRange,
                    span,
                    format!("`{path}` is {n}, which does not fit in a 64-bit integer"),
                    "out of range",
                );
                self.push(problem);
                false
            }
            (Shape::Boolean, DeValue::Boolean(_)) | (Shape::String, DeValue::String(_)) => true,
            (Shape::Template, DeValue::String(s)) => match Template::parse(s) {
                Ok(_) => true,
                Err(e) => {
                    let problem = Problem::new(
                        self.src,
                        ProblemKind::TemplateSyntax,
                        span,
                        e.to_string(),
                        "template does not parse",
                    );
                    self.push(problem);
                    false
                }
            },
            (Shape::Word(words), DeValue::String(s)) => {
                if words.contains(&s.as_ref()) {
                    return true;
                }
                let safe = crate::vocab::unicode::terminal_safe(s);
                let mut problem = Problem::new(
                    self.src,
                    ProblemKind::UnknownValue,
                    span,
                    format!(
                        "`{path}` does not take \"{safe}\": it takes {}",
                        one_of(words)
                    ),
                    "unknown value",
                );
                problem = problem.with_help(match closest(s, words) {
                    Some(best) => format!("did you mean \"{best}\"?"),
                    None => format!("write {}", one_of(words)),
                });
                self.push(problem);
                false
            }
            (Shape::Strings, DeValue::Array(items)) => {
                let mut ok = true;
                for item in items.iter() {
                    if !matches!(item.get_ref(), DeValue::String(_)) {
                        self.wrong_type(item, "a string");
                        ok = false;
                    }
                }
                ok
            }
            (Shape::Table(fields), DeValue::Table(table)) => {
                self.table(path, fields, table, span);
                true
            }
            (Shape::Tables(fields), DeValue::Array(items)) => {
                // An entry at fault is dropped; the others stay for the
                // semantic checks (ranks, paths).
                let mut keep = Vec::with_capacity(items.len());
                for mut item in std::mem::replace(items, DeArray::new()) {
                    let item_span = item.span();
                    let ok = match item.get_mut() {
                        DeValue::Table(table) => !self.table(path, fields, table, item_span),
                        _ => {
                            self.wrong_type(&item, "a table");
                            false
                        }
                    };
                    if ok {
                        keep.push(item);
                    }
                }
                for item in keep {
                    items.push(item);
                }
                true
            }
            _ => {
                self.wrong_type(value, &expected(shape));
                false
            }
        }
    }

    /// Reports each compat key of the section `path` written in its old
    /// spelling (`old`: at the section's top level, with its span): a
    /// deprecation warning naming the new one, or an error when the
    /// section's compat part sets the key too. Then lays the compat part
    /// flat into the section, for the layer type to read.
    fn lay_compat_flat(
        &mut self,
        path: &str,
        table: &mut DeTable<'_>,
        old: &[(&'static str, Range<usize>)],
    ) {
        let new_spans: Vec<(String, Range<usize>)> = match table.get(COMPAT).map(|v| v.get_ref()) {
            Some(DeValue::Table(part)) => part
                .iter()
                .map(|(k, _)| (k.get_ref().to_string(), k.span()))
                .collect(),
            _ => Vec::new(),
        };
        // A key that left the compat part for the core, written there.
        let core_spans: Vec<(String, Range<usize>)> = table
            .iter()
            .map(|(k, _)| (k.get_ref().to_string(), k.span()))
            .collect();
        for (key, span) in &new_spans {
            let now = dotted(path, key);
            if !LEFT_COMPAT.contains(&now.as_str()) {
                continue;
            }
            let was = format!("{}.{key}", dotted(path, COMPAT));
            match core_spans.iter().find(|(k, _)| k == key) {
                Some((_, core_span)) => {
                    let problem = Problem::new(
                        self.src,
                        ProblemKind::DuplicateKey,
                        span.clone(),
                        format!("`{now}` is set twice: here, in its old spelling, and as `{now}`"),
                        "old spelling",
                    )
                    .with_label(core_span.clone(), "new spelling")
                    .with_help(format!("keep only `{now}`"));
                    self.push(problem);
                    if let Some(DeValue::Table(part)) = table.get_mut(COMPAT).map(|v| v.get_mut()) {
                        part.remove(key.as_str());
                    }
                }
                None => {
                    let problem = Problem::new(
                        self.src,
                        ProblemKind::DeprecatedKey,
                        span.clone(),
                        format!("`{was}` is now spelt `{now}`"),
                        "deprecated spelling",
                    )
                    .with_help(format!(
                        "write `{key}` in `[{path}]`: a key two shipped policies set is a core \
                         key, and the old spelling is read for one release only"
                    ));
                    self.deprecations.push(problem);
                }
            }
        }
        for (key, span) in old {
            let new = format!("{}.{key}", dotted(path, COMPAT));
            let was = dotted(path, key);
            match new_spans.iter().find(|(k, _)| k == key) {
                Some((_, new_span)) => {
                    let problem = Problem::new(
                        self.src,
                        ProblemKind::DuplicateKey,
                        span.clone(),
                        format!("`{was}` is set twice: here, in its old spelling, and as `{new}`"),
                        "old spelling",
                    )
                    .with_label(new_span.clone(), "new spelling")
                    .with_help(format!("keep only `{new}`"));
                    self.push(problem);
                    table.remove(*key);
                }
                None => {
                    let problem = Problem::new(
                        self.src,
                        ProblemKind::DeprecatedKey,
                        span.clone(),
                        format!("`{was}` is now spelt `{new}`"),
                        "deprecated spelling",
                    )
                    .with_help(format!(
                        "write `{COMPAT}.{key}` in `[{path}]` (or `{key}` in `[{path}.{COMPAT}]`): \
                         the old spelling is read for one release only"
                    ));
                    self.deprecations.push(problem);
                }
            }
        }
        if let Some((_, part)) = table.remove_entry(COMPAT)
            && let DeValue::Table(part) = part.into_inner()
        {
            for (key, value) in part {
                table.insert(key, value);
            }
        }
    }

    fn wrong_type(&mut self, value: &Spanned<DeValue<'_>>, expected: &str) {
        let problem = Problem::new(
            self.src,
            ProblemKind::WrongType,
            value.span(),
            format!(
                "invalid type: {}, expected {expected}",
                unexpected(value.get_ref())
            ),
            "wrong type",
        );
        self.push(problem);
    }

    fn unknown_key(&mut self, key: &str, span: Range<usize>, fields: &[Field]) {
        // A section's compat keys are written under `compat`: that is the
        // name offered, and a near miss of one of them is suggested with it.
        let mut keys: Vec<&str> = fields.iter().filter(|f| !f.compat).map(|f| f.key).collect();
        if fields.iter().any(|f| f.compat) {
            keys.push(COMPAT);
            let compat: Vec<&str> = fields.iter().filter(|f| f.compat).map(|f| f.key).collect();
            if closest(key, &keys).is_none()
                && let Some(best) = closest(key, &compat)
            {
                let problem = Problem::new(
                    self.src,
                    ProblemKind::UnknownKey,
                    span,
                    format!("unknown field `{key}`, expected {}", one_of(&keys)),
                    "unknown key",
                )
                .with_help(format!("did you mean `{COMPAT}.{best}`?"));
                self.push(problem);
                return;
            }
        }
        let expected = if keys.is_empty() {
            "there are no fields".to_string()
        } else {
            format!("expected {}", one_of(&keys))
        };
        let mut problem = Problem::new(
            self.src,
            ProblemKind::UnknownKey,
            span,
            format!("unknown field `{key}`, {expected}"),
            "unknown key",
        );
        if let Some(best) = closest(key, &keys) {
            problem = problem.with_help(format!("did you mean `{best}`?"));
        }
        self.push(problem);
    }

    fn missing(&mut self, path: &str, key: &str, span: Range<usize>) {
        let problem = if path.is_empty() && key == "version" {
            // The document's span is the whole file; the label goes at its start.
            Problem::new(
                self.src,
                ProblemKind::MissingField,
                0..0,
                "this policy file has no `version` key",
                "missing a required key",
            )
            .with_help(format!(
                "add `version = {SUPPORTED_VERSION}` at the top of the file"
            ))
        } else {
            Problem::new(
                self.src,
                ProblemKind::MissingField,
                span,
                format!("missing field `{key}`"),
                "missing a required key",
            )
        };
        self.push(problem);
    }
}

fn dotted(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// What a shape expects, as a wrong-type message says it.
fn expected(shape: Shape) -> String {
    match shape {
        Shape::Integer => "an integer".into(),
        Shape::Boolean => "a boolean".into(),
        Shape::String | Shape::Template => "a string".into(),
        Shape::Word(words) => format!("a string, {}", one_of(words)),
        Shape::Strings => "an array of strings".into(),
        Shape::Table(_) => "a table".into(),
        Shape::Tables(_) => "an array of tables".into(),
    }
}

/// The value found, in serde's words (`string "big"`, ``integer `5` ``...).
fn unexpected(value: &DeValue<'_>) -> String {
    match value {
        DeValue::String(s) => Unexpected::Str(s).to_string(),
        DeValue::Integer(n) => match i64::from_str_radix(n.as_str(), n.radix()) {
            Ok(i) => Unexpected::Signed(i).to_string(),
            Err(_) => format!("integer `{n}`"),
        },
        DeValue::Float(f) => match f.as_str().parse::<f64>() {
            Ok(x) => Unexpected::Float(x).to_string(),
            Err(_) => format!("floating point `{f}`"),
        },
        DeValue::Boolean(b) => Unexpected::Bool(*b).to_string(),
        DeValue::Datetime(d) => format!("datetime `{d}`"),
        DeValue::Array(_) => "array".to_string(),
        DeValue::Table(_) => "table".to_string(),
    }
}

/// serde's way of listing the accepted names: `` `a` ``, `` `a` or `b` ``,
/// `` one of `a`, `b`, `c` ``.
fn one_of(names: &[&str]) -> String {
    match names {
        [] => "nothing".to_string(),
        [a] => format!("`{a}`"),
        [a, b] => format!("`{a}` or `{b}`"),
        _ => format!(
            "one of {}",
            names
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The candidate `written` most likely meant (the rule of
/// [`crate::vocab::suggest`]).
pub(crate) fn closest<'a>(written: &str, candidates: &[&'a str]) -> Option<&'a str> {
    crate::vocab::suggest::closest(written, candidates)
}

/// Puts a stand-in `version` in a document that lost its own (absent, or at
/// fault and removed), so that the rest of the file still deserializes for the
/// semantic checks. The problem with the real one is already reported.
pub(crate) fn stand_in_version<'i>(doc: &mut Spanned<DeTable<'i>>, version_text: &'i str) {
    if doc.get_ref().contains_key("version") {
        return;
    }
    debug_assert_eq!(version_text, SUPPORTED_VERSION.to_string());
    if let Ok(value) = DeValue::parse(version_text) {
        doc.get_mut().insert(
            Spanned::new(0..0, Cow::Borrowed("version")),
            Spanned::new(0..0, value.into_inner()),
        );
    }
}
