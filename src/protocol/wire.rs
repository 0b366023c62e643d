//! The wire vocabulary: requests, `hello`, error codes, trust views.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::error::ErrorCode;

use crate::trust::{TrustItem, TrustStatus};

/// The protocol version `hello` reports. It changes only for a change a
/// client written for the previous version would misread (a field renamed,
/// removed or retyped); added ops and fields keep it.
pub const PROTOCOL_VERSION: u32 = 1;

/// The names of the built-in policies this build knows (`hello`'s
/// `policies`).
pub const POLICIES: &[&str] = crate::policy::SHIPPED_NAMES;

/// One request, by its `op` (the `id` is not part of it: the server takes
/// it out first and echoes it as written). Fields a request does not use
/// are ignored.
#[derive(Debug, Clone, Deserialize, strum::VariantNames)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "op", rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
#[non_exhaustive]
pub enum Request {
    /// What the server speaks: protocol version, crate version, ops,
    /// policies and error codes. Needs no cwd.
    Hello {},
    /// The snapshot for a cwd.
    Snapshot {
        /// The session's working directory (absolute).
        cwd: PathBuf,
        /// The repository root, when the caller knows it (it must contain
        /// `cwd`).
        root: Option<PathBuf>,
    },
    /// The fingerprint alone.
    Fingerprint {
        /// The session's working directory (absolute).
        cwd: PathBuf,
        /// The repository root, when the caller knows it.
        root: Option<PathBuf>,
    },
    /// A new snapshot only if the fingerprint moved.
    Refresh {
        /// The session's working directory (absolute).
        cwd: PathBuf,
        /// The repository root, when the caller knows it.
        root: Option<PathBuf>,
        /// The fingerprint of the snapshot the caller holds.
        fingerprint: String,
    },
    /// The `SKILL.md` of the skill that wins a name.
    Skill {
        /// The session's working directory (absolute).
        cwd: PathBuf,
        /// The repository root, when the caller knows it.
        root: Option<PathBuf>,
        /// The skill's name.
        name: String,
    },
    /// Where the cwd's project items stand with the user (read-only).
    TrustStatus {
        /// The session's working directory (absolute).
        cwd: PathBuf,
        /// The repository root, when the caller knows it.
        root: Option<PathBuf>,
    },
    /// The pending items with a diff each (read-only). Approving is never
    /// a request: a model driving the server cannot approve.
    TrustDiff {
        /// The session's working directory (absolute).
        cwd: PathBuf,
        /// The repository root, when the caller knows it.
        root: Option<PathBuf>,
    },
    /// What touching `path` adds to a session in `cwd` (see
    /// [`Loader::access`](crate::Loader::access)): each file at most once
    /// per session. Sessions are told apart by `session` (any string the
    /// client picks; one default session per cwd and root without it).
    Access {
        /// The session's working directory (absolute).
        cwd: PathBuf,
        /// The repository root, when the caller knows it.
        root: Option<PathBuf>,
        /// The path the agent touched (absolute, or relative to `cwd`).
        path: PathBuf,
        /// The client's name for the session.
        session: Option<String>,
    },
    /// The text of the rule (`[rules]`) of a name: a `listed` rule the
    /// agent asks for, a `manual` one the user names (see
    /// [`Loader::rule`](crate::Loader::rule)).
    Rule {
        /// The session's working directory (absolute).
        cwd: PathBuf,
        /// The repository root, when the caller knows it.
        root: Option<PathBuf>,
        /// The rule's name, as the snapshot's `rules[].name` gives it.
        name: String,
    },
    /// The whole folders of the skills that win their names: every file of
    /// each with its SHA-256 digest and size, read now through the sandbox
    /// (see [`Loader::skill_manifests_in`](crate::Loader::skill_manifests_in)).
    SkillManifests {
        /// The session's working directory (absolute).
        cwd: PathBuf,
        /// The repository root, when the caller knows it.
        root: Option<PathBuf>,
        /// The skills' names; every winner, in name order, without it.
        names: Option<Vec<String>>,
    },
    /// One file of a skill's folder, when it is one of the files its
    /// manifest lists (see
    /// [`Loader::skill_resource_in`](crate::Loader::skill_resource_in)).
    SkillResource {
        /// The session's working directory (absolute).
        cwd: PathBuf,
        /// The repository root, when the caller knows it.
        root: Option<PathBuf>,
        /// The skill's name.
        name: String,
        /// Which skill of the name, where the policy keeps several: its
        /// manifest's `location`.
        location: Option<String>,
        /// The file, `/`-separated below the skill's folder (`SKILL.md`,
        /// `scripts/run.py`).
        path: String,
    },
}

impl Request {
    /// Every op, as written in requests.
    pub const OPS: &'static [&'static str] = <Request as strum::VariantNames>::VARIANTS;

    /// The cwd the request is about (`None` for `hello`).
    pub fn cwd(&self) -> Option<&std::path::Path> {
        match self {
            Request::Hello {} => None,
            Request::Snapshot { cwd, .. }
            | Request::Fingerprint { cwd, .. }
            | Request::Refresh { cwd, .. }
            | Request::Skill { cwd, .. }
            | Request::Rule { cwd, .. }
            | Request::TrustStatus { cwd, .. }
            | Request::TrustDiff { cwd, .. }
            | Request::Access { cwd, .. }
            | Request::SkillManifests { cwd, .. }
            | Request::SkillResource { cwd, .. } => Some(cwd),
        }
    }
}

/// One problem of an invalid policy, for a program: `policy-invalid`
/// responses carry the list beside the drawn diagnostic.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct PolicyProblem {
    /// The policy file's name as the diagnostic shows it.
    pub file: String,
    /// The line, from 1 (`null` when the problem is with the whole file).
    pub line: Option<usize>,
    /// The column, from 1, in characters.
    pub column: Option<usize>,
    /// The dotted key concerned, when the file's text tells it.
    pub key: Option<String>,
    /// The problem's code (`policy::unknown-key`, `policy::out-of-range`, ...).
    pub code: String,
    /// The one-line message.
    pub message: String,
    /// How to fix it, when there is something useful to say.
    pub help: Option<String>,
}

/// The problems behind a `policy-invalid` error, one per problem of each
/// invalid file; a file that could not be read at all is one problem with
/// no line.
pub fn policy_problems(e: &crate::error::SnapshotError) -> Vec<PolicyProblem> {
    use crate::policy::PolicyError;
    let crate::error::SnapshotError::PolicyInvalid(failure) = e else {
        return Vec::new();
    };
    let crate::error::BootstrapError::Policy(PolicyError::Invalid(invalid)) = failure.error()
    else {
        return vec![PolicyProblem {
            file: String::new(),
            line: None,
            column: None,
            key: None,
            code: "policy::invalid".into(),
            message: error_chain(failure.error()),
            help: None,
        }];
    };
    invalid
        .problems
        .iter()
        .map(|p| {
            let (line, column) = p.line_column();
            PolicyProblem {
                file: invalid.name.clone(),
                line: Some(line),
                column: Some(column),
                key: p.key(),
                code: p.kind.code().to_string(),
                message: p.message.clone(),
                help: p.help.clone(),
            }
        })
        .collect()
}

/// A diagnostic rendered as plain text, spans and help included, without
/// colour or terminal sequences: what a JSON client or a binding shows as it
/// is (`policy-invalid`'s message).
pub fn plain_report(diagnostic: &dyn miette::Diagnostic) -> String {
    let handler = miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::none())
        .with_links(false)
        .with_width(100);
    let mut out = String::new();
    match handler.render_report(&mut out, diagnostic) {
        Ok(()) => out,
        Err(_) => diagnostic.to_string(),
    }
}

/// An error and the errors it wraps, as one line: `outer: inner: …`.
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut message = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        message.push_str(": ");
        message.push_str(&s.to_string());
        source = s.source();
    }
    message
}

/// What `hello` answers: what this server speaks.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Hello {
    /// The protocol version ([`PROTOCOL_VERSION`]).
    pub protocol: u32,
    /// The crate's version (`lisa-context --version`).
    pub version: String,
    /// Every op the server answers.
    pub ops: Vec<String>,
    /// The built-in policies this build knows.
    pub policies: Vec<String>,
    /// Every error code it may answer.
    pub error_codes: Vec<ErrorCode>,
}

impl Hello {
    /// This build's answer.
    pub fn new() -> Self {
        Hello {
            protocol: PROTOCOL_VERSION,
            version: env!("CARGO_PKG_VERSION").to_string(),
            ops: Request::OPS.iter().map(|s| s.to_string()).collect(),
            policies: POLICIES.iter().map(|s| s.to_string()).collect(),
            error_codes: ErrorCode::ALL.to_vec(),
        }
    }
}

impl Default for Hello {
    fn default() -> Self {
        Hello::new()
    }
}

/// What `trust-diff` answers: the pending items of a repository, each with
/// its diff.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TrustDiff {
    /// The repository root.
    #[serde(serialize_with = "crate::vocab::paths::lossy")]
    pub repo_root: PathBuf,
    /// The items waiting for a decision (new, changed or removed).
    pub items: Vec<PendingItem>,
}

/// One pending item and its diff.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct PendingItem {
    /// The item.
    #[serde(flatten)]
    pub item: TrustItem,
    /// The unified diff, approved text to current text (hidden characters
    /// escaped).
    pub diff: String,
}

impl TrustDiff {
    /// The pending items of `status`, each with its diff.
    pub fn of(status: &TrustStatus) -> Self {
        TrustDiff {
            repo_root: status.repo_root.clone(),
            items: status
                .items
                .iter()
                .filter(|i| i.state.is_pending())
                .map(|i| PendingItem {
                    item: i.clone(),
                    diff: i.diff(),
                })
                .collect(),
        }
    }
}
