//! Many sessions: 100 cwds over 10 repositories, each asking one shared
//! `Loader` for its fingerprint with nothing changed, beside the floor of one
//! `stat` per candidate path of that session. Also the cache's size for
//! 1,000 cwds (a measurement, printed, not timed).
//!
//! After the criterion groups the bench measures both sides again,
//! interleaved, and prints a `RATIO ...` line.
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "examples and benches build their demo trees on the real disk"
)]

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use criterion::Criterion;
use lisa_context::Loader;
use lisa_context::policy::Policy;
use tempfile::TempDir;

mod common;
use common::counting::{self, vm_rss_kib};
use common::*;

// ---------------------------------------------------------------------------
// Deterministic varied text.

// ---------------------------------------------------------------------------
// Fixtures.

const REPOS: usize = 10;
const LEVELS: usize = 12;
const SIDES: usize = 8;
const SKILLS: usize = 20;
const NAMES: [&str; 2] = ["AGENTS.md", "CLAUDE.md"];

struct Repo {
    root: PathBuf,
    /// The chain's folders, the root first (`LEVELS` of them).
    chain: Vec<PathBuf>,
    /// Side folders hanging off each chain folder (`SIDES` per level).
    sides: Vec<Vec<PathBuf>>,
    skill_files: Vec<PathBuf>,
}

struct World {
    _tmp: TempDir,
    home: PathBuf,
    repos: Vec<Repo>,
}

struct Session {
    cwd: PathBuf,
    /// Home files, both names at every level from the root down to the cwd,
    /// then every skill's `SKILL.md`.
    candidates: Vec<PathBuf>,
}

fn repo(base: &Path, index: usize, rng: &mut Lcg) -> Repo {
    let root = base.join(format!("repo{index:02}"));
    std::fs::create_dir_all(root.join(".git")).unwrap();
    let (chain, sides) = chain_with_sides(&root, rng, LEVELS, SIDES);
    let source = root.join(".lisa/skills");
    std::fs::create_dir_all(&source).unwrap();
    let mut skill_files = Vec::new();
    for i in 0..SKILLS {
        let name = format!("{}-{i:02}", WORDS[rng.below(WORDS.len())]);
        let folder = source.join(&name);
        std::fs::create_dir(&folder).unwrap();
        let mut description = sentence(rng);
        while description.len() < 130 {
            description.push(' ');
            description.push_str(&sentence(rng));
        }
        description.truncate(150);
        let content = format!(
            "---\nname: {name}\ndescription: {}\n---\n{}",
            description.trim_end(),
            text(rng, 1000, 2000)
        );
        let file = folder.join("SKILL.md");
        std::fs::write(&file, content).unwrap();
        skill_files.push(file);
    }
    skill_files.sort();
    Repo {
        root,
        chain,
        sides,
        skill_files,
    }
}

fn world() -> World {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut rng = Lcg(0x5e55_1045);
    let home = tmp.path().join("home");
    std::fs::create_dir(&home).unwrap();
    std::fs::write(home.join("AGENTS.md"), text(&mut rng, 800, 1200)).unwrap();
    let repos = (0..REPOS).map(|i| repo(tmp.path(), i, &mut rng)).collect();
    World {
        _tmp: tmp,
        home,
        repos,
    }
}

fn session(w: &World, r: &Repo, cwd: PathBuf) -> Session {
    let mut candidates: Vec<PathBuf> = NAMES.iter().map(|n| w.home.join(n)).collect();
    let rel = cwd.strip_prefix(&r.root).expect("cwd inside its repo");
    let mut level = r.root.clone();
    candidates.extend(NAMES.iter().map(|n| level.join(n)));
    for c in rel.components() {
        level.push(c);
        candidates.extend(NAMES.iter().map(|n| level.join(n)));
    }
    candidates.extend(r.skill_files.iter().cloned());
    Session { cwd, candidates }
}

/// 100 sessions: 10 per repository, at depths 2 to 11, half of them in a
/// side folder off the chain.
fn sessions(w: &World) -> Vec<Session> {
    let mut out = Vec::new();
    for (ri, r) in w.repos.iter().enumerate() {
        for s in 0..10 {
            let depth = 2 + s;
            let cwd = if s % 2 == 0 {
                r.chain[depth].clone()
            } else {
                r.sides[depth - 1][(ri + s) % SIDES].clone()
            };
            out.push(session(w, r, cwd));
        }
    }
    out
}

/// 1,000 distinct cwds: per repository its 12 chain folders and 88 side
/// folders.
fn thousand_cwds(w: &World) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for r in &w.repos {
        let mut mine: Vec<PathBuf> = r.chain.clone();
        mine.extend(r.sides.iter().flatten().cloned());
        mine.truncate(100);
        out.extend(mine);
    }
    out
}

fn policy() -> Policy {
    Policy::builtin().expect("built-in policy")
}

fn floor_stat(s: &Session) -> usize {
    s.candidates
        .iter()
        .filter(|p| std::fs::metadata(p).is_ok())
        .count()
}

/// The loader examines exactly the session's candidate list: the instruction
/// candidates it considered, and the skills it found.
fn check_session(p: &Policy, w: &World, s: &Session) {
    let built = lisa_context::build(p, Some(&w.home), &s.cwd, None).expect("snapshot");
    let snap = &built;
    let mut seen: Vec<PathBuf> = snap.considered.iter().map(|c| c.path.clone()).collect();
    let mut skills: Vec<PathBuf> = snap.skills.iter().map(|k| k.path.clone()).collect();
    skills.sort();
    seen.extend(skills);
    assert_eq!(seen, s.candidates, "candidate list differs for {:?}", s.cwd);
    assert!(
        snap.rejected_skills.is_empty(),
        "{:?}",
        snap.rejected_skills
    );
}

#[global_allocator]
static ALLOC: counting::Counting = counting::Counting;

fn cache_memory(w: &World) {
    let cwds = thousand_cwds(w);
    assert_eq!(cwds.len(), 1000);
    let rss_before = vm_rss_kib();
    // Only memory allocated and freed while counting is seen: everything the
    // loader holds is allocated below, after the switch.
    let live_before = counting::start();
    let loader = Loader::builder()
        .policy(policy())
        .home(&w.home)
        .capacity(1000)
        .build()
        .unwrap();
    let started = Instant::now();
    let mut prompt_bytes = 0;
    for cwd in &cwds {
        prompt_bytes += loader.snapshot(cwd).expect("snapshot").prompt.len();
    }
    let elapsed = started.elapsed();
    let rss_after = vm_rss_kib();
    let live = counting::live() - live_before;
    let bytes = loader.cached_bytes();
    let entries = loader.cached_entries();
    assert_eq!(entries, 1000, "every cwd cached");
    println!(
        "MEMORY sessions 1000 cwds: cached_entries {entries}, cached_bytes {bytes} ({:.1} MiB, {:.1} KiB per entry); prompts total {:.1} MiB; {} ms to build all",
        bytes as f64 / (1024.0 * 1024.0),
        bytes as f64 / 1024.0 / entries as f64,
        prompt_bytes as f64 / (1024.0 * 1024.0),
        elapsed.as_millis()
    );
    println!(
        "MEMORY sessions 1000 cwds: live heap held by the loader {live} B ({:.1} MiB, {:.1} KiB per entry; cached_bytes is {:.0}% of it)",
        live as f64 / (1024.0 * 1024.0),
        live as f64 / 1024.0 / entries as f64,
        100.0 * bytes as f64 / live as f64
    );
    drop(loader);
    let freed = live - (counting::live() - live_before);
    counting::stop();
    println!("MEMORY sessions 1000 cwds: dropping the loader freed {freed} B");
    let rss_dropped = vm_rss_kib();
    if let (Some(a), Some(b), Some(c)) = (rss_before, rss_after, rss_dropped) {
        println!(
            "MEMORY sessions 1000 cwds: VmRSS {a} KiB -> {b} KiB with the loader (+{:.1} MiB, allocator included) -> {c} KiB after dropping it",
            b.saturating_sub(a) as f64 / 1024.0
        );
    }
}

// ---------------------------------------------------------------------------
// Checks.

// ---------------------------------------------------------------------------
// Ratio measurement: both sides in the same process, interleaved.

// ---------------------------------------------------------------------------

fn main() {
    let quick = !bench_mode();
    let p = policy();
    let w = world();
    let sessions = sessions(&w);
    assert_eq!(sessions.len(), 100);
    // Test mode (`cargo test --benches`, a debug build) checks every tenth.
    for s in sessions.iter().step_by(if quick { 10 } else { 1 }) {
        check_session(&p, &w, s);
    }
    let total: usize = sessions.iter().map(|s| s.candidates.len()).sum();
    eprintln!(
        "sessions: {} cwds over {REPOS} repositories, {total} candidate paths in all ({:.1} per session)",
        sessions.len(),
        total as f64 / sessions.len() as f64
    );

    if quick {
        eprintln!("test mode: cache memory for 1,000 cwds not measured");
    } else {
        cache_memory(&w);
    }

    // Files modified less than RACY_WINDOW before a build are re-read on every
    // check; let every stamp age past it before the loader builds.
    if quick {
        eprintln!("test mode: no wait for the racy window, cache hits not asserted");
    } else {
        std::thread::sleep(Duration::from_millis(2500));
    }
    let loader = Loader::new(policy(), Some(w.home.clone()));
    let firsts: Vec<String> = sessions
        .iter()
        .map(|s| loader.fingerprint(&s.cwd).expect("fingerprint"))
        .collect();
    assert_no_reads(quick, "sessions (all 100)", || {
        for (s, first) in sessions.iter().zip(&firsts) {
            let again = loader.fingerprint(&s.cwd).expect("fingerprint");
            assert_eq!(&again, first, "fingerprint unstable with nothing changed");
        }
    });

    let mut crit = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();

    let mut lisa = {
        let mut i = 0;
        let (loader, sessions) = (&loader, &sessions);
        move || {
            let s = &sessions[i % sessions.len()];
            i += 1;
            black_box(loader.fingerprint(&s.cwd).expect("fingerprint"));
        }
    };
    let mut floor = {
        let mut i = 0;
        let sessions = &sessions;
        move || {
            let s = &sessions[i % sessions.len()];
            i += 1;
            black_box(floor_stat(s));
        }
    };
    {
        let mut g = crit.benchmark_group("sessions_fingerprint_unchanged");
        g.bench_function("100", |b| b.iter(&mut lisa));
        g.finish();
    }
    {
        let mut g = crit.benchmark_group("sessions_floor_stat");
        g.bench_function("100", |b| b.iter(&mut floor));
        g.finish();
    }

    ratio(
        quick,
        "sessions",
        "sessions_fingerprint_unchanged/100",
        "sessions_floor_stat/100",
        &mut lisa,
        &mut floor,
    );
    assert_no_reads(quick, "sessions (after)", || {
        for s in &sessions {
            black_box(loader.fingerprint(&s.cwd).expect("fingerprint"));
        }
    });

    serve_and_process(quick, &w, &sessions, &mut lisa);

    crit.final_summary();
}

/// The same per-turn check through `lisa-context serve` (one JSON line out,
/// one back, over pipes), and the whole-process cost of one
/// `lisa-context snapshot` (start-up included) beside the in-process cold
/// build of the same snapshot.
fn serve_and_process(quick: bool, w: &World, sessions: &[Session], lisa: &mut dyn FnMut()) {
    use std::io::{BufRead, BufReader, Write};
    use std::process::{Command, Stdio};

    let bin = env!("CARGO_BIN_EXE_lisa-context");
    let mut child = Command::new(bin)
        .arg("--home")
        .arg(&w.home)
        .arg("serve")
        .env_remove("LISA_HOME")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start lisa-context serve");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let requests: Vec<String> = sessions
        .iter()
        .enumerate()
        .map(|(i, s)| {
            serde_json::json!({"id": i, "op": "fingerprint", "cwd": s.cwd}).to_string() + "\n"
        })
        .collect();
    let mut line = String::new();
    let mut i = 0usize;
    let mut serve = || {
        let req = &requests[i % requests.len()];
        i += 1;
        stdin.write_all(req.as_bytes()).expect("write request");
        stdin.flush().expect("flush");
        line.clear();
        stdout.read_line(&mut line).expect("read response");
        assert!(line.contains("\"fingerprint\""), "unexpected answer {line}");
        black_box(&line);
    };
    // Warm the server's cache (and let the racy window pass for its stamps).
    for _ in 0..requests.len() {
        serve();
    }
    if !quick {
        std::thread::sleep(Duration::from_millis(2500));
        for _ in 0..requests.len() {
            serve();
        }
    }
    let mut floor = {
        let mut j = 0;
        move || {
            let s = &sessions[j % sessions.len()];
            j += 1;
            black_box(floor_stat(s));
        }
    };
    ratio(
        quick,
        "sessions",
        "serve_fingerprint_unchanged/100",
        "sessions_floor_stat/100",
        &mut serve,
        &mut floor,
    );
    ratio(
        quick,
        "sessions",
        "serve_fingerprint_unchanged/100",
        "sessions_fingerprint_unchanged/100 (library)",
        &mut serve,
        lisa,
    );
    drop(stdin);
    let _ = child.wait();

    // Whole process against in-process, for one deep session.
    let s = sessions
        .iter()
        .max_by_key(|s| s.candidates.len())
        .expect("a session");
    let p = policy();
    let mut process = || {
        let out = Command::new(bin)
            .arg("--home")
            .arg(&w.home)
            .arg("snapshot")
            .arg("--cwd")
            .arg(&s.cwd)
            .env_remove("LISA_HOME")
            .output()
            .expect("run lisa-context snapshot");
        assert!(out.status.success());
        black_box(out.stdout.len());
    };
    let mut in_process = || {
        let built = lisa_context::build(&p, Some(&w.home), &s.cwd, None).expect("snapshot");
        black_box(built.prompt.len());
    };
    ratio(
        quick,
        "process",
        "lisa-context snapshot (whole process)",
        "snapshot::build (in process, cold)",
        &mut process,
        &mut in_process,
    );
}
