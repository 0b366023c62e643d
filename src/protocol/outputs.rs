//! The JSON the command line prints beyond the snapshot: `explain --format
//! json` and `skill list --format json` (their schema is
//! `schema/cli.schema.json`).

use serde::Serialize;

use crate::snapshot::{Rejected, Shadowed, Skill, Snapshot};

/// `explain --format json`: the place, the budget, and one row per
/// candidate, import, scoped rule and skill, as the table shows them.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Explanation {
    /// The repository root.
    pub repo_root: String,
    /// The home root, when there is one.
    pub home: Option<String>,
    /// The working directory.
    pub cwd: String,
    /// Bytes of the budget used.
    pub budget_used: u64,
    /// The budget.
    pub budget_limit: u64,
    /// Whether some text was cut or dropped for lack of budget.
    pub budget_exhausted: bool,
    /// The fingerprint.
    pub fingerprint: String,
    /// The rows, in the table's order.
    pub rows: Vec<ExplainRow>,
}

/// One row of `explain`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ExplainRow {
    /// What happened: `included`, `truncated`, `deduped`, `skipped`,
    /// `passed`, `absent`, `imported`, `not imported`, `scoped`, `skill
    /// NAME`, `shadowed`, `rejected`.
    pub status: String,
    /// `home`, `project`, `ancestor`, `import` or `skill`.
    pub origin: String,
    /// The absolute path.
    pub path: String,
    /// The path as the table shows it: relative to the root its origin
    /// names (the home root for `home`, the repository root otherwise),
    /// absolute when it lies in neither.
    pub shown: String,
    /// Why, in words (empty when nothing needs saying).
    pub why: String,
    /// The reason word, when the row has one (see `Reason`).
    pub reason: Option<String>,
    /// The policy key behind the reason, when there is one.
    pub key: Option<String>,
}

impl ExplainRow {
    /// A row.
    pub fn new(
        status: impl Into<String>,
        origin: impl Into<String>,
        path: String,
        shown: String,
        why: String,
    ) -> Self {
        Self {
            status: status.into(),
            origin: origin.into(),
            path,
            shown,
            why,
            reason: None,
            key: None,
        }
    }

    /// The row with its reason word and the key behind it.
    pub fn with_reason(mut self, reason: &str, key: Option<&str>) -> Self {
        self.reason = Some(reason.to_string());
        self.key = key.map(str::to_string);
        self
    }
}

impl Explanation {
    /// The header of an explanation of `s`, with `rows`.
    pub fn new(s: &Snapshot, rows: Vec<ExplainRow>) -> Self {
        Self {
            repo_root: s.repo_root.to_string_lossy().into_owned(),
            home: s.home.as_ref().map(|h| h.to_string_lossy().into_owned()),
            cwd: s.cwd.to_string_lossy().into_owned(),
            budget_used: s.budget.used,
            budget_limit: s.budget.limit,
            budget_exhausted: s.budget.exhausted,
            fingerprint: s.fingerprint.clone(),
            rows,
        }
    }
}

/// `skill list --format json`: the skills that won their names (listed in
/// the prompt or beyond the cap), those shadowed, and those refused.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SkillList {
    /// The skills that won their names, in name order.
    pub skills: Vec<Skill>,
    /// Skills that lost their name to a lower rank.
    pub shadowed: Vec<Shadowed>,
    /// Skill folders and files refused.
    pub rejected: Vec<Rejected>,
}

impl SkillList {
    /// The skills of a snapshot.
    pub fn of(s: &Snapshot) -> Self {
        Self {
            skills: s.skills.clone(),
            shadowed: s.shadowed_project_skills.clone(),
            rejected: s.rejected_skills.clone(),
        }
    }
}
