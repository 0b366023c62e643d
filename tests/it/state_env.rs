//! `LISA_CONTEXT_STATE` (issue 49, item 10): a folder of the operator's
//! where every shipped policy keeps the loader's own files (the nonce key,
//! the frontmatter memo, the trust store and its lock), one folder per home
//! below it. With it set, nothing is written in a home: not by the command
//! line, and not by a server of many homes (`serve --homes-under`), whose
//! homes are its users' (under Lisa's policy the state root is otherwise the
//! home itself).

use std::collections::BTreeSet;
use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::support::World;

const BIN: &str = env!("CARGO_BIN_EXE_lisa-context");

/// Every path below `dir` (relative, folders too), sorted; none when it
/// does not exist.
fn tree_of(dir: &Path) -> BTreeSet<PathBuf> {
    let mut out = BTreeSet::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = fs::read_dir(&d) else {
            continue;
        };
        for e in entries.filter_map(Result::ok) {
            let p = e.path();
            out.insert(p.strip_prefix(dir).unwrap().to_path_buf());
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(p);
            }
        }
    }
    out
}

/// The names of the entries of `dir`, sorted.
fn names_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .map(|r| {
            r.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// A home with notes and a skill, a repository with notes and a project
/// skill, and a policy file laying `trust.project = "pinned"` over the
/// shipped policy `base` (so that approvals are written too).
fn world(base: &str) -> (World, PathBuf) {
    let w = World::new();
    w.write("home/AGENTS.md", "home rules");
    w.write(
        "home/skills/mine/SKILL.md",
        "---\nname: mine\ndescription: the user's own\n---\nbody\n",
    );
    w.write("repo/AGENTS.md", "repo rules");
    w.write(
        "repo/.agents/skills/tool/SKILL.md",
        "---\nname: tool\ndescription: a tool\n---\nbody\n",
    );
    let policy = w.write(
        "pinned.toml",
        &format!("version = 1\nextends = \"{base}\"\n[trust]\nproject = \"pinned\"\n"),
    );
    (w, policy)
}

/// The command line with this world's home, `HOME` and `XDG_STATE_HOME`
/// inside the world, and `LISA_CONTEXT_STATE` set to `state`.
fn cli(w: &World, state: &Path) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.env_remove("LISA_HOME")
        .env_remove("LISA_CONTEXT_POLICY")
        .env("HOME", &w.base)
        .env("XDG_STATE_HOME", w.base.join("xdg"))
        .env("LISA_CONTEXT_STATE", state)
        .arg("--home")
        .arg(&w.home);
    cmd
}

#[test]
fn lisa_context_state_keeps_every_write_out_of_the_home_under_every_policy() {
    for &base in lisa_context::policy::SHIPPED_NAMES {
        let (w, policy) = world(base);
        let state = w.base.join("operator-state");
        let (home_before, repo_before) = (tree_of(&w.home), tree_of(&w.repo));
        for args in [
            &["snapshot"][..],
            &["fingerprint"],
            &["trust", "approve", "--all"],
            &["trust", "status"],
        ] {
            let out = cli(&w, &state)
                .arg("--policy")
                .arg(&policy)
                .args(args)
                .arg("--cwd")
                .arg(&w.repo)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "--policy {base} {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        assert_eq!(
            tree_of(&w.home),
            home_before,
            "--policy {base}: nothing is written in the home"
        );
        assert_eq!(
            tree_of(&w.repo),
            repo_before,
            "--policy {base}: nor in the repository"
        );
        assert!(
            !w.base.join("xdg").exists(),
            "--policy {base}: LISA_CONTEXT_STATE comes before $XDG_STATE_HOME"
        );
        // One folder for the home, holding the nonce key and the approvals.
        let folders = names_in(&state);
        assert_eq!(folders.len(), 1, "--policy {base}: {folders:?}");
        let held = names_in(&state.join(&folders[0]));
        for file in ["context-nonce.key", "context-trust.json"] {
            assert!(
                held.iter().any(|h| h == file),
                "--policy {base}: {file} is kept in the operator's folder: {held:?}"
            );
        }
        // The approvals made there are the ones read back.
        let out = cli(&w, &state)
            .arg("--policy")
            .arg(&policy)
            .args(["snapshot", "--format", "json", "--cwd"])
            .arg(&w.repo)
            .output()
            .unwrap();
        let snap: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            snap["unapproved"].as_array().map(Vec::len),
            Some(0),
            "--policy {base}: {snap}"
        );
    }
}

/// Runs `serve` (home `own`, `args`) with `LISA_CONTEXT_STATE` set to
/// `state` on `requests`; the responses.
fn serve(w: &World, own: &Path, state: &Path, args: &[&str], requests: &[Value]) -> Vec<Value> {
    let mut child = Command::new(BIN)
        .env_remove("LISA_HOME")
        .env_remove("LISA_CONTEXT_POLICY")
        .env("HOME", &w.base)
        .env("XDG_STATE_HOME", w.base.join("xdg"))
        .env("LISA_CONTEXT_STATE", state)
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
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_server_of_many_homes_writes_in_none_of_them_with_lisa_context_state() {
    for &base in lisa_context::policy::SHIPPED_NAMES {
        let w = World::new();
        let own = w.mkdir("own");
        let homes = w.mkdir("users");
        let (a, b) = (homes.join("ada"), homes.join("bob"));
        for (home, name) in [(&a, "ada"), (&b, "bob")] {
            w.write(
                &format!("users/{name}/AGENTS.md"),
                &format!("notes of {name}"),
            );
            w.write(
                &format!("users/{name}/skills/{name}-notes/SKILL.md"),
                &format!("---\nname: {name}-notes\ndescription: {name}'s\n---\nbody\n"),
            );
            assert!(home.is_dir());
        }
        w.write("repo/AGENTS.md", "repo rules");
        let state = w.base.join("operator-state");
        let before = (tree_of(&a), tree_of(&b), tree_of(&own));
        let repo = w.repo.to_str().unwrap();
        let mut requests = Vec::new();
        for (i, home) in [&a, &b].iter().enumerate() {
            let home = home.to_str().unwrap();
            requests.push(json!({ "id": 10 * i, "op": "snapshot", "cwd": repo, "home": home }));
            requests
                .push(json!({ "id": 10 * i + 1, "op": "trust-status", "cwd": repo, "home": home }));
        }
        requests.push(json!({ "id": 99, "op": "snapshot", "cwd": repo }));
        let responses = serve(
            &w,
            &own,
            &state,
            &["--policy", base, "--homes-under", homes.to_str().unwrap()],
            &requests,
        );
        assert_eq!(responses.len(), requests.len(), "--policy {base}");
        for r in &responses {
            assert!(r.get("error").is_none(), "--policy {base}: {r}");
        }
        assert_eq!(
            (tree_of(&a), tree_of(&b), tree_of(&own)),
            before,
            "--policy {base}: nothing is written in any home served"
        );
        // One folder per home, each with its own nonce key.
        let folders = names_in(&state);
        assert_eq!(folders.len(), 3, "--policy {base}: {folders:?}");
        let keys: BTreeSet<Vec<u8>> = folders
            .iter()
            .map(|f| fs::read(state.join(f).join("context-nonce.key")).unwrap())
            .collect();
        assert_eq!(keys.len(), 3, "--policy {base}: each home its own key");
    }
}

#[test]
fn a_relative_lisa_context_state_is_no_candidate() {
    // A candidate that does not expand to an absolute path is skipped, as
    // for `roots.home`: under Lisa's policy the home is the state root then.
    let (w, policy) = world("lisa");
    let out = cli(&w, Path::new("relative/state"))
        .arg("--policy")
        .arg(&policy)
        .args(["snapshot", "--cwd"])
        .arg(&w.repo)
        .current_dir(&w.base)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(!w.base.join("relative").exists());
    assert!(w.home.join("context-nonce.key").is_file());
}

#[test]
fn the_manual_names_lisa_context_state() {
    let out = Command::new(BIN).arg("man").output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let page = String::from_utf8(out.stdout).unwrap();
    let env = page
        .split(".SH ENVIRONMENT")
        .nth(1)
        .and_then(|rest| rest.split(".SH ").next())
        .unwrap_or_default();
    assert!(env.contains("\\fBLISA_CONTEXT_STATE\\fR"), "{env}");
}
