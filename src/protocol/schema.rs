//! The response envelopes, as the schema describes them (the server
//! writes the `id` first, then the body).

use schemars::{JsonSchema, Schema, generate::SchemaSettings, transform::Transform};
use serde_json::Value;

use super::wire::{Hello, Request, TrustDiff};
use crate::error::ErrorCode;
use crate::loader::SkillFile;
use crate::snapshot::Snapshot;
use crate::trust::TrustStatus;

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
    /// The home root the request is about (absolute), for a server started
    /// with `--homes-under DIR`: a real directory below DIR that the
    /// server's user owns. Absent: the server's own home.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    home: Option<std::path::PathBuf>,
    #[serde(flatten)]
    request: Request,
}

/// What `explain`, `skill list`, `rule show`, `trust status` and `trust diff` print
/// with `--format json`.
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)]
enum CliOutput {
    Explanation(super::Explanation),
    SkillList(super::SkillList),
    RuleText(crate::on_request::RuleText),
    TrustStatus(TrustStatus),
    TrustDiff(TrustDiff),
    Survey(super::Survey),
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
    Rule(RuleResponse),
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

/// The answer to `rule`.
#[derive(JsonSchema)]
#[allow(dead_code)]
struct RuleResponse {
    id: Id,
    rule: crate::on_request::RuleText,
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
    access: crate::access::Access,
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
    /// What to do about it, when the command line would say something
    /// (for `skill-not-found`: the nearest name and those available).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    help: Option<String>,
    /// For `skill-not-found`: the skills available from the cwd, in name
    /// order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    available: Option<Vec<String>>,
    /// For `policy-invalid`: each problem, for a program.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    problems: Option<Vec<super::PolicyProblem>>,
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
        ("cli.schema.json", generate::<CliOutput>(true)),
    ]
}
