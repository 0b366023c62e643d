//! The response envelopes, as the schema describes them (the server
//! writes the `id` first, then the body).

use schemars::{JsonSchema, Schema, generate::SchemaSettings, transform::Transform};
use serde_json::Value;

use super::answer::{Answer, ErrorReport};
use super::wire::{Request, TrustDiff};
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

/// The names the response schema gives the answers, in [`Answer`]'s
/// variant order, and the error's: the `$defs` a client's generated types
/// are named from.
const RESPONSE_NAMES: [&str; 12] = [
    "HelloResponse",
    "SnapshotResponse",
    "FingerprintResponse",
    "UnchangedResponse",
    "ChangedResponse",
    "SkillResponse",
    "RuleResponse",
    "TrustResponse",
    "TrustDiffResponse",
    "AccessResponse",
    "SkillManifestsResponse",
    "SkillResourceResponse",
];

/// The schema of a response line, derived from the types `serve` writes:
/// each [`Answer`] variant with the request's `id` beside its fields, or
/// `{id, error}` with the [`ErrorReport`]. No type mirrors them: a variant
/// added to [`Answer`] without a name here fails the schema test.
fn response_schema() -> Value {
    let mut answer = generate::<Answer>(true);
    let id = generate::<Id>(true);
    let mut defs = answer
        .get_mut("$defs")
        .and_then(Value::as_object_mut)
        .map(std::mem::take)
        .unwrap_or_default();
    let error = generate::<ErrorReport>(true);
    if let Some(more) = error.get("$defs").and_then(Value::as_object) {
        defs.extend(more.clone());
    }
    let mut error_body = error;
    if let Some(obj) = error_body.as_object_mut() {
        obj.remove("$defs");
        obj.remove("$schema");
        obj.remove("title");
        if let Some(Value::Object(props)) = obj.get_mut("properties") {
            for field in props.values_mut() {
                lone_ref(field);
            }
        }
    }
    defs.insert("ErrorBody".into(), error_body);
    defs.insert("Id".into(), strip_root(id));
    let branches = answer
        .get_mut("anyOf")
        .and_then(Value::as_array_mut)
        .map(std::mem::take)
        .unwrap_or_default();
    assert_eq!(
        branches.len(),
        RESPONSE_NAMES.len(),
        "every Answer variant has a name in RESPONSE_NAMES"
    );
    let with_id = |mut branch: Value| {
        if let Some(obj) = branch.as_object_mut() {
            let mut props = serde_json::Map::new();
            props.insert("id".into(), serde_json::json!({ "$ref": "#/$defs/Id" }));
            if let Some(Value::Object(rest)) = obj.remove("properties") {
                props.extend(rest.into_iter().map(|(name, mut field)| {
                    lone_ref(&mut field);
                    (name, field)
                }));
            }
            obj.insert("properties".into(), Value::Object(props));
            let mut required = vec![Value::from("id")];
            if let Some(Value::Array(rest)) = obj.remove("required") {
                required.extend(rest);
            }
            obj.insert("required".into(), Value::Array(required));
        }
        branch
    };
    let mut refs = Vec::new();
    for (name, branch) in RESPONSE_NAMES.iter().zip(branches) {
        defs.insert((*name).into(), with_id(branch));
        refs.push(serde_json::json!({ "$ref": format!("#/$defs/{name}") }));
    }
    defs.insert(
        "ErrorResponse".into(),
        with_id(serde_json::json!({
            "description": "A request that failed.",
            "type": "object",
            "properties": { "error": { "$ref": "#/$defs/ErrorBody" } },
            "required": ["error"],
            "additionalProperties": false,
        })),
    );
    refs.push(serde_json::json!({ "$ref": "#/$defs/ErrorResponse" }));
    serde_json::json!({
        "$schema": answer.get("$schema").cloned().unwrap_or(Value::Null),
        "title": "Response",
        "description": "One response line: an answer, or an error.",
        "anyOf": refs,
        "$defs": defs,
    })
}

/// A `$ref` stands alone: a description beside it makes type generators
/// take the field for a type of its own (`Snapshot1`).
fn lone_ref(field: &mut Value) {
    if let Some(f) = field.as_object_mut()
        && f.contains_key("$ref")
    {
        f.remove("description");
    }
}

/// A generated root schema as a definition (no `$schema`, `title`).
fn strip_root(mut schema: Value) -> Value {
    if let Some(obj) = schema.as_object_mut() {
        obj.remove("$schema");
        obj.remove("title");
    }
    schema
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
        ("response.schema.json", response_schema()),
        ("cli.schema.json", generate::<CliOutput>(true)),
    ]
}
