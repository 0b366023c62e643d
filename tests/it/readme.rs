//! The README's demo commands print what the README says they print, and
//! every documented way of running the demo gives the same answer.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::validate;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The two commands at the top of the README.
fn readme_commands() -> (String, String) {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let block = readme
        .split("```sh\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("the README opens with a sh block");
    let mut lines = block.lines().filter(|l| !l.trim().is_empty());
    (
        lines.next().unwrap().to_string(),
        lines.next().unwrap().to_string(),
    )
}

/// Runs the binary with `args`, from the checkout, and parses its JSON.
fn run_json(args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_lisa-context"))
        .args(args)
        .current_dir(root())
        .env_remove("LISA_HOME")
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?}: {out:?}");
    let json = serde_json::from_slice(&out.stdout).unwrap();
    validate::snapshot(&json);
    json
}

fn names(list: &Value, field: &str) -> Vec<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|v| v[field].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn the_readme_commands_are_the_documented_ones() {
    let (main, test) = readme_commands();
    assert!(main.starts_with("cargo run "), "{main}");
    assert!(
        main.contains(" -- --home examples/demo/home snapshot"),
        "{main}"
    );
    assert_eq!(test, "cargo test --locked");
}

#[test]
fn the_demo_prints_what_the_readme_says() {
    let (main, _) = readme_commands();
    let args: Vec<&str> = main
        .split(" -- ")
        .nth(1)
        .unwrap()
        .split_whitespace()
        .collect();
    let snap = run_json(&args);
    // "the repository's CLAUDE.md is a copy of its AGENTS.md and is folded away"
    let deduped = names(&snap["deduped"], "path");
    assert!(
        deduped.iter().any(|p| p.ends_with("repo/CLAUDE.md")),
        "{deduped:?}"
    );
    // "the project skill changelog carries its project label in prompt"
    let prompt = snap["prompt"].as_str().unwrap();
    assert!(
        prompt.contains("- changelog (from this project: its convention, not your principle):"),
        "{prompt}"
    );
    // "the project's release skill ... is reported in shadowedProjectSkills"
    let shadowed = names(&snap["shadowedProjectSkills"], "name");
    assert_eq!(shadowed, ["release"]);
}

/// With or without `--root`, and through the embed example, the demo finds
/// the same repository root, files and skills.
#[test]
fn every_way_of_running_the_demo_agrees() {
    let base = [
        "--home",
        "examples/demo/home",
        "snapshot",
        "--cwd",
        "examples/demo/repo/packages/api",
        "--format",
        "json",
    ];
    let with_root = run_json(&[&base[..], &["--root", "examples/demo/repo"]].concat());
    let without = run_json(&base);
    for field in [
        "repoRoot",
        "instructionFiles",
        "skills",
        "shadowedProjectSkills",
        "prompt",
    ] {
        assert_eq!(with_root[field], without[field], "{field}");
    }

    // The embed example, built by `cargo test` beside this test.
    let exe = std::env::current_exe().unwrap();
    let examples: PathBuf = exe.parent().unwrap().parent().unwrap().join("examples");
    let embed = examples.join("embed");
    if !embed.exists() {
        eprintln!(
            "SKIPPED the embed example: not built at {}",
            embed.display()
        );
        return;
    }
    let out = Command::new(&embed).current_dir(root()).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let skills_line = format!("# Skills ({})", without["skills"].as_array().unwrap().len());
    assert!(text.contains(&skills_line), "{text}");
    assert!(text.contains(without["prompt"].as_str().unwrap().lines().nth(2).unwrap()));
}
