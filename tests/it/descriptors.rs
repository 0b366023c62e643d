//! File descriptors are bounded: a loader keeps at most its budget of root
//! handles open, a cached snapshot whose root handle was closed opens it
//! again, and running out of descriptors is an error (after one retry with
//! every handle shed), never a file recorded as `unreadable`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use lisa_context::Loader;
use lisa_context::policy::Policy;
use serde_json::{Value, json};

use crate::validate;

const BIN: &str = env!("CARGO_BIN_EXE_lisa-context");

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A home with a skill, and `n` repositories, each with an instruction file
/// at the root and one level down, and a project skill.
fn world(n: usize) -> (tempfile::TempDir, PathBuf, Vec<PathBuf>) {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    write(&home.join("AGENTS.md"), "home rules");
    write(
        &home.join("skills/release/SKILL.md"),
        "---\nname: release\ndescription: cut a release\n---\nSteps.\n",
    );
    let cwds = (0..n)
        .map(|i| {
            let repo = tmp.path().join(format!("repo-{i}"));
            std::fs::create_dir_all(repo.join(".git")).unwrap();
            write(&repo.join("AGENTS.md"), &format!("repo {i} rules"));
            write(&repo.join("src/AGENTS.md"), &format!("repo {i} src rules"));
            write(
                &repo.join(format!(".agents/skills/task-{i}/SKILL.md")),
                &format!("---\nname: task-{i}\ndescription: task {i}\n---\nDo {i}.\n"),
            );
            repo.join("src")
        })
        .collect();
    (tmp, home, cwds)
}

fn fresh(home: &Path, cwd: &Path) -> lisa_context::Snapshot {
    lisa_context::build(&Policy::builtin().unwrap(), Some(home), cwd, None).unwrap()
}

#[test]
fn a_loader_keeps_at_most_its_budget_of_root_handles() {
    let (_tmp, home, cwds) = world(12);
    let loader = Loader::builder()
        .home(&home)
        .env(|_| None)
        .handle_budget(3)
        .build()
        .unwrap();
    // Twice round: the second pass finds every snapshot cached, most of
    // their roots closed since.
    for round in 0..2 {
        for (i, cwd) in cwds.iter().enumerate() {
            let snap = loader.snapshot(cwd).unwrap();
            let want = fresh(&home, cwd);
            assert_eq!(
                snap.fingerprint, want.fingerprint,
                "round {round}, repo {i}"
            );
            assert_eq!(snap.prompt, want.prompt);
            assert!(loader.open_handles() <= 3, "{}", loader.open_handles());
            // A skill of a cached snapshot is read through a reopened root.
            let skill = loader.skill(cwd, &format!("task-{i}")).unwrap();
            assert!(skill.content.contains(&format!("Do {i}.")));
            let home_skill = loader.skill(cwd, "release").unwrap();
            assert!(home_skill.content.contains("Steps."));
        }
    }
    assert_eq!(loader.cached_entries(), 12);
    // An edit under a root whose handle was closed is still seen.
    write(&cwds[0].join("AGENTS.md"), "changed rules");
    let snap = loader.snapshot(&cwds[0]).unwrap();
    assert!(snap.prompt.contains("changed rules"));
    assert_eq!(snap.fingerprint, fresh(&home, &cwds[0]).fingerprint);
}

/// `sh -c 'ulimit -n N; exec BIN ARGS...'`: the command with a low limit on
/// open files, without unsafe code in the test.
fn limited(n: u32, home: &Path, args: &[&str]) -> Command {
    let mut c = Command::new("sh");
    c.arg("-c")
        .arg(format!("ulimit -n {n} && exec \"$0\" \"$@\""))
        .arg(BIN)
        .arg("--home")
        .arg(home)
        .args(args)
        .env_remove("LISA_HOME");
    c
}

#[test]
fn running_out_of_descriptors_is_an_error_not_an_unreadable_file() {
    let (_tmp, home, cwds) = world(1);
    let cwd = cwds[0].to_str().unwrap();
    // Five descriptors: stdin, stdout, stderr and the two roots; not one
    // left to open a file with.
    let out = limited(5, &home, &["snapshot", "--format", "json", "--cwd", cwd])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(1),
        "stdout: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(stderr.contains("file descriptors"), "{stderr}");
    assert!(out.stdout.is_empty());
    // With enough of them the same command succeeds.
    let out = limited(64, &home, &["fingerprint", "--cwd", cwd])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        fresh(&home, &cwds[0]).fingerprint
    );
}

#[test]
fn serve_answers_a_hundred_repositories_under_a_low_descriptor_limit() {
    let (_tmp, home, cwds) = world(100);
    let mut child = limited(40, &home, &["serve"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = Vec::new();
    // Each repository twice (the second pass checks cached snapshots whose
    // roots were closed), then a skill of each.
    for round in 0..2 {
        for (i, cwd) in cwds.iter().enumerate() {
            let line = json!({ "id": round * 1000 + i, "op": "fingerprint", "cwd": cwd });
            writeln!(input, "{line}").unwrap();
        }
    }
    for (i, cwd) in cwds.iter().enumerate() {
        let line =
            json!({ "id": 5000 + i, "op": "skill", "cwd": cwd, "name": format!("task-{i}") });
        writeln!(input, "{line}").unwrap();
    }
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let responses: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    responses.iter().for_each(validate::response);
    assert_eq!(responses.len(), 300);
    let by_id = |id: usize| {
        let found: Vec<&Value> = responses.iter().filter(|r| r["id"] == json!(id)).collect();
        assert_eq!(found.len(), 1, "one answer for {id}");
        found[0]
    };
    for (i, cwd) in cwds.iter().enumerate() {
        let want = fresh(&home, cwd).fingerprint;
        for round in 0..2 {
            let r = by_id(round * 1000 + i);
            assert_eq!(r["fingerprint"].as_str(), Some(want.as_str()), "{r}");
        }
        let r = by_id(5000 + i);
        let content = r["skill"]["content"]
            .as_str()
            .unwrap_or_else(|| panic!("{r}"));
        assert!(content.contains(&format!("Do {i}.")));
    }
}
