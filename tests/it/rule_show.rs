//! Rules served by name (`Loader::rule`, `rule show`, serve's `rule` op): a
//! `listed` rule the agent asks for, a `manual` one the user names. Real
//! trees; the read must hold every guarantee a chain file's read holds.

use std::fs;
use std::io::Write as _;
use std::os::unix::fs::symlink;
use std::process::{Command, Stdio};

use lisa_context::Loader;
use lisa_context::snapshot::{Activation, Reason};
use serde_json::{Value, json};

use crate::support::World;
use crate::validate;

/// Cursor's reading, laid over the built-in policy, with a home rules
/// folder and `@path` imports.
const POLICY: &str = r#"version = 1
[instructions]
home-files = ["rules/*.mdc"]
level-files = ["AGENTS.md", ".cursor/rules/*.mdc"]
on-access = true
[rules]
files = ["rules/*.mdc", ".cursor/rules/*.mdc"]
always-key = "alwaysApply"
globs-keys = ["globs"]
"#;

fn loader(w: &World, extra: &str) -> Loader {
    let file = w.path("policy.toml");
    fs::write(&file, format!("{POLICY}{extra}")).unwrap();
    Loader::builder()
        .home(&w.home)
        .home_policy(false)
        .policy_file(&file)
        .build()
        .unwrap()
}

fn listed(w: &World, rel: &str, description: &str, body: &str) {
    w.write(
        rel,
        &format!("---\ndescription: {description}\nalwaysApply: false\n---\n{body}\n"),
    );
}

#[test]
fn a_listed_rule_is_served_as_its_body_framed_with_the_nonce() {
    let w = World::new();
    listed(
        &w,
        "repo/.cursor/rules/db.mdc",
        "Database conventions",
        "DB-BODY use migrations.\u{200b}",
    );
    w.write(
        "repo/.cursor/rules/manual.mdc",
        "---\nalwaysApply: false\n---\nMANUAL-BODY\n",
    );
    let l = loader(&w, "");
    let snap = l.snapshot(&w.repo).unwrap();
    assert!(!snap.prompt.contains("DB-BODY"), "{}", snap.prompt);
    let rule = l.rule(&w.repo, "db").unwrap();
    assert_eq!(rule.mode, Activation::Listed);
    assert!(rule.content.starts_with("DB-BODY use migrations."));
    assert!(!rule.content.contains("description:"), "{}", rule.content);
    assert!(
        !rule.content.contains('\u{200b}'),
        "hidden text is revealed"
    );
    assert_eq!(rule.hidden_text.characters, 1);
    assert!(
        rule.prompt.starts_with(&format!("<<<{}", snap.nonce)),
        "{}",
        rule.prompt
    );
    assert!(rule.prompt.contains("DB-BODY"));
    assert!(rule.shadowed.is_empty());
    let manual = l.rule(&w.repo, "manual").unwrap();
    assert_eq!(manual.mode, Activation::Manual);
    assert_eq!(manual.content, "MANUAL-BODY");
}

#[test]
fn the_home_rule_wins_its_name_then_the_deepest_folder() {
    let w = World::new();
    listed(
        &w,
        "repo/.cursor/rules/style.mdc",
        "root style",
        "ROOT-STYLE",
    );
    listed(
        &w,
        "repo/pkg/.cursor/rules/style.mdc",
        "pkg style",
        "PKG-STYLE",
    );
    let cwd = w.mkdir("repo/pkg");
    let l = loader(&w, "");
    let rule = l.rule(&cwd, "style").unwrap();
    assert_eq!(rule.content, "PKG-STYLE");
    assert_eq!(rule.shadowed, vec![w.path("repo/.cursor/rules/style.mdc")]);

    // The user's own rule of that name: no repository answers in its place.
    listed(&w, "home/rules/style.mdc", "my style", "HOME-STYLE");
    let l = loader(&w, "");
    let rule = l.rule(&cwd, "style").unwrap();
    assert_eq!(rule.content, "HOME-STYLE");
    assert_eq!(rule.shadowed.len(), 2);
}

#[test]
fn an_unknown_name_says_what_is_there() {
    let w = World::new();
    listed(&w, "repo/.cursor/rules/review.mdc", "review", "R");
    let l = loader(&w, "");
    match l.rule(&w.repo, "reveiw") {
        Err(e @ lisa_context::RuleError::NotFound { .. }) => {
            let help = miette::Diagnostic::help(&e).unwrap().to_string();
            assert!(help.contains("did you mean `review`"), "{help}");
            assert_eq!(e.wire_code().as_str(), "rule-not-found");
        }
        other => panic!("{other:?}"),
    }
    // A huge name is compared, not echoed whole.
    let huge = "x".repeat(1 << 20);
    match l.rule(&w.repo, &huge) {
        Err(lisa_context::RuleError::NotFound { name, .. }) => assert!(name.len() < 300),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_rule_swapped_for_a_link_out_of_the_root_is_not_read() {
    let w = World::new();
    let secret = w.write("outside/secret.mdc", "SECRET-KEY-MATERIAL\n");
    listed(&w, "repo/.cursor/rules/db.mdc", "db", "DB-BODY");
    let l = loader(&w, "");
    assert_eq!(l.rule(&w.repo, "db").unwrap().content, "DB-BODY");
    // Swapped behind the loader's back, between the listing and the ask.
    let rule = w.path("repo/.cursor/rules/db.mdc");
    fs::remove_file(&rule).unwrap();
    symlink(&secret, &rule).unwrap();
    match l.rule(&w.repo, "db") {
        Ok(r) => panic!("served {:?}", r.content),
        Err(e) => assert!(!format!("{e:?}").contains("SECRET"), "{e:?}"),
    }
    // A FIFO in its place: refused, without a hang.
    fs::remove_file(&rule).unwrap();
    let made = Command::new("mkfifo").arg(&rule).status().unwrap();
    assert!(made.success());
    assert!(l.rule(&w.repo, "db").is_err());
}

#[test]
fn the_per_file_cap_holds_and_says_so() {
    let w = World::new();
    let body = "word ".repeat(4000);
    listed(&w, "repo/.cursor/rules/big.mdc", "big", &body);
    let file = w.path("cap.toml");
    fs::write(
        &file,
        POLICY.replace(
            "on-access = true",
            "on-access = true\nmax-file-bytes = 1024",
        ),
    )
    .unwrap();
    let l = Loader::builder()
        .home(&w.home)
        .home_policy(false)
        .policy_file(&file)
        .build()
        .unwrap();
    let rule = l.rule(&w.repo, "big").unwrap();
    assert!(rule.truncated);
    assert!(rule.content.len() <= 1024, "{}", rule.content.len());
}

/// Under `trust.project = "pinned"`, a rule is served only as approved: an
/// unapproved one is not even listed, and an edit after approval takes it
/// out until it is approved again.
#[test]
fn pinned_rules_are_served_only_as_approved() {
    let w = World::new();
    fs::write(
        w.home.join("context-policy.toml"),
        POLICY.replace(
            "version = 1\n",
            "version = 1\n[trust]\nproject = \"pinned\"\n",
        ),
    )
    .unwrap();
    listed(&w, "repo/.cursor/rules/db.mdc", "db", "APPROVED-BODY");
    let run = |args: &[&str]| {
        let out = w
            .command()
            .args(args)
            .arg("--cwd")
            .arg(&w.repo)
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, _, err) = run(&["rule", "show", "db"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("rule::not-found"), "{err}");
    let (code, _, err) = run(&["trust", "approve", "--all"]);
    assert_eq!(code, Some(0), "{err}");
    let (code, out, err) = run(&["rule", "show", "db"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out, "APPROVED-BODY\n");
    listed(&w, "repo/.cursor/rules/db.mdc", "db", "EDITED-BODY");
    let (code, out, err) = run(&["rule", "show", "db"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(!out.contains("EDITED-BODY"), "{out}");
    // The JSON form validates against the CLI schema.
    let (_, _, _) = run(&["trust", "approve", "--all"]);
    let (code, out, err) = run(&["rule", "show", "db", "--format", "json"]);
    assert_eq!(code, Some(0), "{err}");
    let json: Value = serde_json::from_str(&out).unwrap();
    validate::cli(&json);
    assert_eq!(json["content"], "EDITED-BODY");
    assert_eq!(json["mode"], "listed");
}

#[test]
fn serve_answers_the_rule_op_and_its_errors_by_the_schema() {
    let w = World::new();
    fs::write(w.home.join("context-policy.toml"), POLICY).unwrap();
    listed(&w, "repo/.cursor/rules/db.mdc", "db", "SERVED-BODY");
    w.write("repo/AGENTS.md", "chain file\n");
    let cwd = w.repo.to_str().unwrap();
    let lines = [
        json!({ "id": 1, "op": "rule", "cwd": cwd, "name": "db" }),
        json!({ "id": 2, "op": "rule", "cwd": cwd, "name": "nope" }),
        json!({ "id": 3, "op": "rule", "cwd": cwd }),
        json!({ "id": 4, "op": "snapshot", "cwd": cwd }),
    ];
    let mut child = Command::new(env!("CARGO_BIN_EXE_lisa-context"))
        .arg("--home")
        .arg(&w.home)
        .arg("serve")
        .env_remove("LISA_HOME")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for l in &lines {
        writeln!(stdin, "{l}").unwrap();
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let responses: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for r in &responses {
        validate::response(r);
    }
    let by = |id: i64| {
        responses
            .iter()
            .find(|r| r["id"] == id)
            .unwrap_or_else(|| panic!("no response {id}: {responses:?}"))
    };
    assert_eq!(by(1)["rule"]["content"], "SERVED-BODY");
    assert_eq!(by(1)["rule"]["name"], "db");
    // Framed as more of the section the session already has: the same
    // nonce as the snapshot's prompt.
    let framed = by(1)["rule"]["prompt"].as_str().unwrap();
    let nonce = framed
        .strip_prefix("<<<")
        .and_then(|r| r.split(' ').next())
        .unwrap();
    assert_eq!(nonce.len(), 16, "{framed}");
    let prompt = by(4)["snapshot"]["prompt"].as_str().unwrap();
    assert!(prompt.contains(&format!("<<<{nonce} ")), "{prompt}");
    assert_eq!(by(2)["error"]["code"], "rule-not-found");
    assert_eq!(by(3)["error"]["code"], "bad-request");
}

#[test]
fn a_blank_rule_is_refused_with_its_reason() {
    let w = World::new();
    w.write(
        "repo/.cursor/rules/empty.mdc",
        "---\ndescription: nothing here\n---\n\n",
    );
    let l = loader(&w, "");
    match l.rule(&w.repo, "empty") {
        Err(lisa_context::RuleError::Unreadable { reason, .. }) => {
            assert_eq!(reason, Reason::Empty)
        }
        other => panic!("{other:?}"),
    }
}
