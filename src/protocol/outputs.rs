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
    /// `passed`, `absent`, `imported`, `not imported`, `scoped`, `rule
    /// MODE` (`always`, `on-access`, `listed`, `manual`), `skill NAME`,
    /// `shadowed`, `rejected`.
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

    /// The row with the policy key that decided it, and no reason word.
    pub fn with_key(mut self, key: &str) -> Self {
        self.key = Some(key.to_string());
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
    pub skills: Vec<std::sync::Arc<Skill>>,
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

/// `survey --format json`: what each surveyed policy loads for one cwd,
/// side by side, and the problems a repository's author would want to know.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Survey {
    /// The working directory surveyed.
    pub cwd: String,
    /// Each policy, in the order asked for.
    pub policies: Vec<SurveyedPolicy>,
    /// The problems found, in policy order.
    pub problems: Vec<SurveyProblem>,
}

/// What one policy loads.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SurveyedPolicy {
    /// The shipped policy's name.
    pub name: String,
    /// The repository root it found.
    pub repo_root: String,
    /// The instruction files it keeps, in read order (absolute paths).
    pub instruction_files: Vec<String>,
    /// The skills that win their names, in name order.
    pub skills: Vec<String>,
    /// Bytes of the budget used, and the budget.
    pub budget_used: u64,
    /// The budget.
    pub budget_limit: u64,
    /// The prompt's size in bytes.
    pub prompt_bytes: usize,
    /// Its rule files (`[rules]`) and their modes, in read order.
    pub rules: Vec<SurveyedRule>,
}

/// A rule file as a surveyed policy reads it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SurveyedRule {
    /// The rule's file (absolute).
    pub path: String,
    /// Its mode: `always`, `on-access`, `listed` or `manual`.
    pub mode: String,
}

/// The kinds of problem a survey reports, in the order it lists them: the
/// kind, what it means (for a repository's author), and its SARIF level.
/// The survey, its documentation and its SARIF rules are all read from
/// here.
pub const SURVEY_PROBLEM_KINDS: [(&str, &str, &str); 7] = [
    (
        "budget-clip",
        "A harness's instruction budget, or its cap on one file (in bytes or \
         characters), cuts this file: its model sees only the start.",
        "warning",
    ),
    (
        "hidden-text",
        "The file holds text a person reading it does not see (invisible or \
         bidirectional characters, HTML comments), which a model reads.",
        "warning",
    ),
    (
        "rejected-skill",
        "A harness refuses this skill (an impostor, a missing or invalid \
         frontmatter, a link leaving the repository).",
        "warning",
    ),
    (
        "read-by-some",
        "Some harnesses read this instruction file and others ignore it.",
        "note",
    ),
    (
        "import-failed",
        "An import in this file (`@path`, `#[[file:path]]`) is not followed by a \
         harness that imports.",
        "warning",
    ),
    (
        "rule-misread",
        "A harness reads this rule's frontmatter otherwise than it seems to \
         mean (a frontmatter that does not parse or gives a key twice, a \
         quoted boolean, a mode word it does not know, a glob mode without \
         globs): the rule gets the reading that loads least.",
        "warning",
    ),
    (
        "rule-unmatched",
        "A harness loads this rule only when a file its globs match is touched, \
         and no path of the repository matches them: it never loads.",
        "warning",
    ),
];

/// Where `kind` stands in [`SURVEY_PROBLEM_KINDS`] (past the end for a
/// kind not declared).
pub(super) fn kind_order(kind: &str) -> usize {
    SURVEY_PROBLEM_KINDS
        .iter()
        .position(|(k, ..)| *k == kind)
        .unwrap_or(SURVEY_PROBLEM_KINDS.len())
}

/// One problem of a survey.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SurveyProblem {
    /// `budget-clip` (a policy's budget cuts a file), `hidden-text` (text a
    /// reader does not see), `rejected-skill` (a skill a policy refuses),
    /// `read-by-some` (a project file some policies read and others do
    /// not), `import-failed` (an `@import` a policy could not follow),
    /// `rule-misread` (a rule's frontmatter a policy reads otherwise than
    /// it seems to mean), `rule-unmatched` (an on-access rule whose globs
    /// match no path of the repository).
    pub kind: String,
    /// The policies concerned, in survey order.
    pub policies: Vec<String>,
    /// The file concerned (absolute).
    pub path: String,
    /// What happens, in words.
    pub message: String,
}

/// What one policy's snapshot gives a survey, made apart from the others
/// (on the thread that built it, in [`Survey::run`]).
struct Part {
    /// Its line.
    line: SurveyedPolicy,
    /// Its problems: kind, path, message.
    notes: Vec<(&'static str, String, String)>,
    /// The project instruction files it reads.
    project_files: Vec<String>,
}

/// What a `rule-unmatched` problem says.
const UNMATCHED: &str = "its globs match no path of the repository: it never loads";

/// The rules of `reach` no path of the repository reaches, as shown.
fn unmatched_paths(reach: &crate::access::RuleReach) -> impl Iterator<Item = String> + '_ {
    reach
        .unmatched
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
}

impl Part {
    fn of(name: &str, s: &Snapshot) -> Self {
        let lossy = |p: &std::path::Path| p.to_string_lossy().into_owned();
        let line = SurveyedPolicy {
            name: name.to_string(),
            repo_root: lossy(&s.repo_root),
            instruction_files: s.instruction_files.iter().map(|b| lossy(&b.path)).collect(),
            skills: s.skills.iter().map(|k| k.name.clone()).collect(),
            budget_used: s.budget.used,
            budget_limit: s.budget.limit,
            prompt_bytes: s.prompt.len(),
            rules: s
                .rules
                .iter()
                .map(|r| SurveyedRule {
                    path: lossy(&r.path),
                    mode: r.mode.as_str().to_string(),
                })
                .collect(),
        };
        let mut notes = Vec::new();
        let mut note = |kind: &'static str, path: String, message: String| {
            notes.push((kind, path, message));
        };
        for b in &s.instruction_files {
            let message = if b.budget_cut {
                format!(
                    "the budget ({} bytes) cuts it: {} bytes shown of a {}-byte file",
                    s.budget.limit, b.included_bytes, b.bytes
                )
            } else if b.char_limit_cut {
                let whose = if b.char_source_cut {
                    "its cap on the characters of one source's files"
                } else {
                    "its cap on one file's characters"
                };
                format!(
                    "{whose} cuts it: {} bytes shown of a {}-byte file",
                    b.included_bytes, b.bytes
                )
            } else if b.file_limit_cut {
                format!(
                    "its cap on one file's bytes cuts it: {} bytes shown of a {}-byte file",
                    b.included_bytes, b.bytes
                )
            } else {
                continue;
            };
            note("budget-clip", lossy(&b.path), message);
        }
        for h in &s.hidden_text {
            note(
                "hidden-text",
                lossy(&h.path),
                format!(
                    "{} character(s) and {} HTML comment(s) a reader does not see ({})",
                    h.report.characters,
                    h.report.html_comments,
                    h.report.kinds.join(", ")
                ),
            );
        }
        for r in &s.rejected_skills {
            note(
                "rejected-skill",
                lossy(&r.path),
                format!("refused: {}", r.reason.as_str()),
            );
        }
        for r in &s.rules {
            if let Some(m) = &r.misread {
                note(
                    "rule-misread",
                    lossy(&r.path),
                    format!("{m}; read as {}", r.mode.as_str()),
                );
            }
        }
        for r in &s.scoped_rules {
            if let Some(m) = &r.misread {
                note(
                    "rule-misread",
                    lossy(&r.path),
                    format!("{m}; loaded on no path"),
                );
            }
        }
        for i in s.imports.iter().filter(|i| i.reason.is_some()) {
            let reason = i.reason.map(|r| r.as_str()).unwrap_or_default();
            note(
                "import-failed",
                lossy(&i.from),
                format!("{} is not followed: {reason}", i.spec),
            );
        }
        let project_files = s
            .instruction_files
            .iter()
            .filter(|b| b.origin == crate::vocab::origin::Origin::Project)
            .map(|b| lossy(&b.path))
            .collect();
        Self {
            line,
            notes,
            project_files,
        }
    }

    /// [`Part::of`] a policy's snapshot, with its rule reach: a
    /// `rule-unmatched` note per rule no path reaches.
    fn of_surveyed(s: &crate::loader::Surveyed) -> Self {
        let mut part = Self::of(&s.policy, &s.snapshot);
        part.notes.extend(
            unmatched_paths(&s.reach).map(|path| ("rule-unmatched", path, UNMATCHED.to_string())),
        );
        part
    }
}

impl Survey {
    /// The survey of `cwd` from each `(policy name, snapshot)`.
    pub fn of(cwd: &std::path::Path, snapshots: &[(String, std::sync::Arc<Snapshot>)]) -> Self {
        let parts = snapshots
            .iter()
            .map(|(name, s)| Part::of(name, s))
            .collect();
        Self::of_parts(cwd, parts)
    }

    /// Surveys `cwd` (in the repository `root` names, else the one found
    /// from it) under each policy of `policies`, as
    /// [`crate::survey`] does, and makes the survey of what it found: what
    /// `lisa-context survey` shows. What the survey keeps of each snapshot
    /// is taken, and the snapshot dropped, on the thread that built it.
    pub fn run(
        policies: impl IntoIterator<Item = (String, crate::loader::LoaderBuilder)>,
        cwd: &std::path::Path,
        root: Option<&std::path::Path>,
    ) -> Result<Self, crate::loader::SurveyError> {
        // Only what the survey shows is kept of each build: no trace, no
        // fingerprint (nothing checks these snapshots again).
        let parts =
            crate::loader::survey_each(policies, cwd, root, crate::snapshot::Tracing::Off, &|s| {
                Part::of_surveyed(&s)
            })?;
        Ok(Self::of_parts(cwd, parts))
    }

    /// The survey from each policy's part, in survey order.
    fn of_parts(cwd: &std::path::Path, parts: Vec<Part>) -> Self {
        use std::collections::BTreeMap;
        let mut problems = Vec::new();
        // Per (kind, path, message): the policies it holds for.
        let mut grouped: BTreeMap<(usize, String, String, String), Vec<String>> = BTreeMap::new();
        // Per project file: the policies that read it.
        let mut readers: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let mut policies = Vec::with_capacity(parts.len());
        for part in parts {
            let name = &part.line.name;
            for (kind, path, message) in part.notes {
                grouped
                    .entry((kind_order(kind), kind.to_string(), path, message))
                    .or_default()
                    .push(name.clone());
            }
            for path in part.project_files {
                readers.entry(path).or_default().push(name.clone());
            }
            policies.push(part.line);
        }
        // A project file some policies read and others do not.
        for (path, by) in readers {
            if by.len() < policies.len() {
                let others: Vec<&str> = policies
                    .iter()
                    .map(|p| p.name.as_str())
                    .filter(|n| !by.iter().any(|b| b == n))
                    .collect();
                grouped.insert(
                    (
                        kind_order("read-by-some"),
                        "read-by-some".into(),
                        path,
                        format!("not read by {}", others.join(", ")),
                    ),
                    by,
                );
            }
        }
        for ((_, kind, path, message), policies) in grouped {
            problems.push(SurveyProblem {
                kind,
                policies,
                path,
                message,
            });
        }
        Self {
            cwd: cwd.to_string_lossy().into_owned(),
            policies,
            problems,
        }
    }

    /// Adds what the walk of the repository found for the policy `name`
    /// ([`Loader::rule_reach`](crate::Loader::rule_reach)): a
    /// `rule-unmatched` problem per rule no path matches (a rule several
    /// policies leave unmatched is one problem naming them all). Call it in
    /// survey order.
    pub fn note_reach(&mut self, name: &str, reach: &crate::access::RuleReach) {
        for path in unmatched_paths(reach) {
            match self
                .problems
                .iter_mut()
                .find(|p| p.kind == "rule-unmatched" && p.path == path)
            {
                Some(p) => p.policies.push(name.to_string()),
                None => self.problems.push(SurveyProblem {
                    kind: "rule-unmatched".into(),
                    policies: vec![name.to_string()],
                    path,
                    message: UNMATCHED.into(),
                }),
            }
        }
        self.problems
            .sort_by(|a, b| (kind_order(&a.kind), &a.path).cmp(&(kind_order(&b.kind), &b.path)));
    }

    /// The survey of what [`crate::survey`] found: [`Survey::of`] its
    /// snapshots, with each policy's [reach](Self::note_reach) noted (a
    /// rule several policies leave unmatched is one problem, grouped as
    /// every other kind is).
    pub fn of_surveyed(cwd: &std::path::Path, surveyed: &[crate::loader::Surveyed]) -> Self {
        Self::of_parts(cwd, surveyed.iter().map(Part::of_surveyed).collect())
    }
}
