//! A survey as a SARIF 2.1.0 log (`survey --format sarif`), so a CI job can
//! upload what a repository's author should know to GitHub code scanning:
//! one rule per kind of problem, made from its declaration
//! ([`SURVEY_PROBLEM_KINDS`]: short and full descriptions, help as text
//! and markdown, a link to the manual, a `security-severity` for the
//! security kinds), one result per problem at the file concerned (with a
//! region when the problem has a line), a `partialFingerprints` entry that
//! holds across runs, machines and edits that move the problem (the
//! problem's [fingerprint](super::outputs::SurveyProblem::fingerprint)),
//! and the harnesses concerned in its properties.
//!
//! Files are named relative to the repository root (`%SRCROOT%`), never by
//! an absolute URI: a problem of a file outside the repository (the
//! user's home) is not one code scanning can show, so it is left out of
//! the log and counted in the run's `properties.outsideRepository`.

use std::path::Path;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::{Value, json};

use super::outputs::{SURVEY_PROBLEM_KINDS, SURVEY_PROBLEM_KINDS_ANCHOR, Survey, kind_order};

/// What a path segment of a URI may hold as it is (RFC 3986 unreserved
/// characters and `/`); everything else is percent-encoded.
const PATH: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'/');

/// The `uriBaseId` results are relative to: the repository root.
const SRCROOT: &str = "%SRCROOT%";

/// The name of the fingerprint in each result's `partialFingerprints`.
const FINGERPRINT: &str = "lisaContextProblem/v1";

/// The manual's page on the survey (docs/cli.md) for this version: in the
/// repository when the package names one, else in the published crate's
/// sources on docs.rs.
fn manual_uri() -> String {
    let version = env!("CARGO_PKG_VERSION");
    match option_env!("CARGO_PKG_REPOSITORY").filter(|r| !r.is_empty()) {
        Some(repo) => format!("{}/blob/v{version}/docs/cli.md", repo.trim_end_matches('/')),
        None => format!("https://docs.rs/crate/lisa-context/{version}/source/docs/cli.md"),
    }
}

/// The artifact location of `path`, relative to `root`, when below it.
fn location(path: &str, root: &str) -> Option<Value> {
    if root.is_empty() {
        return None;
    }
    let rel = Path::new(path).strip_prefix(root).ok()?;
    let rel = rel.to_string_lossy();
    if rel.is_empty() {
        return None;
    }
    Some(json!({
        "uri": utf8_percent_encode(&rel, PATH).to_string(),
        "uriBaseId": SRCROOT,
    }))
}

/// `budget-clip` as `BudgetClip`.
fn pascal(kind: &str) -> String {
    kind.split('-')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
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
        let help_uri = format!("{}#{SURVEY_PROBLEM_KINDS_ANCHOR}", manual_uri());
        let rules: Vec<Value> = SURVEY_PROBLEM_KINDS
            .iter()
            .map(|k| {
                let meaning = k.meaning.split_whitespace().collect::<Vec<_>>().join(" ");
                let fix = k.fix.split_whitespace().collect::<Vec<_>>().join(" ");
                let mut properties = json!({
                    "tags": if k.security_severity.is_some() {
                        json!(["security"])
                    } else {
                        json!(["correctness"])
                    },
                });
                if let Some(severity) = k.security_severity {
                    properties["security-severity"] = json!(severity);
                }
                json!({
                    "id": k.kind,
                    // A name for people, which SARIF wants other than the id.
                    "name": pascal(k.kind),
                    "shortDescription": { "text": format!("{}.", k.title) },
                    "fullDescription": { "text": meaning },
                    "help": {
                        "text": format!("{meaning}\n\n{fix}\n\nSee {help_uri}"),
                        "markdown": format!(
                            "**{}** (`{}`)\n\n{meaning}\n\n{fix}\n\nSee [the survey's problem kinds]({help_uri}).",
                            k.title, k.kind
                        ),
                    },
                    "helpUri": help_uri,
                    "defaultConfiguration": { "level": k.level },
                    "properties": properties,
                })
            })
            .collect();
        let mut outside = 0usize;
        let results: Vec<Value> = self
            .problems
            .iter()
            .filter_map(|p| {
                let Some(at) = location(&p.path, root) else {
                    outside += 1;
                    return None;
                };
                let index = kind_order(&p.kind);
                let level = SURVEY_PROBLEM_KINDS
                    .get(index)
                    .map_or("warning", |k| k.level);
                let mut physical = json!({ "artifactLocation": at });
                if let Some(line) = p.line.filter(|l| *l > 0) {
                    physical["region"] = json!({ "startLine": line });
                    if let Some(column) = p.column.filter(|c| *c > 0) {
                        physical["region"]["startColumn"] = json!(column);
                    }
                }
                let mut message = format!("{} ({}): {}", p.kind, p.policies.join(", "), p.message);
                if !message.ends_with('.') {
                    message.push('.');
                }
                Some(json!({
                    "ruleId": p.kind,
                    "ruleIndex": index,
                    "level": level,
                    "message": { "text": message },
                    "locations": [{ "physicalLocation": physical }],
                    "partialFingerprints": { FINGERPRINT: p.fingerprint },
                    "properties": { "policies": p.policies },
                }))
            })
            .collect();
        let run = json!({
            "tool": {
                "driver": {
                    "name": "lisa-context",
                    "version": env!("CARGO_PKG_VERSION"),
                    "semanticVersion": env!("CARGO_PKG_VERSION"),
                    "informationUri": manual_uri(),
                    "rules": rules,
                },
            },
            "results": results,
            "properties": {
                "policies": self.policies.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(),
                "outsideRepository": outside,
            },
        });
        json!({
            "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
            "version": "2.1.0",
            "runs": [run],
        })
    }
}

/// `text` as the message of a GitHub workflow command: `%`, CR and LF
/// percent-encoded.
fn escape_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// `text` as a property of a GitHub workflow command: as
/// [`escape_data`], and `:` and `,` too.
fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

impl Survey {
    /// This survey as GitHub Actions workflow commands (`survey --format
    /// github`): one annotation per problem, `::warning` or `::notice` as
    /// its kind's level, at its file relative to the repository root (an
    /// absolute path for a file outside it) with its line and column when
    /// known, titled with its kind; `:` and `,` in properties and `%`, CR
    /// and LF anywhere percent-encoded as GitHub's runner expects.
    pub fn github_annotations(&self) -> String {
        let root = self
            .policies
            .first()
            .map(|p| p.repo_root.as_str())
            .unwrap_or_default();
        let mut out = String::new();
        for p in &self.problems {
            let level = SURVEY_PROBLEM_KINDS
                .get(kind_order(&p.kind))
                .map_or("warning", |k| k.level);
            let command = if level == "note" { "notice" } else { "warning" };
            let file = Path::new(&p.path)
                .strip_prefix(root)
                .ok()
                .filter(|r| !root.is_empty() && !r.as_os_str().is_empty())
                .map_or_else(|| p.path.clone(), |r| r.to_string_lossy().into_owned());
            let mut props = format!("file={}", escape_property(&file));
            if let Some(line) = p.line.filter(|l| *l > 0) {
                props.push_str(&format!(",line={line}"));
                if let Some(col) = p.column.filter(|c| *c > 0) {
                    props.push_str(&format!(",col={col}"));
                }
            }
            props.push_str(&format!(",title={}", escape_property(&p.kind)));
            let message = format!("{} ({})", p.message, p.policies.join(", "));
            out.push_str(&format!("::{command} {props}::{}\n", escape_data(&message)));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::outputs::SurveyProblem;

    fn problem(kind: &str, path: &str, line: Option<u64>, column: Option<u64>) -> SurveyProblem {
        SurveyProblem {
            kind: kind.into(),
            policies: vec!["lisa".into()],
            path: path.into(),
            message: "m".into(),
            line,
            column,
            fingerprint: "f".into(),
        }
    }

    /// A problem with a line gets a region (with its column when known);
    /// one without gets none; a file outside the root is left out, and no
    /// URI is absolute.
    #[test]
    fn regions_and_relative_uris() {
        let survey = Survey {
            cwd: "/r".into(),
            policies: vec![crate::protocol::outputs::SurveyedPolicy {
                name: "lisa".into(),
                repo_root: "/r".into(),
                instruction_files: vec![],
                skills: vec![],
                budget_used: 0,
                budget_limit: 0,
                prompt_bytes: 0,
                rules: vec![],
            }],
            folders: vec!["/r".into()],
            problems: vec![
                problem("hidden-text", "/r/AGENTS.md", Some(3), Some(7)),
                problem("import-failed", "/r/a b/CLAUDE.md", Some(2), None),
                problem("budget-clip", "/r/AGENTS.md", None, None),
                problem("budget-clip", "/home/u/.claude/CLAUDE.md", None, None),
            ],
        };
        let log = survey.sarif();
        let results = log["runs"][0]["results"].as_array().unwrap();
        assert_eq!(results.len(), 3);
        let region = |i: usize| &results[i]["locations"][0]["physicalLocation"]["region"];
        assert_eq!(region(0), &json!({ "startLine": 3, "startColumn": 7 }));
        assert_eq!(region(1), &json!({ "startLine": 2 }));
        assert!(region(2).is_null());
        let at = &results[1]["locations"][0]["physicalLocation"]["artifactLocation"];
        assert_eq!(
            at,
            &json!({ "uri": "a%20b/CLAUDE.md", "uriBaseId": "%SRCROOT%" })
        );
        assert_eq!(log["runs"][0]["properties"]["outsideRepository"], 1);
        assert!(!log.to_string().contains("file://"));
    }

    /// GitHub's escapes: `%`, CR and LF in a message; `:` and `,` too in a
    /// property.
    #[test]
    fn github_escapes() {
        assert_eq!(escape_data("50% a\r\nb: c, d"), "50%25 a%0D%0Ab: c, d");
        assert_eq!(escape_property("a,b:c%\n"), "a%2Cb%3Ac%25%0A");
    }
}
