//! One server, many homes: a request may name its `home` (below the
//! server's `--homes-under DIR`); each home brings its own policy, nonce
//! key, trust store and memo, and every answer is the one a fresh build
//! with that home gives. Homes outside DIR, reached through a link, or
//! named to a server without the flag are refused.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::validate;

const BIN: &str = env!("CARGO_BIN_EXE_lisa-context");

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

struct Tree {
    _tmp: tempfile::TempDir,
    own: PathBuf,
    homes: PathBuf,
    a: PathBuf,
    b: PathBuf,
    repo: PathBuf,
}

fn tree() -> Tree {
    let tmp = tempfile::tempdir().unwrap();
    let own = tmp.path().join("own");
    let homes = tmp.path().join("homes");
    let a = homes.join("a");
    let b = homes.join("b");
    let repo = tmp.path().join("repo");
    write(&own.join("AGENTS.md"), "the server's own notes");
    write(&a.join("AGENTS.md"), "notes of A");
    write(
        &a.join("context-policy.toml"),
        "version = 1\n[templates]\nheading = \"# A's context\"\n",
    );
    write(
        &a.join("skills/release/SKILL.md"),
        "---\nname: release\ndescription: A's release\n---\nA.\n",
    );
    write(&b.join("AGENTS.md"), "notes of B");
    write(
        &b.join("context-policy.toml"),
        "version = 1\n[trust]\nproject = \"pinned\"\n",
    );
    fs::create_dir_all(repo.join(".git")).unwrap();
    write(&repo.join("AGENTS.md"), "repo rule");
    write(&repo.join("CLAUDE.md"), "a second repo rule");
    Tree {
        _tmp: tmp,
        own,
        homes,
        a,
        b,
        repo,
    }
}

fn cli(home: &Path, args: &[&str]) -> String {
    let out = Command::new(BIN)
        .env_remove("LISA_HOME")
        .env_remove("LISA_CONTEXT_POLICY")
        .arg("--home")
        .arg(home)
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// Runs `serve` with `args` on `requests`; the responses by id.
fn serve(own: &Path, args: &[&str], requests: &[Value]) -> Vec<Value> {
    let mut child = Command::new(BIN)
        .env_remove("LISA_HOME")
        .env_remove("LISA_CONTEXT_POLICY")
        .arg("--home")
        .arg(own)
        .arg("serve")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        let mut stdin = child.stdin.take().unwrap();
        for r in requests {
            writeln!(stdin, "{r}").unwrap();
        }
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let mut responses: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for r in &responses {
        validate::response(r);
    }
    responses.sort_by_key(|r| r["id"].as_u64());
    responses
}

#[test]
fn each_home_is_answered_as_a_fresh_build_with_it() {
    let t = tree();
    // B approves only the repository's AGENTS.md.
    cli(
        &t.b,
        &[
            "trust",
            "approve",
            "--cwd",
            s(&t.repo),
            s(&t.repo.join("AGENTS.md")),
        ],
    );
    let under = ["--homes-under", s(&t.homes), "--jobs", "4"];
    let repo = s(&t.repo);
    let mut requests = Vec::new();
    let homes: [Option<&Path>; 3] = [Some(&t.a), Some(&t.b), None];
    for round in 0..3 {
        for (k, home) in homes.iter().enumerate() {
            let id = round * 10 + k;
            let mut r = json!({ "id": id, "op": "snapshot", "cwd": repo });
            if let Some(h) = home {
                r["home"] = json!(s(h));
            }
            requests.push(r);
        }
    }
    requests
        .push(json!({ "id": 100, "op": "skill", "cwd": repo, "name": "release", "home": s(&t.a) }));
    requests
        .push(json!({ "id": 101, "op": "skill", "cwd": repo, "name": "release", "home": s(&t.b) }));
    requests.push(json!({ "id": 102, "op": "trust-status", "cwd": repo, "home": s(&t.b) }));
    let responses = serve(&t.own, &under, &requests);
    let by_id = |id: u64| {
        responses
            .iter()
            .find(|r| r["id"] == json!(id))
            .unwrap_or_else(|| panic!("no response {id}"))
    };
    for (k, home) in [&t.a, &t.b, &t.own].iter().enumerate() {
        let fresh: Value =
            serde_json::from_str(&cli(home, &["snapshot", "--cwd", repo, "--format", "json"]))
                .unwrap();
        for round in 0..3 {
            let got = &by_id((round * 10 + k) as u64)["snapshot"];
            assert_eq!(got["prompt"], fresh["prompt"], "home {}", home.display());
            assert_eq!(got["fingerprint"], fresh["fingerprint"]);
            assert_eq!(got["home"], json!(s(home)));
        }
    }
    let a = &by_id(0)["snapshot"];
    let b = &by_id(1)["snapshot"];
    let own = &by_id(2)["snapshot"];
    // A's policy, B's approvals, each home's own notes and nonce.
    assert!(a["prompt"].as_str().unwrap().starts_with("# A's context"));
    assert!(!b["prompt"].as_str().unwrap().starts_with("# A's context"));
    assert!(a["prompt"].as_str().unwrap().contains("notes of A"));
    assert!(b["prompt"].as_str().unwrap().contains("notes of B"));
    assert!(
        own["prompt"]
            .as_str()
            .unwrap()
            .contains("the server's own notes")
    );
    assert!(
        !b["prompt"].as_str().unwrap().contains("a second repo rule"),
        "B pinned"
    );
    assert!(a["prompt"].as_str().unwrap().contains("a second repo rule"));
    for home in [&t.a, &t.b, &t.own] {
        assert!(
            home.join("context-nonce.key").is_file(),
            "{}",
            home.display()
        );
    }
    assert_eq!(by_id(100)["skill"]["origin"], "home");
    assert_eq!(by_id(101)["error"]["code"], "skill-not-found");
    assert!(by_id(102)["trust"]["items"].as_array().unwrap().len() >= 2);
}

#[test]
fn homes_outside_below_a_link_or_unasked_are_refused() {
    let t = tree();
    let outside = t.own.parent().unwrap().join("elsewhere");
    fs::create_dir_all(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, t.homes.join("link")).unwrap();
    let repo = s(&t.repo);
    let ask =
        |id: u64, home: &str| json!({ "id": id, "op": "snapshot", "cwd": repo, "home": home });
    let requests = [
        ask(1, s(&outside)),
        ask(2, s(&t.homes.join("link"))),
        ask(3, s(&t.homes.join("a/../../elsewhere"))),
        ask(4, s(&t.homes.join("missing"))),
        ask(5, "relative/home"),
        ask(6, s(&t.homes)),
        ask(7, s(&t.a)),
    ];
    let responses = serve(&t.own, &["--homes-under", s(&t.homes)], &requests);
    let code = |r: &Value| r["error"]["code"].as_str().unwrap_or("").to_string();
    assert_eq!(code(&responses[0]), "home-refused", "{}", responses[0]);
    assert_eq!(code(&responses[1]), "home-refused", "{}", responses[1]);
    assert_eq!(code(&responses[2]), "home-refused", "{}", responses[2]);
    assert_eq!(code(&responses[3]), "home-refused", "{}", responses[3]);
    assert_eq!(code(&responses[4]), "bad-request", "{}", responses[4]);
    assert_eq!(code(&responses[5]), "home-refused", "{}", responses[5]);
    assert!(responses[6]["snapshot"].is_object(), "{}", responses[6]);
    // Nothing was written outside the homes.
    assert!(!outside.join("context-nonce.key").exists());
    // Without --homes-under, no request may name a home.
    let responses = serve(&t.own, &[], &[ask(1, s(&t.b))]);
    assert_eq!(code(&responses[0]), "home-refused");
    assert!(!t.b.join("context-nonce.key").exists());
}

#[test]
fn a_server_keeping_one_home_and_two_snapshots_still_answers_each_home_as_fresh() {
    let t = tree();
    let repo = s(&t.repo);
    let tight = [
        "--homes-under",
        s(&t.homes),
        "--jobs",
        "1",
        "--homes-max",
        "1",
        "--cache-entries",
        "2",
        "--handle-budget",
        "2",
    ];
    let order: [Option<&Path>; 7] = [
        Some(&t.a),
        Some(&t.b),
        Some(&t.a),
        None,
        Some(&t.b),
        Some(&t.a),
        None,
    ];
    let requests: Vec<Value> = order
        .iter()
        .enumerate()
        .map(|(id, home)| {
            let mut r = json!({ "id": id, "op": "snapshot", "cwd": repo });
            if let Some(h) = home {
                r["home"] = json!(s(h));
            }
            r
        })
        .collect();
    let responses = serve(&t.own, &tight, &requests);
    assert_eq!(responses.len(), order.len());
    for (id, home) in order.iter().enumerate() {
        let home = home.unwrap_or(&t.own);
        let fresh: Value =
            serde_json::from_str(&cli(home, &["snapshot", "--cwd", repo, "--format", "json"]))
                .unwrap();
        let got = &responses[id]["snapshot"];
        assert_eq!(got["prompt"], fresh["prompt"], "request {id}");
        assert_eq!(got["fingerprint"], fresh["fingerprint"], "request {id}");
    }
    // Out of range: a usage error.
    for bad in [["--homes-max", "0"], ["--handle-budget", "0"]] {
        let out = Command::new(BIN).arg("serve").args(bad).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
    }
}
