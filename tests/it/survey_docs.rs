//! docs/cli.md and the command line agree on `survey`: every option of
//! `survey --help` is in the synopsis and the section, every option the
//! synopsis names exists, every `lisa-context survey` command the section
//! shows runs (in order, on a sample repository: exit 0 or 1, never a
//! usage error), and the adoption files' commands (action.yml's default
//! arguments, the pre-commit hook's entry) are commands `survey` takes.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;
use std::process::Command;

use crate::survey_scope::deep_repo;

fn read(rel: &str) -> String {
    fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)).unwrap()
}

/// The `--options` of `text`.
fn options(text: &str) -> BTreeSet<String> {
    let re = regex::Regex::new(r"--[a-z][a-z-]*").unwrap();
    re.find_iter(text).map(|m| m.as_str().to_string()).collect()
}

/// docs/cli.md's survey section and its synopsis lines.
fn section_and_synopsis() -> (String, String) {
    let doc = read("docs/cli.md");
    let section = doc
        .split("## Audit your repository")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .unwrap()
        .to_string();
    let synopsis: String = doc
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("survey ["))
        .take_while(|l| !l.trim_start().starts_with("completions"))
        .collect::<Vec<_>>()
        .join("\n");
    assert!(!synopsis.is_empty());
    (section, synopsis)
}

#[test]
fn the_manual_names_every_survey_option_and_no_other() {
    let help = Command::new(env!("CARGO_BIN_EXE_lisa-context"))
        .args(["survey", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    let global: BTreeSet<String> = [
        "--home",
        "--policy",
        "--no-home-policy",
        "--color",
        "--verbose",
        "--quiet",
        "--help",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    let own: BTreeSet<String> = options(&help).difference(&global).cloned().collect();
    let (section, synopsis) = section_and_synopsis();
    let in_synopsis = options(&synopsis);
    assert_eq!(in_synopsis, own, "docs/cli.md's survey synopsis");
    for o in &own {
        assert!(
            section.contains(o.as_str()),
            "{o} not in Audit your repository"
        );
    }
    // Every format and scope the help offers is in the synopsis.
    for value in ["text|json|sarif|github", "repo|cwd", "KIND|warnings"] {
        assert!(synopsis.contains(value), "{value}");
    }
}

#[test]
fn the_sections_commands_run() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    deep_repo(&repo);
    let home = tmp.path().join("home");
    fs::create_dir_all(&home).unwrap();
    let (section, _) = section_and_synopsis();
    let commands: Vec<Vec<&str>> = section
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("lisa-context survey"))
        .map(|l| l.split_whitespace().skip(1).collect())
        .collect();
    assert!(commands.len() >= 6, "{commands:?}");
    for args in commands {
        let out = Command::new(env!("CARGO_BIN_EXE_lisa-context"))
            .args(&args)
            .current_dir(&repo)
            .env("HOME", &home)
            .env_remove("LISA_HOME")
            .output()
            .unwrap();
        let code = out.status.code();
        assert!(code == Some(0) || code == Some(1), "{args:?}: {out:?}");
    }
    // The baseline the section writes makes the gate it shows pass.
    assert!(repo.join("lisa-context-baseline.json").exists());
}

#[test]
fn the_adoption_files_commands_are_survey_commands() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    fs::create_dir_all(repo.join(".git")).unwrap();
    fs::write(repo.join("AGENTS.md"), "Use tabs.\n").unwrap();
    let home = tmp.path().join("home");
    fs::create_dir_all(&home).unwrap();
    let hook = read(".pre-commit-hooks.yaml");
    let entry = hook
        .lines()
        .find_map(|l| l.trim().strip_prefix("entry: "))
        .unwrap();
    assert!(hook.contains("id: lisa-context-survey"), "{hook}");
    assert!(hook.contains("pass_filenames: false"), "{hook}");
    let action = read("action.yml");
    let args = action
        .split("  args:")
        .nth(1)
        .and_then(|s| s.lines().find_map(|l| l.trim().strip_prefix("default: ")))
        .unwrap();
    assert!(action.contains("uses: github/codeql-action/upload-sarif@"));
    assert!(action.contains("survey --format sarif $ARGS"));
    let entry_args: Vec<&str> = entry.split_whitespace().skip(1).collect();
    let action_args: Vec<&str> = ["survey", "--format", "sarif"]
        .into_iter()
        .chain(args.split_whitespace())
        .collect();
    for argv in [&entry_args, &action_args] {
        let out = Command::new(env!("CARGO_BIN_EXE_lisa-context"))
            .args(argv)
            .current_dir(&repo)
            .env("HOME", &home)
            .env_remove("LISA_HOME")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{argv:?}: {out:?}");
    }
    // Hidden text in a nested AGENTS.md fails both, with 1.
    fs::create_dir_all(repo.join("packages/web")).unwrap();
    fs::write(repo.join("packages/web/AGENTS.md"), "x\u{200b}\n").unwrap();
    for argv in [entry_args, action_args] {
        let out = Command::new(env!("CARGO_BIN_EXE_lisa-context"))
            .args(&argv)
            .current_dir(&repo)
            .env("HOME", &home)
            .env_remove("LISA_HOME")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{argv:?}: {out:?}");
    }
}
