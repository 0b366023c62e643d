//! `skills.compat.duplicate-keys`: a `SKILL.md` frontmatter key written
//! twice. YAML requires unique keys, so Lisa's policy (and every policy but
//! Claude Code's) refuses such a frontmatter; Claude Code takes the last
//! value (recorded: `tests/compat/expected/claude-code/skills-claude-names.json`).

use serde_json::Value;

use crate::support::World;

/// The snapshot JSON under `policy` for the world's repository.
fn snapshot(w: &World, policy: &str) -> Value {
    let out = w
        .cli()
        .args(["--policy", policy, "snapshot", "--format", "json", "--cwd"])
        .arg(&w.repo)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn listed<'a>(snap: &'a Value, name: &str) -> Option<&'a Value> {
    snap["skills"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
}

fn world() -> World {
    let w = World::new();
    for dir in [".claude/skills/dupkey", ".agents/skills/dupkey"] {
        w.write(
            &format!("repo/{dir}/SKILL.md"),
            "---\nname: dupkey\ndescription: The first value.\ndescription: The last value.\n---\nSteps.\n",
        );
    }
    w
}

#[test]
fn claude_code_takes_a_duplicated_keys_last_value() {
    let w = world();
    let snap = snapshot(&w, "claude-code");
    let skill = listed(&snap, "dupkey").expect("dupkey is listed under claude-code");
    assert_eq!(skill["description"], "The last value.");
    // The memo written by that build reads back the same answer.
    let again = snapshot(&w, "claude-code");
    assert_eq!(
        listed(&again, "dupkey").map(|s| &s["description"]),
        Some(&Value::from("The last value."))
    );
}

#[test]
fn lisas_policy_refuses_a_duplicated_key() {
    let w = world();
    // Lisa's own policy: YAML's unique keys, then the lenient reading,
    // which refuses a key given twice too.
    let snap = snapshot(&w, "lisa");
    assert!(listed(&snap, "dupkey").is_none(), "{snap:#}");
    let rejected = snap["rejectedSkills"].as_array().unwrap();
    assert!(
        rejected
            .iter()
            .any(|r| r["reason"] == "bad-frontmatter" || r["reason"] == "missing-description"),
        "{snap:#}"
    );
}
