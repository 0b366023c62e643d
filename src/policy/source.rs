//! The layers of a policy: where each came from, its text, its own check,
//! and how a layer's `extends` picks the shipped policy under it.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::diagnostic::{InvalidPolicy, PolicyError, Problem, ProblemKind};
use super::schema::PolicyLayer;
use super::structure;
use super::validate::{self, SUPPORTED_VERSION};

use super::shipped::{BUILTIN_POLICY, SHIPPED};

/// How many shipped policies may extend one another in a chain.
const MAX_EXTENDS_DEPTH: usize = 4;

/// The name of the team policy file inside the home root.
pub const HOME_POLICY_FILE: &str = "context-policy.toml";

/// The largest policy file read (256 KiB).
pub const MAX_POLICY_BYTES: u64 = 256 * 1024;

/// Where a layer of policy came from. Declaration order is precedence: a
/// later layer overrides an earlier one, whatever order the sources are given
/// in (see [`Policy::from_sources`](super::Policy::from_sources)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Layer {
    /// `policies/lisa.toml`, compiled into the binary.
    Builtin,
    /// `$LISA_HOME/context-policy.toml`.
    Home,
    /// `--policy FILE` (or a file passed to the library directly).
    CommandLine,
}

impl Layer {
    /// A short word for the layer, used by `policy show`.
    pub fn as_str(self) -> &'static str {
        match self {
            Layer::Builtin => "built-in",
            Layer::Home => "home",
            Layer::CommandLine => "command-line",
        }
    }
}

/// The text of one policy layer and where it came from.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct PolicySource {
    /// Which layer this is.
    pub layer: Layer,
    /// A name for diagnostics: the file's path, or `<built-in lisa.toml>`.
    pub name: String,
    /// The file's path, when it came from disk.
    pub path: Option<PathBuf>,
    /// The TOML text.
    pub text: String,
}

impl PolicySource {
    /// The built-in default policy.
    pub fn builtin() -> Self {
        Self {
            layer: Layer::Builtin,
            name: "<built-in policies/lisa.toml>".into(),
            path: None,
            text: BUILTIN_POLICY.into(),
        }
    }

    /// A shipped policy by name (see [`SHIPPED`]), as a built-in layer;
    /// `None` for a name not shipped.
    pub fn shipped(name: &str) -> Option<Self> {
        let (name, text) = SHIPPED.iter().find(|(n, _)| *n == name)?;
        Some(Self {
            layer: Layer::Builtin,
            name: format!("<built-in policies/{name}.toml>"),
            path: None,
            text: (*text).into(),
        })
    }

    /// A policy layer from TOML text.
    pub fn from_text(layer: Layer, name: impl Into<String>, text: impl Into<String>) -> Self {
        Self {
            layer,
            name: name.into(),
            path: None,
            text: text.into(),
        }
    }

    /// A layer read from the file at `path` (the sandbox reads it: see
    /// `sandbox/policy_file.rs`, which also defines [`PolicySource::read`]).
    pub(crate) fn from_file(layer: Layer, path: &Path, text: String) -> Self {
        Self {
            layer,
            name: crate::vocab::paths::shown(path),
            path: Some(path.to_path_buf()),
            text,
        }
    }

    /// Checks this layer on its own, collecting every problem: the
    /// structural ones (unknown keys, wrong types, unknown words, missing
    /// keys) and the semantic ones (ranges, globs, templates...) together.
    /// Only a file that is not TOML at all stops at its first error.
    pub fn check(&self) -> Result<(), InvalidPolicy> {
        self.parse_text().map(drop)
    }

    /// The shipped policy this source is, unchanged: its name, when its
    /// layer, name and text are a shipped policy's.
    pub(super) fn shipped_name(&self) -> Option<&'static str> {
        if self.layer != Layer::Builtin || self.path.is_some() {
            return None;
        }
        SHIPPED.iter().find_map(|(n, text)| {
            (self
                .name
                .strip_prefix("<built-in policies/")?
                .strip_suffix(".toml>")?
                == *n
                && self.text == *text)
                .then_some(*n)
        })
    }

    /// Parses and checks the text.
    pub(super) fn parse_text(&self) -> Result<PolicyLayer, InvalidPolicy> {
        let src = super::diagnostic::source(&self.name, &self.text);
        let invalid = |problems| InvalidPolicy::new(self.name.clone(), problems);
        let version_text = SUPPORTED_VERSION.to_string();
        let mut doc = toml::de::DeTable::parse(&self.text)
            .map_err(|e| invalid(vec![toml_problem(&src, &self.text, &e)]))?;
        let structure::Checked {
            mut problems,
            deprecations,
        } = structure::check(&mut doc, &src);
        // What is left of the document holds only values of the right shape.
        structure::stand_in_version(&mut doc, &version_text);
        match PolicyLayer::deserialize(toml::de::Deserializer::from(doc)) {
            Ok(mut layer) => {
                problems.extend(validate::check_layer(&layer, &src, &self.text));
                if problems.is_empty() {
                    layer.deprecations = deprecations;
                    return Ok(layer);
                }
            }
            // The walk should leave nothing serde refuses; if it does, that
            // refusal is reported too.
            Err(e) => problems.push(toml_problem(&src, &self.text, &e)),
        }
        Err(invalid(problems))
    }
}

/// The sources with their base resolved: when a file above the built-in
/// layer names a shipped policy with `extends` (the highest such file wins),
/// that policy replaces the built-in layer; a built-in layer that itself
/// extends another shipped policy is laid over it. Sources come sorted by
/// layer, each with its parsed layer when finding the base needed it (so no
/// source is parsed twice); the others are parsed by the caller, in order.
pub(super) fn with_base(
    sources: Vec<PolicySource>,
    parse: &dyn Fn(&PolicySource) -> Result<PolicyLayer, InvalidPolicy>,
) -> Result<Vec<(PolicySource, Option<PolicyLayer>)>, PolicyError> {
    let (base, rest): (Vec<_>, Vec<_>) =
        sources.into_iter().partition(|s| s.layer == Layer::Builtin);
    let mut rest: Vec<(PolicySource, Option<PolicyLayer>)> =
        rest.into_iter().map(|s| (s, None)).collect();
    let mut named = None;
    for (source, parsed) in rest.iter_mut().rev() {
        let layer = parse(source)?;
        let extends = layer.extends.clone();
        *parsed = Some(layer);
        if let Some(base) = extends {
            named = Some(base.into_inner());
            break;
        }
    }
    let base = match named {
        // The word was checked against SHIPPED_NAMES when the file parsed.
        Some(name) => PolicySource::shipped(&name).into_iter().collect(),
        None => base,
    };
    let mut out = Vec::new();
    for source in base {
        let mut chain = Vec::new();
        let mut next = Some(source);
        while let Some(source) = next.take() {
            let layer = parse(&source)?;
            let parent = layer.extends.as_ref().map(|p| p.get_ref().clone());
            chain.push((source, Some(layer)));
            if chain.len() > MAX_EXTENDS_DEPTH {
                break;
            }
            next = parent.and_then(|p| PolicySource::shipped(&p));
        }
        out.extend(chain.into_iter().rev());
    }
    out.extend(rest);
    Ok(out)
}

/// Turns a TOML deserialization error into a labelled problem.
fn toml_problem(src: &super::diagnostic::Source, text: &str, e: &toml::de::Error) -> Problem {
    let message = e.message().trim().to_string();
    let span = e.span().unwrap_or(0..0);
    let (kind, label) = if message.starts_with("unknown field") {
        (ProblemKind::UnknownKey, "unknown key")
    } else if message.starts_with("missing field") {
        (ProblemKind::MissingField, "missing a required key")
    } else if message.starts_with("unknown variant") {
        (ProblemKind::UnknownValue, "unknown value")
    } else if message.starts_with("invalid type") {
        (ProblemKind::WrongType, "wrong type")
    } else if span.start < text.len() && is_template_error(&message) {
        (ProblemKind::TemplateSyntax, "template does not parse")
    } else {
        (ProblemKind::Syntax, "here")
    };
    let mut help = None;
    let message = match kind {
        ProblemKind::Syntax => format!("TOML syntax error: {message}"),
        ProblemKind::MissingField if message.contains("`version`") => {
            help = Some(format!(
                "add `version = {SUPPORTED_VERSION}` at the top of the file"
            ));
            "this policy file has no `version` key".to_string()
        }
        ProblemKind::UnknownKey => {
            help = suggest_key(&message);
            message
        }
        ProblemKind::UnknownValue => {
            help = suggest_key(&message).map(|h| h.replace('`', "\""));
            message
        }
        ProblemKind::WrongType => message
            .replace("expected i64", "expected an integer")
            .replace("expected a sequence", "expected an array")
            .replace("expected a map", "expected a table"),
        _ => message,
    };
    let problem = Problem::new(src, kind, span, message, label);
    match help {
        Some(h) => problem.with_help(h),
        None => problem,
    }
}

/// "did you mean" for serde's `unknown field `x`, expected one of `a`, `b``.
fn suggest_key(message: &str) -> Option<String> {
    let mut ticks = message.split('`').skip(1).step_by(2);
    let unknown = ticks.next()?;
    let candidates: Vec<&str> = ticks.collect();
    let best = structure::closest(unknown, &candidates)?;
    Some(format!("did you mean `{best}`?"))
}

fn is_template_error(message: &str) -> bool {
    message.contains("unclosed `{`")
        || message.contains("stray `}`")
        || message.contains("is not a name of letters")
}
