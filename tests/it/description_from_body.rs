//! `skills.compat.description-from-body`: Claude Code 2.1.332 describes a
//! skill whose `description` is no text by the first line of its body (a
//! number or boolean by its JavaScript spelling), where every other policy
//! refuses the skill (`missing-description`). Recorded:
//! `tests/compat/expected/claude-code/skills-claude-description-body-line.json`.
//! And Claude Code's own rule for a skill folder's name
//! (`tests/compat/expected/claude-code/skills-claude-folder-names.json`).

use std::process::{Command, Output};

use lisa_context::policy::{Layer, Policy};
use serde_json::Value;

use crate::support::{self, World};

/// The built-in policy with `description-from-body` set to `on`.
fn policy(on: bool) -> Policy {
    support::layered(
        Layer::CommandLine,
        "body.toml",
        format!("version = 1\n[skills.compat]\ndescription-from-body = {on}\n"),
    )
}

/// Each skill of the world's repository: its description when listed, or
/// the reason it was refused for.
fn outcomes(w: &World, on: bool, names: &[&str]) -> Vec<String> {
    let snap = w.loader_on(policy(on)).snapshot(&w.repo).unwrap();
    names
        .iter()
        .map(|name| {
            if let Some(skill) = snap.skills.iter().find(|s| s.listed && s.name == *name) {
                return skill.description.clone();
            }
            snap.rejected_skills
                .iter()
                .find(|r| r.path.to_string_lossy().contains(&format!("/{name}/")))
                .map_or_else(|| format!("{name}: nowhere"), |r| r.reason.to_string())
        })
        .collect()
}

#[test]
fn a_description_that_is_no_text_is_the_bodys_first_line() {
    let w = World::new();
    let skills = [
        (
            "nodesc",
            "---\nname: nodesc\n---\n\n  # Deploy the site  \nMore.\n",
        ),
        (
            "blank",
            "---\nname: blank\ndescription: \"  \"\n---\nBlank's body.\n",
        ),
        (
            "listed",
            "---\nname: listed\ndescription:\n  - a\n---\nA list's body.\n",
        ),
        (
            "number",
            "---\nname: number\ndescription: 1.10\n---\nBody.\n",
        ),
        ("flag", "---\nname: flag\ndescription: true\n---\nBody.\n"),
        ("empty", "---\nname: empty\n---\n\n"),
        (
            "plain",
            "---\nname: plain\ndescription: Plain.\n---\nBody.\n",
        ),
    ];
    for (name, text) in skills {
        w.write(&format!("repo/.agents/skills/{name}/SKILL.md"), text);
    }
    let names: Vec<&str> = skills.iter().map(|(n, _)| *n).collect();
    // Each answer twice: the second reads the memo the first wrote.
    for _ in 0..2 {
        let mut off = vec!["missing-description".to_string(); 6];
        off.push("Plain.".into());
        assert_eq!(outcomes(&w, false, &names), off);
        assert_eq!(
            outcomes(&w, true, &names),
            [
                "Deploy the site",
                "Blank's body.",
                "A list's body.",
                "1.1",
                "true",
                "Skill",
                "Plain.",
            ]
        );
    }
}

/// The body line is part of what was read: changing it changes the
/// fingerprint and the listing, and a long body past it is not read.
#[test]
fn the_body_line_is_traced_and_the_body_past_it_is_not_read() {
    let w = World::new();
    let path = w.write(
        "repo/.agents/skills/deploy/SKILL.md",
        "---\nname: deploy\n---\nDeploy the site.\nMore.\n",
    );
    let loader = w.loader_on(policy(true));
    let fp0 = loader.fingerprint(&w.repo).unwrap();
    support::next_timestamp_tick(&w.repo);
    std::fs::write(&path, "---\nname: deploy\n---\nShip the site.\nMore.\n").unwrap();
    let fp1 = loader.fingerprint(&w.repo).unwrap();
    assert_ne!(fp0, fp1, "the body's first line is traced");
    let snap = loader.snapshot(&w.repo).unwrap();
    assert_eq!(snap.fingerprint, fp1);
    let deploy = snap.skills.iter().find(|s| s.name == "deploy").unwrap();
    assert_eq!(deploy.description, "Ship the site.");

    // A body of 100 KiB after its first line (within the 128 KiB a
    // `SKILL.md` may have): the search for that line stops at it.
    let mut text = String::from("---\nname: deploy\n---\n\n\nShip it.\n");
    while text.len() < 100 << 10 {
        text.push_str("a later line of the body, never looked at\n");
    }
    std::fs::write(&path, &text).unwrap();
    let out = counted(&w, &["snapshot", "--format", "json", "--cwd"]);
    let snap: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(snap["skills"][0]["description"], "Ship it.");
    let scanned = count(&out, "frontmatter-scan-bytes");
    assert!(scanned < 64, "{scanned} bytes searched");
}

/// A run of the binary with `description-from-body` set, its counters on.
fn counted(w: &World, args: &[&str]) -> Output {
    let policy = w.write(
        "body.toml",
        "version = 1\n[skills.compat]\ndescription-from-body = true\n",
    );
    let out = Command::new(env!("CARGO_BIN_EXE_lisa-context"))
        .env_remove("LISA_HOME")
        .env("LISA_CONTEXT_COUNTS", "1")
        .env("XDG_STATE_HOME", w.path("state"))
        .arg("--home")
        .arg(&w.home)
        .arg("--policy")
        .arg(&policy)
        .args(args)
        .arg(&w.repo)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// A counter of a run, from its standard error.
fn count(out: &Output, name: &str) -> u64 {
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = stderr
        .lines()
        .find_map(|l| l.strip_prefix("lisa-context counts: "))
        .unwrap_or_else(|| panic!("no counts on stderr:\n{stderr}"));
    let counts: std::collections::BTreeMap<String, u64> = serde_json::from_str(line).unwrap();
    counts[name]
}

/// Under `--policy claude-code` a skill's folder names it by Claude Code's
/// rule: upper case, `_`, accents, a space or a colon inside are fine; a
/// leading colon, two spaces, a trailing space or `<` are not, and a name
/// hiding text is refused as under every policy (SECURITY.md, guarantee 8).
#[test]
fn claude_code_takes_folder_names_by_its_own_rule() {
    let w = World::new();
    w.mkdir("repo/.git");
    let folders = [
        "Tool",
        "x_y",
        "café",
        "two words",
        "a:b",
        ":lead",
        "two  spaces",
        "trail ",
        "a<b",
        "zero\u{200B}width",
    ];
    for folder in folders {
        w.write(
            &format!("repo/.claude/skills/{folder}/SKILL.md"),
            "---\ndescription: A skill.\n---\nBody.\n",
        );
    }
    let out = w
        .cli()
        .args([
            "--policy",
            "claude-code",
            "snapshot",
            "--format",
            "json",
            "--cwd",
        ])
        .arg(&w.repo)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let snap: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut listed: Vec<&str> = snap["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    listed.sort_unstable();
    assert_eq!(listed, ["Tool", "a:b", "café", "two words", "x_y"]);
    let mut refused: Vec<(String, &str)> = snap["rejectedSkills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let path = r["path"].as_str().unwrap();
            let folder = path.rsplit('/').next().unwrap().to_string();
            (folder, r["reason"].as_str().unwrap())
        })
        .collect();
    refused.sort();
    assert_eq!(
        refused,
        [
            (":lead".to_string(), "invalid-name"),
            ("a<b".to_string(), "invalid-name"),
            ("trail ".to_string(), "invalid-name"),
            ("two  spaces".to_string(), "invalid-name"),
            ("zero\u{200B}width".to_string(), "hidden-text-in-name"),
        ]
    );
}

/// `skills.frontmatter = "quote-special-values"`: a block strict YAML
/// refuses is read again with each special value quoted (Claude Code's
/// retry), with a warning; a CRLF line is not rewritten, so its block stays
/// refused (recorded: `skills-claude-yaml-retry`).
#[test]
fn quote_special_values_reads_a_value_with_colons_again() {
    let w = World::new();
    w.write(
        "repo/.agents/skills/colon/SKILL.md",
        "---\nname: colon\ndescription: uses: two: colons\n---\nBody.\n",
    );
    w.write(
        "repo/.agents/skills/crlf/SKILL.md",
        "---\r\nname: crlf\r\ndescription: uses: two: colons\r\n---\r\nBody.\r\n",
    );
    let policy = support::layered(
        Layer::CommandLine,
        "retry.toml",
        "version = 1\n[skills]\nfrontmatter = \"quote-special-values\"\n",
    );
    for _ in 0..2 {
        let snap = w.loader_on(policy.clone()).snapshot(&w.repo).unwrap();
        let colon = snap.skills.iter().find(|s| s.name == "colon").unwrap();
        assert!(colon.listed);
        assert_eq!(colon.description, "uses: two: colons");
        assert!(
            snap.warnings
                .iter()
                .any(|w| w.message.contains("again with its special values quoted")),
            "{:?}",
            snap.warnings
        );
        let crlf = snap
            .rejected_skills
            .iter()
            .find(|r| r.path.to_string_lossy().contains("/crlf/"))
            .unwrap();
        assert_eq!(crlf.reason.to_string(), "bad-frontmatter");
    }
}
