//! `lisa-context mcp`'s listing against `lisa-context skill list` on one
//! tree: a repository of 200 project skills (each a `SKILL.md` of about
//! 2 KB and one supporting file of about 1 KB) and 3 home skills. Issue 52
//! asks that a listing of 200 skills answer within 2x a `skill list` of the
//! same tree. Three pairs, each side measured in the same run, interleaved,
//! one `RATIO ...` line per pair:
//!
//! * `mcp_process` vs `skill_list_process`: the binaries, each started
//!   anew: `mcp --cwd REPO`, `initialize`, then `skills/list` page after
//!   page to the end (every file of every skill read and digested), then
//!   stdin closed; against `skill list --format json --cwd REPO`;
//! * `mcp_live_skills_list` vs `skill_list_process`: the listing alone, on a
//!   server already running (what a host waits for when it lists), against
//!   the same `skill list` run;
//! * `skill_manifests_op` vs `skill_list_op`: in the process, through the
//!   operation core the server answers with (`protocol::answer`, the ops
//!   `snapshot` then `skill-manifests`), each on a fresh `Loader` (a cold
//!   build), against what `skill list` computes (`snapshot_in` and
//!   `SkillList::of`) on a fresh `Loader`.
//!
//! Run on demand: `cargo bench --bench mcp`. `cargo test --benches` runs
//! each side once and prints no figures.
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "examples and benches build their demo trees on the real disk"
)]

use std::hint::black_box;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};

use lisa_context::Loader;
use lisa_context::policy::Policy;
use lisa_context::protocol::{Answer, Request, SkillList, answer};
use serde_json::{Value, json};
use tempfile::TempDir;

mod common;
use common::*;

const BIN: &str = env!("CARGO_BIN_EXE_lisa-context");
const SKILLS: usize = 200;
const HOME_SKILLS: usize = 3;

struct Tree {
    _tmp: TempDir,
    home: PathBuf,
    repo: PathBuf,
    state: PathBuf,
}

fn skill(rng: &mut Lcg, folder: &Path, name: &str) {
    std::fs::create_dir_all(folder.join("scripts")).unwrap();
    let mut description = sentence(rng);
    while description.len() < 130 {
        description.push(' ');
        description.push_str(&sentence(rng));
    }
    description.truncate(150);
    std::fs::write(
        folder.join("SKILL.md"),
        format!(
            "---\nname: {name}\ndescription: {}\nlicense: MIT\n---\n{}",
            description.trim_end(),
            text(rng, 1900, 2200)
        ),
    )
    .unwrap();
    std::fs::write(
        folder.join("scripts/run.sh"),
        format!("#!/bin/sh\n# {}\n", text(rng, 900, 1100)),
    )
    .unwrap();
}

fn tree() -> Tree {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut rng = Lcg(52);
    let home = tmp.path().join("home");
    let repo = tmp.path().join("repo");
    let state = tmp.path().join("state");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::create_dir_all(&state).unwrap();
    for i in 0..HOME_SKILLS {
        let name = format!("home-{i}");
        skill(&mut rng, &home.join("skills").join(&name), &name);
    }
    for i in 0..SKILLS {
        let name = format!(
            "{}-{}-{i:04}",
            WORDS[rng.below(WORDS.len())],
            WORDS[rng.below(WORDS.len())]
        );
        skill(&mut rng, &repo.join(".lisa/skills").join(&name), &name);
    }
    Tree {
        _tmp: tmp,
        home,
        repo,
        state,
    }
}

fn command(t: &Tree) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.env_remove("LISA_HOME")
        .env("XDG_STATE_HOME", &t.state)
        .arg("--home")
        .arg(&t.home);
    cmd
}

// ---------------------------------------------------------------------------
// The binaries.

fn skill_list_process(t: &Tree) -> usize {
    let out = command(t)
        .args(["skill", "list", "--format", "json", "--cwd"])
        .arg(&t.repo)
        .stderr(Stdio::null())
        .output()
        .expect("skill list");
    assert!(out.status.success());
    out.stdout.len()
}

/// A running `mcp` server, initialized.
struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: std::io::Lines<BufReader<std::process::ChildStdout>>,
    next: u64,
}

impl Server {
    fn start(t: &Tree) -> Server {
        let mut child = command(t)
            .arg("mcp")
            .arg("--cwd")
            .arg(&t.repo)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("mcp");
        let stdin = child.stdin.take();
        let lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
        let mut s = Server {
            child,
            stdin,
            lines,
            next: 0,
        };
        s.call(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "bench", "version": "0"}}),
        );
        s.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        s
    }

    fn send(&mut self, m: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin");
        writeln!(stdin, "{m}").expect("write");
        stdin.flush().expect("flush");
    }

    fn call(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = json!(self.next);
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let line = self.lines.next().expect("a line").expect("text");
            let m: Value = serde_json::from_str(&line).expect("JSON");
            if m.get("method").is_none() && m.get("id") == Some(&id) {
                assert!(m.get("error").is_none(), "{method}: {m}");
                return m["result"].clone();
            }
        }
    }

    /// Every skill entry, page after page: how many.
    fn list_all(&mut self) -> usize {
        let (mut n, mut cursor) = (0, None::<String>);
        loop {
            let params = cursor.map_or_else(|| json!({}), |c| json!({ "cursor": c }));
            let r = self.call("skills/list", params);
            n += r["skills"].as_array().map_or(0, Vec::len);
            match r["nextCursor"].as_str() {
                Some(c) => cursor = Some(c.to_string()),
                None => return n,
            }
        }
    }

    fn stop(mut self) {
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}

fn mcp_process(t: &Tree) -> usize {
    let mut s = Server::start(t);
    let n = s.list_all();
    s.stop();
    n
}

// ---------------------------------------------------------------------------
// In the process, through the operation core.

fn skill_list_op(t: &Tree) -> usize {
    let loader = Loader::new(policy(), Some(t.home.clone()));
    let snap = loader.snapshot_in(&t.repo, None).expect("snapshot");
    let list = SkillList::of(&snap);
    serde_json::to_vec(&list).expect("json").len()
}

fn skill_manifests_op(t: &Tree) -> usize {
    let loader = Loader::new(policy(), Some(t.home.clone()));
    let ask = |v: Value| {
        answer(
            &loader,
            serde_json::from_value::<Request>(v).expect("request"),
        )
    };
    let names: Vec<String> = match ask(json!({"op": "snapshot", "cwd": t.repo})) {
        Ok(Answer::Snapshot { snapshot }) => {
            snapshot.skills.iter().map(|s| s.name.clone()).collect()
        }
        _ => panic!("snapshot"),
    };
    match ask(json!({"op": "skill-manifests", "cwd": t.repo, "names": names})) {
        Ok(Answer::SkillManifests { manifests }) => {
            assert!(manifests.iter().all(|m| m.not_served.is_none()));
            manifests.iter().map(|m| m.files.len()).sum()
        }
        _ => panic!("skill-manifests"),
    }
}

fn policy() -> Policy {
    Policy::builtin().expect("built-in policy")
}

fn main() {
    let quick = !bench_mode();
    let t = tree();
    // Both sides see the same skills.
    let mut live = Server::start(&t);
    assert_eq!(live.list_all(), SKILLS + HOME_SKILLS);
    assert_eq!(mcp_process(&t), SKILLS + HOME_SKILLS);
    assert_eq!(skill_manifests_op(&t), 2 * (SKILLS + HOME_SKILLS));
    black_box(skill_list_op(&t));
    black_box(skill_list_process(&t));

    ratio(
        quick,
        "mcp",
        &format!("mcp_process/{SKILLS}"),
        &format!("skill_list_process/{SKILLS}"),
        &mut || {
            black_box(mcp_process(&t));
        },
        &mut || {
            black_box(skill_list_process(&t));
        },
    );
    ratio(
        quick,
        "mcp",
        &format!("mcp_live_skills_list/{SKILLS}"),
        &format!("skill_list_process/{SKILLS}"),
        &mut || {
            black_box(live.list_all());
        },
        &mut || {
            black_box(skill_list_process(&t));
        },
    );
    ratio(
        quick,
        "mcp",
        &format!("skill_manifests_op/{SKILLS}"),
        &format!("skill_list_op/{SKILLS}"),
        &mut || {
            black_box(skill_manifests_op(&t));
        },
        &mut || {
            black_box(skill_list_op(&t));
        },
    );
    live.stop();
}
