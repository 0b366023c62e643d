//! Stage 1 — the policy: every decision the loader makes, declared in TOML.
//!
//! A policy is built from layers ([`Layer`]), lowest first: the built-in Lisa
//! policy, then the team's `$LISA_HOME/context-policy.toml`, then `--policy
//! FILE`. A layer changes only the keys it names. Nothing under a repository
//! root is ever read as a layer.

mod diagnostic;
mod schema;
mod show;
mod template;
mod validate;

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use cap_fs_ext::{OpenOptionsFollowExt, OpenOptionsSyncExt};
use cap_std::ambient_authority;
use cap_std::fs::{File, OpenOptions};
use globset::{GlobSet, GlobSetBuilder};
use miette::NamedSource;
use regex::Regex;

pub use diagnostic::{InvalidPolicy, PolicyError, Problem, ProblemKind};
pub use schema::{
    BudgetOrder, HiddenText, Instructions, InstructionsLayer, MarkerKind, Names, PolicyLayer,
    RootKind, Roots, RootsLayer, SkillSource, Skills, SkillsLayer, SymlinkRule, Templates,
    TemplatesLayer, Trust, TrustLayer,
};
pub use template::{Template, TemplateSyntaxError};
pub use validate::{MAX_BUDGET_BYTES, MAX_FILE_BYTES, SUPPORTED_VERSION};

/// The default policy, reproducing Lisa's loader.
pub const BUILTIN_POLICY: &str = include_str!("../../policies/lisa.toml");

/// The name of the team policy file inside the home root.
pub const HOME_POLICY_FILE: &str = "context-policy.toml";

/// The largest policy file read (256 KiB).
pub const MAX_POLICY_BYTES: u64 = 256 * 1024;

/// Where a layer of policy came from. Declaration order is precedence: a
/// later layer overrides an earlier one.
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

    /// A policy layer from TOML text.
    pub fn from_text(layer: Layer, name: impl Into<String>, text: impl Into<String>) -> Self {
        Self {
            layer,
            name: name.into(),
            path: None,
            text: text.into(),
        }
    }

    /// Reads a policy file. The file must be a regular file (a symlink to one
    /// is followed: the user's own dotfiles often are links) of at most
    /// [`MAX_POLICY_BYTES`]; a FIFO or device is refused without blocking.
    ///
    /// Returns `Ok(None)` when `required` is false and the file does not exist.
    pub fn read(layer: Layer, path: &Path, required: bool) -> Result<Option<Self>, PolicyError> {
        let unreadable = |source| PolicyError::Unreadable {
            path: path.to_path_buf(),
            source,
        };
        // The policy belongs to the user (or to whoever runs the command), not
        // to a repository, so it is opened by its full path and may be a link
        // anywhere (dotfile managers link it). Still: without blocking, and
        // only if it is a regular file.
        let mut opts = OpenOptions::new();
        opts.read(true);
        opts.follow(cap_fs_ext::FollowSymlinks::Yes);
        opts.nonblock(true);
        let file = match File::open_ambient_with(path, &opts, ambient_authority()) {
            Ok(f) => f,
            Err(e) if !required && e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(unreadable(e)),
        };
        let meta = file.metadata().map_err(unreadable)?;
        if !meta.is_file() {
            return Err(PolicyError::NotAFile {
                path: path.to_path_buf(),
            });
        }
        let mut bytes = Vec::new();
        file.take(MAX_POLICY_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(unreadable)?;
        if bytes.len() as u64 > MAX_POLICY_BYTES {
            return Err(PolicyError::TooLarge {
                path: path.to_path_buf(),
                limit: MAX_POLICY_BYTES,
            });
        }
        let text = String::from_utf8(bytes).map_err(|_| PolicyError::NotUtf8 {
            path: path.to_path_buf(),
        })?;
        Ok(Some(Self {
            layer,
            name: path.display().to_string(),
            path: Some(path.to_path_buf()),
            text,
        }))
    }

    /// Parses and checks this layer on its own, collecting every problem.
    pub fn parse(&self) -> Result<PolicyLayer, InvalidPolicy> {
        let src = NamedSource::new(self.name.clone(), self.text.clone());
        let invalid = |problems| InvalidPolicy {
            name: self.name.clone(),
            problems,
        };
        let layer: PolicyLayer = toml::from_str(&self.text)
            .map_err(|e| invalid(vec![toml_problem(&src, &self.text, &e)]))?;
        let problems = validate::check_layer(&layer, &src, &self.text);
        if problems.is_empty() {
            Ok(layer)
        } else {
            Err(invalid(problems))
        }
    }
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
    let best = ticks
        .map(|k| (strsim::levenshtein(unknown, k), k))
        .filter(|(d, k)| *d <= 3 && *d < k.len())
        .min()?;
    Some(format!("did you mean `{}`?", best.1))
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
    origins: BTreeMap<&'static str, Layer>,
    layers: Vec<(Layer, String)>,
    name_rule: Regex,
    exclude_levels: GlobSet,
    digest: u128,
}

impl Policy {
    /// The built-in policy alone.
    pub fn builtin() -> Result<Self, PolicyError> {
        Self::from_sources(&[PolicySource::builtin()])
    }

    /// Lays `sources` over one another, lowest layer first. The first source
    /// must define every key (the built-in policy does).
    pub fn from_sources(sources: &[PolicySource]) -> Result<Self, PolicyError> {
        if sources.is_empty() {
            return Self::from_sources(&[PolicySource::builtin()]);
        }
        let mut acc: Option<PolicyLayer> = None;
        let mut origins = BTreeMap::new();
        for source in sources {
            let layer = source.parse()?;
            match &mut acc {
                None => {
                    for key in all_keys() {
                        origins.insert(*key, source.layer);
                    }
                    acc = Some(layer);
                }
                Some(acc) => {
                    let mut set = Vec::new();
                    set.extend(acc.roots.overlay(layer.roots));
                    set.extend(acc.instructions.overlay(layer.instructions));
                    set.extend(acc.skills.overlay(layer.skills));
                    set.extend(acc.trust.overlay(layer.trust));
                    set.extend(acc.templates.overlay(layer.templates));
                    for key in set {
                        origins.insert(key, source.layer);
                    }
                }
            }
        }
        let first = sources
            .first()
            .cloned()
            .unwrap_or_else(PolicySource::builtin);
        // Every failure below would be a bug in the lowest layer (the built-in
        // policy defines every key, and each layer was checked alone), still
        // reported as a diagnostic rather than a panic.
        let Some(acc) = acc else {
            return Err(internal_error(
                &first,
                vec!["no policy layer was given".into()],
            ));
        };
        let mut missing = Vec::new();
        let roots = acc.roots.resolve().map_err(|m| missing.extend(m)).ok();
        let instructions = acc
            .instructions
            .resolve()
            .map_err(|m| missing.extend(m))
            .ok();
        let skills = acc.skills.resolve().map_err(|m| missing.extend(m)).ok();
        let trust = acc.trust.resolve().map_err(|m| missing.extend(m)).ok();
        let templates = acc.templates.resolve().map_err(|m| missing.extend(m)).ok();
        let (Some(roots), Some(instructions), Some(skills), Some(trust), Some(templates)) =
            (roots, instructions, skills, trust, templates)
        else {
            let messages = missing
                .iter()
                .map(|k| format!("no layer sets `{k}`"))
                .collect();
            return Err(internal_error(&first, messages));
        };
        let name_rule = validate::compile_name_rule(&skills.name_rule).map_err(|e| {
            internal_error(
                &first,
                vec![format!("skills.name-rule does not compile: {e}")],
            )
        })?;
        let mut globs = GlobSetBuilder::new();
        for g in &instructions.exclude_levels {
            let glob = validate::compile_glob(g.get_ref())
                .map_err(|e| internal_error(&first, vec![format!("exclude-levels: {e}")]))?;
            globs.add(glob);
        }
        let exclude_levels = globs
            .build()
            .map_err(|e| internal_error(&first, vec![format!("exclude-levels: {e}")]))?;

        let mut policy = Self {
            roots,
            instructions,
            skills,
            trust,
            templates,
            origins,
            layers: sources.iter().map(|s| (s.layer, s.name.clone())).collect(),
            name_rule,
            exclude_levels,
            digest: 0,
        };
        policy.digest = xxhash_rust::xxh3::xxh3_128(policy.to_toml().as_bytes());
        Ok(policy)
    }

    /// Loads the effective policy for a home root: the built-in policy, then
    /// `home/context-policy.toml` when it exists, then `extra` when given.
    pub fn load(home: Option<&Path>, extra: Option<&Path>) -> Result<Self, PolicyError> {
        let mut sources = vec![PolicySource::builtin()];
        if let Some(home) = home {
            if let Some(s) = PolicySource::read(Layer::Home, &home.join(HOME_POLICY_FILE), false)? {
                sources.push(s);
            }
        }
        if let Some(extra) = extra {
            if let Some(s) = PolicySource::read(Layer::CommandLine, extra, true)? {
                sources.push(s);
            }
        }
        Self::from_sources(&sources)
    }

    /// The layer that set a dotted key such as `instructions.budget-bytes`.
    pub fn origin(&self, key: &str) -> Option<Layer> {
        self.origins.get(key).copied()
    }

    /// The layers applied, lowest first, with their names.
    pub fn layers(&self) -> &[(Layer, String)] {
        &self.layers
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

    /// Whether a repository-relative directory (`""` for the root) is excluded
    /// from the instruction chain.
    pub fn is_level_excluded(&self, rel_dir: &str) -> bool {
        !self.exclude_levels.is_empty() && self.exclude_levels.is_match(rel_dir)
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

/// A problem that only a lowest layer lacking keys (or a bug) can cause,
/// reported against that layer.
fn internal_error(first: &PolicySource, messages: Vec<String>) -> PolicyError {
    let src = NamedSource::new(first.name.clone(), first.text.clone());
    PolicyError::Invalid(InvalidPolicy {
        name: first.name.clone(),
        problems: messages
            .into_iter()
            .map(|m| Problem::new(&src, ProblemKind::MissingField, 0..0, m, "in this layer"))
            .collect(),
    })
}

fn all_keys() -> impl Iterator<Item = &'static &'static str> {
    RootsLayer::KEYS
        .iter()
        .chain(InstructionsLayer::KEYS)
        .chain(SkillsLayer::KEYS)
        .chain(TrustLayer::KEYS)
        .chain(TemplatesLayer::KEYS)
}
