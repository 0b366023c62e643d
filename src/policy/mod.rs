//! Stage 1 — the policy: every decision the loader makes, declared in TOML.
//!
//! A policy is built from layers ([`Layer`]), lowest first: the built-in Lisa
//! policy, then the team's `$LISA_HOME/context-policy.toml`, then `--policy
//! FILE`. A layer changes only the keys it names. Nothing under a repository
//! root is ever read as a layer.

mod diagnostic;
pub mod keys;
mod schema;
mod show;
mod structure;
mod template;
mod validate;

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use globset::{GlobSet, GlobSetBuilder};
use miette::NamedSource;
use regex::Regex;
use serde::Deserialize;

use crate::vocab::origin::RootId;

pub use diagnostic::{InvalidPolicy, PolicyError, Problem, ProblemKind};
use keys::{INSTRUCTIONS, ROOTS, SKILLS, TEMPLATES};
pub use schema::{
    BudgetCounts, BudgetOrder, BudgetScope, ChainOrder, Conflict, FrontmatterMode, HardLinkRule,
    HiddenText, ImportFailure, ImportRoot, Instructions, LongDescription, MarkerKind, NameFrom,
    NamedRoot, Names, Pick, ProjectTrust, Roots, SkillSource, Skills, SourceLevels, SymlinkRule,
    Templates, Trust, Whitespace,
};
pub(crate) use schema::{
    InstructionsLayer, PolicyLayer, ROOT_WORDS, RootsLayer, SkillsLayer, TemplatesLayer, TrustLayer,
};
pub use template::{Template, TemplateSyntaxError};
pub use validate::{MAX_BUDGET_BYTES, MAX_FILE_BYTES, SUPPORTED_VERSION};
pub(crate) use validate::{compile_glob, is_glob};

/// The default policy, reproducing Lisa's loader.
pub const BUILTIN_POLICY: &str = include_str!("../../policies/lisa.toml");

/// The policies shipped in the binary, by name: the built-in one (Lisa's)
/// and the compat policies that reproduce other harnesses' discovery.
/// `--policy NAME` and `extends = "NAME"` pick one as the base.
pub const SHIPPED: &[(&str, &str)] = &[
    ("lisa", BUILTIN_POLICY),
    ("codex", include_str!("../../policies/codex.toml")),
    ("gemini", include_str!("../../policies/gemini.toml")),
    (
        "claude-code",
        include_str!("../../policies/claude-code.toml"),
    ),
];

/// The names of [`SHIPPED`], in order, read from it: the one list of
/// shipped names that `extends`, `--policy`'s help and completions, errors
/// and `hello` go by.
pub const SHIPPED_NAMES: &[&str] = &{
    let mut names = [""; SHIPPED.len()];
    let mut i = 0;
    while i < names.len() {
        names[i] = SHIPPED[i].0;
        i += 1;
    }
    names
};

/// How many shipped policies may extend one another in a chain.
const MAX_EXTENDS_DEPTH: usize = 4;

/// The name of the team policy file inside the home root.
pub const HOME_POLICY_FILE: &str = "context-policy.toml";

/// The largest policy file read (256 KiB).
pub const MAX_POLICY_BYTES: u64 = 256 * 1024;

/// Where a layer of policy came from. Declaration order is precedence: a
/// later layer overrides an earlier one, whatever order the sources are given
/// in (see [`Policy::from_sources`]).
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
            name: path.display().to_string(),
            path: Some(path.to_path_buf()),
            text,
        }
    }

    /// Checks this layer on its own, collecting every problem: the
    /// structural ones (unknown keys, wrong types, unknown words, missing
    /// keys) and the semantic ones (ranges, globs, templates...) together.
    /// Only a file that is not TOML at all stops at its first error.
    pub fn check(&self) -> Result<(), InvalidPolicy> {
        self.parse().map(drop)
    }

    /// Parses and checks this layer on its own (see [`check`](Self::check)).
    pub(crate) fn parse(&self) -> Result<PolicyLayer, InvalidPolicy> {
        let src = NamedSource::new(self.name.clone(), self.text.clone());
        let invalid = |problems| InvalidPolicy {
            name: self.name.clone(),
            problems,
        };
        let version_text = SUPPORTED_VERSION.to_string();
        let mut doc = toml::de::DeTable::parse(&self.text)
            .map_err(|e| invalid(vec![toml_problem(&src, &self.text, &e)]))?;
        let mut problems = structure::check(&mut doc, &src);
        // What is left of the document holds only values of the right shape.
        structure::stand_in_version(&mut doc, &version_text);
        match PolicyLayer::deserialize(toml::de::Deserializer::from(doc)) {
            Ok(layer) => {
                problems.extend(validate::check_layer(&layer, &src, &self.text));
                if problems.is_empty() {
                    return Ok(layer);
                }
            }
            // The walk should leave nothing serde refuses; if it does, that
            // refusal is reported too.
            Err(e) => problems.push(toml_problem(&src, &self.text, &e)),
        }
        problems.sort_by_key(|p| p.span.start);
        Err(invalid(problems))
    }
}

/// The sources with their base resolved: when a file above the built-in
/// layer names a shipped policy with `extends` (the highest such file wins),
/// that policy replaces the built-in layer; a built-in layer that itself
/// extends another shipped policy is laid over it. Sources come sorted by
/// layer, each with its parsed layer when finding the base needed it (so no
/// source is parsed twice); the others are parsed by the caller, in order.
fn with_base(
    sources: Vec<PolicySource>,
) -> Result<Vec<(PolicySource, Option<PolicyLayer>)>, PolicyError> {
    let (base, rest): (Vec<_>, Vec<_>) =
        sources.into_iter().partition(|s| s.layer == Layer::Builtin);
    let mut rest: Vec<(PolicySource, Option<PolicyLayer>)> =
        rest.into_iter().map(|s| (s, None)).collect();
    let mut named = None;
    for (source, parsed) in rest.iter_mut().rev() {
        let layer = source.parse()?;
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
            let layer = source.parse()?;
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

/// The root `word` names among `roots`.
fn root_id(roots: &Roots, word: &str) -> Option<RootId> {
    match word {
        "home" => Some(RootId::Home),
        "repo" => Some(RootId::Repo),
        _ => roots
            .named
            .iter()
            .position(|n| n.name.get_ref() == word)
            .map(RootId::Named),
    }
}

/// Expands each named root's candidates with `env`.
fn named_root_paths(
    roots: &Roots,
    env: &dyn Fn(&str) -> Option<std::ffi::OsString>,
) -> Vec<Option<PathBuf>> {
    roots
        .named
        .iter()
        .map(|n| {
            crate::vocab::home::first_candidate(
                n.candidates.iter().map(|c| c.get_ref().as_str()),
                env,
            )
        })
        .collect()
}

/// Turns a TOML deserialization error into a labelled problem.
fn toml_problem(src: &NamedSource<String>, text: &str, e: &toml::de::Error) -> Problem {
    let message = e.message().trim().to_string();
    let span = e.span().unwrap_or(0..0);
    let (kind, label) = if message.starts_with("unknown field") {
        (ProblemKind::UnknownKey, "unknown key")
    } else if message.starts_with("missing field") {
        (ProblemKind::MissingField, "missing a required key")
    } else if message.starts_with("invalid type") || message.starts_with("unknown variant") {
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

/// The effective policy: every layer applied, every value checked.
///
/// ```
/// use lisa_context::policy::Policy;
///
/// let policy = Policy::builtin().unwrap();
/// assert_eq!(policy.instructions.budget_bytes, 32768);
/// ```
#[derive(Debug, Clone)]
pub struct Policy {
    /// `[roots]`.
    pub roots: Roots,
    /// `[instructions]`.
    pub instructions: Instructions,
    /// `[skills]`.
    pub skills: Skills,
    /// `[trust]`.
    pub trust: Trust,
    /// `[templates]`.
    pub templates: Templates,
    definitions: BTreeMap<&'static str, Definition>,
    sources: Arc<[PolicySource]>,
    layers: Vec<(Layer, String)>,
    name_rule: Regex,
    exclude_levels: GlobSet,
    /// `roots.safe-directories`, compiled (`None`: `"*"`, every directory).
    safe_directories: Option<GlobSet>,
    /// Where each `[[roots.named]]` entry is, its candidates expanded.
    named_paths: Vec<Option<PathBuf>>,
    digest: u128,
}

/// Where one value of the effective policy was set: the layer, the file of
/// that layer (an index into [`Policy::sources`]) and the byte span of the
/// value in that file's text.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Definition {
    /// The layer that set the value.
    pub layer: Layer,
    /// Which source set it: an index into [`Policy::sources`].
    pub source: usize,
    /// The byte range of the value in that source's text.
    pub span: Range<usize>,
}

impl Policy {
    /// The built-in policy alone.
    pub fn builtin() -> Result<Self, PolicyError> {
        Self::from_sources(&[PolicySource::builtin()])
    }

    /// Lays `sources` over one another in the order of their [`Layer`]s
    /// (built-in, then home, then command line), whatever order they are
    /// given in. Two sources of the same layer apply in the order given, the
    /// later one winning. The lowest source must define every key (the
    /// built-in policy does). An empty slice means the built-in policy alone.
    pub fn from_sources(sources: &[PolicySource]) -> Result<Self, PolicyError> {
        if sources.is_empty() {
            return Self::from_sources(&[PolicySource::builtin()]);
        }
        let mut ordered = sources.to_vec();
        // A stable sort: sources of one layer keep the order they were given in.
        ordered.sort_by_key(|s| s.layer);
        let ordered = with_base(ordered)?;
        let sources: Arc<[PolicySource]> = ordered.iter().map(|(s, _)| s.clone()).collect();

        let mut roots = RootsLayer::default();
        let mut instructions = InstructionsLayer::default();
        let mut skills = SkillsLayer::default();
        let mut trust = TrustLayer::default();
        let mut templates = TemplatesLayer::default();
        // For each dotted key, the index of the source that last set it.
        let mut setters: BTreeMap<&'static str, usize> = BTreeMap::new();
        for (index, (source, parsed)) in ordered.into_iter().enumerate() {
            let layer = match parsed {
                Some(layer) => layer,
                None => source.parse()?,
            };
            let mut set = Vec::new();
            set.extend(roots.overlay(layer.roots));
            set.extend(instructions.overlay(layer.instructions));
            set.extend(skills.overlay(layer.skills));
            set.extend(trust.overlay(layer.trust));
            set.extend(templates.overlay(layer.templates));
            for key in set {
                setters.insert(key, index);
            }
        }
        let mut definitions = BTreeMap::new();
        let spans = roots
            .spans()
            .into_iter()
            .chain(instructions.spans())
            .chain(skills.spans())
            .chain(trust.spans())
            .chain(templates.spans());
        for (key, span) in spans {
            if let Some((&index, source)) = setters
                .get(key)
                .and_then(|i| sources.get(*i).map(|s| (i, s)))
            {
                definitions.insert(
                    key,
                    Definition {
                        layer: source.layer,
                        source: index,
                        span,
                    },
                );
            }
        }

        // Every layer was checked alone, so the failures below can only come
        // from a lowest layer that lacks keys (the built-in policy has them
        // all) or from a bug; they are still diagnostics, each pointing at the
        // file and value that set the key concerned.
        let mut missing = Vec::new();
        let roots = roots.resolve().map_err(|m| missing.extend(m)).ok();
        let instructions = instructions.resolve().map_err(|m| missing.extend(m)).ok();
        let skills = skills.resolve().map_err(|m| missing.extend(m)).ok();
        let trust = trust.resolve().map_err(|m| missing.extend(m)).ok();
        let templates = templates.resolve().map_err(|m| missing.extend(m)).ok();
        let (Some(roots), Some(instructions), Some(skills), Some(trust), Some(templates)) =
            (roots, instructions, skills, trust, templates)
        else {
            // No layer set these keys, so there is no value to point at: the
            // report names the lowest layer, which should have set them.
            let problems = missing
                .iter()
                .map(|k| (None, format!("no layer sets `{k}`")))
                .collect();
            let at = (ProblemKind::MissingField, "in this layer");
            return Err(problems_at(&sources, &definitions, "", at, problems).into());
        };
        let name_rule = validate::compile_name_rule(&skills.name_rule).map_err(|e| {
            let message = format!("`{}` does not compile: {e}", SKILLS.name_rule);
            problems_at(
                &sources,
                &definitions,
                SKILLS.name_rule,
                (ProblemKind::InvalidRegex, "invalid regex"),
                vec![(None, message)],
            )
        })?;
        let mut globs = GlobSetBuilder::new();
        for g in &instructions.exclude_levels {
            let glob = validate::compile_glob(g.get_ref()).map_err(|e| {
                let message = format!("invalid glob in `{}`: {e}", INSTRUCTIONS.exclude_levels);
                problems_at(
                    &sources,
                    &definitions,
                    INSTRUCTIONS.exclude_levels,
                    (ProblemKind::InvalidGlob, "invalid glob"),
                    vec![(Some(g.span()), message)],
                )
            })?;
            globs.add(glob);
        }
        let exclude_levels = globs.build().map_err(|e| {
            let message = format!("`{}` does not compile: {e}", INSTRUCTIONS.exclude_levels);
            problems_at(
                &sources,
                &definitions,
                INSTRUCTIONS.exclude_levels,
                (ProblemKind::InvalidGlob, "invalid glob"),
                vec![(None, message)],
            )
        })?;

        let safe_directories = if roots.safe_directories.iter().any(|g| g.get_ref() == "*") {
            None
        } else {
            let mut globs = GlobSetBuilder::new();
            for g in &roots.safe_directories {
                let glob = validate::compile_glob(g.get_ref()).map_err(|e| {
                    let message = format!("invalid glob in `{}`: {e}", ROOTS.safe_directories);
                    problems_at(
                        &sources,
                        &definitions,
                        ROOTS.safe_directories,
                        (ProblemKind::InvalidGlob, "invalid glob"),
                        vec![(Some(g.span()), message)],
                    )
                })?;
                globs.add(glob);
            }
            Some(globs.build().map_err(|e| {
                let message = format!("`{}` does not compile: {e}", ROOTS.safe_directories);
                problems_at(
                    &sources,
                    &definitions,
                    ROOTS.safe_directories,
                    (ProblemKind::InvalidGlob, "invalid glob"),
                    vec![(None, message)],
                )
            })?)
        };

        // Every skill source names a root this policy has.
        let unknown: Vec<_> = skills
            .sources
            .iter()
            .filter(|s| root_id(&roots, s.root.get_ref()).is_none())
            .map(|s| {
                let known: Vec<&str> = ROOT_WORDS
                    .iter()
                    .copied()
                    .chain(roots.named.iter().map(|n| n.name.get_ref().as_str()))
                    .collect();
                let hint = structure::closest(s.root.get_ref(), &known)
                    .map(|k| format!(" (did you mean `{k}`?)"))
                    .unwrap_or_default();
                (
                    Some(s.root.span()),
                    format!(
                        "skill source root `{}` is not a root of this policy: {}{hint}",
                        s.root.get_ref(),
                        known.join(", ")
                    ),
                )
            })
            .collect();
        if !unknown.is_empty() {
            let at = (ProblemKind::InvalidValue, "unknown root");
            return Err(problems_at(&sources, &definitions, SKILLS.sources, at, unknown).into());
        }

        // The forged-line prefix must show as something no boundary starts
        // with. Blamed on whichever of the two values was set last: that
        // layer brought them together.
        if let Some((keys, message)) = validate::forged_prefix_clash(&templates) {
            let key = keys
                .into_iter()
                .max_by_key(|k| definitions.get(k).map(|d| d.source))
                .unwrap_or(TEMPLATES.forged_line_prefix);
            let at = (ProblemKind::InvalidValue, "set here");
            return Err(problems_at(&sources, &definitions, key, at, vec![(None, message)]).into());
        }

        let named_paths = named_root_paths(&roots, &|name| std::env::var_os(name));
        let mut policy = Self {
            roots,
            instructions,
            skills,
            trust,
            templates,
            definitions,
            layers: sources.iter().map(|s| (s.layer, s.name.clone())).collect(),
            sources,
            name_rule,
            exclude_levels,
            safe_directories,
            named_paths,
            digest: 0,
        };
        policy.digest = policy.compute_digest();
        Ok(policy)
    }

    /// The digest of the policy's values and of where its named roots are.
    fn compute_digest(&self) -> u128 {
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        show::hash_values(self, &mut h);
        for p in &self.named_paths {
            // Whether it is found, then its length and bytes: no list of
            // paths can pass for another.
            let bytes = p
                .as_deref()
                .map_or(&[][..], |p| p.as_os_str().as_encoded_bytes());
            h.update(&[u8::from(p.is_some())]);
            h.update(&(bytes.len() as u64).to_le_bytes());
            h.update(bytes);
        }
        h.digest128()
    }

    /// Expands the named roots' candidates with `env` (a loader's
    /// environment) rather than the process's.
    pub(crate) fn locate_named_roots(&mut self, env: &dyn Fn(&str) -> Option<std::ffi::OsString>) {
        self.named_paths = named_root_paths(&self.roots, env);
        self.digest = self.compute_digest();
    }

    /// Where each `[[roots.named]]` entry is (`None`: no candidate
    /// expands), in declaration order.
    pub fn named_root_paths(&self) -> &[Option<PathBuf>] {
        &self.named_paths
    }

    /// The root a skill source's `root` word names.
    pub(crate) fn root_id(&self, word: &str) -> Option<RootId> {
        root_id(&self.roots, word)
    }

    /// The name of a root, as policies and snapshots write it.
    pub(crate) fn root_name(&self, id: RootId) -> &str {
        match id {
            RootId::Home => "home",
            RootId::Repo => "repo",
            RootId::Named(i) => self
                .roots
                .named
                .get(i)
                .map_or("", |n| n.name.get_ref().as_str()),
            RootId::Ancestor(_) => "ancestor",
        }
    }

    /// The layer that set a dotted key such as `instructions.budget-bytes`.
    pub fn origin(&self, key: &str) -> Option<Layer> {
        self.definitions.get(key).map(|d| d.layer)
    }

    /// Where the value of a dotted key such as `instructions.budget-bytes`
    /// was set: layer, source and span.
    pub fn definition(&self, key: &str) -> Option<&Definition> {
        self.definitions.get(key)
    }

    /// The sources applied, lowest layer first: the order that
    /// [`Definition::source`] indexes.
    pub fn sources(&self) -> &[PolicySource] {
        &self.sources
    }

    /// Every dotted key of the schema (`instructions.budget-bytes`...), in
    /// declaration order.
    ///
    /// ```
    /// use lisa_context::policy::Policy;
    ///
    /// assert!(Policy::keys().any(|k| k == "trust.symlinks"));
    /// ```
    pub fn keys() -> impl Iterator<Item = &'static str> {
        RootsLayer::KEYS
            .iter()
            .chain(InstructionsLayer::KEYS)
            .chain(SkillsLayer::KEYS)
            .chain(TrustLayer::KEYS)
            .chain(TemplatesLayer::KEYS)
            .copied()
    }

    /// The layers applied, lowest first, with their names.
    pub fn layers(&self) -> &[(Layer, String)] {
        &self.layers
    }

    /// A problem (`policy::invalid-value`) with the value of a dotted key,
    /// found after the layers were merged: reported against the file that set
    /// that value and labelled with the value's span. A key no layer set is
    /// reported against the lowest layer, at its start.
    pub fn invalid_value(&self, key: &str, message: impl Into<String>) -> InvalidPolicy {
        problems_at(
            &self.sources,
            &self.definitions,
            key,
            (ProblemKind::InvalidValue, "set here"),
            vec![(None, message.into())],
        )
    }

    /// The compiled skill-name rule.
    pub fn name_rule(&self) -> &Regex {
        &self.name_rule
    }

    /// Whether a skill name passes the policy's rule and length limit.
    pub fn is_valid_skill_name(&self, name: &str) -> bool {
        let max = usize::try_from(self.skills.name_max_chars).unwrap_or(usize::MAX);
        !name.is_empty() && name.chars().count() <= max && self.name_rule.is_match(name)
    }

    /// Whether `instructions.exclude-levels` names any level at all.
    pub(crate) fn excludes_levels(&self) -> bool {
        !self.exclude_levels.is_empty()
    }

    /// Whether a repository-relative directory (`""` for the root) is excluded
    /// from the instruction chain.
    pub fn is_level_excluded(&self, rel_dir: &str) -> bool {
        !self.exclude_levels.is_empty() && self.exclude_levels.is_match(rel_dir)
    }

    /// Whether `roots.safe-directories` trusts `dir` (absolute) as a
    /// repository root although another user owns it.
    pub fn is_safe_directory(&self, dir: &str) -> bool {
        match &self.safe_directories {
            None => true,
            Some(globs) => !globs.is_empty() && globs.is_match(dir),
        }
    }

    /// Whether the search for a repository marker stops before entering
    /// `dir` (absolute, normalized): it is one of `roots.ceiling-directories`.
    pub fn is_ceiling(&self, dir: &std::path::Path) -> bool {
        self.roots
            .ceiling_directories
            .iter()
            .any(|c| crate::vocab::home::normalize(std::path::Path::new(c.get_ref())) == dir)
    }

    /// A 128-bit digest of the effective policy, part of every fingerprint.
    pub fn digest(&self) -> u128 {
        self.digest
    }

    /// The effective policy as plain TOML.
    pub fn to_toml(&self) -> String {
        show::plain(self)
    }

    /// The effective policy as TOML, each value annotated with its layer.
    pub fn to_annotated_toml(&self) -> String {
        show::annotated(self)
    }
}

/// Problems (all of one kind and label) about the value of `key` in the
/// merged policy, reported against the source that set it; each problem's span
/// is the one given or, when `None`, the span of the whole value. A key that no
/// source set is reported against the lowest source, at its start.
fn problems_at(
    sources: &[PolicySource],
    definitions: &BTreeMap<&'static str, Definition>,
    key: &str,
    (kind, label): (ProblemKind, &str),
    problems: Vec<(Option<Range<usize>>, String)>,
) -> InvalidPolicy {
    let definition = definitions.get(key);
    let index = definition.map_or(0, |d| d.source);
    let fallback = PolicySource::builtin();
    let source = sources.get(index).unwrap_or(&fallback);
    let src = NamedSource::new(source.name.clone(), source.text.clone());
    InvalidPolicy {
        name: source.name.clone(),
        problems: problems
            .into_iter()
            .map(|(span, message)| {
                let span = span
                    .or_else(|| definition.map(|d| d.span.clone()))
                    .unwrap_or(0..0);
                Problem::new(&src, kind, span, message, label)
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOME: &str = "version = 1\n[instructions]\nbudget-bytes = 4096\nskip-blank = false\n";
    const CLI: &str = "version = 1\n[instructions]\nbudget-bytes = 2048\n";

    fn home() -> PolicySource {
        PolicySource::from_text(Layer::Home, "home.toml", HOME)
    }

    fn cli() -> PolicySource {
        PolicySource::from_text(Layer::CommandLine, "cli.toml", CLI)
    }

    #[test]
    fn sources_out_of_order_give_the_same_policy() {
        let in_order = Policy::from_sources(&[PolicySource::builtin(), home(), cli()]).unwrap();
        let shuffled = Policy::from_sources(&[cli(), PolicySource::builtin(), home()]).unwrap();
        let reversed = Policy::from_sources(&[cli(), home(), PolicySource::builtin()]).unwrap();
        for other in [&shuffled, &reversed] {
            assert_eq!(other.to_toml(), in_order.to_toml());
            assert_eq!(other.digest(), in_order.digest());
            assert_eq!(other.layers(), in_order.layers());
            assert_eq!(other.definitions, in_order.definitions);
        }
        assert_eq!(in_order.instructions.budget_bytes, 2048);
        assert!(!in_order.instructions.skip_blank);
        assert_eq!(
            in_order.origin(INSTRUCTIONS.budget_bytes),
            Some(Layer::CommandLine)
        );
        assert_eq!(in_order.origin(INSTRUCTIONS.skip_blank), Some(Layer::Home));
    }

    #[test]
    fn sources_of_one_layer_apply_in_the_order_given() {
        let second = PolicySource::from_text(
            Layer::Home,
            "second.toml",
            "version = 1\n[instructions]\nbudget-bytes = 1000\n",
        );
        let policy =
            Policy::from_sources(&[second.clone(), PolicySource::builtin(), home()]).unwrap();
        assert_eq!(
            policy.instructions.budget_bytes, 4096,
            "home.toml came later"
        );
        let policy = Policy::from_sources(&[home(), PolicySource::builtin(), second]).unwrap();
        assert_eq!(
            policy.instructions.budget_bytes, 1000,
            "second.toml came later"
        );
    }

    #[test]
    fn every_value_remembers_its_file_and_span() {
        let policy = Policy::from_sources(&[PolicySource::builtin(), home(), cli()]).unwrap();
        let names: Vec<&str> = policy.sources().iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            ["<built-in policies/lisa.toml>", "home.toml", "cli.toml"]
        );
        let slice = |key: &str| {
            let d = policy.definition(key).unwrap();
            let text = &policy.sources()[d.source].text;
            (d.layer, text[d.span.clone()].to_string())
        };
        assert_eq!(
            slice(INSTRUCTIONS.budget_bytes),
            (Layer::CommandLine, "2048".into())
        );
        assert_eq!(
            slice(INSTRUCTIONS.skip_blank),
            (Layer::Home, "false".into())
        );
        assert_eq!(
            slice(SKILLS.name_rule),
            (Layer::Builtin, "'^[a-z0-9]+(-[a-z0-9]+)*$'".into())
        );
        // Every key of every section has a definition.
        for key in RootsLayer::KEYS
            .iter()
            .chain(InstructionsLayer::KEYS)
            .chain(SkillsLayer::KEYS)
            .chain(TrustLayer::KEYS)
            .chain(TemplatesLayer::KEYS)
        {
            assert!(policy.definition(key).is_some(), "{key}");
        }
    }

    #[test]
    fn a_problem_found_after_merging_points_at_the_file_that_set_the_value() {
        let policy = Policy::from_sources(&[PolicySource::builtin(), home(), cli()]).unwrap();
        let invalid = policy.invalid_value(INSTRUCTIONS.skip_blank, "not today");
        assert_eq!(invalid.name, "home.toml");
        let p = &invalid.problems[0];
        assert_eq!(p.kind, ProblemKind::InvalidValue);
        assert_eq!(&HOME[p.span.clone()], "false");
        assert_eq!(p.message, "not today");
        let invalid = policy.invalid_value(INSTRUCTIONS.budget_bytes, "too big");
        assert_eq!(invalid.name, "cli.toml");
        assert_eq!(&CLI[invalid.problems[0].span.clone()], "2048");
    }

    #[test]
    fn a_lowest_layer_lacking_keys_is_named() {
        let Err(PolicyError::Invalid(invalid)) = Policy::from_sources(&[home()]) else {
            panic!("a home layer alone lacks keys");
        };
        assert_eq!(invalid.name, "home.toml");
        assert!(
            invalid
                .problems
                .iter()
                .any(|p| p.message == "no layer sets `skills.name-rule`")
        );
        assert!(
            invalid
                .problems
                .iter()
                .all(|p| p.kind == ProblemKind::MissingField)
        );
    }
}
