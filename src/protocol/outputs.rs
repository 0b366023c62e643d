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
    /// Each policy, in the order asked for, as it loads the cwd.
    pub policies: Vec<SurveyedPolicy>,
    /// The folders surveyed as cwds (absolute), the cwd first: with
    /// `--scope repo`, every folder of the repository some policy reads
    /// from; with `--scope cwd`, the cwd alone.
    #[serde(default)]
    pub folders: Vec<String>,
    /// The problems found in any of them, each once (a file's problem seen
    /// from several folders is one problem), in kind and path order.
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

/// One kind of problem a survey reports, as its SARIF rule, its line in
/// the manual (docs/cli.md, "Survey problem kinds") and its level are all
/// made from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct SurveyProblemKind {
    /// The kind (`budget-clip`...): a problem's `kind`, a SARIF `ruleId`.
    pub kind: &'static str,
    /// A title of a few words (a SARIF rule's `shortDescription`).
    pub title: &'static str,
    /// What it means, for a repository's author (a SARIF rule's
    /// `fullDescription`).
    pub meaning: &'static str,
    /// What to do about it (with the meaning, a SARIF rule's `help`).
    pub fix: &'static str,
    /// Its SARIF level: `warning` or `note`.
    pub level: &'static str,
    /// For a kind that is a security problem, its severity for code
    /// scanning (`properties.security-severity`, 0.0 to 10.0, as text);
    /// `None` for the others.
    pub security_severity: Option<&'static str>,
}

/// The kinds of problem a survey reports, in the order it lists them.
/// The survey, its documentation and its SARIF rules are all read from
/// here.
pub const SURVEY_PROBLEM_KINDS: [SurveyProblemKind; 12] = [
    SurveyProblemKind {
        kind: "budget-clip",
        title: "An instruction file is cut",
        meaning: "A harness's instruction budget, or its cap on one file (in bytes or \
         characters), cuts this file: its model sees only the start.",
        fix: "Shorten the file, move what matters to its start, or split it \
         into files a harness loads on access (rules, skills).",
        level: "warning",
        security_severity: None,
    },
    SurveyProblemKind {
        kind: "hidden-text",
        title: "Text a reader does not see",
        meaning: "The file holds text a person reading it does not see (invisible or \
         bidirectional characters, HTML comments), which a model reads.",
        fix: "Remove the hidden characters and comments, or make the text \
         visible, and review what they said: a reviewer never saw it.",
        level: "warning",
        security_severity: Some("5.0"),
    },
    SurveyProblemKind {
        kind: "rejected-skill",
        title: "A harness refuses a skill",
        meaning: "A harness refuses this skill (an impostor, a missing or invalid \
         frontmatter, a link leaving the repository).",
        fix: "Give the skill a valid frontmatter with a name of its own that \
         matches its folder, and keep its files inside the repository.",
        level: "warning",
        security_severity: Some("5.0"),
    },
    SurveyProblemKind {
        kind: "read-by-some",
        title: "Some harnesses ignore a file",
        meaning: "Some harnesses read this instruction file and others ignore it.",
        fix: "Write the instructions every harness should follow in a file \
         each reads (AGENTS.md), or link the others' files to it.",
        level: "note",
        security_severity: None,
    },
    SurveyProblemKind {
        kind: "import-failed",
        title: "An import is not followed",
        meaning: "An import in this file (`@path`, `#[[file:path]]`) is not followed by a \
         harness that imports.",
        fix: "Point the import at a text file inside the repository that \
         exists, within the harness's depth and size limits.",
        level: "warning",
        security_severity: Some("2.0"),
    },
    SurveyProblemKind {
        kind: "rule-misread",
        title: "A rule's frontmatter is misread",
        meaning: "A harness reads this rule's frontmatter otherwise than it seems to \
         mean (a frontmatter that does not parse or gives a key twice, a \
         quoted boolean, a mode word it does not know, a glob mode without \
         globs): the rule gets the reading that loads least.",
        fix: "Fix the frontmatter as the message says (unquote booleans, use \
         a mode word the harness knows, give globs to a glob mode).",
        level: "warning",
        security_severity: None,
    },
    SurveyProblemKind {
        kind: "rule-unmatched",
        title: "A rule never loads",
        meaning: "A harness loads this rule only when a file its globs match is touched, \
         and no path of the repository matches them: it never loads.",
        fix: "Fix the rule's globs so that they match the repository's paths \
         (relative to its root), or make the rule always apply.",
        level: "warning",
        security_severity: None,
    },
    SurveyProblemKind {
        kind: "symlink-escape",
        title: "A link leads out of the repository",
        meaning: "A file a harness would read is a symbolic link (or lies past one) \
         that leads outside the repository, or is absolute: no harness under \
         its policy reads it, and one that follows links would read a file \
         the repository does not hold.",
        fix: "Replace the link with the file, or point it at a file inside \
         the repository with a relative path.",
        level: "warning",
        security_severity: Some("7.0"),
    },
    SurveyProblemKind {
        kind: "vcs-metadata",
        title: "A path passes through version-control metadata",
        meaning: "A file a harness would read is, or links into, a version-control \
         metadata folder (`.git`, `.hg`, `.svn`, `.jj`): it is never read.",
        fix: "Keep instruction files, rules and skills out of version-control \
         metadata, and links from pointing into it.",
        level: "warning",
        security_severity: Some("5.0"),
    },
    SurveyProblemKind {
        kind: "not-text",
        title: "A file is not text",
        meaning: "A file a harness would read is not UTF-8 text (invalid bytes, NUL \
         bytes): it is not read.",
        fix: "Save the file as UTF-8 text, or rename it so that no harness \
         takes it for an instruction file.",
        level: "warning",
        security_severity: None,
    },
    SurveyProblemKind {
        kind: "too-large",
        title: "A file is too large to read",
        meaning: "A file a harness would read is larger than its policy reads: it \
         is not read at all.",
        fix: "Shorten the file or split it into files a harness loads on \
         access (rules, skills).",
        level: "warning",
        security_severity: None,
    },
    SurveyProblemKind {
        kind: "survey-incomplete",
        title: "The survey stopped short",
        meaning: "The repository holds more folders to survey, entries to walk or \
         levels than the survey's caps: the folders past them were not surveyed.",
        fix: "Survey the parts apart (`--cwd` with `--scope cwd`), or move \
         generated trees out of the repository.",
        level: "warning",
        security_severity: None,
    },
];

/// The anchor of the manual's section that lists [`SURVEY_PROBLEM_KINDS`]
/// (docs/cli.md): each SARIF rule's `helpUri` points there.
pub const SURVEY_PROBLEM_KINDS_ANCHOR: &str = "survey-problem-kinds";

/// The manual's table of [`SURVEY_PROBLEM_KINDS`] (docs/cli.md, "Survey
/// problem kinds" holds it as is; a test checks).
pub fn survey_problem_kinds_table() -> String {
    let mut t = String::from(
        "| Kind | Level | Security severity | What it means | What to do |\n\
         |------|-------|-------------------|---------------|------------|\n",
    );
    let one = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    for k in &SURVEY_PROBLEM_KINDS {
        t.push_str(&format!(
            "| `{}` | {} | {} | {} | {} |\n",
            k.kind,
            k.level,
            k.security_severity.unwrap_or("-"),
            one(k.meaning),
            one(k.fix)
        ));
    }
    t
}

/// Where `kind` stands in [`SURVEY_PROBLEM_KINDS`] (past the end for a
/// kind not declared).
pub(super) fn kind_order(kind: &str) -> usize {
    SURVEY_PROBLEM_KINDS
        .iter()
        .position(|k| k.kind == kind)
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
    /// The line (from 1) in the file where it is, when the problem is at
    /// one place of the file and the survey knows it; absent otherwise
    /// (a problem of the whole file).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// The column (from 1, in characters) on [`line`](Self::line), when
    /// known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<u64>,
    /// What tells this problem from every other, the same on every
    /// machine and across edits that move it: a hash of its kind, its
    /// file relative to the repository root and its key (for
    /// `budget-clip`, which cap cuts the file; for `hidden-text`,
    /// `read-by-some` and `rule-unmatched`, nothing: one per file; for the
    /// others, the message, which holds no count, line or absolute path).
    /// Problems are grouped by it: two policies that cut a file with the
    /// same cap are one problem, whatever each shows of it.
    pub fingerprint: String,
}

/// What tells a problem of `kind` saying `message` from the others of its
/// file (as [`SurveyProblem::fingerprint`] says): never a count or a line.
fn problem_key<'m>(kind: &str, message: &'m str) -> &'m str {
    match kind {
        "budget-clip" => message.split(" cuts it").next().unwrap_or(message),
        "hidden-text" | "read-by-some" | "rule-unmatched" => "",
        _ => message,
    }
}

/// The fingerprint of a problem of `kind` at `path` with `key` (as
/// [`SurveyProblem::fingerprint`] says), `root` the repository root.
fn fingerprint(kind: &str, path: &str, key: &str, root: &str) -> String {
    let rel = std::path::Path::new(path)
        .strip_prefix(root)
        .ok()
        .filter(|_| !root.is_empty())
        .map_or_else(|| path.to_string(), |r| r.to_string_lossy().into_owned());
    let mut h = blake3::Hasher::new();
    for part in [kind, rel.as_str(), key] {
        h.update(&(part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    h.finalize().to_hex()[..32].to_string()
}

/// What one policy's snapshot gives a survey, made apart from the others
/// (on the thread that built it, in [`Survey::run`]).
struct Part {
    /// Its line.
    line: SurveyedPolicy,
    /// Its problems: kind, path, message, and the line and column where
    /// it is, when known.
    notes: Vec<Note>,
    /// The project instruction files it reads.
    project_files: Vec<String>,
}

/// A problem as one policy's snapshot shows it: kind, path, message, and
/// its line and column (0: not known) when it has a place.
type Note = (&'static str, String, String, Option<(u64, u64)>);

/// A policy, and what it says of a problem.
type Said = (String, String);

/// The problem kind of a skipped candidate's reason, for the reasons a
/// repository's author should know of (a file no harness reads for what it
/// is, not a choice of the policy's).
fn skipped_kind(reason: crate::vocab::reason::Reason) -> Option<&'static str> {
    use crate::vocab::reason::Reason;
    match reason {
        Reason::SymlinkEscape => Some("symlink-escape"),
        Reason::VcsMetadata => Some("vcs-metadata"),
        Reason::NotText => Some("not-text"),
        Reason::TooLarge => Some("too-large"),
        _ => None,
    }
}

/// At most this many hidden characters' places are named in a message.
const NAMED_PLACES: usize = 16;

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
        let mut notes: Vec<Note> = Vec::new();
        let mut note = |kind: &'static str, path: String, message: String| {
            notes.push((kind, path, message, None));
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
        // Problems with a place, added after the others.
        let mut placed: Vec<Note> = Vec::new();
        for h in &s.hidden_text {
            let mut message = format!(
                "{} character(s) and {} HTML comment(s) a reader does not see ({})",
                h.report.characters,
                h.report.html_comments,
                h.report.kinds.join(", ")
            );
            let places = h.report.positions();
            if !places.is_empty() {
                let shown: Vec<String> = places
                    .iter()
                    .take(NAMED_PLACES)
                    .map(|(l, c)| format!("{l}:{c}"))
                    .collect();
                message.push_str(&format!(" at line:column {}", shown.join(", ")));
                let total = h.report.characters + h.report.html_comments;
                if total > shown.len() {
                    message.push_str(&format!(" and {} more", total - shown.len()));
                }
            }
            placed.push((
                "hidden-text",
                lossy(&h.path),
                message,
                places.first().copied(),
            ));
        }
        for k in &s.skipped {
            if let Some(kind) = skipped_kind(k.reason) {
                placed.push((
                    kind,
                    lossy(&k.path),
                    format!("not read: {}", k.reason.as_str()),
                    None,
                ));
            }
        }
        for r in &s.rejected_skills {
            // An impostor is refused as its folder; the name that does not
            // match it is written in its SKILL.md, where a reader goes.
            let path = if r.reason == crate::vocab::reason::Reason::Impostor {
                r.path.join(crate::skills::SKILL_FILE)
            } else {
                r.path.clone()
            };
            note(
                "rejected-skill",
                lossy(&path),
                format!("refused: {}", r.reason.as_str()),
            );
        }
        notes.append(&mut placed);
        for r in &s.rules {
            if let Some(m) = &r.misread {
                notes.push((
                    "rule-misread",
                    lossy(&r.path),
                    format!("{m}; read as {}", r.mode.as_str()),
                    r.misread_line.map(|l| (l, 0)),
                ));
            }
        }
        for r in &s.scoped_rules {
            if let Some(m) = &r.misread {
                // The rule's line, as its file's reading found it.
                let line = s
                    .rules
                    .iter()
                    .find(|f| f.path == r.path)
                    .and_then(|f| f.misread_line);
                notes.push((
                    "rule-misread",
                    lossy(&r.path),
                    format!("{m}; loaded on no path"),
                    line.map(|l| (l, 0)),
                ));
            }
        }
        for i in s.imports.iter().filter(|i| i.reason.is_some()) {
            let reason = i.reason.map(|r| r.as_str()).unwrap_or_default();
            notes.push((
                "import-failed",
                lossy(&i.from),
                format!("{} is not followed: {reason}", i.spec),
                i.line.map(|l| (l, 0)),
            ));
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
            unmatched_paths(&s.reach)
                .map(|path| ("rule-unmatched", path, UNMATCHED.to_string(), None)),
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
        let folders = vec![cwd.to_string_lossy().into_owned()];
        Self::of_folder_parts(cwd, folders, vec![parts], false)
    }

    /// Surveys `cwd` and, under [`Scope::Repo`](crate::loader::Scope::Repo),
    /// every folder of its repository some policy reads from (see
    /// [`crate::survey`] for one folder): what `lisa-context survey
    /// --scope` shows. A problem of one file seen from several folders is
    /// one problem; the policies' lines are the cwd's. A walk that stopped
    /// short (more than `max_folders` folders to survey, see
    /// [`MAX_SURVEY_FOLDERS`](crate::MAX_SURVEY_FOLDERS) for the default)
    /// adds a `survey-incomplete` problem at the repository root.
    pub fn run_scoped(
        policies: impl IntoIterator<Item = (String, crate::loader::LoaderBuilder)>,
        cwd: &std::path::Path,
        root: Option<&std::path::Path>,
        scope: crate::loader::Scope,
        max_folders: usize,
    ) -> Result<Self, crate::loader::SurveyError> {
        let scoped = crate::loader::survey_scope_each(
            policies,
            cwd,
            root,
            scope,
            max_folders,
            crate::snapshot::Tracing::Off,
            &|s| Part::of_surveyed(&s),
        )?;
        // Per folder, each policy's part.
        let count = scoped.folders.len();
        let mut by_folder: Vec<Vec<Part>> = (0..count).map(|_| Vec::new()).collect();
        for per_policy in scoped.parts {
            for (i, part) in per_policy.into_iter().enumerate() {
                if let Some(slot) = by_folder.get_mut(i) {
                    slot.push(part);
                }
            }
        }
        let folders = scoped
            .folders
            .iter()
            .map(|f| f.to_string_lossy().into_owned())
            .collect();
        Ok(Self::of_folder_parts(
            cwd,
            folders,
            by_folder,
            scoped.capped,
        ))
    }

    /// The survey from each folder's parts (each policy's, in survey
    /// order), the cwd's first.
    fn of_folder_parts(
        cwd: &std::path::Path,
        folders: Vec<String>,
        by_folder: Vec<Vec<Part>>,
        capped: bool,
    ) -> Self {
        use std::collections::BTreeMap;
        let mut problems = Vec::new();
        // Per (kind, path, key): the policies it holds for, each with its
        // message.
        let mut grouped: BTreeMap<(usize, String, String, String), Vec<Said>> = BTreeMap::new();
        let mut policies: Vec<SurveyedPolicy> = Vec::new();
        // Per group: where it is (the first policy's saying).
        let mut places: BTreeMap<(usize, String, String, String), (u64, u64)> = BTreeMap::new();
        let add = |grouped: &mut BTreeMap<(usize, String, String, String), Vec<Said>>,
                   key: (usize, String, String, String),
                   said: Said| {
            let entry = grouped.entry(key).or_default();
            if !entry.iter().any(|(p, _)| *p == said.0) {
                entry.push(said);
            }
        };
        for (i, parts) in by_folder.into_iter().enumerate() {
            // Per project file: the policies that read it from this folder.
            let mut readers: BTreeMap<String, Vec<String>> = BTreeMap::new();
            let mut names: Vec<String> = Vec::with_capacity(parts.len());
            for part in parts {
                let name = part.line.name.clone();
                for (kind, path, message, at) in part.notes {
                    let key = problem_key(kind, &message).to_string();
                    let key = (kind_order(kind), kind.to_string(), path, key);
                    if let Some(at) = at {
                        places.entry(key.clone()).or_insert(at);
                    }
                    add(&mut grouped, key, (name.clone(), message));
                }
                for path in part.project_files {
                    readers.entry(path).or_default().push(name.clone());
                }
                names.push(name);
                if i == 0 {
                    policies.push(part.line);
                }
            }
            // A project file some policies read and others do not.
            for (path, by) in readers {
                if by.len() < names.len() {
                    let others: Vec<&str> = names
                        .iter()
                        .map(String::as_str)
                        .filter(|n| !by.iter().any(|b| b == n))
                        .collect();
                    let message = format!("not read by {}", others.join(", "));
                    let key = (
                        kind_order("read-by-some"),
                        "read-by-some".to_string(),
                        path,
                        problem_key("read-by-some", &message).to_string(),
                    );
                    for b in by {
                        add(&mut grouped, key.clone(), (b, message.clone()));
                    }
                }
            }
        }
        let root = policies
            .first()
            .map(|p| p.repo_root.clone())
            .unwrap_or_default();
        for (group, said) in grouped {
            let at = places.get(&group).copied();
            let (_, kind, path, key) = group;
            // One message when the policies say the same, else each
            // policy's (a cap that shows one more byte to one of them).
            let message = if said.iter().all(|(_, m)| *m == said[0].1) {
                said[0].1.clone()
            } else {
                said.iter()
                    .map(|(p, m)| format!("{m} ({p})"))
                    .collect::<Vec<_>>()
                    .join("; ")
            };
            let policies = said.into_iter().map(|(p, _)| p).collect();
            problems.push(SurveyProblem {
                fingerprint: fingerprint(&kind, &path, &key, &root),
                kind,
                policies,
                path,
                message,
                line: at.map(|(l, _)| l).filter(|l| *l > 0),
                column: at.map(|(_, c)| c).filter(|c| *c > 0),
            });
        }
        if capped {
            let message = format!(
                "the survey stopped short: more folders to survey than its cap, or more than {} \
                 entries or 32 levels to walk; the folders past it were not surveyed",
                crate::access::REACH_ENTRIES
            );
            problems.push(SurveyProblem {
                fingerprint: fingerprint("survey-incomplete", &root, "", &root),
                kind: "survey-incomplete".into(),
                policies: policies.iter().map(|p| p.name.clone()).collect(),
                path: root.clone(),
                message,
                line: None,
                column: None,
            });
        }
        Self {
            cwd: cwd.to_string_lossy().into_owned(),
            policies,
            folders,
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
                    fingerprint: fingerprint(
                        "rule-unmatched",
                        &path,
                        problem_key("rule-unmatched", UNMATCHED),
                        self.policies
                            .first()
                            .map(|p| p.repo_root.as_str())
                            .unwrap_or_default(),
                    ),
                    kind: "rule-unmatched".into(),
                    policies: vec![name.to_string()],
                    path,
                    message: UNMATCHED.into(),
                    line: None,
                    column: None,
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
