//! A load test of `serve`: 20 sessions writing into one server at once,
//! 10,000 requests over 200 cwds, slow repositories (a skills source of
//! thousands of entries) mixed with fast ones. Correctness is asserted
//! exactly (every id answered once, every fingerprint equal to a fresh
//! build's); performance only loosely, and the figures are printed
//! (`cargo test --test it load:: -- --nocapture`).

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use lisa_context::policy::Policy;
use serde_json::{Value, json};

use crate::support::World;

const BIN: &str = env!("CARGO_BIN_EXE_lisa-context");

/// Sessions writing at once, each waiting for its answer before asking
/// again (as an agent harness does).
const WRITERS: usize = 20;
/// Fast cwds: small repositories, one level down.
const FAST_CWDS: usize = 194;
/// Slow cwds: levels of one repository whose skills source holds
/// `SLOW_ENTRIES` skills, every one examined on every check.
const SLOW_CWDS: usize = 6;
const SLOW_ENTRIES: usize = 1500;
/// Requests in the mixed run, in the fast-only run, and in the mixed run
/// with a single worker (for comparison).
const MIXED_REQUESTS: usize = 10_000;
const FAST_REQUESTS: usize = 4_000;
const SERIAL_REQUESTS: usize = 2_000;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The fast cwds: `src` of small repositories `fast-N`.
fn fast(w: &World) -> Vec<PathBuf> {
    (0..FAST_CWDS)
        .map(|i| w.path(format!("fast-{i}/src")))
        .collect()
}

/// The slow cwds: the levels `pkg-N` of the repository `slow`.
fn slow(w: &World) -> Vec<PathBuf> {
    (0..SLOW_CWDS)
        .map(|i| w.path(format!("slow/pkg-{i}")))
        .collect()
}

/// A home with a skill, the fast repositories and the slow one.
fn world() -> World {
    let w = World::empty();
    let base = &w.base;
    let home = &w.home;
    write(&home.join("AGENTS.md"), "home rules");
    write(
        &home.join("skills/release/SKILL.md"),
        "---\nname: release\ndescription: cut a release\n---\n",
    );
    for i in 0..FAST_CWDS {
        let repo = base.join(format!("fast-{i}"));
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        write(&repo.join("AGENTS.md"), &format!("fast repo {i}"));
        write(&repo.join("src/AGENTS.md"), &format!("fast repo {i}, src"));
    }
    let slow_repo = base.join("slow");
    std::fs::create_dir_all(slow_repo.join(".git")).unwrap();
    write(&slow_repo.join("AGENTS.md"), "slow repo");
    for k in 0..SLOW_ENTRIES {
        write(
            &slow_repo.join(format!(".agents/skills/s{k:05}/SKILL.md")),
            &format!("---\nname: s{k:05}\ndescription: skill {k}\n---\n"),
        );
    }
    for cwd in slow(&w) {
        std::fs::create_dir_all(&cwd).unwrap();
    }
    w
}

/// What one run measured.
struct Figures {
    fast_ms: Vec<f64>,
    slow_ms: Vec<f64>,
    wall: Duration,
    peak_rss_kib: u64,
    peak_fds: usize,
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn proc_status_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count())
}

/// Runs one server with `jobs` workers on `plan` (the cwd of each request,
/// by session), checking every answer against `expected`.
fn run(
    w: &World,
    jobs: &str,
    plan: Vec<Vec<PathBuf>>,
    expected: &HashMap<PathBuf, String>,
) -> Figures {
    let mut child = Command::new(BIN)
        .arg("--home")
        .arg(&w.home)
        .args(["serve", "--jobs", jobs])
        .env_remove("LISA_HOME")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let pid = child.id();
    let stdin = Arc::new(Mutex::new(child.stdin.take().unwrap()));
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let total: usize = plan.iter().map(Vec::len).sum();

    // One channel per session; the reader routes each answer by its id.
    let (senders, receivers): (Vec<_>, Vec<_>) =
        (0..plan.len()).map(|_| mpsc::channel::<Value>()).unzip();
    let reader = std::thread::spawn(move || {
        let mut peak_fds = 0;
        let mut seen = 0;
        for line in stdout.lines() {
            let line = line.unwrap();
            let v: Value = serde_json::from_str(&line).unwrap();
            let id = v["id"].as_u64().unwrap() as usize;
            seen += 1;
            if seen % 250 == 0 {
                peak_fds = peak_fds.max(open_fds(pid));
            }
            senders[id / 1_000_000].send(v).unwrap();
        }
        (seen, peak_fds)
    });

    let started = Instant::now();
    let sessions: Vec<_> = plan
        .into_iter()
        .zip(receivers)
        .enumerate()
        .map(|(s, (cwds, answers))| {
            let stdin = stdin.clone();
            let expected = expected.clone();
            std::thread::spawn(move || {
                let mut latencies = Vec::with_capacity(cwds.len());
                for (n, cwd) in cwds.iter().enumerate() {
                    let id = s * 1_000_000 + n;
                    let op = if n % 4 == 0 {
                        "snapshot"
                    } else {
                        "fingerprint"
                    };
                    let line = json!({ "id": id, "op": op, "cwd": cwd }).to_string();
                    let asked = Instant::now();
                    {
                        let mut stdin = stdin.lock().unwrap();
                        stdin.write_all(line.as_bytes()).unwrap();
                        stdin.write_all(b"\n").unwrap();
                        stdin.flush().unwrap();
                    }
                    let answer = answers.recv().unwrap();
                    let took = asked.elapsed();
                    assert_eq!(answer["id"], json!(id), "answers come to their session");
                    let fp = if op == "snapshot" {
                        &answer["snapshot"]["fingerprint"]
                    } else {
                        &answer["fingerprint"]
                    };
                    assert_eq!(
                        fp.as_str(),
                        Some(expected[cwd].as_str()),
                        "request {id} about {}: {answer}",
                        cwd.display()
                    );
                    latencies.push((cwd.clone(), took));
                }
                latencies
            })
        })
        .collect();
    let slow_cwds = slow(w);
    let mut fast_ms = Vec::new();
    let mut slow_ms = Vec::new();
    for s in sessions {
        for (cwd, took) in s.join().unwrap() {
            let ms = took.as_secs_f64() * 1000.0;
            if slow_cwds.contains(&cwd) {
                slow_ms.push(ms);
            } else {
                fast_ms.push(ms);
            }
        }
    }
    let wall = started.elapsed();
    let peak_rss_kib = proc_status_kib(pid, "VmHWM:");
    let fds_at_end = open_fds(pid);
    drop(stdin);
    let (seen, peak_fds) = reader.join().unwrap();
    assert!(child.wait().unwrap().success());
    assert_eq!(seen, total, "every request answered exactly once");
    fast_ms.sort_by(f64::total_cmp);
    slow_ms.sort_by(f64::total_cmp);
    Figures {
        fast_ms,
        slow_ms,
        wall,
        peak_rss_kib,
        peak_fds: peak_fds.max(fds_at_end),
    }
}

/// `count` requests spread over `WRITERS` sessions, taking cwds from
/// `cwds` in turn (offset per session so sessions do not march in step).
fn plan(cwds: &[PathBuf], count: usize) -> Vec<Vec<PathBuf>> {
    (0..WRITERS)
        .map(|s| {
            (0..count / WRITERS)
                .map(|n| cwds[(s * 7 + n * WRITERS + s) % cwds.len()].clone())
                .collect()
        })
        .collect()
}

fn report(name: &str, f: &Figures) {
    println!(
        "LOAD {name}: {} fast requests p50 {:.2} ms p99 {:.2} ms; {} slow requests p50 {:.2} ms p99 {:.2} ms; wall {:.2} s; peak RSS {} MiB; peak open fds {}",
        f.fast_ms.len(),
        percentile(&f.fast_ms, 0.5),
        percentile(&f.fast_ms, 0.99),
        f.slow_ms.len(),
        percentile(&f.slow_ms, 0.5),
        percentile(&f.slow_ms, 0.99),
        f.wall.as_secs_f64(),
        f.peak_rss_kib / 1024,
        f.peak_fds,
    );
}

#[test]
fn twenty_sessions_ten_thousand_requests_two_hundred_cwds() {
    let w = world();
    let policy = Policy::builtin().unwrap();
    let expected: HashMap<PathBuf, String> = fast(&w)
        .iter()
        .chain(&slow(&w))
        .map(|cwd| {
            let snap = lisa_context::build(&policy, Some(&w.home), cwd, None).unwrap();
            (cwd.clone(), snap.fingerprint)
        })
        .collect();
    let jobs = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .max(2)
        .to_string();

    let fast_only = run(&w, &jobs, plan(&fast(&w), FAST_REQUESTS), &expected);
    report(&format!("fast only, --jobs {jobs}"), &fast_only);

    let all: Vec<PathBuf> = fast(&w).iter().chain(&slow(&w)).cloned().collect();
    let mixed = run(&w, &jobs, plan(&all, MIXED_REQUESTS), &expected);
    report(&format!("mixed, --jobs {jobs}"), &mixed);
    assert_eq!(mixed.fast_ms.len() + mixed.slow_ms.len(), MIXED_REQUESTS);
    assert!(!mixed.slow_ms.is_empty());

    // The same mix with one worker: every request waits for the one
    // before it (figures only).
    let serial = run(&w, "1", plan(&all, SERIAL_REQUESTS), &expected);
    report("mixed, --jobs 1", &serial);

    // Loose bounds only: a shared machine can be slow, not this slow.
    let fast_p99 = percentile(&fast_only.fast_ms, 0.99);
    let mixed_fast_p99 = percentile(&mixed.fast_ms, 0.99);
    let slow_p99 = percentile(&mixed.slow_ms, 0.99);
    assert!(
        mixed_fast_p99 <= (100.0 * fast_p99).max(20.0 * slow_p99).max(2000.0),
        "fast p99 {mixed_fast_p99:.1} ms among slow requests (alone {fast_p99:.1} ms, slow p99 {slow_p99:.1} ms)"
    );
    // Descriptors: stdio, the root handles (within the default budget of
    // 128) and a few files being read.
    assert!(mixed.peak_fds <= 128 + 32, "{} open fds", mixed.peak_fds);
    assert!(
        mixed.peak_rss_kib < 1024 * 1024,
        "{} KiB",
        mixed.peak_rss_kib
    );
}
