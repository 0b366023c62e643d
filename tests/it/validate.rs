//! Validation of real outputs against the committed JSON Schemas
//! (`schema/`), with a full JSON Schema validator: every response and
//! snapshot the serve tests see goes through here, so a field added to the
//! Rust types without a new schema fails the suite.
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    dead_code,
    reason = "tests read the committed schema files; not every test uses every check"
)]

use std::sync::OnceLock;

use serde_json::Value;

fn load(name: &str) -> jsonschema::Validator {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("schema")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let schema: Value = serde_json::from_str(&text).unwrap();
    jsonschema::validator_for(&schema).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn check(validator: &jsonschema::Validator, what: &str, instance: &Value) {
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{what} does not match its schema:\n{}\n{instance}",
        errors.join("\n")
    );
}

/// Checks a `snapshot --format json` object.
pub fn snapshot(instance: &Value) {
    static V: OnceLock<jsonschema::Validator> = OnceLock::new();
    check(
        V.get_or_init(|| load("snapshot.schema.json")),
        "snapshot",
        instance,
    );
}

/// Checks what `explain --format json` or `skill list --format json`
/// prints.
pub fn cli(instance: &Value) {
    static V: OnceLock<jsonschema::Validator> = OnceLock::new();
    check(
        V.get_or_init(|| load("cli.schema.json")),
        "CLI output",
        instance,
    );
}

/// Checks a SARIF log (`survey --format sarif`) against the SARIF 2.1.0
/// schema vendored in `tests/vendor/sarif/`.
pub fn sarif(instance: &Value) {
    check(sarif_validator(), "SARIF log", instance);
}

/// Whether `instance` is a valid SARIF 2.1.0 log (for the tests that show
/// the check bites).
pub fn is_sarif(instance: &Value) -> bool {
    sarif_validator().is_valid(instance)
}

fn sarif_validator() -> &'static jsonschema::Validator {
    static V: OnceLock<jsonschema::Validator> = OnceLock::new();
    V.get_or_init(|| {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/vendor/sarif/sarif-2.1.0-rtm.5.json");
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        // One pattern (a language tag) is written for ECMA-262's regular
        // expressions, where a `]` with no `[` is a literal; the validator's
        // engine wants it escaped. The same pattern, escaped here.
        let ecma = r#""^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$""#;
        assert!(text.contains(ecma), "the vendored schema changed");
        let text = text.replace(ecma, r#""^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}\\]?$""#);
        let schema: Value = serde_json::from_str(&text).unwrap();
        jsonschema::validator_for(&schema).unwrap_or_else(|e| panic!("SARIF schema: {e}"))
    })
}

/// Checks one response line of `serve`.
pub fn response(instance: &Value) {
    static V: OnceLock<jsonschema::Validator> = OnceLock::new();
    check(
        V.get_or_init(|| load("response.schema.json")),
        "response",
        instance,
    );
}

/// Checks one request line of `serve`.
pub fn request(instance: &Value) {
    static V: OnceLock<jsonschema::Validator> = OnceLock::new();
    check(
        V.get_or_init(|| load("request.schema.json")),
        "request",
        instance,
    );
}

/// Whether a request line is valid against the request schema.
pub fn is_valid_request(instance: &Value) -> bool {
    static V: OnceLock<jsonschema::Validator> = OnceLock::new();
    V.get_or_init(|| load("request.schema.json"))
        .is_valid(instance)
}
