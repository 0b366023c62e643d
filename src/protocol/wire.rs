//! The wire vocabulary: requests, `hello`, error codes, trust views.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::error::SnapshotError;
use crate::review::TrustError;
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
            | Request::TrustStatus { cwd, .. }
            | Request::TrustDiff { cwd, .. }
            | Request::Access { cwd, .. } => Some(cwd),
        }
    }
}

/// Why a request failed: the `error.code` of a response, and the `code` of
/// the Node binding's exceptions. The words are stable.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, strum::IntoStaticStr, strum::VariantArray,
)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
#[non_exhaustive]
pub enum ErrorCode {
    /// Not a JSON object, no `id`, a missing or mistyped field.
    BadRequest,
    /// An `op` the server does not know.
    UnknownOp,
    /// A request line over 1 MiB.
    LineTooLong,
    /// The cwd does not exist, is not a directory, or a root cannot be
    /// opened.
    BadCwd,
    /// The cwd is not an absolute path.
    RelativeCwd,
    /// The root given does not contain the cwd.
    RootOutside,
    /// A skill name that fails the policy's name rule.
    InvalidSkillName,
    /// No skill of that name wins for the cwd.
    SkillNotFound,
    /// The winning skill's file could not be read.
    SkillUnreadable,
    /// The policy in force is invalid (the message is the diagnostic).
    PolicyInvalid,
    /// The process ran out of file descriptors; the next call may succeed.
    ResourceExhausted,
    /// The trust store cannot be used.
    TrustStoreInvalid,
    /// No home root to keep the trust store in.
    TrustUnavailable,
    /// The home root given to a loader is not a directory (the Node
    /// binding's constructor; `serve` exits instead).
    BadHome,
    /// An accessed path outside the session's repository root.
    AccessOutsideRoot,
    /// A shipped policy name that no policy has (the Node binding's
    /// constructor; `serve` exits instead).
    UnknownPolicy,
}

impl ErrorCode {
    /// Every code, in declaration order.
    pub const ALL: &'static [ErrorCode] = <ErrorCode as strum::VariantArray>::VARIANTS;

    /// The kebab-case word.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// The code of a snapshot error.
    pub fn of(e: &SnapshotError) -> Self {
        match e {
            SnapshotError::InvalidSkillName(_) => ErrorCode::InvalidSkillName,
            SnapshotError::SkillNotFound { .. } => ErrorCode::SkillNotFound,
            SnapshotError::SkillUnreadable { .. } => ErrorCode::SkillUnreadable,
            SnapshotError::RootDoesNotContainCwd { .. } => ErrorCode::RootOutside,
            SnapshotError::RelativeCwd(_) => ErrorCode::RelativeCwd,
            SnapshotError::ResourceExhausted { .. } => ErrorCode::ResourceExhausted,
            SnapshotError::PolicyInvalid(_) => ErrorCode::PolicyInvalid,
            SnapshotError::AccessOutsideRoot { .. } => ErrorCode::AccessOutsideRoot,
            _ => ErrorCode::BadCwd,
        }
    }

    /// The code of a trust error.
    pub fn of_trust(e: &TrustError) -> Self {
        match e {
            TrustError::Snapshot(e) => ErrorCode::of(e),
            TrustError::Store { .. } => ErrorCode::TrustStoreInvalid,
            _ => ErrorCode::TrustUnavailable,
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
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
