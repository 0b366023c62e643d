//! Layer 1 — the policy: every decision the loader makes, declared in TOML.
//!
//! A policy is built from layers ([`Layer`]), lowest first: the built-in Lisa
//! policy, then the team's `$LISA_HOME/context-policy.toml`, then `--policy
//! FILE`. A layer changes only the keys it names. Nothing under a repository
//! root is ever read as a layer.

mod diagnostic;
mod effective;
pub mod keys;
mod memo;
mod merge;
mod rule;
mod schema;
mod shipped;
mod show;
mod source;
mod structure;
mod template;
mod validate;

pub use diagnostic::{InvalidPolicy, MAX_REPORTED_PROBLEMS, PolicyError, Problem, ProblemKind};
pub use effective::{Definition, Policy, VCS_METADATA_NAMES};
pub(crate) use memo::Memo;
pub use schema::{
    AccessRoot, Blank, BudgetCounts, BudgetOrder, BudgetScope, ChainOrder, CharUnit, Conflict,
    DuplicateKeys, Fences, Fingerprint, FrontmatterMode, GlobOrder, HardLinkRule, HiddenText,
    HomeImportRoot, ImportFailure, ImportRoot, ImportSyntax, Instructions, LeadingBom,
    LongDescription, MarkerKind, NameFrom, NamedRoot, Names, PathOrder, Pick, ProjectTrust, Roots,
    RuleAbsent, RuleMode, Rules, SURVEY_KINDS, Scalars, SkillSource, Skills, SourceLevels,
    SurveyAllow, SurveyGate, SymlinkRule, TabIndent, Templates, Trim, Trust, UnmarkedLevels,
    Whitespace,
};
pub use shipped::{BUILTIN_NAME, BUILTIN_POLICY, SHIPPED, SHIPPED_NAMES};
pub use source::{HOME_POLICY_FILE, Layer, MAX_POLICY_BYTES, PolicySource};
pub use template::{Template, TemplateSyntaxError};
pub use validate::{MAX_BUDGET_BYTES, MAX_FILE_BYTES, SUPPORTED_VERSION};
pub(crate) use validate::{compile_glob, is_glob};
