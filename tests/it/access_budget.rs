//! On-access loading obeys the chain's budget (issue 49, item 8):
//! `docs/policy.md` says a `budget-bytes` of 0 lets no project file into
//! the prompt, yet under every policy that loads on access an access still
//! loaded the files below the cwd, on a budget of its own. What the chain
//! used now counts, an access takes from what is left, and 0 means nothing;
//! what it adds is framed within the repository's share of the prompt.

use std::path::Path;

use lisa_context::policy::{Layer, Policy, PolicySource, SHIPPED_NAMES};
use serde_json::{Value, json};

use crate::prompt_share::team_example;
use crate::support::World;

/// A rule that loads on access to `pkg/`, under each harness's keys (and
/// `paths:` for scoped rules).
const SCOPED_RULE: &str = "---\nglobs: \"pkg/**\"\napplyTo: \"pkg/**\"\ninclusion: fileMatch\n\
                           fileMatchPattern: \"pkg/**\"\ntrigger: glob\npaths: \"pkg/**\"\n---\n\
                           scoped rule text for pkg\n";

/// The folders the policies read rules from, each with its file name.
const RULE_FILES: &[&str] = &[
    ".claude/rules/pkg.md",
    ".cursor/rules/pkg.mdc",
    ".windsurf/rules/pkg.md",
    ".kiro/steering/pkg.md",
    ".continue/rules/pkg.md",
    ".github/instructions/pkg.instructions.md",
];

/// A policy that loads on access: its name, the head of a `--policy`
/// overlay laid over it, the team's policy installed in the home (the
/// team example), and the policy itself.
struct OnAccess {
    name: String,
    head: String,
    team: Option<String>,
    policy: Policy,
}

/// Every policy that loads on access, from its own declarations: each
/// shipped one with `instructions.on-access` (an overlay extends it), and
/// the documented team example (installed as the home's policy, the
/// overlay laid over it).
fn on_access_policies() -> Vec<OnAccess> {
    let mut out = Vec::new();
    for &name in SHIPPED_NAMES {
        let policy = Policy::from_sources(&[PolicySource::shipped(name).unwrap()]).unwrap();
        if policy.instructions.on_access {
            out.push(OnAccess {
                name: name.to_string(),
                head: format!("version = 1\nextends = \"{name}\"\n"),
                team: None,
                policy,
            });
        }
    }
    let team = team_example();
    let policy = Policy::from_sources(&[
        PolicySource::builtin(),
        PolicySource::from_text(Layer::Home, "context-policy.toml", team.clone()),
    ])
    .unwrap();
    assert!(policy.instructions.on_access);
    out.push(OnAccess {
        name: "the team example".to_string(),
        head: "version = 1\n".to_string(),
        team: Some(team),
        policy,
    });
    let names: Vec<&str> = out.iter().map(|p| p.name.as_str()).collect();
    for expected in [
        "gemini",
        "claude-code",
        "cursor",
        "windsurf",
        "opencode",
        "amp",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} loads on access: {names:?}"
        );
    }
    out
}

/// The first plain name (no glob, no folder) of a list.
fn plain(names: &lisa_context::policy::Names) -> Option<String> {
    names
        .iter()
        .map(|n| n.get_ref().clone())
        .find(|n| !n.contains(['*', '/', '{', '[', '?']))
}

/// An overlay: `head` and an `[instructions]` table of `lines`.
fn overlay(head: &str, lines: &str) -> String {
    format!("{head}\n[instructions]\n{lines}")
}

/// A repository whose root holds the policy's level file (`root_text`),
/// and whose `pkg/` holds the files an access to it loads: the level file
/// an access reads there (`pkg_text`) and a rule scoped to `pkg/**` in
/// every harness's rule folder; the team's policy in the home.
fn tree(w: &World, on: &OnAccess, root_text: &str, pkg_text: &str) {
    if let Some(team) = &on.team {
        w.write("home/context-policy.toml", team);
    }
    let ins = &on.policy.instructions;
    let level = plain(&ins.level_files).expect("a plain level file");
    w.write(&format!("repo/{level}"), root_text);
    let below = plain(&ins.access_level_files).unwrap_or(level);
    w.write(&format!("repo/pkg/{below}"), pkg_text);
    for file in RULE_FILES {
        w.write(&format!("repo/{file}"), SCOPED_RULE);
    }
}

/// `lisa-context access pkg/main.rs` in the repository, JSON, under the
/// policy file `policy`: the answer and stderr.
fn access(w: &World, policy: &Path) -> (Value, String) {
    let out = w
        .cli()
        .env("HOME", w.path("user"))
        .arg("--policy")
        .arg(policy)
        .args(["access", "pkg/main.rs", "--format", "json", "--cwd"])
        .arg(&w.repo)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    (serde_json::from_slice(&out.stdout).unwrap(), stderr)
}

/// The same access through `serve`'s `access` op.
fn served_access(w: &World, policy: &Path) -> Value {
    let request = json!({
        "id": 1,
        "op": "access",
        "cwd": w.repo,
        "path": w.repo.join("pkg/main.rs"),
    })
    .to_string()
        + "\n";
    let out = w
        .cli()
        .env("HOME", w.path("user"))
        .arg("--policy")
        .arg(policy)
        .arg("serve")
        .write_stdin(request)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    answer["access"].clone()
}

/// `snapshot --format json` of the repository under `policy`.
fn snapshot(w: &World, policy: &Path) -> Value {
    let out = w
        .cli()
        .env("HOME", w.path("user"))
        .arg("--policy")
        .arg(policy)
        .args(["snapshot", "--format", "json", "--cwd"])
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

/// Under every policy that loads on access (the shipped ones and the
/// team example), `budget-bytes = 0` from a `--policy` overlay: an access
/// loads no project file, on the command line and through `serve`, and
/// says why (each file `budget-exhausted`, and a note on stderr).
#[test]
fn a_budget_of_zero_loads_nothing_on_access_under_every_policy() {
    for on in on_access_policies() {
        let (name, head) = (&on.name, &on.head);
        let w = World::new();
        tree(&w, &on, "root rules\n", "pkg rules\n");
        // With the policy's own budget the access loads something: the
        // tree is one the policy reads.
        let own = w.write("own.toml", head);
        let (loaded, _) = access(&w, &own);
        assert!(
            !loaded["instructionFiles"].as_array().unwrap().is_empty(),
            "under {name} the access loads pkg/'s files: {loaded:#}"
        );
        let zero = w.write("zero.toml", &overlay(head, "budget-bytes = 0\n"));
        for (how, answer) in [
            ("the command line", access(&w, &zero).0),
            ("serve", served_access(&w, &zero)),
        ] {
            assert_eq!(
                answer["instructionFiles"],
                json!([]),
                "under {name} through {how}, budget-bytes = 0 loaded files on access"
            );
            assert_eq!(answer["prompt"], json!(""), "{name}, {how}");
            let skipped = answer["skipped"].as_array().unwrap();
            assert!(
                !skipped.is_empty(),
                "under {name} through {how}: {answer:#}"
            );
            assert!(
                skipped.iter().all(|s| s["reason"] == "budget-exhausted"),
                "under {name} through {how} each file says why: {skipped:?}"
            );
            assert_eq!(answer["budget"]["limit"], json!(0), "{name}, {how}");
        }
        let (_, stderr) = access(&w, &zero);
        assert!(
            stderr.contains("not loaded: the instruction budget has no room left"),
            "under {name}: {stderr}"
        );
    }
}

/// Under every policy that loads on access, with a small budget that
/// counts the repository's files: the chain's file uses part of it, and
/// the access adds at most what is left (the chain's use and the access's
/// together stay within `budget-bytes`), whatever `access-budget-bytes`
/// says.
#[test]
fn an_access_adds_at_most_what_the_chain_left_under_every_policy() {
    const BUDGET: u64 = 100;
    for on in on_access_policies() {
        let (name, head) = (&on.name, &on.head);
        let w = World::new();
        tree(&w, &on, &"r".repeat(60), &"p".repeat(100));
        let small = w.write(
            "small.toml",
            &overlay(
                head,
                &format!(
                    "budget-bytes = {BUDGET}\nbudget-scope = \"project\"\n\
                     access-budget-bytes = 1000000\n"
                ),
            ),
        );
        let chain = snapshot(&w, &small)["budget"]["used"].as_u64().unwrap();
        assert!(
            chain > 0 && chain <= BUDGET,
            "under {name} the chain used {chain}"
        );
        for (how, answer) in [
            ("the command line", access(&w, &small).0),
            ("serve", served_access(&w, &small)),
        ] {
            let used = answer["budget"]["used"].as_u64().unwrap();
            let included: u64 = answer["instructionFiles"]
                .as_array()
                .unwrap()
                .iter()
                .map(|b| b["includedBytes"].as_u64().unwrap())
                .sum();
            assert!(
                chain + used <= BUDGET && included <= BUDGET - chain,
                "under {name} through {how} the chain used {chain} of {BUDGET} and the \
                 access added {used} ({included} bytes of text): {answer:#}"
            );
            assert!(
                answer["budget"]["limit"].as_u64().unwrap() <= BUDGET - chain,
                "{name}, {how}: {answer:#}"
            );
        }
    }
}

/// What an access loads is framed within what is left of the repository's
/// share of the prompt: past it, a file is cut or left out
/// (`prompt-share`), and the session's later accesses get nothing more.
#[test]
fn an_access_takes_its_frames_from_what_the_share_left() {
    let w = World::new();
    w.write("repo/GEMINI.md", "root rules\n");
    for i in 0..40 {
        w.write(&format!("repo/d{i}/GEMINI.md"), &"word ".repeat(60));
    }
    let policy = w.write(
        "share.toml",
        "version = 1\nextends = \"gemini\"\n[instructions]\nproject-prompt-bytes = 3000\n",
    );
    let snap = snapshot(&w, &policy);
    let chain = snap["projectShare"]["used"].as_u64().unwrap();
    assert!(chain < 3000);
    let mut input = String::new();
    for i in 0..40 {
        input += &json!({
            "id": i,
            "op": "access",
            "cwd": w.repo,
            "path": w.repo.join(format!("d{i}/x.rs")),
        })
        .to_string();
        input.push('\n');
    }
    let out = w
        .cli()
        .env("HOME", w.path("user"))
        .arg("--policy")
        .arg(&policy)
        .args(["serve", "--jobs", "1"])
        .write_stdin(input)
        .output()
        .unwrap();
    assert!(out.status.success());
    let answers: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let given: usize = answers
        .iter()
        .map(|a| a["access"]["prompt"].as_str().unwrap().len())
        .sum();
    assert!(
        chain as usize + given <= 3000,
        "the chain took {chain} and the accesses {given} of a share of 3000"
    );
    assert!(answers.iter().any(|a| {
        a["access"]["skipped"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["reason"] == "prompt-share")
    }));
    assert!(
        answers[0]["access"]["instructionFiles"]
            .as_array()
            .unwrap()
            .len()
            == 1
    );
}
