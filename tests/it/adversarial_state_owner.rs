//! A state folder others can write (issue 49, item 4).
//!
//! The state folder (`roots.state`: the home root under Lisa's policy, a
//! private folder of the loader's own under the compat policies) holds the
//! nonce key and the trust store. With the folder open to other users
//! (mode 0777), another user can plant a key (and so know the nonce) or a
//! trust store approving text under `trust.project = "pinned"`; a file of it
//! another user owns was planted. The stance is git's `safe.directory`: a
//! state folder that is not this user's alone, or that holds a state file
//! that is not, is not used at all: a warning (`unsafe-state`), no read and
//! no write of its files, the nonce from the process's own key, and nothing
//! approved. Under every shipped policy, from the command line and from
//! `serve`.

use std::fs;
use std::io::Write as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::{Value, json};

use crate::support::{self, World};
use crate::validate;

/// The project files the shipped policies read (one at least each).
const PROJECT_FILES: &[&str] = &["AGENTS.md", "CLAUDE.md", "GEMINI.md", ".rules"];

/// A world with home notes, project rules and a pinning policy over
/// `base`; returns it with the pinning policy file and a plain one.
fn world(base: &str) -> (World, PathBuf, PathBuf) {
    let w = World::new();
    w.write("home/AGENTS.md", "home notes\n");
    for f in PROJECT_FILES {
        w.write(&format!("repo/{f}"), "project rules\n");
    }
    let pinned = w.write(
        "pinned.toml",
        &format!("version = 1\nextends = \"{base}\"\n[trust]\nproject = \"pinned\"\n"),
    );
    let plain = w.write(
        "plain.toml",
        &format!("version = 1\nextends = \"{base}\"\n"),
    );
    (w, pinned, plain)
}

/// Runs the command line with `policy` and `args`, `--cwd` the repository.
fn run(w: &World, policy: &Path, args: &[&str]) -> std::process::Output {
    w.cli()
        .env("HOME", &w.base)
        .arg("--policy")
        .arg(policy)
        .args(args)
        .arg("--cwd")
        .arg(&w.repo)
        .output()
        .unwrap()
}

/// `snapshot --format json`, checked against the schema.
fn snapshot(w: &World, policy: &Path) -> Value {
    let out = run(w, policy, &["snapshot", "--format", "json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    validate::snapshot(&json);
    json
}

/// The nonce a prompt's boundary lines carry.
fn nonce(snap: &Value) -> String {
    let prompt = snap["prompt"].as_str().unwrap();
    let at = prompt.find("<<<").expect("a boundary line") + 3;
    prompt[at..at + 16].to_string()
}

/// The `unsafe-state` warnings of a snapshot, as (path, message).
fn unsafe_state(snap: &Value) -> Vec<(String, String)> {
    snap["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["kind"] == "unsafe-state")
        .map(|w| {
            (
                w["path"].as_str().unwrap().to_string(),
                w["message"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The state folder of `w` under `base`, once a first run made it.
fn state_folder(w: &World, base: &str) -> PathBuf {
    if base == "lisa" {
        return w.home.clone();
    }
    let dir = w.base.join("state/lisa-context");
    let mut names: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(names.len(), 1, "{base}: one state folder");
    names.remove(0)
}

fn chmod(path: &Path, mode: u32) {
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

/// Under one policy: approvals made and a key kept while the folder is
/// private; then the folder opened to everyone and a key of the attacker's
/// planted. Neither the key nor the approvals are used, nothing there is
/// written, and the warning says so.
fn open_state_folder_is_not_used(base: &str) {
    let (w, pinned, plain) = world(base);
    // The user approves the repository's files while the folder is theirs.
    let out = run(&w, &pinned, &["trust", "approve", "--all"]);
    assert!(out.status.success(), "{base}: {out:?}");
    let safe = snapshot(&w, &pinned);
    assert!(unsafe_state(&safe).is_empty(), "{base}: {safe}");
    assert_eq!(safe["unapproved"], json!([]), "{base}: approved");
    assert!(
        safe["prompt"].as_str().unwrap().contains("project rules"),
        "{base}: the approved file is in: {safe}"
    );
    let state = state_folder(&w, base);
    let key = state.join("context-nonce.key");
    let store = state.join("context-trust.json");
    // The attacker's key: with the folder private, it would key the nonce.
    fs::write(&key, [7u8; 32]).unwrap();
    let keyed = nonce(&snapshot(&w, &plain));
    assert_eq!(keyed, nonce(&snapshot(&w, &plain)), "{base}: a kept key");

    chmod(&state, 0o777);
    let store_before = fs::read(&store).unwrap();
    let open = snapshot(&w, &pinned);
    let warned = unsafe_state(&open);
    assert_eq!(warned.len(), 1, "{base}: {open}");
    assert_eq!(Path::new(&warned[0].0), state, "{base}");
    assert!(warned[0].1.contains("mode 777"), "{base}: {}", warned[0].1);
    // Pinned approvals fail closed: nothing is approved, no project text.
    assert!(
        !open["unapproved"].as_array().unwrap().is_empty(),
        "{base}: the planted store approves nothing: {open}"
    );
    assert!(
        !open["prompt"].as_str().unwrap().contains("project rules"),
        "{base}: {open}"
    );
    // The planted key is not read: each process keys its own nonce.
    let (one, two) = (nonce(&snapshot(&w, &plain)), nonce(&snapshot(&w, &plain)));
    assert_ne!(one, keyed, "{base}: the planted key was used");
    assert_ne!(one, two, "{base}: a per-process key");
    // Nothing is written there: the key and the store are as planted, and
    // the trust commands refuse.
    assert_eq!(fs::read(&key).unwrap(), [7u8; 32], "{base}");
    let approve = run(&w, &pinned, &["trust", "approve", "--all"]);
    assert!(!approve.status.success(), "{base}: approve must fail");
    let said = String::from_utf8_lossy(&approve.stderr);
    assert!(said.contains("unsafe-state"), "{base}: {said}");
    let status = run(&w, &pinned, &["trust", "status"]);
    assert!(!status.status.success(), "{base}: status must fail");
    assert_eq!(fs::read(&store).unwrap(), store_before, "{base}");
    // A key removed is not created again in an open folder.
    fs::remove_file(&key).unwrap();
    snapshot(&w, &plain);
    assert!(!key.exists(), "{base}: no key written in an open folder");
    // Group-writable is open too.
    chmod(&state, 0o775);
    assert_eq!(unsafe_state(&snapshot(&w, &plain)).len(), 1, "{base}");
    // Made private again, it is used again.
    chmod(&state, 0o700);
    let back = snapshot(&w, &pinned);
    assert!(unsafe_state(&back).is_empty(), "{base}: {back}");
    assert_eq!(back["unapproved"], json!([]), "{base}");
}

#[test]
fn a_state_folder_others_can_write_is_not_used_under_every_policy() {
    for base in lisa_context::policy::SHIPPED_NAMES {
        open_state_folder_is_not_used(base);
    }
}

/// Under one policy: a state file another user owns (as planted through a
/// folder that was open once) makes the whole folder unused.
fn foreign_state_file_is_refused(base: &str) {
    let (w, pinned, plain) = world(base);
    let out = run(&w, &pinned, &["trust", "approve", "--all"]);
    assert!(out.status.success(), "{base}: {out:?}");
    let state = state_folder(&w, base);
    let store = state.join("context-trust.json");
    for name in [
        "context-nonce.key",
        "context-trust.json",
        "context-frontmatter.memo",
    ] {
        let file = state.join(name);
        let planted = !file.exists();
        if planted {
            fs::write(&file, b"planted").unwrap();
        }
        let keyed = nonce(&snapshot(&w, &plain));
        std::os::unix::fs::chown(&file, Some(12345), Some(12345)).unwrap();
        let before = fs::read(&file).unwrap();
        let store_before = fs::read(&store).unwrap();
        let snap = snapshot(&w, &pinned);
        let warned = unsafe_state(&snap);
        assert_eq!(warned.len(), 1, "{base}, {name}: {snap}");
        assert_eq!(Path::new(&warned[0].0), file, "{base}, {name}");
        assert!(warned[0].1.contains("uid 12345"), "{base}: {}", warned[0].1);
        assert!(
            !snap["unapproved"].as_array().unwrap().is_empty(),
            "{base}, {name}: nothing approved: {snap}"
        );
        let now = nonce(&snapshot(&w, &plain));
        assert_ne!(now, keyed, "{base}, {name}: the state's key was used");
        assert!(
            !run(&w, &pinned, &["trust", "approve", "--all"])
                .status
                .success()
        );
        assert_eq!(fs::read(&file).unwrap(), before, "{base}, {name}");
        assert_eq!(fs::read(&store).unwrap(), store_before, "{base}, {name}");
        // Given back to the user, the folder is used again.
        std::os::unix::fs::chown(&file, Some(0), Some(0)).unwrap();
        if planted {
            fs::remove_file(&file).unwrap();
        }
        assert!(unsafe_state(&snapshot(&w, &plain)).is_empty(), "{base}");
    }
}

#[test]
fn a_state_file_another_user_owns_is_refused_under_every_policy() {
    if !support::running_as_root() {
        eprintln!("skipped: a file of another user needs root to make");
        return;
    }
    for base in lisa_context::policy::SHIPPED_NAMES {
        foreign_state_file_is_refused(base);
    }
}

/// Runs `serve` (`--policy base`, own home `w.home`, more args) on
/// `requests`, answering one by one; each request's answer, in order.
/// `between` runs after the answer of the request of that index.
fn serve(
    w: &World,
    base: &str,
    args: &[&str],
    requests: &[Value],
    mut between: impl FnMut(usize),
) -> Vec<Value> {
    use std::io::BufRead as _;
    let mut child = w
        .command()
        .env("HOME", &w.base)
        .args(["--policy", base, "serve", "--jobs", "1"])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut answers = Vec::new();
    for (i, r) in requests.iter().enumerate() {
        let mut r = r.clone();
        r["id"] = json!(i);
        writeln!(stdin, "{r}").unwrap();
        stdin.flush().unwrap();
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        let answer: Value = serde_json::from_str(&line).unwrap();
        validate::response(&answer);
        answers.push(answer);
        between(i);
    }
    drop(stdin);
    assert!(child.wait().unwrap().success());
    answers
}

#[test]
fn serve_uses_no_state_folder_others_can_write_and_notices_a_change() {
    // The server's own home, under Lisa's policy (the home is the state
    // folder) and a compat one (a folder of the loader's own): a first
    // answer with the folder private, then opened, then private again.
    // Each answer is the one a fresh build gives: a cached answer is not
    // served past a change of who may write the folder.
    for base in ["lisa", "codex"] {
        let (w, _, _) = world(base);
        let snap = json!({"op": "snapshot", "cwd": w.repo});
        let mut state = None;
        let answers = serve(&w, base, &[], &[snap.clone(), snap.clone(), snap], |i| {
            let folder = state.get_or_insert_with(|| state_folder(&w, base));
            chmod(folder, if i == 0 { 0o777 } else { 0o700 });
        });
        let warned = |a: &Value| unsafe_state(&a["snapshot"]);
        assert!(warned(&answers[0]).is_empty(), "{base}: {}", answers[0]);
        assert_eq!(warned(&answers[1]).len(), 1, "{base}: {}", answers[1]);
        assert!(warned(&answers[2]).is_empty(), "{base}: {}", answers[2]);
        assert_ne!(
            answers[0]["snapshot"]["fingerprint"], answers[1]["snapshot"]["fingerprint"],
            "{base}"
        );
        // The nonce is the kept key's again once the folder is private.
        assert_eq!(
            nonce(&answers[0]["snapshot"]),
            nonce(&answers[2]["snapshot"]),
            "{base}"
        );
    }
}

#[test]
fn a_served_home_others_can_write_keeps_no_state() {
    // `--homes-under`: a home open to everyone is still served (the
    // admission asks whose it is, not who may write it), but under Lisa's
    // policy, where it is the state folder, nothing is read or written
    // there; under codex its own state folder is judged the same way.
    for base in ["lisa", "codex"] {
        let (w, _, _) = world(base);
        let homes = w.mkdir("homes");
        let a = homes.join("a");
        support::write_file(&a.join("AGENTS.md"), "notes of A\n");
        let request = json!({"op": "snapshot", "cwd": w.repo, "home": a});
        if base == "lisa" {
            chmod(&a, 0o777);
        } else {
            // The first answer makes the home's state folder; then it is
            // opened.
            serve(
                &w,
                base,
                &["--homes-under", homes.to_str().unwrap()],
                std::slice::from_ref(&request),
                |_| {},
            );
            let dir = w.base.join("state/lisa-context");
            for e in fs::read_dir(&dir).unwrap() {
                chmod(&e.unwrap().path(), 0o777);
            }
        }
        let answers = serve(
            &w,
            base,
            &["--homes-under", homes.to_str().unwrap()],
            &[request],
            |_| {},
        );
        let warned = unsafe_state(&answers[0]["snapshot"]);
        assert!(!warned.is_empty(), "{base}: {}", answers[0]);
        if base == "lisa" {
            assert_eq!(Path::new(&warned[0].0), a);
            assert!(!a.join("context-nonce.key").exists(), "no key written");
            assert!(!a.join("context-frontmatter.memo").exists());
        }
    }
}
