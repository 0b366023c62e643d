//! A soak test of one server for many homes: 2,000 cwds over 20
//! repositories and 200 homes (each request names its home, the server runs
//! with `--homes-under`), 20 writers editing the repositories and homes
//! while requests flow, and at quiescent checkpoints (writers paused)
//! sampled answers checked against a fresh build with that home; the
//! server's peak memory and open descriptors asserted under the documented
//! bounds. Seeded: the same edits every run.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};

use lisa_context::Loader;
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_lisa-context");
const REPOS: usize = 20;
const DIRS_PER_REPO: usize = 100;
const HOMES: usize = 200;
const WRITERS: usize = 20;
const CHECKPOINTS: usize = 3;
const SAMPLED: usize = 60;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A small deterministic generator (splitmix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

struct Tree {
    _tmp: tempfile::TempDir,
    own: PathBuf,
    homes: Vec<PathBuf>,
    homes_dir: PathBuf,
    repos: Vec<PathBuf>,
    cwds: Vec<PathBuf>,
}

fn tree() -> Tree {
    let tmp = tempfile::tempdir().unwrap();
    let own = tmp.path().join("own");
    std::fs::create_dir_all(&own).unwrap();
    let homes_dir = tmp.path().join("homes");
    let homes: Vec<PathBuf> = (0..HOMES)
        .map(|h| {
            let home = homes_dir.join(format!("user-{h}"));
            write(&home.join("AGENTS.md"), &format!("notes of user {h}"));
            write(
                &home.join("skills/release/SKILL.md"),
                &format!("---\nname: release\ndescription: user {h}'s release\n---\nsteps\n"),
            );
            home
        })
        .collect();
    let mut repos = Vec::new();
    let mut cwds = Vec::new();
    for r in 0..REPOS {
        let repo = tmp.path().join(format!("repo-{r}"));
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        write(&repo.join("AGENTS.md"), &format!("rules of repo {r}"));
        write(
            &repo.join(".agents/skills/deploy/SKILL.md"),
            "---\nname: deploy\ndescription: deploy it\n---\nsteps\n",
        );
        for d in 0..DIRS_PER_REPO {
            let dir = repo.join(format!("pkg-{}/mod-{d}", d % 10));
            std::fs::create_dir_all(&dir).unwrap();
            if d % 10 == 0 {
                write(&dir.join("AGENTS.md"), &format!("module {d} of repo {r}"));
            }
            cwds.push(dir);
        }
        repos.push(repo);
    }
    Tree {
        _tmp: tmp,
        own,
        homes,
        homes_dir,
        repos,
        cwds,
    }
}

struct Server {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    next_id: u64,
}

impl Server {
    fn start(t: &Tree) -> Self {
        let mut child = Command::new(BIN)
            .env_remove("LISA_HOME")
            .env_remove("LISA_CONTEXT_POLICY")
            .arg("--home")
            .arg(&t.own)
            .args(["serve", "--jobs", "2", "--homes-under"])
            .arg(&t.homes_dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap());
        Server {
            child,
            input,
            output,
            next_id: 0,
        }
    }

    /// Sends every request, then reads every answer (by id).
    fn ask(&mut self, requests: Vec<Value>) -> Vec<Value> {
        let n = requests.len();
        let first = self.next_id;
        let mut text = String::new();
        for mut r in requests {
            r["id"] = json!(self.next_id);
            self.next_id += 1;
            text.push_str(&r.to_string());
            text.push('\n');
        }
        // The server reads while it answers: write from another thread.
        let mut answers = vec![Value::Null; n];
        std::thread::scope(|scope| {
            let input = &mut self.input;
            scope.spawn(move || {
                input.write_all(text.as_bytes()).unwrap();
                input.flush().unwrap();
            });
            let mut line = String::new();
            for _ in 0..n {
                line.clear();
                self.output.read_line(&mut line).unwrap();
                let v: Value = serde_json::from_str(&line).unwrap();
                let id = v["id"].as_u64().unwrap();
                answers[(id - first) as usize] = v;
            }
        });
        answers
    }

    /// (peak resident KiB, open descriptors) of the server.
    fn footprint(&self) -> (u64, usize) {
        let pid = self.child.id();
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
        let hwm = status
            .lines()
            .find(|l| l.starts_with("VmHWM:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|k| k.parse().ok())
            .unwrap_or(0);
        let fds = std::fs::read_dir(format!("/proc/{pid}/fd"))
            .unwrap()
            .count();
        (hwm, fds)
    }
}

fn request(op: &str, cwd: &Path, home: &Path) -> Value {
    json!({ "op": op, "cwd": cwd, "home": home })
}

#[test]
fn two_thousand_cwds_over_two_hundred_homes_stay_exact_and_bounded() {
    let t = tree();
    let mut server = Server::start(&t);
    let home_of = |i: usize| &t.homes[i % HOMES];
    // Every cwd once, cold.
    let all: Vec<Value> = t
        .cwds
        .iter()
        .enumerate()
        .map(|(i, cwd)| request("fingerprint", cwd, home_of(i)))
        .collect();
    for a in server.ask(all.clone()) {
        assert!(a["fingerprint"].is_string(), "{a}");
    }

    let stop = Arc::new(AtomicBool::new(false));
    let mut rng = Rng(20261203);
    for checkpoint in 0..CHECKPOINTS {
        // Writers edit while a full pass of requests flows.
        stop.store(false, Ordering::SeqCst);
        let start = Arc::new(Barrier::new(WRITERS + 1));
        let writers: Vec<_> = (0..WRITERS)
            .map(|w| {
                let stop = Arc::clone(&stop);
                let start = Arc::clone(&start);
                let seed = rng.next();
                let repos = t.repos.clone();
                let homes = t.homes.clone();
                std::thread::spawn(move || {
                    let mut rng = Rng(seed);
                    start.wait();
                    let mut edits = 0;
                    while edits < 5 || (!stop.load(Ordering::SeqCst) && edits < 50) {
                        let text = format!("edit {edits} by writer {w}: {}", rng.next());
                        match rng.below(3) {
                            0 => {
                                let repo = &repos[rng.below(repos.len())];
                                write(&repo.join("AGENTS.md"), &text);
                            }
                            1 => {
                                let repo = &repos[rng.below(repos.len())];
                                let d = rng.below(10) * 10;
                                write(
                                    &repo.join(format!("pkg-{}/mod-{d}/AGENTS.md", d % 10)),
                                    &text,
                                );
                            }
                            _ => {
                                let home = &homes[rng.below(homes.len())];
                                write(&home.join("AGENTS.md"), &text);
                            }
                        }
                        edits += 1;
                    }
                })
            })
            .collect();
        start.wait();
        let answers = server.ask(all.clone());
        stop.store(true, Ordering::SeqCst);
        for w in writers {
            w.join().unwrap();
        }
        for a in &answers {
            assert!(
                a["fingerprint"].is_string() || a["error"].is_object(),
                "{a}"
            );
        }

        // Quiescent: sampled answers equal fresh builds with that home.
        let sample: Vec<usize> = (0..SAMPLED).map(|_| rng.below(t.cwds.len())).collect();
        let asked: Vec<Value> = sample
            .iter()
            .map(|&i| request("snapshot", &t.cwds[i], home_of(i)))
            .collect();
        let answers = server.ask(asked);
        for (&i, a) in sample.iter().zip(&answers) {
            let fresh = Loader::builder()
                .home(home_of(i))
                .env(|_| None)
                .build()
                .unwrap()
                .snapshot(&t.cwds[i])
                .unwrap();
            let got = &a["snapshot"];
            assert_eq!(
                got["fingerprint"].as_str(),
                Some(fresh.fingerprint.as_str()),
                "checkpoint {checkpoint}, cwd {}",
                t.cwds[i].display()
            );
            assert_eq!(got["prompt"].as_str(), Some(fresh.prompt.as_str()));
        }
    }

    // The documented bounds: every home's loader shares the server's one
    // budget of open directories (128), and holds at most one inotify
    // instance (the kernel's max_user_instances caps how many are had; the
    // rest are swept); memory well under a few MiB per home.
    let (peak_kib, fds) = server.footprint();
    println!(
        "soak: peak RSS {} MiB, {fds} open descriptors",
        peak_kib / 1024
    );
    assert!(peak_kib < 256 * 1024, "peak RSS {peak_kib} KiB");
    assert!(fds <= 128 + HOMES + 1 + 16, "{fds} open descriptors");
    drop(server.input);
    let status = server.child.wait().unwrap();
    assert!(status.success());
}
