//! The server under pressure (issue 28, items 15 and 16): it starts with the
//! worker threads the system grants, refuses a `--jobs` beyond its cap, and
//! what a request can make it hold per session is bounded.

use std::io::Write as _;
use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::{Command, Stdio};

use lisa_context::Loader;
use serde_json::{Value, json};

use crate::support::{self, World};

/// One request line.
fn req(id: u64, op: &str, cwd: &Path, extra: Value) -> String {
    let mut r = json!({"id": id, "op": op, "cwd": cwd});
    if let (Some(r), Some(extra)) = (r.as_object_mut(), extra.as_object()) {
        r.extend(extra.clone());
    }
    r.to_string()
}

/// Runs `cmd` with `input` on stdin; its status, stdout lines (as JSON) and
/// stderr.
fn run(mut cmd: Command, input: &str) -> (std::process::ExitStatus, Vec<Value>, String) {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Written on its own thread: the answers are read meanwhile, so a long
    // input cannot fill both pipes.
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_owned();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    // A server that hangs (as one did when a worker could not be started)
    // fails the test instead of stalling the suite.
    let pid = rustix::process::Pid::from_child(&child);
    let (done, finished) = std::sync::mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let out = child.wait_with_output();
        let _ = done.send(());
        out
    });
    if finished
        .recv_timeout(std::time::Duration::from_secs(120))
        .is_err()
    {
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        panic!("the server did not finish within two minutes");
    }
    let out = waiter.join().unwrap().unwrap();
    writer.join().unwrap().unwrap();
    let lines = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (
        out.status,
        lines,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A repository with 300 skills (a source big enough to be examined on
/// several threads) and a nested instruction file.
fn busy_world() -> World {
    let w = World::new();
    w.write("repo/AGENTS.md", "root rules");
    w.write("repo/pkg/AGENTS.md", "pkg rules");
    for i in 0..300 {
        w.write(
            &format!("repo/.lisa/skills/s{i:03}/SKILL.md"),
            &format!("---\nname: s{i:03}\ndescription: skill {i}\n---\nbody\n"),
        );
    }
    w
}

/// The requests both runs answer: snapshots, skills and accesses.
fn requests(w: &World) -> String {
    let mut lines = Vec::new();
    for i in 0..40 {
        let cwd = if i % 2 == 0 {
            w.repo.clone()
        } else {
            w.repo.join("pkg")
        };
        lines.push(req(i, "snapshot", &cwd, json!({})));
    }
    lines.push(req(40, "skill", &w.repo, json!({"name": "s123"})));
    lines.push(req(
        41,
        "access",
        &w.repo,
        json!({"path": w.repo.join("pkg/x.rs")}),
    ));
    lines.join("\n") + "\n"
}

/// What a response says, without its nonce-bearing prompt.
fn gist(v: &Value) -> Value {
    if let Some(s) = v.get("snapshot") {
        json!({
            "files": s["instructionFiles"].as_array().map(|a| a.len()),
            "skills": s["skills"].as_array().map(|a| a.len()),
        })
    } else if let Some(s) = v.get("skill") {
        json!({"skill": s["name"]})
    } else if let Some(a) = v.get("access") {
        json!({"access": a["instructionFiles"].as_array().map(|a| a.len())})
    } else {
        v.clone()
    }
}

/// The gists of `lines`, ordered by id.
fn gists(lines: &[Value]) -> Vec<(u64, Value)> {
    let mut g: Vec<_> = lines
        .iter()
        .map(|v| (v["id"].as_u64().unwrap(), gist(v)))
        .collect();
    g.sort_by_key(|(id, _)| *id);
    g
}

#[test]
fn serve_starts_with_the_workers_the_system_grants() {
    if !support::running_as_root() {
        eprintln!("skipped: RLIMIT_NPROC is only set for a dropped uid, which needs root");
        return;
    }
    const NOBODY: u32 = support::NOBODY;
    // The built binary may sit where nobody cannot reach it (a clone in a
    // folder only root can enter): nobody runs a copy beside the world.
    let bin = match support::SharedBinary::new() {
        Ok(bin) => bin,
        Err(why) => {
            eprintln!("skipped: {why}");
            return;
        }
    };
    let w = busy_world();
    // The home is nobody's, so the nonce key and memo can be written.
    std::os::unix::fs::chown(&w.home, Some(NOBODY), Some(NOBODY)).unwrap();
    std::fs::set_permissions(&w.base, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let input = requests(&w);
    let server = |nproc: Option<u64>| {
        let mut cmd = w.command_of(&bin.path);
        cmd.args(["serve", "--jobs", "8"]).uid(NOBODY).gid(NOBODY);
        if let Some(n) = nproc {
            // SAFETY: setrlimit is async-signal-safe; the closure allocates
            // nothing.
            unsafe {
                cmd.pre_exec(move || {
                    let limit = rustix::process::Rlimit {
                        current: Some(n),
                        maximum: Some(n),
                    };
                    rustix::process::setrlimit(rustix::process::Resource::Nproc, limit)
                        .map_err(std::io::Error::from)
                });
            }
        }
        run(cmd, &input)
    };
    let (status, free, stderr) = server(None);
    assert!(status.success(), "{stderr}");
    assert_eq!(free.len(), 42, "{stderr}");
    let expected = gists(&free);
    assert!(
        expected.iter().all(|(_, g)| g.get("error").is_none()),
        "{expected:?}"
    );
    assert_eq!(expected[0].1["skills"], 300);
    // One process for nobody: the main thread, no worker. Two: one worker
    // (and no helper for the big skill source, which is examined on the
    // calling thread then).
    for (nproc, said) in [(1, "answering on the main thread"), (2, "serving with ")] {
        let (status, lines, stderr) = server(Some(nproc));
        assert!(
            status.success(),
            "RLIMIT_NPROC {nproc}: {status:?} {stderr}"
        );
        assert!(
            stderr.contains("of 8 workers") && stderr.contains(said),
            "RLIMIT_NPROC {nproc}: the server says how many workers it got: {stderr}"
        );
        assert_eq!(
            gists(&lines),
            expected,
            "RLIMIT_NPROC {nproc}: the same answers"
        );
    }
}

#[test]
fn serve_refuses_more_jobs_than_its_cap() {
    let w = World::new();
    for jobs in ["257", "2000", "0"] {
        let out = w.cli().args(["serve", "--jobs", jobs]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "--jobs {jobs}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("--jobs"), "--jobs {jobs}: {stderr}");
        assert!(out.stdout.is_empty());
    }
    let (status, lines, stderr) = run(
        {
            let mut c = w.command();
            c.args(["serve", "--jobs", "256"]);
            c
        },
        &(req(1, "snapshot", &w.repo, json!({})) + "\n"),
    );
    assert!(status.success(), "{stderr}");
    assert!(lines[0].get("snapshot").is_some(), "{lines:?}");
}

#[test]
fn a_session_name_over_the_bound_is_a_bad_request_in_serve() {
    let w = World::new();
    w.write("repo/pkg/AGENTS.md", "pkg rules");
    let long = "s".repeat(Loader::MAX_SESSION_NAME_BYTES + 1);
    let ok = "s".repeat(Loader::MAX_SESSION_NAME_BYTES);
    let path = w.repo.join("pkg/x.rs");
    let input = [
        req(1, "access", &w.repo, json!({"path": path, "session": long})),
        req(2, "access", &w.repo, json!({"path": path, "session": ok})),
    ]
    .join("\n")
        + "\n";
    let (status, lines, stderr) = run(
        {
            let mut c = w.command();
            c.args(["serve", "--jobs", "1"]);
            c
        },
        &input,
    );
    assert!(status.success(), "{stderr}");
    assert_eq!(lines[0]["error"]["code"], "bad-request", "{:?}", lines[0]);
    assert!(lines[1].get("access").is_some(), "{:?}", lines[1]);
}

#[test]
fn a_failed_access_leaves_no_session_behind() {
    let w = World::new();
    w.write("repo/pkg/AGENTS.md", "pkg rules");
    let loader = w.loader();
    // Requests about cwds that do not exist, each path 3 KiB long: before,
    // each left a session (its name, cwd and root) in the loader.
    for i in 0..200 {
        let cwd = w.base.join(format!("gone{i}")).join("d/".repeat(1500));
        let root = cwd.join("r");
        assert!(
            loader
                .access_named(&format!("s{i}"), &cwd, Some(&root), &cwd.join("x"))
                .is_err()
        );
    }
    assert_eq!(lisa_context::internals::sessions_held(&loader), (0, 0));
    // A session that worked once is kept, and a later failure keeps it.
    let pkg = w.repo.join("pkg/x.rs");
    loader.access_named("a", &w.repo, None, &pkg).unwrap();
    let (n, bytes) = lisa_context::internals::sessions_held(&loader);
    assert_eq!(n, 1);
    assert!(bytes < 4 * 4096, "{bytes}");
}

#[test]
fn a_session_records_a_bounded_number_of_files() {
    let w = World::new();
    let n = Loader::MAX_SESSION_FILES + 10;
    for i in 0..n {
        w.write(&format!("repo/d{i}/AGENTS.md"), &format!("rules {i}"));
    }
    let policy = w.write(
        "big.toml",
        // Room for every file: the chain's budget and the repository's
        // share of the prompt bound a session too, and this test is about
        // the bound on the files it records.
        "version = 1\n[instructions]\non-access = true\naccess-budget-bytes = 1000000\n\
         budget-bytes = 1000000\nproject-prompt-bytes = 16000000\n",
    );
    let mut input = String::new();
    for i in 0..n {
        input += &req(
            i as u64,
            "access",
            &w.repo,
            json!({"path": w.repo.join(format!("d{i}/x.rs"))}),
        );
        input.push('\n');
    }
    let (status, lines, stderr) = run(
        {
            let mut c = w.command();
            c.arg("--policy")
                .arg(&policy)
                .args(["serve", "--jobs", "1"]);
            c
        },
        &input,
    );
    assert!(status.success(), "{stderr}");
    assert_eq!(lines.len(), n);
    let loaded: Vec<usize> = lines
        .iter()
        .map(|l| {
            l["access"]["instructionFiles"]
                .as_array()
                .unwrap_or_else(|| panic!("{l}"))
                .len()
        })
        .collect();
    let full = Loader::MAX_SESSION_FILES;
    assert!(loaded[..full].iter().all(|&k| k == 1), "{loaded:?}");
    assert!(
        loaded[full..].iter().all(|&k| k == 0),
        "a full session loads nothing more: {:?}",
        &loaded[full..]
    );
    // It answers as a session whose budget is spent.
    let last = &lines[n - 1]["access"];
    assert_eq!(last["budget"]["exhausted"], true, "{last}");
    assert_eq!(last["skipped"][0]["reason"], "budget-exhausted", "{last}");
    assert!(
        last["budget"]["used"].as_u64().unwrap() < 1_000_000,
        "{last}"
    );
}
