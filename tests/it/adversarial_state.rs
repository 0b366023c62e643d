//! Where the loader keeps its own files (issue 28, item 17): never in
//! another harness's folder. Under Lisa's policy the state root is the home
//! (`~/.lisa`); under the compat policies, whose home is the peer's own
//! folder (`~/.codex`, `~/.gemini`, `~/.claude`), it is a folder of the
//! loader's own under `$XDG_STATE_HOME/lisa-context/`, one per home,
//! created with mode 0700.

use std::fs;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use crate::support::{self, World};

/// The files in `dir` (names), sorted; none when it does not exist.
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

/// The one folder under `state/lisa-context/`, if exactly one.
fn state_folder(w: &World) -> Option<PathBuf> {
    let base = w.base.join("state/lisa-context");
    let names = names_in(&base);
    match names.as_slice() {
        [one] => Some(base.join(one)),
        _ => None,
    }
}

/// A world with a home skill, a project skill and an instruction file, and
/// a pinning policy laid over `base`.
fn world(base: &str) -> (World, PathBuf) {
    let w = World::new();
    w.write("home/AGENTS.md", "home rules");
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

/// Runs snapshot, fingerprint, trust approve --all and trust status.
fn use_it(w: &World, policy: &Path) {
    for args in [
        &["snapshot"][..],
        &["fingerprint"],
        &["trust", "approve", "--all"],
        &["trust", "status"],
    ] {
        let out = w
            .cli()
            .env("HOME", &w.base)
            .arg("--policy")
            .arg(policy)
            .args(args)
            .arg("--cwd")
            .arg(&w.repo)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn the_compat_policies_keep_their_state_out_of_the_peers_folder() {
    for base in ["codex", "gemini", "claude-code"] {
        let (w, policy) = world(base);
        let home_before = names_in(&w.home);
        use_it(&w, &policy);
        assert_eq!(
            names_in(&w.home),
            home_before,
            "--policy {base}: nothing is written in the peer's folder"
        );
        let state = state_folder(&w)
            .unwrap_or_else(|| panic!("--policy {base}: one state folder per home"));
        let held = names_in(&state);
        assert!(
            held.contains(&"context-nonce.key".to_string())
                && held.contains(&"context-trust.json".to_string()),
            "--policy {base}: the nonce key and the trust store are kept there: {held:?}"
        );
        let mode = fs::metadata(&state).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700, "--policy {base}: the state folder is private");
        // The approvals made there are the ones read back.
        let out = w
            .cli()
            .env("HOME", &w.base)
            .arg("--policy")
            .arg(&policy)
            .args(["snapshot", "--format", "json", "--cwd"])
            .arg(&w.repo)
            .output()
            .unwrap();
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            json["unapproved"].as_array().map(Vec::len),
            Some(0),
            "--policy {base}: {json}"
        );
    }
}

#[test]
fn lisas_policy_keeps_its_state_in_its_own_home() {
    let (w, policy) = world("lisa");
    use_it(&w, &policy);
    let held = names_in(&w.home);
    assert!(
        held.contains(&"context-nonce.key".to_string())
            && held.contains(&"context-trust.json".to_string()),
        "{held:?}"
    );
    assert!(state_folder(&w).is_none(), "no other state folder");
}

#[test]
fn two_homes_under_one_policy_keep_separate_state() {
    let (w, policy) = world("codex");
    use_it(&w, &policy);
    let other = w.mkdir("other-home");
    let out = assert_cmd::Command::cargo_bin("lisa-context")
        .unwrap()
        .env_remove("LISA_HOME")
        .env("XDG_STATE_HOME", w.base.join("state"))
        .env("HOME", &w.base)
        .arg("--home")
        .arg(&other)
        .arg("--policy")
        .arg(&policy)
        .args(["snapshot", "--cwd"])
        .arg(&w.repo)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(names_in(&w.base.join("state/lisa-context")).len(), 2);
}

#[test]
fn a_state_folder_another_user_owns_holds_nothing_of_ours() {
    if !support::running_as_root() {
        eprintln!("skipped: making a folder another user's needs root");
        return;
    }
    let (w, policy) = world("codex");
    // Someone else made the folder first (a shared XDG_STATE_HOME).
    use_it(&w, &policy);
    let state = state_folder(&w).unwrap();
    fs::remove_dir_all(&state).unwrap();
    fs::create_dir_all(&state).unwrap();
    std::os::unix::fs::chown(&state, Some(65534), Some(65534)).unwrap();
    let out = w
        .cli()
        .env("HOME", &w.base)
        .arg("--policy")
        .arg(&policy)
        .args(["snapshot", "--cwd"])
        .arg(&w.repo)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(
        names_in(&state).is_empty(),
        "nothing is written into another user's folder"
    );
}
