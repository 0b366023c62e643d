//! A served home swapped after its first request (issue 49, item 2).
//!
//! `serve --homes-under H` admits a home a request names when it is a real
//! directory below H, with no link on the way, that the server's user owns.
//! That rule must hold at every request, not only at the first: after a
//! first answer for `H/a`, `H/a` is replaced by a link to another home, by a
//! link to a folder outside H, or handed to another owner, and the next
//! requests for `H/a` must be refused (`home-refused`), never answered from
//! what the path now leads to, and nothing may be written there. The real
//! `serve` binary is driven over stdin and stdout, one request at a time,
//! under every shipped policy (Lisa's keeps its state in the home itself,
//! the others in a folder of their own: both are covered).

use std::collections::BTreeMap;
use std::fs;
use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support;
use crate::validate;

/// The home files the shipped policies read, one of them at least per
/// policy that reads any: each says whose home it is in.
const HOME_FILES: &[&str] = &[
    "AGENTS.md",
    "CLAUDE.md",
    "GEMINI.md",
    "copilot-instructions.md",
    "rules/home.md",
    "steering/home.md",
    "memories/global_rules.md",
    ".agents/AGENTS.md",
];

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// Fills `dir` with a home saying `who` in every file a policy reads.
fn home_of(dir: &Path, who: &str) {
    for f in HOME_FILES {
        write(&dir.join(f), &format!("notes of {who}\n"));
    }
}

/// Every file and folder below `dir`, with its size (files) and owner: what
/// "nothing was written there" compares.
fn listing(dir: &Path) -> BTreeMap<PathBuf, (bool, u64, u32)> {
    use std::os::unix::fs::MetadataExt as _;
    let mut out = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(entries) = fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            let m = fs::symlink_metadata(&p).unwrap();
            out.insert(
                p.strip_prefix(dir).unwrap().to_path_buf(),
                (m.is_dir(), m.len(), m.uid()),
            );
            if m.is_dir() {
                todo.push(p);
            }
        }
    }
    out
}

/// A running `serve`, answering one request at a time.
struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    next: u64,
}

impl Server {
    fn start(own: &Path, homes: &Path, state: &Path, policy: &str) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_lisa-context"))
            .env_remove("LISA_HOME")
            .env_remove("LISA_CONTEXT_POLICY")
            .env("XDG_STATE_HOME", state)
            .env("HOME", own)
            .arg("--home")
            .arg(own)
            .args(["--policy", policy, "serve", "--jobs", "1", "--homes-under"])
            .arg(homes)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Server {
            child,
            stdin,
            lines,
            next: 0,
        }
    }

    /// Sends `request` (an id added) and waits for its answer.
    fn ask(&mut self, mut request: Value) -> Value {
        self.next += 1;
        request["id"] = json!(self.next);
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{request}").unwrap();
        stdin.flush().unwrap();
        // A bound on a hung server, not a timing assumption: an answer
        // comes in milliseconds.
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(120))
            .expect("the server answers");
        let answer: Value = serde_json::from_str(&line).unwrap();
        validate::response(&answer);
        assert_eq!(answer["id"], json!(self.next), "{answer}");
        answer
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // End of input ends the server; it must exit cleanly.
        drop(self.stdin.take());
        let status = self.child.wait().unwrap();
        if !std::thread::panicking() {
            assert!(status.success(), "serve exited with {status}");
        }
    }
}

/// How `H/a` is changed after its first answer.
#[derive(Debug, Clone, Copy)]
enum Swap {
    /// Replaced by a link to the home `H/b`.
    LinkToOtherHome,
    /// Replaced by a link to a folder outside H.
    LinkOutside,
    /// Handed to another user (uid 12345); root only.
    Chown,
}

struct Tree {
    _tmp: tempfile::TempDir,
    own: PathBuf,
    homes: PathBuf,
    a: PathBuf,
    b: PathBuf,
    outside: PathBuf,
    state: PathBuf,
    repo: PathBuf,
}

fn tree() -> Tree {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().to_path_buf();
    let t = Tree {
        own: base.join("own"),
        homes: base.join("homes"),
        a: base.join("homes/a"),
        b: base.join("homes/b"),
        outside: base.join("outside"),
        state: base.join("state"),
        repo: base.join("repo"),
        _tmp: tmp,
    };
    fs::create_dir_all(&t.own).unwrap();
    home_of(&t.a, "home A");
    home_of(&t.b, "home B");
    home_of(&t.outside, "the outside folder");
    fs::create_dir_all(t.repo.join(".git")).unwrap();
    write(&t.repo.join("AGENTS.md"), "repo rules\n");
    t
}

/// The requests a client may send about a home: none may be answered from
/// what the home's path leads to once it changed.
fn requests(t: &Tree) -> Vec<Value> {
    let (home, cwd) = (&t.a, &t.repo);
    vec![
        json!({"op": "snapshot", "cwd": cwd, "home": home}),
        json!({"op": "fingerprint", "cwd": cwd, "home": home}),
        json!({"op": "refresh", "cwd": cwd, "home": home, "fingerprint": "x"}),
        json!({"op": "trust-status", "cwd": cwd, "home": home}),
        json!({"op": "rule", "cwd": cwd, "home": home, "name": "home"}),
        json!({"op": "access", "cwd": cwd, "home": home, "path": cwd.join("x.rs")}),
    ]
}

/// One policy, one swap: a first answer for `H/a`, the swap, then every
/// request again.
fn swapped_home_is_refused(policy: &str, swap: Swap) {
    let t = tree();
    let mut server = Server::start(&t.own, &t.homes, &t.state, policy);
    let first = server.ask(json!({"op": "snapshot", "cwd": t.repo, "home": t.a}));
    let prompt = first["snapshot"]["prompt"]
        .as_str()
        .unwrap_or_else(|| panic!("--policy {policy}: {first}"));
    if policy == "lisa" {
        assert!(prompt.contains("notes of home A"), "{prompt}");
        assert!(t.a.join("context-nonce.key").is_file());
    }
    // The place the path will lead to, as it is before the swap.
    let target = match swap {
        Swap::LinkToOtherHome => t.b.clone(),
        Swap::LinkOutside => t.outside.clone(),
        Swap::Chown => t.a.clone(),
    };
    match swap {
        Swap::LinkToOtherHome | Swap::LinkOutside => {
            fs::rename(&t.a, t.homes.join("a.old")).unwrap();
            std::os::unix::fs::symlink(&target, &t.a).unwrap();
        }
        Swap::Chown => {
            std::os::unix::fs::chown(&t.a, Some(12345), Some(12345)).unwrap();
        }
    }
    let before = listing(&target);
    for request in requests(&t) {
        let answer = server.ask(request.clone());
        let text = answer.to_string();
        assert_eq!(
            answer["error"]["code"], "home-refused",
            "--policy {policy}, {swap:?}: {request} answered {answer}"
        );
        assert!(
            answer["error"]["message"].as_str().is_some(),
            "an error like the others: {answer}"
        );
        for other in ["notes of home B", "notes of the outside folder"] {
            assert!(
                !text.contains(other),
                "--policy {policy}, {swap:?}: {request} answered from the swapped-in folder: {answer}"
            );
        }
    }
    drop(server);
    assert_eq!(
        listing(&target),
        before,
        "--policy {policy}, {swap:?}: nothing is written where the swapped path leads"
    );
}

#[test]
fn a_home_replaced_by_a_link_to_another_home_is_refused_under_every_policy() {
    for policy in lisa_context::policy::SHIPPED_NAMES {
        swapped_home_is_refused(policy, Swap::LinkToOtherHome);
    }
}

#[test]
fn a_home_replaced_by_a_link_outside_the_homes_is_refused_under_every_policy() {
    for policy in lisa_context::policy::SHIPPED_NAMES {
        swapped_home_is_refused(policy, Swap::LinkOutside);
    }
}

#[test]
fn a_home_handed_to_another_user_is_refused_under_every_policy() {
    if !support::running_as_root() {
        eprintln!("skipped: handing a folder to another user needs root");
        return;
    }
    for policy in lisa_context::policy::SHIPPED_NAMES {
        swapped_home_is_refused(policy, Swap::Chown);
    }
}

#[test]
fn a_home_below_a_folder_replaced_by_a_link_is_refused() {
    // `H/team/a` is admitted; then `H/team` becomes a link to a folder
    // holding another `a`: the home's path is the same, a link is on the
    // way to it.
    let t = tree();
    let team = t.homes.join("team");
    let a = team.join("a");
    home_of(&a, "home A");
    let elsewhere = t.outside.join("team");
    home_of(&elsewhere.join("a"), "the outside folder");
    let mut server = Server::start(&t.own, &t.homes, &t.state, "lisa");
    let first = server.ask(json!({"op": "snapshot", "cwd": t.repo, "home": a}));
    assert!(
        first["snapshot"]["prompt"]
            .as_str()
            .unwrap()
            .contains("notes of home A")
    );
    fs::rename(&team, t.homes.join("team.old")).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &team).unwrap();
    let before = listing(&elsewhere);
    let answer = server.ask(json!({"op": "snapshot", "cwd": t.repo, "home": a}));
    assert_eq!(answer["error"]["code"], "home-refused", "{answer}");
    assert!(
        !answer.to_string().contains("the outside folder"),
        "{answer}"
    );
    drop(server);
    assert_eq!(listing(&elsewhere), before);
}

#[test]
fn a_home_replaced_by_another_real_directory_is_admitted_afresh() {
    // The operator replaces a home with a new directory (a restore): the
    // path still meets the rule, so the home is admitted again from
    // scratch, and the answer is the new directory's, never the old one's.
    let t = tree();
    let mut server = Server::start(&t.own, &t.homes, &t.state, "lisa");
    let first = server.ask(json!({"op": "snapshot", "cwd": t.repo, "home": t.a}));
    assert!(
        first["snapshot"]["prompt"]
            .as_str()
            .unwrap()
            .contains("notes of home A")
    );
    fs::rename(&t.a, t.homes.join("a.old")).unwrap();
    home_of(&t.a, "the new home A");
    let again = server.ask(json!({"op": "snapshot", "cwd": t.repo, "home": t.a}));
    let prompt = again["snapshot"]["prompt"]
        .as_str()
        .unwrap_or_else(|| panic!("{again}"));
    assert!(prompt.contains("notes of the new home A"), "{prompt}");
    assert!(!prompt.contains("notes of home A\n"), "{prompt}");
    // Its own nonce key, in the new directory.
    assert!(t.a.join("context-nonce.key").is_file());
    assert_ne!(
        again["snapshot"]["fingerprint"],
        first["snapshot"]["fingerprint"]
    );
}

#[test]
fn an_embedders_loader_of_a_served_home_checks_it_at_every_call() {
    // The library's own rule, for any embedder of `home_below`: every call
    // of the loader (the writes of the trust store included) refuses a home
    // replaced since it was admitted, and writes nothing where the path now
    // leads.
    use lisa_context::trust::Selection;
    use lisa_context::{Loader, SnapshotError, TrustError};
    let t = tree();
    let pinned = "version = 1\n[trust]\nproject = \"pinned\"\n";
    write(&t.a.join("context-policy.toml"), pinned);
    let loader = Loader::builder()
        .env(|_| None)
        .home_below(&t.homes, &t.a)
        .unwrap()
        .build()
        .unwrap();
    let snap = loader.snapshot(&t.repo).unwrap();
    assert!(snap.prompt.contains("notes of home A"));
    assert!(loader.check_home().is_ok());
    fs::rename(&t.a, t.homes.join("a.old")).unwrap();
    std::os::unix::fs::symlink(&t.b, &t.a).unwrap();
    let before = listing(&t.b);
    assert!(matches!(
        loader.check_home(),
        Err(SnapshotError::HomeRefused { .. })
    ));
    assert!(matches!(
        loader.snapshot(&t.repo),
        Err(SnapshotError::HomeRefused { .. })
    ));
    assert!(matches!(
        loader.trust_approve(&t.repo, None, &Selection::All),
        Err(TrustError::Snapshot(SnapshotError::HomeRefused { .. }))
    ));
    assert!(matches!(
        loader.skill(&t.repo, "release"),
        Err(lisa_context::SkillError::Snapshot(
            SnapshotError::HomeRefused { .. }
        ))
    ));
    assert_eq!(listing(&t.b), before, "nothing written in the other home");
    // The error is the server's `home-refused`.
    let e = loader.snapshot(&t.repo).unwrap_err();
    assert_eq!(e.wire_code().as_str(), "home-refused");
}
