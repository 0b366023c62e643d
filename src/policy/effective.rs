//! The effective policy: every layer applied, every value checked, each
//! value remembering where it was set; read-only once built.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use globset::GlobSet;
use regex::Regex;

use super::diagnostic::{InvalidPolicy, Problem, ProblemKind};
use super::schema::{
    Fingerprint, FingerprintLayer, Instructions, InstructionsLayer, Roots, RootsLayer, Rules,
    RulesLayer, Skills, SkillsLayer, SurveyGate, SurveyGateLayer, Templates, TemplatesLayer, Trust,
    TrustLayer,
};
use super::source::{Layer, PolicySource};
use super::validate::Kept;
use crate::vocab::origin::RootId;
use crate::vocab::reason::Reason;

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
    /// `[rules]`.
    pub rules: Rules,
    /// `[fingerprint]`.
    pub fingerprint: Fingerprint,
    /// `[templates]`.
    pub templates: Templates,
    /// `[survey]`: what the survey's gate lets pass.
    pub survey: SurveyGate,
    pub(super) definitions: BTreeMap<&'static str, Definition>,
    pub(super) sources: Arc<[PolicySource]>,
    pub(super) layers: Vec<(Layer, String)>,
    pub(super) name_rule: Regex,
    pub(super) exclude_levels: GlobSet,
    /// `rules.files`, compiled.
    pub(super) rule_files: GlobSet,
    /// `roots.safe-directories`, compiled (`None`: `"*"`, every directory).
    pub(super) safe_directories: Option<GlobSet>,
    /// Where each `[[roots.named]]` entry is, its candidates expanded.
    pub(super) named_paths: Vec<Option<PathBuf>>,
    /// `roots.state`, its candidates expanded (`{home-key}` still in it).
    pub(super) state_place: StatePlace,
    /// The user's home directory (`~`): where
    /// `instructions.compat.unmarked-levels = "to-home"` stops, and where
    /// `@~/` imports are read under `instructions.compat.tilde-imports`.
    pub(super) user_home: Option<PathBuf>,
    pub(super) digest: u128,
    /// The digest's hasher once it had taken the values, as merged (see
    /// [`Policy::locate_named_roots_as_merged`]).
    pub(super) merged_values: Option<Arc<MergedValues>>,
    /// The keys its files write in a deprecated spelling
    /// (`policy::deprecated-key` warnings), lowest layer first.
    pub(super) deprecations: Vec<super::Problem>,
    /// The matchers of the chain's globs, compiled once for this policy
    /// and its copies (see [`Policy::glob_matcher`]).
    pub(super) globs: Arc<Kept<Arc<globset::GlobMatcher>>>,
}

/// The state of the digest's hasher after the policy's values, as merged.
#[derive(Clone)]
pub(crate) struct MergedValues(pub(super) xxhash_rust::xxh3::Xxh3);

impl std::fmt::Debug for MergedValues {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MergedValues")
    }
}

/// Where `roots.state` puts the loader's own files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum StatePlace {
    /// In the home root itself (`{home}`).
    Home,
    /// In this folder, `{home-key}` to be replaced by the home's digest.
    Folder(PathBuf),
    /// No candidate expands: the loader keeps no state.
    Nowhere,
}

/// The placeholder of `roots.state` that stands for the home root itself.
const STATE_IS_HOME: &str = "{home}";

/// The placeholder of `roots.state` replaced by a digest of the home's path.
const HOME_KEY: &str = "{home-key}";

/// Expands `roots.state`'s candidates with `env`: the first that is
/// `{home}` or expands to an absolute path.
pub(super) fn state_place(
    roots: &Roots,
    env: &dyn Fn(&str) -> Option<std::ffi::OsString>,
) -> StatePlace {
    for c in &roots.state {
        let c = c.get_ref().as_str();
        if c == STATE_IS_HOME {
            return StatePlace::Home;
        }
        if let Some(p) = crate::vocab::home::expand_home(c, env) {
            return StatePlace::Folder(crate::vocab::home::normalize(&p));
        }
    }
    StatePlace::Nowhere
}

/// The user's home directory (`~` expanded with `env`'s `HOME`, normalized).
pub(super) fn user_home(env: &dyn Fn(&str) -> Option<std::ffi::OsString>) -> Option<PathBuf> {
    crate::vocab::home::first_candidate(["~"], env)
}

/// The folders of version-control metadata (git, Mercurial, Subversion,
/// Jujutsu) that an `@import` never reads inside, under every policy: they
/// hold remote URLs with tokens, hooks and credentials helpers, never a
/// project's stated conventions. A policy adds names with
/// `instructions.import-excluded-names`; it cannot take these away.
pub const VCS_METADATA_NAMES: [&str; 4] = [".git", ".hg", ".svn", ".jj"];

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
    /// The matcher of the glob `pattern` (a file name of the chain), kept
    /// for the last few globs of this policy: a chain expands the same glob
    /// at every level of every build, and compiling it is dearer than
    /// matching. Handed out shared: a matcher holds its pattern's text and
    /// tokens, and copying them cost more than the match.
    pub(crate) fn glob_matcher(&self, pattern: &str) -> Option<Arc<globset::GlobMatcher>> {
        self.globs
            .or(64, pattern, || {
                super::validate::glob_matcher(pattern)
                    .map(Arc::new)
                    .ok_or(())
            })
            .ok()
    }

    /// Expands the named roots' candidates with `env` (a loader's
    /// environment) rather than the process's.
    pub(crate) fn locate_named_roots(&mut self, env: &dyn Fn(&str) -> Option<std::ffi::OsString>) {
        self.named_paths = named_root_paths(&self.roots, env);
        self.state_place = state_place(&self.roots, env);
        self.user_home = user_home(env);
        self.digest = self.compute_digest();
    }

    /// [`locate_named_roots`](Self::locate_named_roots) for a policy whose
    /// values are as the merge left them (one just loaded from its files):
    /// the values are not hashed again for the digest, only where the roots
    /// are. Any other policy (one built by hand, whose public values may
    /// have been changed since) is hashed whole.
    pub(crate) fn locate_named_roots_as_merged(
        &mut self,
        env: &dyn Fn(&str) -> Option<std::ffi::OsString>,
    ) {
        let Some(merged) = self.merged_values.clone() else {
            return self.locate_named_roots(env);
        };
        self.named_paths = named_root_paths(&self.roots, env);
        self.state_place = state_place(&self.roots, env);
        self.user_home = user_home(env);
        self.digest = self.digest_from(merged.0.clone());
    }

    /// Whether `env` finds the named roots and the state place where this
    /// policy has them.
    pub(crate) fn is_located_for(&self, env: &dyn Fn(&str) -> Option<std::ffi::OsString>) -> bool {
        named_root_paths(&self.roots, env) == self.named_paths
            && state_place(&self.roots, env) == self.state_place
            && user_home(env) == self.user_home
    }

    /// Where each `[[roots.named]]` entry is (`None`: no candidate
    /// expands), in declaration order.
    pub fn named_root_paths(&self) -> &[Option<PathBuf>] {
        &self.named_paths
    }

    /// Where `instructions.compat.unmarked-levels = "to-home"` stops: the
    /// user's home directory, when `HOME` is set.
    pub(crate) fn user_home(&self) -> Option<&Path> {
        self.user_home.as_deref()
    }

    /// The state root for the home root `home` (`roots.state`): the home
    /// itself, or a folder of the loader's own, `{home-key}` replaced by a
    /// digest of the home's path (so each home has its own). `None`
    /// without a home, or when no candidate expands.
    pub(crate) fn state_dir(&self, home: Option<&Path>) -> Option<PathBuf> {
        let home = home?;
        match &self.state_place {
            StatePlace::Home => Some(home.to_path_buf()),
            StatePlace::Folder(p) => {
                let key = format!(
                    "{:016x}",
                    xxhash_rust::xxh3::xxh3_64(home.as_os_str().as_encoded_bytes())
                );
                let text = p.to_string_lossy();
                Some(if text.contains(HOME_KEY) {
                    PathBuf::from(text.replace(HOME_KEY, &key))
                } else {
                    p.clone()
                })
            }
            StatePlace::Nowhere => None,
        }
    }

    /// The user's home folder, where `@~/path` imports are read
    /// (`instructions.compat.tilde-imports`): `None` when `~` starts no
    /// import; `Some(None)` when it does but `HOME` is not set (such an
    /// import is then refused).
    pub(crate) fn tilde_folder(&self) -> Option<Option<&Path>> {
        self.instructions
            .tilde_imports
            .then_some(self.user_home.as_deref())
    }

    /// Whether `bytes` are blank under `instructions.compat.blank`, `trim`
    /// and `leading-bom`: no text at all (`blank = "empty"`), or white
    /// space alone as `trim` defines it.
    pub(crate) fn is_blank(&self, bytes: &[u8]) -> bool {
        use crate::vocab::text;
        let ins = &self.instructions;
        let white_space = match (ins.blank, ins.trim) {
            // Only a text with no character at all is blank.
            (super::Blank::Empty, _) => |_| false,
            (super::Blank::WhiteSpace, super::Trim::WhiteSpace) => char::is_whitespace,
            (super::Blank::WhiteSpace, super::Trim::JavaScript) => text::is_javascript_white_space,
        };
        text::is_blank(
            bytes,
            ins.leading_bom == super::LeadingBom::Drop,
            white_space,
        )
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
            RootId::State => "state",
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
            .chain(RulesLayer::KEYS)
            .chain(FingerprintLayer::KEYS)
            .chain(TemplatesLayer::KEYS)
            .chain(SurveyGateLayer::KEYS)
            .copied()
    }

    /// The keys of the compat part (`instructions.compat.trim`...): those
    /// that exist to reproduce one harness's behaviour (see
    /// `docs/policy.md`, "The compat part"), in declaration order. Each was
    /// written at its section's top level before (`instructions.trim`),
    /// which is still read, with a warning, for one release.
    ///
    /// ```
    /// use lisa_context::policy::Policy;
    ///
    /// assert!(Policy::compat_keys().any(|k| k == "instructions.compat.trim"));
    /// assert!(Policy::compat_keys().all(|k| Policy::keys().any(|all| all == k)));
    /// ```
    pub fn compat_keys() -> impl Iterator<Item = &'static str> {
        Self::keys().filter(|k| k.split('.').nth(1) == Some(super::structure::COMPAT))
    }

    /// The spelling a compat key had before it moved to its section's
    /// compat part (`instructions.trim` for `instructions.compat.trim`),
    /// read with a `policy::deprecated-key` warning for one release;
    /// `None` for a key of the core.
    ///
    /// ```
    /// use lisa_context::policy::Policy;
    ///
    /// assert_eq!(Policy::old_spelling("instructions.compat.trim").as_deref(), Some("instructions.trim"));
    /// assert_eq!(Policy::old_spelling("instructions.budget-bytes"), None);
    /// ```
    pub fn old_spelling(key: &str) -> Option<String> {
        let (section, rest) = key.split_once('.')?;
        let rest = rest
            .strip_prefix(super::structure::COMPAT)?
            .strip_prefix('.')?;
        Some(format!("{section}.{rest}"))
    }

    /// The warnings its files gave: each key written in a deprecated
    /// spelling (`policy::deprecated-key`, a miette diagnostic labelling the
    /// key in its file), lowest layer first.
    pub fn deprecations(&self) -> &[super::Problem] {
        &self.deprecations
    }

    /// Whether `[[survey.allow]]` lets a survey finding of `kind` at
    /// `path` (relative to the repository root, `/`-separated) pass the
    /// gate: an entry names the kind and its glob matches the path.
    pub fn survey_allows(&self, kind: &str, path: &str) -> bool {
        self.survey.allow.iter().any(|a| {
            a.kind.get_ref() == kind
                && super::validate::compile_glob(a.path.get_ref())
                    .is_ok_and(|g| g.compile_matcher().is_match(path))
        })
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

    /// Whether a skill name passes the policy's rule and length limit, and
    /// the engine's own rule, which no policy loosens: no control
    /// character, line break, bidi, zero-width or tag character, nor other
    /// text that renders as nothing or blank (the plain space aside).
    pub fn is_valid_skill_name(&self, name: &str) -> bool {
        self.skill_name_refusal(name).is_none()
    }

    /// Why a skill name is refused, if it is: `hidden-text-in-name` when it
    /// holds a control, a line break, a bidi, zero-width or tag character or
    /// other text that renders as nothing or blank (the plain space aside),
    /// whatever the policy's rule says, so that no policy lets a name break
    /// the skills list's line or hide words; else `invalid-name` when it
    /// fails the policy's rule or length limit.
    pub(crate) fn skill_name_refusal(&self, name: &str) -> Option<Reason> {
        if crate::vocab::unicode::name_hides_text(name) {
            return Some(Reason::HiddenTextInName);
        }
        let max = usize::try_from(self.skills.name_max_chars).unwrap_or(usize::MAX);
        let valid =
            !name.is_empty() && name.chars().count() <= max && self.name_rule.is_match(name);
        (!valid).then_some(Reason::InvalidName)
    }

    /// Whether `instructions.exclude-levels` names any level at all.
    pub(crate) fn excludes_levels(&self) -> bool {
        !self.exclude_levels.is_empty()
    }

    /// Whether the policy has rules at all (`rules.files` not empty).
    pub(crate) fn has_rule_files(&self) -> bool {
        !self.rule_files.is_empty()
    }

    /// Whether a chain file is a rule (`rules.files`): `name` is its path
    /// relative to the folder it was found in, with `/` separators.
    pub(crate) fn is_rule_file(&self, name: &str) -> bool {
        !self.rule_files.is_empty() && self.rule_files.is_match(name)
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

    /// Whether `name` (one path component) is a folder imports never read
    /// inside: one of [`VCS_METADATA_NAMES`], a `roots.repo-markers` entry
    /// or an `instructions.import-excluded-names` entry, ASCII case aside
    /// (a case-insensitive file system opens `.GIT/config` as
    /// `.git/config`).
    pub fn is_import_excluded(&self, name: &std::ffi::OsStr) -> bool {
        let is = |n: &str| name.eq_ignore_ascii_case(n);
        VCS_METADATA_NAMES.iter().any(|n| is(n))
            || self.roots.repo_markers.iter().any(|n| is(n.get_ref()))
            || self
                .instructions
                .import_excluded_names
                .iter()
                .any(|n| is(n.get_ref()))
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
}

/// The root `word` names among `roots`.
pub(super) fn root_id(roots: &Roots, word: &str) -> Option<RootId> {
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
pub(super) fn named_root_paths(
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

/// Problems (all of one kind and label) about the value of `key` in the
/// merged policy, reported against the source that set it; each problem's span
/// is the one given or, when `None`, the span of the whole value. A key that no
/// source set is reported against the lowest source, at its start.
pub(super) fn problems_at(
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
    let src = super::diagnostic::source(&source.name, &source.text);
    InvalidPolicy::new(
        source.name.clone(),
        problems
            .into_iter()
            .map(|(span, message)| {
                let span = span
                    .or_else(|| definition.map(|d| d.span.clone()))
                    .unwrap_or(0..0);
                Problem::new(&src, kind, span, message, label)
            })
            .collect(),
    )
}
