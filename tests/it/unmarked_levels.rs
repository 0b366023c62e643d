//! `instructions.compat.unmarked-levels` and `fallback-unless` (issue 51):
//! with no repository marker above the cwd, Claude Code 2.1.332 reads the
//! rules, `AGENTS.md` and `.claude/skills` of every folder above the cwd up
//! to the user's home (not included); its `AGENTS.md` stands in unless a
//! `CLAUDE.md` (or `.claude/CLAUDE.md`, `CLAUDE.local.md`) at or above the
//! cwd has text. Each folder above the cwd stays its own sandbox under
//! git's owner rule: what another user planted there is not read, as a
//! skill no more than as an instruction file.

use std::fs;
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use serde_json::Value;

use crate::support::{World, running_as_root};

/// The uid another local user has in these tests.
const OTHER: u32 = 65534;

/// A policy over `claude-code` whose ancestor walk stops below the test's
/// folder (nothing the machine keeps above it is read).
fn policy(w: &World, extra: &str) -> String {
    let name = format!(
        "claude-{:016x}.toml",
        xxhash_rust::xxh3::xxh3_64(extra.as_bytes())
    );
    let path = w.write(
        &name,
        &format!(
            "version = 1\nextends = \"claude-code\"\n[roots]\nceiling-directories = [{:?}]\n{extra}",
            w.base.to_string_lossy()
        ),
    );
    path.to_string_lossy().into_owned()
}

/// `snapshot --format json` for `cwd`, the user's home directory `home`.
fn snapshot(w: &World, policy: &str, home: &Path, cwd: &Path) -> Value {
    let out = w
        .cli()
        .env("HOME", home)
        .args(["--policy", policy, "snapshot", "--format", "json", "--cwd"])
        .arg(cwd)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

fn prompt(json: &Value) -> &str {
    json["prompt"].as_str().unwrap()
}

/// The names of the skills listed.
fn skills(json: &Value) -> Vec<String> {
    json["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_string())
        .collect()
}

fn skill(w: &World, dir: &str, name: &str) {
    w.write(
        &format!("{dir}/.claude/skills/{name}/SKILL.md"),
        &format!("---\nname: {name}\ndescription: the {name} skill\n---\nSteps.\n"),
    );
}

/// A tree with no marker: `work/proj/sub` is the cwd, each folder above it
/// holding a rule, an `AGENTS.md` and a skill.
fn unmarked(w: &World) -> std::path::PathBuf {
    for (dir, tag) in [("work", "WORK"), ("work/proj", "PROJ")] {
        w.write(
            &format!("{dir}/.claude/rules/r.md"),
            &format!("RULE-{tag}\n"),
        );
        w.write(&format!("{dir}/AGENTS.md"), &format!("AGENTS-{tag}\n"));
    }
    skill(w, "work", "work-skill");
    skill(w, "work/proj", "proj-skill");
    w.mkdir("work/proj/sub")
}

#[test]
fn with_no_repository_the_folders_above_the_cwd_are_levels() {
    let w = World::new();
    let cwd = unmarked(&w);
    let claude = policy(&w, "");
    let json = snapshot(&w, &claude, &w.home, &cwd);
    for text in ["RULE-WORK", "RULE-PROJ", "AGENTS-WORK", "AGENTS-PROJ"] {
        assert!(prompt(&json).contains(text), "{text}: {}", prompt(&json));
    }
    assert!(
        prompt(&json).find("AGENTS-WORK") < prompt(&json).find("AGENTS-PROJ"),
        "outermost first: {}",
        prompt(&json)
    );
    let listed = skills(&json);
    assert!(listed.contains(&"work-skill".to_string()), "{listed:?}");
    assert!(listed.contains(&"proj-skill".to_string()), "{listed:?}");

    // Under Lisa's own value (`cwd`), no skill above the cwd is listed (the
    // rules and AGENTS.md above are claude-code's `ancestor-files` and
    // fallback, read either way).
    let cwd_only = policy(&w, "[instructions.compat]\nunmarked-levels = \"cwd\"\n");
    let json = snapshot(&w, &cwd_only, &w.home, &cwd);
    assert!(prompt(&json).contains("RULE-PROJ"), "{}", prompt(&json));
    let listed = skills(&json);
    assert!(!listed.contains(&"proj-skill".to_string()), "{listed:?}");
    assert!(!listed.contains(&"work-skill".to_string()), "{listed:?}");

    // The user's home stops the skills' walk, itself not included (rules
    // are `ancestor-files`, read up to the file system's root).
    let json = snapshot(&w, &claude, &w.path("work"), &cwd);
    assert!(prompt(&json).contains("RULE-PROJ"), "{}", prompt(&json));
    let listed = skills(&json);
    assert!(!listed.contains(&"work-skill".to_string()), "{listed:?}");
    assert!(listed.contains(&"proj-skill".to_string()), "{listed:?}");

    // A marker makes the repository the end of the skills' walk again.
    fs::create_dir_all(w.path("work/proj/.git")).unwrap();
    let json = snapshot(&w, &claude, &w.home, &cwd);
    assert!(prompt(&json).contains("RULE-PROJ"), "{}", prompt(&json));
    assert!(prompt(&json).contains("RULE-WORK"), "{}", prompt(&json));
    let listed = skills(&json);
    assert!(!listed.contains(&"work-skill".to_string()), "{listed:?}");
    assert!(listed.contains(&"proj-skill".to_string()), "{listed:?}");
}

#[test]
fn agents_md_stands_in_unless_a_claude_md_has_text() {
    let w = World::new();
    let cwd = w.mkdir("repo/app");
    w.write("repo/AGENTS.md", "AGENTS-ROOT\n");
    w.write("repo/app/AGENTS.md", "AGENTS-APP\n");
    let claude = policy(&w, "");
    // A blank CLAUDE.md, a folder named CLAUDE.md and a rule do not count.
    w.write("repo/CLAUDE.md", " \n\t\n");
    w.mkdir("repo/app/CLAUDE.md");
    w.write("repo/.claude/rules/style.md", "RULE\n");
    let json = snapshot(&w, &claude, &w.home, &cwd);
    assert!(prompt(&json).contains("AGENTS-ROOT"), "{}", prompt(&json));
    assert!(prompt(&json).contains("AGENTS-APP"), "{}", prompt(&json));
    assert!(prompt(&json).contains("RULE"), "{}", prompt(&json));
    // A CLAUDE.local.md with text does, wherever it is at or above the cwd.
    w.write("repo/CLAUDE.local.md", "LOCAL\n");
    let json = snapshot(&w, &claude, &w.home, &cwd);
    assert!(prompt(&json).contains("LOCAL"), "{}", prompt(&json));
    assert!(!prompt(&json).contains("AGENTS-"), "{}", prompt(&json));
    // A long-lived loader follows the text: the file turned blank, the
    // fallback is back.
    fs::write(w.path("repo/CLAUDE.local.md"), "\n").unwrap();
    let json = snapshot(&w, &claude, &w.home, &cwd);
    assert!(prompt(&json).contains("AGENTS-ROOT"), "{}", prompt(&json));
}

#[test]
fn an_agents_md_above_a_nested_repository_stands_in_too() {
    let w = World::new();
    let inner = w.repo_at("repo/web");
    w.write("repo/AGENTS.md", "AGENTS-OUTER\n");
    w.write("repo/web/AGENTS.md", "AGENTS-INNER\n");
    let json = snapshot(&w, &policy(&w, ""), &w.home, &inner);
    assert!(prompt(&json).contains("AGENTS-OUTER"), "{}", prompt(&json));
    assert!(prompt(&json).contains("AGENTS-INNER"), "{}", prompt(&json));
}

/// Git's owner rule holds above the cwd for what `unmarked-levels` adds: a
/// skill, a rule or an `AGENTS.md` another user planted in a shared folder
/// (`/tmp` with no repository) is not read and is reported.
#[test]
fn what_another_user_planted_above_an_unmarked_cwd_is_not_read() {
    if !running_as_root() {
        eprintln!(
            "SKIPPED what_another_user_planted_above_an_unmarked_cwd_is_not_read: needs root"
        );
        return;
    }
    let w = World::new();
    let shared = w.mkdir("shared");
    fs::set_permissions(&shared, fs::Permissions::from_mode(0o1777)).unwrap();
    let cwd = w.mkdir("shared/mine/work");
    skill(&w, "shared", "planted");
    w.write("shared/.claude/rules/evil.md", "PLANTED-RULE\n");
    w.write("shared/AGENTS.md", "PLANTED-AGENTS\n");
    for rel in [
        "shared/.claude",
        "shared/.claude/skills",
        "shared/.claude/skills/planted",
        "shared/.claude/skills/planted/SKILL.md",
        "shared/.claude/rules",
        "shared/.claude/rules/evil.md",
        "shared/AGENTS.md",
    ] {
        std::os::unix::fs::lchown(w.path(rel), Some(OTHER), Some(OTHER)).unwrap();
    }
    skill(&w, "shared/mine", "mine");
    let json = snapshot(&w, &policy(&w, ""), &w.home, &cwd);
    assert!(!prompt(&json).contains("PLANTED"), "{}", prompt(&json));
    let listed = skills(&json);
    assert!(!listed.contains(&"planted".to_string()), "{listed:?}");
    assert!(listed.contains(&"mine".to_string()), "{listed:?}");
    let warned: Vec<&str> = json["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["kind"] == "unsafe-ancestor")
        .filter_map(|w| w["path"].as_str())
        .collect();
    assert!(
        warned.iter().any(|p| p.ends_with("shared/.claude")),
        "{warned:?}"
    );
}
