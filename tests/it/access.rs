//! On-access loading: touching a path loads the instruction files of the
//! folders between the repository root and it that the session's chain did
//! not hold, once each per session, inside the sandbox.

use std::process::Command;

use lisa_context::{Loader, Session};

use crate::support::World;

/// A loader on the shipped policy `policy`, `$HOME` being the world's home.
fn shipped(w: &World, policy: &str) -> Loader {
    let home = w.home.clone();
    Loader::builder()
        .shipped_policy(policy)
        .env(move |k| (k == "HOME").then(|| home.clone().into_os_string()))
        .build()
        .unwrap()
}

fn session(w: &World, cwd: &str) -> Session {
    Session::new(w.path(cwd), None)
}

/// The instruction files touching `path` loads, relative to `base`.
fn touch(w: &World, loader: &Loader, session: &mut Session, path: &str) -> Vec<String> {
    let access = loader.access(session, &w.path(path)).unwrap();
    access
        .instruction_files
        .iter()
        .map(|b| {
            b.path
                .strip_prefix(&w.base)
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect()
}

/// Gemini's files at every level of `repo/a/b/c` and `repo/x/y`.
fn tree() -> (World, Loader) {
    let w = World::new();
    let loader = shipped(&w, "gemini");
    w.write("repo/GEMINI.md", "root\n");
    w.write("repo/a/GEMINI.md", "a\n");
    w.write("repo/a/b/GEMINI.md", "b\n");
    w.write("repo/a/b/c/GEMINI.md", "c\n");
    w.write("repo/a/b/c/main.rs", "fn main() {}\n");
    w.write("repo/x/GEMINI.md", "x\n");
    w.write("repo/x/y/GEMINI.md", "y\n");
    (w, loader)
}

#[test]
fn files_below_the_cwd_load_once_each() {
    let (w, loader) = tree();
    let mut s = session(&w, "repo/a");
    assert_eq!(
        touch(&w, &loader, &mut s, "repo/a/b/c/main.rs"),
        ["repo/a/b/GEMINI.md", "repo/a/b/c/GEMINI.md"]
    );
    assert!(touch(&w, &loader, &mut s, "repo/a/b/c/main.rs").is_empty());
    assert!(touch(&w, &loader, &mut s, "repo/a/b").is_empty());
    // A folder beside the cwd is not the session's: nothing, and no error.
    assert!(touch(&w, &loader, &mut s, "repo/x/y/file.txt").is_empty());
    // Another session starts afresh.
    let mut other = session(&w, "repo/a");
    assert_eq!(
        touch(&w, &loader, &mut other, "repo/a/b"),
        ["repo/a/b/GEMINI.md"]
    );
}

#[test]
fn dot_dot_is_resolved_and_outside_the_root_is_an_error() {
    let (w, loader) = tree();
    let mut s = session(&w, "repo");
    assert_eq!(
        touch(&w, &loader, &mut s, "repo/a/b/../../x/y"),
        ["repo/x/GEMINI.md", "repo/x/y/GEMINI.md"]
    );
    let outside = loader.access(&mut s, &w.base.join("repo/../home/AGENTS.md"));
    assert!(
        matches!(outside, Err(lisa_context::AccessError::OutsideRoot { .. })),
        "{outside:?}"
    );
    // A relative path is taken from the cwd.
    let access = loader
        .access(&mut s, std::path::Path::new("a/b/c"))
        .unwrap();
    assert_eq!(access.instruction_files.len(), 3);
}

#[test]
fn a_linked_folder_leaving_the_root_loads_nothing() {
    let (w, loader) = tree();
    w.write("outside/GEMINI.md", "SECRET\n");
    std::os::unix::fs::symlink(w.base.join("outside"), w.base.join("repo/a/out")).unwrap();
    let mut s = session(&w, "repo/a");
    let access = loader
        .access(&mut s, &w.base.join("repo/a/out/file.md"))
        .unwrap();
    assert!(access.instruction_files.is_empty());
    assert!(!access.prompt.contains("SECRET"));
    let reasons: Vec<_> = access.skipped.iter().map(|k| k.reason.as_str()).collect();
    assert_eq!(reasons, ["symlink-escape"]);
}

#[test]
fn the_blocks_carry_the_sessions_nonce_and_the_budget_spans_the_session() {
    let (w, loader) = tree();
    let mut s = session(&w, "repo/a");
    let snap = loader.snapshot(&w.base.join("repo/a")).unwrap();
    let access = loader.access(&mut s, &w.base.join("repo/a/b/c")).unwrap();
    assert!(
        access
            .prompt
            .contains(&format!("<<<{} project file", snap.nonce))
    );
    assert!(access.prompt.contains("<<<") && access.prompt.contains(" end>>>"));
    // Gemini counts nothing; a Lisa-like budget does.
    assert_eq!(access.budget.used, 0);
}

#[test]
fn a_policy_without_on_access_loads_nothing() {
    let w = World::new();
    let loader = shipped(&w, "lisa");
    w.write("repo/a/AGENTS.md", "a\n");
    let mut s = session(&w, "repo");
    assert!(touch(&w, &loader, &mut s, "repo/a/file.rs").is_empty());
}

#[test]
fn the_command_line_answers_one_access() {
    let (w, _loader) = tree();
    let run = |path: &str| {
        Command::new(env!("CARGO_BIN_EXE_lisa-context"))
            .args(["--policy", "gemini", "--home"])
            .arg(w.base.join("home"))
            .args(["access", path, "--format", "json", "--cwd"])
            .arg(w.base.join("repo/a"))
            .output()
            .unwrap()
    };
    let out = run("b/c/main.rs");
    assert!(out.status.success(), "{out:?}");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["instructionFiles"].as_array().map(Vec::len), Some(2));
    let out = run("/etc/passwd");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("outside the repository root"), "{err}");
}
