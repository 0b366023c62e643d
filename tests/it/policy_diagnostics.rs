//! Policy diagnostics, as a user sees them, and the `policy` command line.
//!
//! Each broken policy is laid as the home layer over the built-in policy; the
//! report is rendered by miette without colour at 80 columns and snapshotted.
//! Besides the snapshot, each test checks every problem's stable code and that
//! its labelled span, sliced from the TOML text, is the value at fault.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use assert_cmd::Command;
use lisa_context::policy::{
    BUILTIN_POLICY, HOME_POLICY_FILE, Layer, MAX_BUDGET_BYTES, Policy, PolicyError, PolicySource,
    Problem,
};
use predicates::prelude::*;
use tempfile::TempDir;

// ---------------------------------------------------------------------------
// Library diagnostics
// ---------------------------------------------------------------------------

const NAME: &str = "context-policy.toml";

/// Lays `text` as the home layer over the built-in policy.
fn load(text: &str) -> Result<Policy, PolicyError> {
    Policy::from_sources(&[
        PolicySource::builtin(),
        PolicySource::from_text(Layer::Home, NAME, text),
    ])
}

fn error(text: &str) -> PolicyError {
    match load(text) {
        Ok(_) => panic!("policy was accepted:\n{text}"),
        Err(e) => e,
    }
}

fn render(err: &PolicyError) -> String {
    let mut out = String::new();
    miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode_nocolor())
        .with_width(80)
        .render_report(&mut out, err)
        .expect("render the report");
    out
}

fn problems(err: &PolicyError) -> &[Problem] {
    match err {
        PolicyError::Invalid(inv) => {
            assert_eq!(inv.name, NAME, "the report names the file");
            &inv.problems
        }
        other => panic!("expected PolicyError::Invalid, got {other:?}"),
    }
}

/// Checks that `text` fails with exactly `expected` problems, in order, each
/// given as (code, the text its main label covers), and returns the rendered
/// report.
fn diagnose(text: &str, expected: &[(&str, &str)]) -> String {
    let err = error(text);
    let found = problems(&err);
    let got: Vec<(&str, &str)> = found
        .iter()
        .map(|p| {
            let slice = text
                .get(p.span.clone())
                .unwrap_or_else(|| panic!("span {:?} is not a slice of the text", p.span));
            (p.kind.code(), slice)
        })
        .collect();
    assert_eq!(got, expected, "problems (code, labelled text) of:\n{text}");
    let report = render(&err);
    assert!(report.contains(NAME), "report names the file:\n{report}");
    for p in found {
        assert!(
            report.contains(p.kind.code()),
            "report shows code {}:\n{report}",
            p.kind.code()
        );
        assert!(
            report.contains(&p.label),
            "report shows label {:?}:\n{report}",
            p.label
        );
    }
    report
}

#[test]
fn builtin_policy_alone_is_valid() {
    let policy = Policy::builtin().expect("the built-in policy loads");
    assert_eq!(policy.instructions.budget_bytes, 32768);
    assert_eq!(
        policy.origin("instructions.budget-bytes"),
        Some(Layer::Builtin)
    );
}

#[test]
fn toml_syntax_error() {
    let text = "version = 1\n[instructions\nbudget-bytes = 5\n";
    let err = error(text);
    let found = problems(&err);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].kind.code(), "policy::syntax");
    // The label sits on the line of the unclosed table header.
    let line_start = text.find("[instructions").unwrap();
    let line_end = line_start + "[instructions".len();
    assert!(
        found[0].span.start >= line_start && found[0].span.start <= line_end,
        "syntax span {:?} is on the broken header line",
        found[0].span
    );
    let report = render(&err);
    assert!(report.contains("TOML syntax error"), "{report}");
    insta::assert_snapshot!("syntax_error", report);
}

#[test]
fn unknown_top_level_key() {
    let text = "version = 1\ncolour = \"red\"\n";
    let report = diagnose(text, &[("policy::unknown-key", "colour")]);
    assert!(report.contains("unknown field `colour`"), "{report}");
    insta::assert_snapshot!("unknown_key_top_level", report);
}

#[test]
fn unknown_key_in_instructions() {
    let text = "version = 1\n\n[instructions]\nbudget-byte = 4096\n";
    let report = diagnose(text, &[("policy::unknown-key", "budget-byte")]);
    assert!(report.contains("budget-byte"), "{report}");
    insta::assert_snapshot!("unknown_key_instructions", report);
}

#[test]
fn wrong_type_budget_string() {
    let text = "version = 1\n\n[instructions]\nbudget-bytes = \"big\"\n";
    let report = diagnose(text, &[("policy::wrong-type", "\"big\"")]);
    insta::assert_snapshot!("wrong_type_budget_bytes", report);
}

#[test]
fn wrong_type_symlinks_word() {
    let text = "version = 1\n\n[trust]\nsymlinks = \"sometimes\"\n";
    let report = diagnose(text, &[("policy::unknown-value", "\"sometimes\"")]);
    assert!(
        report.contains("within-root"),
        "lists the words accepted:\n{report}"
    );
    insta::assert_snapshot!("wrong_type_symlinks", report);
}

#[test]
fn missing_rank_in_skill_source() {
    let text = "version = 1\n\n[[skills.sources]]\nroot = \"repo\"\npath = \"skills\"\n";
    let err = error(text);
    let found = problems(&err);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].kind.code(), "policy::missing-field");
    assert!(found[0].message.contains("rank"), "{}", found[0].message);
    // The label is on the header of the entry that lacks `rank`.
    assert_eq!(&text[found[0].span.clone()], "[[skills.sources]]");
    insta::assert_snapshot!("missing_field_rank", render(&err));
}

#[test]
fn missing_version() {
    let text = "[instructions]\nbudget-bytes = 4096\n";
    let err = error(text);
    let found = problems(&err);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].kind.code(), "policy::missing-field");
    assert!(found[0].message.contains("version"), "{}", found[0].message);
    insta::assert_snapshot!("missing_field_version", render(&err));
}

#[test]
fn unsupported_version() {
    let text = "version = 2\n";
    let report = diagnose(text, &[("policy::unsupported-version", "2")]);
    assert!(
        report.contains("version = 1"),
        "help says what is read:\n{report}"
    );
    insta::assert_snapshot!("unsupported_version", report);
}

#[test]
fn invalid_regex_name_rule() {
    let text = "version = 1\n\n[skills]\nname-rule = '^[a-z'\n";
    let report = diagnose(text, &[("policy::invalid-regex", "'^[a-z'")]);
    insta::assert_snapshot!("invalid_regex", report);
}

#[test]
fn invalid_glob_exclude_levels() {
    let text = "version = 1\n\n[instructions]\nexclude-levels = [\"vendor/**\", \"a/**/[b\"]\n";
    let report = diagnose(text, &[("policy::invalid-glob", "\"a/**/[b\"")]);
    insta::assert_snapshot!("invalid_glob", report);
}

#[test]
fn unknown_template_placeholder() {
    let text = "version = 1\n\n[templates]\nfooter = \"<<<{nonce} end of {paht}>>>\"\n";
    let report = diagnose(text, &[("policy::unknown-placeholder", "paht")]);
    assert!(
        report.contains("{path}"),
        "help lists the accepted names:\n{report}"
    );
    insta::assert_snapshot!("unknown_placeholder", report);
}

#[test]
fn footer_without_nonce() {
    let text = "version = 1\n\n[templates]\nfooter = \"--- end of {path} ---\"\n";
    let report = diagnose(
        text,
        &[("policy::missing-placeholder", "\"--- end of {path} ---\"")],
    );
    insta::assert_snapshot!("missing_nonce_footer", report);
}

#[test]
fn template_syntax_unclosed_brace() {
    let text = "version = 1\n\n[templates]\nheading = \"# Context {oops\"\n";
    let report = diagnose(text, &[("policy::template-syntax", "\"# Context {oops\"")]);
    assert!(report.contains("unclosed"), "{report}");
    insta::assert_snapshot!("template_syntax_unclosed", report);
}

const TWO_SOURCES_RANK_5: &str = r#"version = 1

[[skills.sources]]
root = "home"
path = "skills"
rank = 5

[[skills.sources]]
root = "repo"
path = ".lisa/skills"
rank = 5
"#;

#[test]
fn duplicate_rank() {
    let text = TWO_SOURCES_RANK_5;
    let err = error(text);
    let found = problems(&err);
    assert_eq!(found.len(), 1);
    let p = &found[0];
    assert_eq!(p.kind.code(), "policy::duplicate-rank");
    // The main label is on the second `5`, the related one on the first.
    let second = text.rfind("rank = 5").unwrap() + "rank = ".len();
    let first = text.find("rank = 5").unwrap() + "rank = ".len();
    assert_eq!(p.span, second..second + 1);
    assert_eq!(p.related_spans.len(), 1);
    assert_eq!(p.related_spans[0].0, first..first + 1);
    assert_eq!(&text[p.related_spans[0].0.clone()], "5");
    let report = render(&err);
    assert!(report.contains("first used here"), "{report}");
    insta::assert_snapshot!("duplicate_rank", report);
}

#[test]
fn negative_rank() {
    let text = "version = 1\n\n[[skills.sources]]\nroot = \"home\"\npath = \"skills\"\nrank = -1\n";
    let report = diagnose(text, &[("policy::negative-rank", "-1")]);
    insta::assert_snapshot!("negative_rank", report);
}

#[test]
fn budget_zero() {
    // 0 is a budget (no project file), as Codex's project_doc_max_bytes = 0;
    // below it is out of range.
    let zero = "version = 1\n\n[instructions]\nbudget-bytes = 0\n";
    assert_eq!(
        load(zero)
            .expect("a zero budget is valid")
            .instructions
            .budget_bytes,
        0
    );
    let text = "version = 1\n\n[instructions]\nbudget-bytes = -1\n";
    let report = diagnose(text, &[("policy::out-of-range", "-1")]);
    insta::assert_snapshot!("budget_zero", report);
}

#[test]
fn budget_beyond_maximum() {
    let too_big = MAX_BUDGET_BYTES + 1;
    let text = format!("version = 1\n\n[instructions]\nbudget-bytes = {too_big}\n");
    let report = diagnose(&text, &[("policy::out-of-range", &too_big.to_string())]);
    assert!(report.contains(&MAX_BUDGET_BYTES.to_string()), "{report}");
    // The largest budget accepted is accepted.
    let max = format!("version = 1\n[instructions]\nbudget-bytes = {MAX_BUDGET_BYTES}\n");
    assert_eq!(
        load(&max)
            .expect("the maximum budget is valid")
            .instructions
            .budget_bytes,
        MAX_BUDGET_BYTES
    );
    insta::assert_snapshot!("budget_too_large", report);
}

const MANY_PROBLEMS: &str = r#"version = 3

[instructions]
exclude-levels = ["a/**/[b"]
budget-bytes = -1

[skills]
name-rule = '(['

[[skills.sources]]
root = "home"
path = "skills"
rank = -4

[[skills.sources]]
root = "repo"
path = "a"
rank = 7

[[skills.sources]]
root = "repo"
path = "b"
rank = 7

[templates]
footer = "end of {path} {nonc}"
"#;

#[test]
fn several_semantic_errors_in_one_report() {
    let text = MANY_PROBLEMS;
    let expected = [
        ("policy::unsupported-version", "3"),
        ("policy::invalid-glob", "\"a/**/[b\""),
        ("policy::out-of-range", "-1"),
        ("policy::invalid-regex", "'(['"),
        ("policy::negative-rank", "-4"),
        ("policy::duplicate-rank", "7"),
        ("policy::missing-placeholder", "\"end of {path} {nonc}\""),
        ("policy::unknown-placeholder", "nonc"),
    ];
    let err = error(text);
    match &err {
        PolicyError::Invalid(inv) => assert_eq!(inv.problems.len(), expected.len()),
        other => panic!("expected Invalid, got {other:?}"),
    }
    let report = diagnose(text, &expected);
    assert!(
        report.contains(&format!("{} problems", expected.len())),
        "the headline counts the problems:\n{report}"
    );
    insta::assert_snapshot!("many_problems", report);
}

const SIX_MISTAKES: &str = r#"version = 1
colour = "red"

[instructions]
budget-byte = 4096
max-file-bytes = "big"
budget-order = "nearest-frist"

[skills]
name-max-chars = 999

[[skills.sources]]
root = "repo"
path = "tools/skills"
rank = 1
weight = 2
"#;

/// Structural mistakes (which serde would report one per run) and a semantic
/// one, all in one report, each labelled at the key or value at fault.
#[test]
fn six_different_mistakes_in_one_report() {
    let text = SIX_MISTAKES;
    let expected = [
        ("policy::unknown-key", "colour"),
        ("policy::unknown-key", "budget-byte"),
        ("policy::wrong-type", "\"big\""),
        ("policy::unknown-value", "\"nearest-frist\""),
        ("policy::out-of-range", "999"),
        ("policy::unknown-key", "weight"),
    ];
    let report = diagnose(text, &expected);
    assert!(report.contains("6 problems"), "{report}");
    assert!(
        report.contains("did you mean `budget-bytes`?"),
        "a did-you-mean for the key:\n{report}"
    );
    assert!(
        report.contains("did you mean \"nearest-first\"?"),
        "a did-you-mean for the word:\n{report}"
    );
    insta::assert_snapshot!("six_mistakes", report);
}

/// Missing keys (the version, a source's rank) come with the other
/// structural problems, and an entry at fault does not hide the semantic
/// problems of the entries around it.
#[test]
fn missing_keys_and_wrong_types_in_one_report() {
    let text = r##"[roots]
home = ["$LISA_HOME", 7]

[trust]
symlinks = 1
hidden-text = "revael"

[templates]
heading = "# {oops"

[[skills.sources]]
root = "repo"
path = "a"

[[skills.sources]]
root = "home"
path = "b"
rank = -1
"##;
    let expected = [
        ("policy::missing-field", ""),
        ("policy::wrong-type", "7"),
        ("policy::wrong-type", "1"),
        ("policy::unknown-value", "\"revael\""),
        ("policy::template-syntax", "\"# {oops\""),
        ("policy::missing-field", "[[skills.sources]]"),
        ("policy::negative-rank", "-1"),
    ];
    let report = diagnose(text, &expected);
    assert!(report.contains("did you mean \"reveal\"?"), "{report}");
    assert!(report.contains("missing field `rank`"), "{report}");
    insta::assert_snapshot!("missing_and_wrong_together", report);
}

// ---------------------------------------------------------------------------
// Layering (library)
// ---------------------------------------------------------------------------

fn table(value: &impl serde::Serialize) -> toml::Table {
    let text = toml::to_string(value).expect("serialize to TOML");
    toml::from_str(&text).expect("parse back")
}

#[test]
fn override_of_one_template_keeps_the_others() {
    let builtin = Policy::builtin().unwrap();
    let policy = load("version = 1\n[templates]\nheading = \"# Team context\"\n").unwrap();
    assert_eq!(policy.templates.heading.source(), "# Team context");
    let mut got = table(&policy.templates);
    let mut want = table(&builtin.templates);
    let template_keys: Vec<&str> = Policy::keys()
        .filter(|k| k.starts_with("templates."))
        .collect();
    assert_eq!(got.len(), template_keys.len());
    got.remove("heading");
    want.remove("heading");
    assert_eq!(got, want, "every other template is the built-in one");
    for key in template_keys {
        let expected = if key == "templates.heading" {
            Layer::Home
        } else {
            Layer::Builtin
        };
        assert_eq!(policy.origin(key), Some(expected), "origin of {key}");
    }
}

#[test]
fn override_of_skill_sources_replaces_the_array() {
    let builtin = Policy::builtin().unwrap();
    assert_eq!(builtin.skills.sources.len(), 3);
    let policy = load(
        "version = 1\n[[skills.sources]]\nroot = \"repo\"\npath = \"tools/skills\"\nrank = 1\n",
    )
    .unwrap();
    let sources = &policy.skills.sources;
    assert_eq!(sources.len(), 1, "the array is replaced, not merged");
    assert_eq!(sources[0].path.get_ref(), "tools/skills");
    assert_eq!(*sources[0].rank.get_ref(), 1);
    assert_eq!(policy.origin("skills.sources"), Some(Layer::Home));
    assert_eq!(policy.origin("skills.name-rule"), Some(Layer::Builtin));
}

// ---------------------------------------------------------------------------
// Command line
// ---------------------------------------------------------------------------

const BAD_POLICY: &str = "version = 1\n\n[instructions]\nbudget-bytes = -1\n";
const GOOD_POLICY: &str = "version = 1\n\n[instructions]\nbudget-bytes = 4096\n";

fn cli(home: &Path) -> Command {
    let mut cmd = Command::cargo_bin("lisa-context").expect("the binary is built");
    cmd.env("NO_COLOR", "1")
        .env_remove("LISA_HOME")
        .env("COLUMNS", "80")
        .arg("--home")
        .arg(home)
        .timeout(Duration::from_secs(20));
    cmd
}

fn write(path: &Path, text: &str) {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).unwrap();
    }
    fs::write(path, text).unwrap();
}

fn stdout_of(cmd: &mut Command) -> String {
    let out = cmd.assert().success().get_output().stdout.clone();
    String::from_utf8(out).expect("stdout is UTF-8")
}

#[test]
fn cli_check_bad_file_exits_1_with_diagnostic() {
    let home = TempDir::new().unwrap();
    let dir = TempDir::new().unwrap();
    let bad = dir.path().join("BAD.toml");
    write(&bad, BAD_POLICY);
    cli(home.path())
        .args(["policy", "check"])
        .arg(&bad)
        .assert()
        .code(1)
        .stdout("")
        .stderr(
            predicate::str::contains("BAD.toml")
                .and(predicate::str::contains(
                    "`instructions.budget-bytes` is -1, outside 0..=1048576",
                ))
                .and(predicate::str::contains("out of range"))
                .and(predicate::str::contains("policy::out-of-range"))
                .and(predicate::str::contains("\u{1b}[").not()),
        );
}

#[test]
fn cli_check_good_file_exits_0() {
    let home = TempDir::new().unwrap();
    let dir = TempDir::new().unwrap();
    let good = dir.path().join("GOOD.toml");
    write(&good, GOOD_POLICY);
    cli(home.path())
        .args(["policy", "check"])
        .arg(&good)
        .assert()
        .success()
        .stdout(predicate::str::contains("GOOD.toml").and(predicate::str::contains("ok")));
}

#[test]
fn cli_check_missing_file_exits_1() {
    let home = TempDir::new().unwrap();
    let dir = TempDir::new().unwrap();
    cli(home.path())
        .args(["policy", "check"])
        .arg(dir.path().join("absent.toml"))
        .assert()
        .code(1)
        .stderr(predicate::str::contains("absent.toml"));
}

#[test]
fn cli_check_without_file_checks_effective_policy() {
    // No home policy at all: the built-in policy alone is valid.
    let home = TempDir::new().unwrap();
    cli(home.path())
        .args(["policy", "check"])
        .assert()
        .success();

    // A valid home policy.
    write(&home.path().join(HOME_POLICY_FILE), GOOD_POLICY);
    cli(home.path())
        .args(["policy", "check"])
        .assert()
        .success()
        .stdout(predicate::str::contains(HOME_POLICY_FILE));

    // An invalid home policy.
    write(&home.path().join(HOME_POLICY_FILE), BAD_POLICY);
    cli(home.path())
        .args(["policy", "check"])
        .assert()
        .code(1)
        .stderr(
            predicate::str::contains(HOME_POLICY_FILE)
                .and(predicate::str::contains("out of range")),
        );
}

#[test]
fn cli_check_with_policy_flag_checks_that_layer_too() {
    let home = TempDir::new().unwrap();
    let dir = TempDir::new().unwrap();
    let bad = dir.path().join("BAD.toml");
    write(&bad, BAD_POLICY);
    cli(home.path())
        .arg("--policy")
        .arg(&bad)
        .args(["policy", "check"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("BAD.toml").and(predicate::str::contains("out of range")));
}

fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("run mkfifo");
    assert!(status.success(), "mkfifo {}", path.display());
}

#[test]
fn cli_home_policy_fifo_is_refused_without_hanging() {
    let home = TempDir::new().unwrap();
    mkfifo(&home.path().join(HOME_POLICY_FILE));
    // `timeout` kills a hung process; a kill is not exit code 1.
    cli(home.path())
        .args(["policy", "check"])
        .assert()
        .code(1)
        .stderr(
            predicate::str::contains("not a regular file")
                .and(predicate::str::contains(HOME_POLICY_FILE)),
        );
    // Every command that loads the policy refuses it the same way.
    let repo = TempDir::new().unwrap();
    fs::create_dir(repo.path().join(".git")).unwrap();
    cli(home.path())
        .arg("snapshot")
        .arg("--cwd")
        .arg(repo.path())
        .assert()
        .code(1)
        .stderr(predicate::str::contains("not a regular file"));
}

#[test]
fn cli_policy_file_fifo_is_refused_without_hanging() {
    let home = TempDir::new().unwrap();
    let dir = TempDir::new().unwrap();
    let fifo = dir.path().join("pipe.toml");
    mkfifo(&fifo);
    cli(home.path())
        .args(["policy", "check"])
        .arg(&fifo)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("not a regular file"));
}

/// A dotfiles-style link: `~/.lisa/context-policy.toml` is an absolute
/// symlink to a file kept elsewhere. `PolicySource::read` documents that a
/// symlink to a regular file is followed.
#[test]
fn cli_home_policy_symlink_to_valid_file_works() {
    let home = TempDir::new().unwrap();
    let dotfiles = TempDir::new().unwrap();
    let real = dotfiles.path().join("lisa-policy.toml");
    write(&real, "version = 1\n[instructions]\nbudget-bytes = 1234\n");
    std::os::unix::fs::symlink(&real, home.path().join(HOME_POLICY_FILE)).unwrap();
    cli(home.path())
        .args(["policy", "check"])
        .assert()
        .success();
    let shown = stdout_of(cli(home.path()).args(["policy", "show"]));
    assert!(
        shown.contains("budget-bytes = 1234  # home"),
        "the linked policy is applied:\n{shown}"
    );
}

/// A relative link that stays inside the home root.
#[test]
fn cli_home_policy_relative_symlink_inside_home_works() {
    let home = TempDir::new().unwrap();
    write(
        &home.path().join("policies/team.toml"),
        "version = 1\n[instructions]\nbudget-bytes = 4321\n",
    );
    std::os::unix::fs::symlink("policies/team.toml", home.path().join(HOME_POLICY_FILE)).unwrap();
    cli(home.path())
        .args(["policy", "check"])
        .assert()
        .success();
    let shown = stdout_of(cli(home.path()).args(["policy", "show"]));
    assert!(
        shown.contains("budget-bytes = 4321  # home"),
        "the linked policy is applied:\n{shown}"
    );
}

/// The value lines of one `[table]` in `policy show` output.
fn lines_of_table<'a>(shown: &'a str, name: &str) -> Vec<&'a str> {
    let header = format!("[{name}]");
    shown
        .lines()
        .skip_while(|l| l.trim() != header)
        .skip(1)
        .take_while(|l| !l.trim_start().starts_with('['))
        .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .collect()
}

#[test]
fn cli_policy_show_is_toml_annotated_with_layers() {
    let home = TempDir::new().unwrap();
    write(
        &home.path().join(HOME_POLICY_FILE),
        "version = 1\n[instructions]\nbudget-bytes = 1000\n",
    );
    let shown = stdout_of(cli(home.path()).args(["policy", "show"]));
    let parsed: toml::Table =
        toml::from_str(&shown).unwrap_or_else(|e| panic!("policy show is not TOML: {e}\n{shown}"));
    assert_eq!(
        parsed["instructions"]["budget-bytes"].as_integer(),
        Some(1000)
    );
    assert_eq!(parsed["version"].as_integer(), Some(1));
    let instructions = lines_of_table(&shown, "instructions");
    assert!(!instructions.is_empty(), "{shown}");
    for line in &instructions {
        if line.starts_with("budget-bytes") {
            assert!(line.ends_with("# home"), "{line}");
        } else {
            assert!(line.ends_with("# built-in"), "{line}");
        }
    }
    for table in ["roots", "skills", "trust", "templates"] {
        let lines = lines_of_table(&shown, table);
        assert!(!lines.is_empty(), "[{table}] shown:\n{shown}");
        for line in lines {
            assert!(line.ends_with("# built-in"), "[{table}] {line}");
        }
    }
    // The shown policy, read back as a policy layer, is the same policy.
    let again = load(&shown).expect("policy show output is a valid policy");
    assert_eq!(again.instructions.budget_bytes, 1000);
    assert_eq!(
        again.to_toml(),
        load("version = 1\n[instructions]\nbudget-bytes = 1000\n")
            .unwrap()
            .to_toml()
    );
}

/// A template spanning several lines is printed as a multi-line TOML string;
/// the layer annotation must not end up inside the string.
#[test]
fn cli_policy_show_multiline_template_round_trips() {
    let home = TempDir::new().unwrap();
    let preamble = "First line.\nfooter = not a key, just text\nLast line {nonce}.";
    let layer = format!(
        "version = 1\n[templates]\npreamble = {}\n",
        toml::Value::String(preamble.into())
    );
    write(&home.path().join(HOME_POLICY_FILE), &layer);
    assert_eq!(load(&layer).unwrap().templates.preamble.source(), preamble);
    let shown = stdout_of(cli(home.path()).args(["policy", "show"]));
    let parsed: toml::Table =
        toml::from_str(&shown).unwrap_or_else(|e| panic!("policy show is not TOML: {e}\n{shown}"));
    assert_eq!(
        parsed["templates"]["preamble"].as_str(),
        Some(preamble),
        "policy show changed the value:\n{shown}"
    );
}

#[test]
fn cli_policy_flag_wins_over_home() {
    let home = TempDir::new().unwrap();
    write(
        &home.path().join(HOME_POLICY_FILE),
        "version = 1\n[instructions]\nbudget-bytes = 1000\nskip-blank = false\n",
    );
    let dir = TempDir::new().unwrap();
    let extra = dir.path().join("session.toml");
    write(&extra, "version = 1\n[instructions]\nbudget-bytes = 2000\n");
    let shown = stdout_of(
        cli(home.path())
            .arg("--policy")
            .arg(&extra)
            .args(["policy", "show"]),
    );
    toml::from_str::<toml::Table>(&shown).expect("valid TOML");
    let instructions = lines_of_table(&shown, "instructions");
    let line = |key: &str| {
        *instructions
            .iter()
            .find(|l| l.starts_with(&format!("{key} ")))
            .unwrap_or_else(|| panic!("{key} not shown:\n{shown}"))
    };
    assert_eq!(line("budget-bytes"), "budget-bytes = 2000  # command-line");
    assert_eq!(line("skip-blank"), "skip-blank = false  # home");
    assert!(line("max-file-bytes").ends_with("# built-in"));
    assert!(
        shown.contains("session.toml"),
        "layers are listed:\n{shown}"
    );
}

#[test]
fn cli_policy_show_layering_templates_and_sources() {
    let home = TempDir::new().unwrap();
    write(
        &home.path().join(HOME_POLICY_FILE),
        "version = 1\n[templates]\nheading = \"# Team context\"\n\n[[skills.sources]]\nroot = \"repo\"\npath = \"tools/skills\"\nrank = 1\n",
    );
    let shown = stdout_of(cli(home.path()).args(["policy", "show"]));
    let parsed: toml::Table = toml::from_str(&shown).expect("valid TOML");
    let builtin: toml::Table = toml::from_str(BUILTIN_POLICY).unwrap();

    let templates = parsed["templates"].as_table().unwrap();
    let builtin_templates = builtin["templates"].as_table().unwrap();
    assert_eq!(templates["heading"].as_str(), Some("# Team context"));
    assert_eq!(templates.len(), builtin_templates.len());
    for (key, value) in builtin_templates {
        if key != "heading" {
            assert_eq!(&templates[key], value, "templates.{key} kept");
        }
    }

    let sources = parsed["skills"]["sources"].as_array().unwrap();
    assert_eq!(sources.len(), 1, "the sources array is replaced whole");
    assert_eq!(sources[0]["path"].as_str(), Some("tools/skills"));
    let headers: Vec<&str> = shown
        .lines()
        .filter(|l| l.starts_with("[[skills.sources]]"))
        .collect();
    assert_eq!(headers, ["[[skills.sources]]  # home"]);
}

#[test]
fn cli_help_for_every_subcommand() {
    let home = TempDir::new().unwrap();
    let commands: &[&[&str]] = &[
        &[],
        &["snapshot"],
        &["explain"],
        &["fingerprint"],
        &["policy"],
        &["policy", "check"],
        &["policy", "show"],
        &["skill"],
        &["skill", "show"],
        &["serve"],
    ];
    for args in commands {
        cli(home.path())
            .args(*args)
            .arg("--help")
            .assert()
            .success()
            .stdout(predicate::str::contains("Usage: lisa-context"));
    }
}

// ---------------------------------------------------------------------------
// A repository never supplies policy
// ---------------------------------------------------------------------------

fn make_repo(root: &Path) -> PathBuf {
    fs::create_dir_all(root.join(".git")).unwrap();
    write(&root.join("AGENTS.md"), "Use tabs for indentation.\n");
    write(
        &root.join("src/AGENTS.md"),
        "Source files need a licence header.\n",
    );
    write(
        &root.join(".lisa/skills/deploy/SKILL.md"),
        "---\nname: deploy\ndescription: Ship a release.\n---\nRun the release script.\n",
    );
    root.join("src")
}

#[test]
fn repository_policy_files_are_ignored() {
    let home = TempDir::new().unwrap();
    let base = TempDir::new().unwrap();
    // Rendered paths are absolute and feed the nonce, so "an identical repo
    // without those files" is the same directory before they are written.
    let repo = base.path().join("repo");
    let sub = make_repo(&repo);
    let snapshot = |cwd: &Path| stdout_of(cli(home.path()).arg("snapshot").arg("--cwd").arg(cwd));
    let before_root = snapshot(&repo);
    let before_sub = snapshot(&sub);
    assert!(
        before_root.contains("Use tabs for indentation."),
        "{before_root}"
    );
    assert!(
        before_root.starts_with("# Project context"),
        "{before_root}"
    );
    assert!(before_sub.contains("licence header"), "{before_sub}");

    let policy = "version = 1\n[instructions]\nbudget-bytes = 1\n[templates]\nheading = \"# Owned by the repo\"\n";
    write(&repo.join("context-policy.toml"), policy);
    write(&repo.join(".lisa/context-policy.toml"), policy);
    write(&sub.join("context-policy.toml"), policy);

    let after_root = snapshot(&repo);
    let after_sub = snapshot(&sub);
    assert!(!after_root.contains("Owned by the repo"), "{after_root}");
    assert_eq!(
        before_root, after_root,
        "repository policy files changed the snapshot"
    );
    assert_eq!(
        before_sub, after_sub,
        "repository policy files changed the snapshot"
    );
}

// ---------------------------------------------------------------------------
// The plain form and the digest
// ---------------------------------------------------------------------------

/// `Policy::to_toml` prints the effective values `Policy::digest` hashes,
/// and the digest is part of every snapshot fingerprint: both are pinned for
/// the built-in policy and one override.
#[test]
fn plain_toml_is_pinned() {
    let builtin = Policy::builtin().unwrap();
    insta::assert_snapshot!("plain_toml_builtin", builtin.to_toml());
    let layered = load(
        "version = 1\n[instructions]\nbudget-bytes = 1000\nexclude-levels = [\"vendor/**\"]\n\
         [templates]\npreamble = \"\"\"\nFirst line.\nfooter = not a key\nLast {nonce}.\"\"\"\n\
         [[skills.sources]]\nroot = \"repo\"\npath = \"tools/skills\"\nrank = 1\n",
    )
    .unwrap();
    insta::assert_snapshot!("plain_toml_override", layered.to_toml());
    // The digests too, as today's build computes them.
    insta::assert_snapshot!(
        "plain_toml_digests",
        format!("{:032x}\n{:032x}", builtin.digest(), layered.digest())
    );
}

/// `policy show`, from the library: every value annotated, and the text reads
/// back as the same values even when a template spans lines and holds text
/// that looks like TOML.
#[test]
fn annotated_toml_reads_back_and_names_every_layer() {
    let preamble = "One.\nfooter = \"x\"  # built-in\n'''\n\"\"\"\n[templates]\nTwo {nonce}.";
    let text = format!(
        "version = 1\n[instructions]\nbudget-bytes = 1000\n[templates]\npreamble = {}\n\
         [[skills.sources]]\nroot = \"repo\"\npath = \"tools/skills\"\nrank = 1\n",
        toml::Value::String(preamble.into())
    );
    let policy = load(&text).unwrap();
    let shown = policy.to_annotated_toml();
    let parsed: toml::Table = toml::from_str(&shown).unwrap();
    let plain: toml::Table = toml::from_str(&policy.to_toml()).unwrap();
    assert_eq!(parsed, plain, "the comments changed a value:\n{shown}");
    assert_eq!(parsed["templates"]["preamble"].as_str(), Some(preamble));
    insta::assert_snapshot!("annotated_toml", shown);
}

#[test]
fn unless_found_names_only_home_or_an_earlier_root() {
    let text = "version = 1\n[[roots.named]]\nname = \"a\"\ncandidates = [\"~/a\"]\nunless-found = [\"b\"]\n\
                [[roots.named]]\nname = \"b\"\ncandidates = [\"~/b\"]\nunless-found = [\"home\", \"a\", \"nope\"]\n";
    let err = error(text);
    let found = problems(&err);
    let labelled: Vec<&str> = found
        .iter()
        .map(|p| text.get(p.span.clone()).unwrap_or(""))
        .collect();
    assert_eq!(labelled, ["\"b\"", "\"nope\""], "{}", render(&err));
    assert!(render(&err).contains("not a root read before"));
}
