//! A survey as a SARIF 2.1.0 log (`survey --format sarif`), so a CI job can
//! upload what a repository's author should know to code scanning: one
//! rule per kind of problem ([`SURVEY_PROBLEM_KINDS`]), one result per
//! problem, at the file concerned, the harnesses concerned in its
//! properties. Files under the repository root are named relative to it
//! (`%SRCROOT%`), as code scanning wants; others by their `file:` URI.

use std::path::Path;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::{Value, json};

use super::outputs::{SURVEY_PROBLEM_KINDS, Survey, kind_order};

/// What a path segment of a URI may hold as it is (RFC 3986 unreserved
/// characters and `/`); everything else is percent-encoded.
const PATH: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'/');

/// The URI reference of `path`: relative to `root` when below it, else a
/// `file:` URI.
fn location(path: &str, root: &str) -> Value {
    let encode = |p: &str| utf8_percent_encode(p, PATH).to_string();
    match Path::new(path).strip_prefix(root) {
        Ok(rel) if !root.is_empty() => json!({
            "uri": encode(&rel.to_string_lossy()),
            "uriBaseId": "SRCROOT",
        }),
        _ => json!({ "uri": format!("file://{}", encode(path)) }),
    }
}

impl Survey {
    /// This survey as a SARIF 2.1.0 log.
    pub fn sarif(&self) -> Value {
        // The root of the first policy surveyed: where the repository is.
        let root = self
            .policies
            .first()
            .map(|p| p.repo_root.as_str())
            .unwrap_or_default();
        let rules: Vec<Value> = SURVEY_PROBLEM_KINDS
            .iter()
            .map(|(kind, meaning, level)| {
                json!({
                    "id": kind,
                    "shortDescription": { "text": meaning },
                    "defaultConfiguration": { "level": level },
                })
            })
            .collect();
        let results: Vec<Value> = self
            .problems
            .iter()
            .map(|p| {
                let index = kind_order(&p.kind);
                let level = SURVEY_PROBLEM_KINDS
                    .get(index)
                    .map_or("warning", |(_, _, level)| level);
                json!({
                    "ruleId": p.kind,
                    "ruleIndex": index,
                    "level": level,
                    "message": {
                        "text": format!("{} ({}): {}", p.kind, p.policies.join(", "), p.message),
                    },
                    "locations": [{
                        "physicalLocation": { "artifactLocation": location(&p.path, root) },
                    }],
                    "properties": { "policies": p.policies },
                })
            })
            .collect();
        let mut run = json!({
            "tool": {
                "driver": {
                    "name": "lisa-context",
                    "version": env!("CARGO_PKG_VERSION"),
                    "rules": rules,
                },
            },
            "results": results,
            "properties": {
                "cwd": self.cwd,
                "policies": self.policies.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(),
            },
        });
        if !root.is_empty() {
            let mut base = format!("file://{}", utf8_percent_encode(root, PATH));
            if !base.ends_with('/') {
                base.push('/');
            }
            run["originalUriBaseIds"] = json!({ "SRCROOT": { "uri": base } });
        }
        json!({
            "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
            "version": "2.1.0",
            "runs": [run],
        })
    }
}
