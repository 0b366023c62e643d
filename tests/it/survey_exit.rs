//! `survey` as a CI gate: exit 0 when nothing at or above the fail level
//! was found (notes such as `read-by-some` never fail `--deny warnings`),
//! 1 when findings fail the gate, 2 when the survey could not be made (a
//! tool error) or the command line is wrong.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

fn survey(home: &Path, args: &[&str]) -> Output {
    fs::create_dir_all(home).unwrap();
    Command::new(env!("CARGO_BIN_EXE_lisa-context"))
        .arg("--home")
        .arg(home)
        .arg("survey")
        .args(args)
        .env_remove("LISA_HOME")
        .output()
        .unwrap()
}

/// A repository holding only `AGENTS.md` has only notes (Gemini CLI and
/// Claude Code read other files): `--deny warnings` passes it.
#[test]
fn notes_do_not_fail_the_gate() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    fs::create_dir_all(repo.join(".git")).unwrap();
    fs::write(repo.join("AGENTS.md"), "# Rules\n\nUse tabs.\n").unwrap();
    let home = tmp.path().join("home");
    let json = survey(
        &home,
        &["--format", "json", "--cwd", repo.to_str().unwrap()],
    );
    let value: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let kinds: Vec<&str> = value["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["kind"].as_str().unwrap())
        .collect();
    assert!(kinds.contains(&"read-by-some"), "{kinds:?}");
    assert!(kinds.iter().all(|k| *k == "read-by-some"), "{kinds:?}");
    let gate = survey(
        &home,
        &["--deny", "warnings", "--cwd", repo.to_str().unwrap()],
    );
    assert_eq!(gate.status.code(), Some(0), "{gate:?}");
}

/// A warning fails the gate with 1; a survey that cannot be made (no such
/// policy, no such cwd) exits 2, as a usage error does; without `--deny`
/// findings exit 0.
#[test]
fn findings_exit_1_and_tool_errors_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    crate::sarif::sample_repo(&repo, 0);
    let home = tmp.path().join("home");
    let cwd = repo.to_str().unwrap();
    let gate = survey(&home, &["--deny", "warnings", "--cwd", cwd]);
    assert_eq!(gate.status.code(), Some(1), "{gate:?}");
    let plain = survey(&home, &["--cwd", cwd]);
    assert_eq!(plain.status.code(), Some(0), "{plain:?}");
    let unknown = survey(&home, &["--policies", "cursorr", "--cwd", cwd]);
    assert_eq!(unknown.status.code(), Some(2), "{unknown:?}");
    let missing = tmp.path().join("nowhere");
    let nowhere = survey(
        &home,
        &["--deny", "warnings", "--cwd", missing.to_str().unwrap()],
    );
    assert_eq!(nowhere.status.code(), Some(2), "{nowhere:?}");
    let usage = survey(&home, &["--deny", "everything", "--cwd", cwd]);
    assert_eq!(usage.status.code(), Some(2), "{usage:?}");
}
