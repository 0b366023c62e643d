//! `survey --format sarif` as GitHub code scanning takes it: rules with
//! every field it asks for, made from the one declaration of the kinds
//! (which also makes the manual's table); regions where a problem has a
//! line; fingerprints that hold across runs, machines and moved lines;
//! `security-severity` on the security kinds; no absolute URI; an
//! impostor at its `SKILL.md`. (`.ci/sarif` runs Microsoft's SARIF
//! multitool with the GitHub rules over the same kind of tree.)

use std::fs;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use lisa_context::protocol::SURVEY_PROBLEM_KINDS;

/// A repository with a problem of every kind the survey finds: a file
/// over every budget with a hidden character, a file only Gemini reads, an
/// impostor skill, an import that fails, a misread rule and a rule no path
/// matches. `above` (at most 8) empty lines are put above each problem
/// that has a place in an instruction file, the files keeping their sizes
/// (as many spaces fewer at their ends), so that what the budgets cut is
/// the same.
pub(crate) fn sample_repo(repo: &Path, above: usize) {
    let pad = "\n".repeat(above);
    let tail = " ".repeat(8 - above);
    fs::create_dir_all(repo.join(".git")).unwrap();
    fs::write(
        repo.join("AGENTS.md"),
        format!("{pad}use tabs\u{200b}\n{}{tail}", "x".repeat(40_000)),
    )
    .unwrap();
    fs::write(repo.join("GEMINI.md"), format!("{pad}gemini only{tail}\n")).unwrap();
    fs::write(
        repo.join("CLAUDE.md"),
        format!("{pad}see @missing.md and @../outside.md{tail}\n"),
    )
    .unwrap();
    let impostor = repo.join(".agents/skills/innocent");
    fs::create_dir_all(&impostor).unwrap();
    fs::write(
        impostor.join("SKILL.md"),
        "---\nname: release\ndescription: pretends to be another\n---\nbody\n",
    )
    .unwrap();
    fs::create_dir_all(repo.join(".cursor/rules")).unwrap();
    fs::write(
        repo.join(".cursor/rules/quoted.mdc"),
        "---\nalwaysApply: \"true\"\n---\nquoted\n",
    )
    .unwrap();
    fs::write(
        repo.join(".cursor/rules/zig.mdc"),
        "---\nglobs: \"**/*.zig\"\n---\nzig\n",
    )
    .unwrap();
    // Files no harness reads, in folders of their own (which the
    // repository scope surveys): a link out of the repository, a link
    // into `.git`, bytes that are not text, a file over every policy's
    // `skip-larger-than` (Claude Code's).
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

/// `survey --format <format>` of `repo` with an empty home.
fn survey(repo: &Path, home: &Path, format: &str) -> Value {
    fs::create_dir_all(home).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_lisa-context"))
        .args([
            "--home",
            home.to_str().unwrap(),
            "survey",
            "--format",
            format,
        ])
        .arg("--cwd")
        .arg(repo)
        .env_remove("LISA_HOME")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Every result's fingerprint, by rule and URI.
fn fingerprints(log: &Value) -> Vec<(String, String, String)> {
    let mut all: Vec<_> = log["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["ruleId"].as_str().unwrap().to_string(),
                r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                    .as_str()
                    .unwrap()
                    .to_string(),
                r["partialFingerprints"]["lisaContextProblem/v1"]
                    .as_str()
                    .unwrap()
                    .to_string(),
            )
        })
        .collect();
    all.sort();
    all
}

/// Every rule carries what GitHub asks for, from the declaration: short
/// and full descriptions, help as text and markdown, an absolute
/// `helpUri` at the manual's table of kinds, tags, and a numeric
/// `security-severity` (as text) exactly on the security kinds.
#[test]
fn rules_carry_what_code_scanning_asks_for() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    sample_repo(&repo, 0);
    let log = survey(&repo, &tmp.path().join("home"), "sarif");
    crate::validate::sarif(&log);
    let driver = &log["runs"][0]["tool"]["driver"];
    assert!(
        driver["informationUri"]
            .as_str()
            .unwrap()
            .starts_with("https://")
    );
    let rules = driver["rules"].as_array().unwrap();
    assert_eq!(rules.len(), SURVEY_PROBLEM_KINDS.len());
    for (rule, kind) in rules.iter().zip(&SURVEY_PROBLEM_KINDS) {
        assert_eq!(rule["id"], kind.kind);
        for field in [
            &rule["shortDescription"]["text"],
            &rule["fullDescription"]["text"],
            &rule["help"]["text"],
            &rule["help"]["markdown"],
        ] {
            assert!(field.as_str().is_some_and(|t| t.len() > 10), "{rule}");
        }
        let help = rule["helpUri"].as_str().unwrap();
        assert!(
            help.starts_with("https://") && help.ends_with("/docs/cli.md#survey-problem-kinds"),
            "{help}"
        );
        assert_eq!(rule["defaultConfiguration"]["level"], kind.level);
        let tags: Vec<&str> = rule["properties"]["tags"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap())
            .collect();
        match kind.security_severity {
            Some(s) => {
                let severity = rule["properties"]["security-severity"].as_str().unwrap();
                assert_eq!(severity, s);
                let n: f64 = severity.parse().unwrap();
                assert!((0.0..=10.0).contains(&n));
                assert!(tags.contains(&"security"), "{rule}");
            }
            None => {
                assert!(rule["properties"].get("security-severity").is_none());
                assert!(!tags.contains(&"security"), "{rule}");
            }
        }
    }
    // The secret-adjacent kinds are the security ones.
    for k in ["hidden-text", "rejected-skill", "import-failed"] {
        let kind = SURVEY_PROBLEM_KINDS.iter().find(|d| d.kind == k).unwrap();
        assert!(kind.security_severity.is_some(), "{k}");
    }
}

/// Every kind the sample tree holds is reported; every result has a
/// `region` exactly when its problem has a line (with the line and
/// column); no URI is absolute or names the temp dir or the home; the
/// impostor is reported at its `SKILL.md`.
#[test]
fn results_are_relative_with_regions_where_there_are_lines() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    sample_repo(&repo, 0);
    let home = tmp.path().join("home");
    let log = survey(&repo, &home, "sarif");
    let json = survey(&repo, &home, "json");
    let problems = json["problems"].as_array().unwrap();
    let results = log["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), problems.len());
    let kinds: std::collections::BTreeSet<&str> = results
        .iter()
        .map(|r| r["ruleId"].as_str().unwrap())
        .collect();
    // (`survey-incomplete` is about the walk, not a file: at the root,
    // which SARIF cannot show; tests/it/survey_scope.rs has it.)
    for k in SURVEY_PROBLEM_KINDS
        .iter()
        .filter(|k| k.kind != "survey-incomplete")
    {
        assert!(kinds.contains(k.kind), "{} missing: {kinds:?}", k.kind);
    }
    for (r, p) in results.iter().zip(problems) {
        assert_eq!(r["ruleId"], p["kind"]);
        let physical = &r["locations"][0]["physicalLocation"];
        match p.get("line") {
            Some(line) => {
                assert_eq!(&physical["region"]["startLine"], line, "{r}");
                if let Some(column) = p.get("column") {
                    assert_eq!(&physical["region"]["startColumn"], column, "{r}");
                }
            }
            None => assert!(physical.get("region").is_none(), "{r}"),
        }
        assert_eq!(
            r["partialFingerprints"]["lisaContextProblem/v1"],
            p["fingerprint"]
        );
    }
    // No absolute URI anywhere in the log.
    fn uris<'a>(v: &'a Value, out: &mut Vec<&'a str>) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    match x {
                        Value::String(s) if k == "uri" => out.push(s),
                        _ => uris(x, out),
                    }
                }
            }
            Value::Array(a) => a.iter().for_each(|x| uris(x, out)),
            _ => {}
        }
    }
    let mut all = Vec::new();
    uris(&log, &mut all);
    assert!(!all.is_empty());
    for uri in all {
        assert!(
            !uri.starts_with('/') && !uri.contains(':') && !uri.contains(".."),
            "{uri}"
        );
    }
    let text = log.to_string();
    assert!(!text.contains(tmp.path().to_str().unwrap()), "{text}");
    assert!(!text.contains("file://"), "{text}");
    let impostor = results
        .iter()
        .find(|r| {
            r["ruleId"] == "rejected-skill"
                && r["message"]["text"].as_str().unwrap().contains("impostor")
        })
        .unwrap();
    assert_eq!(
        impostor["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        ".agents/skills/innocent/SKILL.md"
    );
}

/// A problem's fingerprint is the same in two runs, in two copies of the
/// tree at different places (two machines), and after lines are inserted
/// above it; and no two results share one.
#[test]
fn fingerprints_hold_across_runs_places_and_moved_lines() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let first = tmp.path().join("a/repo");
    sample_repo(&first, 0);
    let one = fingerprints(&survey(&first, &home, "sarif"));
    let again = fingerprints(&survey(&first, &home, "sarif"));
    assert_eq!(one, again);
    let elsewhere = tmp.path().join("b/c/repo");
    sample_repo(&elsewhere, 0);
    assert_eq!(one, fingerprints(&survey(&elsewhere, &home, "sarif")));
    let moved = tmp.path().join("moved");
    sample_repo(&moved, 5);
    assert_eq!(one, fingerprints(&survey(&moved, &home, "sarif")));
    let distinct: std::collections::BTreeSet<&str> = one.iter().map(|f| f.2.as_str()).collect();
    assert_eq!(distinct.len(), one.len(), "{one:?}");
}

/// The manual's table of kinds (docs/cli.md, "Survey problem kinds") is
/// the one the declaration makes. `LISA_UPDATE_DOCS=1` rewrites it.
#[test]
fn the_manuals_table_of_kinds_is_the_declared_one() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/cli.md");
    let doc = fs::read_to_string(&path).unwrap();
    let (begin, end) = (
        "<!-- begin survey-problem-kinds -->\n",
        "<!-- end survey-problem-kinds -->",
    );
    let start = doc.find(begin).unwrap() + begin.len();
    let stop = doc.find(end).unwrap();
    let table = lisa_context::protocol::survey_problem_kinds_table();
    if std::env::var_os("LISA_UPDATE_DOCS").is_some() {
        let updated = format!("{}{table}{}", &doc[..start], &doc[stop..]);
        fs::write(&path, updated).unwrap();
        return;
    }
    assert_eq!(
        &doc[start..stop],
        table,
        "docs/cli.md: run `LISA_UPDATE_DOCS=1 cargo test --test it sarif::`"
    );
    assert!(doc.contains("### Survey problem kinds\n"));
}
