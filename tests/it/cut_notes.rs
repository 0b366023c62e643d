//! The notes after a cut block state only what is true (issue 49, item
//! 9): a file the read stopped short of its end is described by its size
//! on disk, never by the size of the part read.

use std::ffi::OsString;
use std::io::Write as _;
use std::process::{Output, Stdio};

use serde_json::{Value, json};

use crate::support::World;
use crate::validate;

fn cli(w: &World, policy: &OsString, args: &[&str]) -> Output {
    w.command()
        .arg("--policy")
        .arg(policy)
        .args(args)
        .arg("--cwd")
        .arg(&w.repo)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// `serve`'s snapshot of the repository, under `policy`.
fn served_snapshot(w: &World, policy: &OsString) -> Value {
    let mut child = w
        .command()
        .arg("--policy")
        .arg(policy)
        .args(["serve", "--jobs", "1"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let request = json!({"id": 1, "op": "snapshot", "cwd": w.repo.to_str().unwrap()});
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(format!("{request}\n").as_bytes()).unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let response: Value = serde_json::from_slice(&out.stdout).unwrap();
    validate::response(&response);
    response["snapshot"].clone()
}

fn snapshot_json(w: &World, policy: &OsString) -> Value {
    let out = cli(w, policy, &["snapshot", "--format", "json"]);
    assert!(out.status.success(), "{out:?}");
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    validate::snapshot(&json);
    json
}

/// A file the read stopped short of its end is described by its
/// real size, never by the size of the part read: cut at the per-file cap
/// when that cap is the budget (Lisa's policy: 32,768 each), stopped where
/// the budget left could use no more, or cut by a character cap after the
/// per-file cap stopped the read.
#[test]
fn a_file_read_only_in_part_is_described_by_its_real_size() {
    // 37,768 bytes under Lisa's policy: read as far as 32,768.
    let w = World::new();
    w.write("repo/AGENTS.md", &"x".repeat(37_768));
    let arg: OsString = "lisa".into();
    let snap = snapshot_json(&w, &arg);
    let block = &snap["instructionFiles"][0];
    assert_eq!(block["bytes"], 37_768, "{block}");
    assert_eq!(block["includedBytes"], 32_768, "{block}");
    for prompt in [
        snap["prompt"].as_str().unwrap().to_string(),
        String::from_utf8(cli(&w, &arg, &["snapshot"]).stdout).unwrap(),
        served_snapshot(&w, &arg)["prompt"]
            .as_str()
            .unwrap()
            .to_string(),
    ] {
        assert!(
            prompt.contains("the context budget ran out after 32768 of this file's 37768 bytes"),
            "{}",
            &prompt[prompt.len().saturating_sub(300)..]
        );
        assert!(!prompt.contains("of this file's 32768 bytes"));
    }
    let explain = String::from_utf8(cli(&w, &arg, &["explain"]).stdout).unwrap();
    let row = explain
        .lines()
        .find(|l| l.starts_with("truncated"))
        .unwrap_or_else(|| panic!("{explain}"));
    assert!(row.contains("32768 of 37768 bytes"), "{row}");

    // The budget left stops the read: the home's 20,000 bytes leave
    // 12,768, and a 100,000-byte file is read only a little further.
    let w = World::new();
    w.write("home/AGENTS.md", &"h".repeat(20_000));
    w.write("repo/AGENTS.md", &"x".repeat(100_000));
    let snap = snapshot_json(&w, &arg);
    let prompt = snap["prompt"].as_str().unwrap();
    assert!(
        prompt.contains("the context budget ran out after 12768 of this file's 100000 bytes"),
        "{}",
        &prompt[prompt.len().saturating_sub(300)..]
    );

    // A character cap after the per-file cap stopped the read: the text's
    // length is unknown, so the file's size is given, not the part read's.
    let w = World::new();
    w.write("repo/AGENTS.md", &"x".repeat(100_000));
    let team = w.write(
        "chars.toml",
        "version = 1\n[instructions]\ncompat.max-file-chars = 1000\n",
    );
    let snap = snapshot_json(&w, &team.into_os_string());
    let prompt = snap["prompt"].as_str().unwrap();
    assert!(
        !prompt.contains("32768 characters"),
        "the part read's length is not the text's: {prompt}"
    );
    assert!(
        prompt.contains("this file has 100000 bytes; only its first 32768 were read"),
        "{}",
        &prompt[prompt.len().saturating_sub(300)..]
    );
}
