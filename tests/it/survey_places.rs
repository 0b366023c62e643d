//! The survey's findings with their places: `hidden-text` with the line
//! and column of each hidden character, `import-failed` at the import's
//! line, `rule-misread` at the key's line; the files no harness reads for
//! what they are (`symlink-escape`, `vcs-metadata`, `not-text`,
//! `too-large`) as findings of their own; each place a SARIF `region` and
//! a GitHub annotation's `line`/`col`; `security-severity` on the
//! security kinds.

use std::fs;
use std::path::Path;

use serde_json::Value;

use crate::survey_scope::{json, survey_in};

/// The problem of `kind` at `rel` (relative to `repo`), of the survey's
/// JSON `v`.
fn problem<'v>(v: &'v Value, repo: &Path, kind: &str, rel: &str) -> &'v Value {
    let path = repo.join(rel);
    v["problems"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["kind"] == kind && p["path"] == path.to_str().unwrap())
        .unwrap_or_else(|| panic!("no {kind} at {rel}: {v}"))
}

/// A repository with a problem of each kind that has a place.
fn placed_repo(repo: &Path) {
    fs::create_dir_all(repo.join(".git")).unwrap();
    fs::write(repo.join("AGENTS.md"), "# Rules\n\nUse tabs.\n").unwrap();
    fs::create_dir_all(repo.join("packages/web")).unwrap();
    // A zero-width space at 2:4, a right-to-left override at 3:1.
    fs::write(
        repo.join("packages/web/AGENTS.md"),
        "ab\n  c\u{200b}d\n\u{202e}xy\n",
    )
    .unwrap();
    // Claude Code imports; the import is on line 3.
    fs::write(repo.join("CLAUDE.md"), "x\n\nsee @missing.md\n").unwrap();
    // Cursor's quoted boolean on line 3 of the rule.
    fs::create_dir_all(repo.join(".cursor/rules")).unwrap();
    fs::write(
        repo.join(".cursor/rules/q.mdc"),
        "---\ndescription: quoted\nalwaysApply: \"true\"\n---\nbody\n",
    )
    .unwrap();
    fs::create_dir_all(repo.join("escape")).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", repo.join("escape/AGENTS.md")).unwrap();
    fs::write(repo.join(".git/AGENTS.md"), "in git\n").unwrap();
    fs::create_dir_all(repo.join("vcs")).unwrap();
    std::os::unix::fs::symlink("../.git/AGENTS.md", repo.join("vcs/AGENTS.md")).unwrap();
    fs::create_dir_all(repo.join("binary")).unwrap();
    fs::write(repo.join("binary/AGENTS.md"), b"a\xff\x00b\n").unwrap();
    fs::create_dir_all(repo.join("big")).unwrap();
    fs::write(repo.join("big/CLAUDE.md"), "z".repeat((4 << 20) + 1)).unwrap();
}

/// Each finding with a place has its line (and column where it is a
/// character's), in the JSON, the SARIF region and the GitHub annotation.
#[test]
fn findings_carry_their_lines_and_columns() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    placed_repo(&repo);
    let home = tmp.path().join("home");
    let cwd = repo.to_str().unwrap();
    let v = json(&survey_in(&home, &["--format", "json", "--cwd", cwd]));

    let hidden = problem(&v, &repo, "hidden-text", "packages/web/AGENTS.md");
    assert_eq!(hidden["line"], 2, "{hidden}");
    assert_eq!(hidden["column"], 4, "{hidden}");
    let message = hidden["message"].as_str().unwrap();
    assert!(message.contains("2:4, 3:1"), "{message}");

    let import = problem(&v, &repo, "import-failed", "CLAUDE.md");
    assert_eq!(import["line"], 3, "{import}");
    assert!(import.get("column").is_none(), "{import}");

    let rule = problem(&v, &repo, "rule-misread", ".cursor/rules/q.mdc");
    assert_eq!(rule["line"], 3, "{rule}");

    let sarif = survey_in(&home, &["--format", "sarif", "--cwd", cwd]);
    let log: Value = serde_json::from_slice(&sarif.stdout).unwrap();
    let results = log["runs"][0]["results"].as_array().unwrap();
    let region = |rule: &str, uri: &str| {
        results
            .iter()
            .find(|r| {
                r["ruleId"] == rule
                    && r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == uri
            })
            .map(|r| r["locations"][0]["physicalLocation"]["region"].clone())
            .unwrap_or_else(|| panic!("{rule} {uri}: {log}"))
    };
    assert_eq!(
        region("hidden-text", "packages/web/AGENTS.md"),
        serde_json::json!({ "startLine": 2, "startColumn": 4 })
    );
    assert_eq!(
        region("import-failed", "CLAUDE.md"),
        serde_json::json!({ "startLine": 3 })
    );
    assert_eq!(
        region("rule-misread", ".cursor/rules/q.mdc"),
        serde_json::json!({ "startLine": 3 })
    );

    let github = survey_in(&home, &["--format", "github", "--cwd", cwd]);
    let text = String::from_utf8(github.stdout).unwrap();
    assert!(
        text.lines().any(|l| l
            .starts_with("::warning file=packages/web/AGENTS.md,line=2,col=4,title=hidden-text::")),
        "{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.starts_with("::warning file=CLAUDE.md,line=3,title=import-failed::")),
        "{text}"
    );
}

/// Files no harness reads for what they are, each a finding of its kind at
/// the file, and the security kinds with a `security-severity`.
#[test]
fn unread_files_are_findings_of_their_kind() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    placed_repo(&repo);
    let home = tmp.path().join("home");
    let cwd = repo.to_str().unwrap();
    let v = json(&survey_in(&home, &["--format", "json", "--cwd", cwd]));
    for (kind, rel) in [
        ("symlink-escape", "escape/AGENTS.md"),
        ("vcs-metadata", "vcs/AGENTS.md"),
        ("not-text", "binary/AGENTS.md"),
        ("too-large", "big/CLAUDE.md"),
    ] {
        let p = problem(&v, &repo, kind, rel);
        assert!(!p["policies"].as_array().unwrap().is_empty(), "{p}");
        let gate = survey_in(&home, &["--deny", kind, "--cwd", cwd]);
        assert_eq!(gate.status.code(), Some(1), "{kind}: {gate:?}");
    }
    let sarif = survey_in(&home, &["--format", "sarif", "--cwd", cwd]);
    let log: Value = serde_json::from_slice(&sarif.stdout).unwrap();
    let rules = log["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .unwrap();
    for kind in ["symlink-escape", "vcs-metadata", "hidden-text"] {
        let rule = rules.iter().find(|r| r["id"] == kind).unwrap();
        assert!(
            rule["properties"]["security-severity"].is_string(),
            "{rule}"
        );
    }
}
