//! The vocabulary of `lisa-context serve` and of the Node binding: the
//! requests, the protocol version, what `hello` answers, and the error
//! codes. With the `schema` feature, [`schemas`] gives the JSON Schemas of
//! the snapshot object, of every request and of every response, generated
//! from these types and the snapshot's records (the repository commits them
//! under `schema/`, and a test keeps them equal).
//!
//! Compatibility: within one [`PROTOCOL_VERSION`], requests and responses
//! only gain fields and ops; a field is never renamed, removed or given
//! another type, and an error code is never renamed. A server ignores
//! request fields it does not know, and a client must ignore response
//! fields it does not know.

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

#[cfg(feature = "schema")]
pub use schema::schemas;

#[cfg(feature = "schema")]
mod schema {
    //! The response envelopes, as the schema describes them (the server
    //! writes the `id` first, then the body).

    use schemars::{JsonSchema, Schema, generate::SchemaSettings, transform::Transform};
    use serde_json::Value;

    use super::{ErrorCode, Hello, Request, TrustDiff};
    use crate::{SkillFile, Snapshot, TrustStatus};

    /// A request's `id`: any JSON value, echoed exactly as written.
    #[derive(JsonSchema)]
    #[schemars(transparent)]
    #[schemars(extend("type" = ["null", "boolean", "number", "string", "array", "object"]))]
    #[allow(dead_code)]
    struct Id(Value);

    /// One request line.
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct RequestLine {
        /// Any JSON value; the response carries it back byte for byte.
        id: Id,
        #[serde(flatten)]
        request: Request,
    }

    /// One response line: an answer, or an error.
    #[derive(JsonSchema)]
    #[serde(untagged)]
    #[allow(dead_code)]
    enum Response {
        Hello(HelloResponse),
        Snapshot(SnapshotResponse),
        Fingerprint(FingerprintResponse),
        Unchanged(UnchangedResponse),
        Changed(ChangedResponse),
        Skill(SkillResponse),
        Trust(TrustResponse),
        TrustDiff(TrustDiffResponse),
        Access(AccessResponse),
        Error(ErrorResponse),
    }

    /// The answer to `hello`.
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct HelloResponse {
        id: Id,
        hello: Hello,
    }

    /// The answer to `snapshot`.
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct SnapshotResponse {
        id: Id,
        snapshot: Snapshot,
    }

    /// The answer to `fingerprint`.
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct FingerprintResponse {
        id: Id,
        /// 32 hex digits.
        fingerprint: String,
    }

    /// The answer to `refresh` when the fingerprint still holds.
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct UnchangedResponse {
        id: Id,
        #[schemars(extend("const" = false))]
        changed: bool,
    }

    /// The answer to `refresh` when the fingerprint moved.
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct ChangedResponse {
        id: Id,
        #[schemars(extend("const" = true))]
        changed: bool,
        snapshot: Snapshot,
    }

    /// The answer to `skill`.
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct SkillResponse {
        id: Id,
        skill: SkillFile,
    }

    /// The answer to `trust-status`.
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct TrustResponse {
        id: Id,
        trust: TrustStatus,
    }

    /// The answer to `trust-diff`.
    #[derive(JsonSchema)]
    #[serde(rename_all = "camelCase")]
    #[allow(dead_code)]
    struct TrustDiffResponse {
        id: Id,
        trust_diff: TrustDiff,
    }

    /// The answer to `access`.
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct AccessResponse {
        id: Id,
        access: crate::Access,
    }

    /// A request that failed.
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct ErrorResponse {
        id: Id,
        error: ErrorBody,
    }

    /// What went wrong.
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct ErrorBody {
        code: ErrorCode,
        /// For a person (for `policy-invalid`, the diagnostic as `policy
        /// check` prints it).
        message: String,
    }

    /// Every object the server writes has exactly the properties the
    /// schema lists (new ones come with a new schema), so a test catches a
    /// field the schema does not know. Requests stay open: unknown fields
    /// are ignored.
    #[derive(Clone)]
    struct Closed;

    impl Transform for Closed {
        fn transform(&mut self, schema: &mut Schema) {
            schemars::transform::transform_subschemas(self, schema);
            if let Some(obj) = schema.as_object_mut()
                && obj.contains_key("properties")
                && !obj.contains_key("additionalProperties")
            {
                obj.insert("additionalProperties".into(), Value::Bool(false));
            }
        }
    }

    /// The schema of `T`: as the server writes it (`output`: closed
    /// objects, fields skipped when empty not required), or as it reads it.
    fn generate<T: JsonSchema>(output: bool) -> Value {
        let mut settings = SchemaSettings::draft2020_12();
        if output {
            settings = settings.for_serialize().with_transform(Closed);
        }
        settings
            .into_generator()
            .into_root_schema_for::<T>()
            .to_value()
    }

    /// The JSON Schemas, each with its file name under `schema/`: the
    /// snapshot object (`snapshot --format json`), a request line of
    /// `serve`, and a response line.
    pub fn schemas() -> Vec<(&'static str, Value)> {
        vec![
            ("snapshot.schema.json", generate::<Snapshot>(true)),
            ("request.schema.json", generate::<RequestLine>(false)),
            ("response.schema.json", generate::<Response>(true)),
        ]
    }
}
