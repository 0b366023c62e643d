//! The Rust side of the Node comparison (`bindings/node/bench/bench.mjs`):
//! per-call cost of `fingerprint` and `snapshot` on a warm `Loader`, set up
//! as the binding sets its own up (`Loader::builder().home(..)
//! .build_lenient()`, which watches the home policy), on one fixture: a
//! 12-level chain with `AGENTS.md` at every level, 25 skills.
//!
//! `LISA_BENCH_DIR=DIR` writes the fixture there (and keeps it) so the Node
//! benchmark measures the binding and the JSON-lines client on the very
//! same files; without it a temporary directory is used. After the
//! criterion groups, `PERCALL <what> <µs>` lines give medians of
//! interleaved rounds, which the Node script reads.
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "benches build their fixture trees on the real disk"
)]

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use criterion::Criterion;
use lisa_context::Loader;

const LEVELS: usize = 12;
const PROJECT_SKILLS: usize = 20;
const HOME_SKILLS: usize = 5;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

fn skill(dir: &Path, name: &str) {
    write(
        &dir.join(name).join("SKILL.md"),
        &format!(
            "---\nname: {name}\ndescription: Use {name} when the task calls for it; \
             it knows the steps.\n---\n\n# {name}\n\nSteps.\n"
        ),
    );
}

/// Writes the fixture under `base` (unless it is there) and returns the
/// home and the cwd.
fn fixture(base: &Path) -> (PathBuf, PathBuf) {
    let home = base.join("home");
    let repo = base.join("repo");
    let mut cwd = repo.clone();
    for level in 1..LEVELS {
        cwd = cwd.join(format!("level{level}"));
    }
    if home.join("AGENTS.md").exists() {
        return (home, cwd);
    }
    write(
        &home.join("AGENTS.md"),
        "Answer briefly. Prefer small commits.\n",
    );
    for i in 0..HOME_SKILLS {
        skill(&home.join("skills"), &format!("home-skill-{i}"));
    }
    std::fs::create_dir_all(repo.join(".git")).expect("mkdir");
    let mut dir = repo.clone();
    for level in 0..LEVELS {
        if level > 0 {
            dir = dir.join(format!("level{level}"));
        }
        let text = format!("Level {level}: build with make; test with make test.\n").repeat(8);
        write(&dir.join("AGENTS.md"), &text);
        if level % 4 == 0 {
            write(&dir.join("CLAUDE.md"), &format!("Level {level} notes.\n"));
        }
    }
    for i in 0..PROJECT_SKILLS {
        skill(&repo.join(".agents/skills"), &format!("project-skill-{i}"));
    }
    (home, cwd)
}

/// The median per-call time of `f` in microseconds, over `rounds` rounds of
/// `calls` calls.
fn per_call(rounds: usize, calls: usize, mut f: impl FnMut()) -> f64 {
    let mut samples: Vec<f64> = (0..rounds)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..calls {
                f();
            }
            start.elapsed().as_secs_f64() * 1e6 / calls as f64
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

fn main() {
    let bench = std::env::args().any(|a| a == "--bench");
    let kept = std::env::var_os("LISA_BENCH_DIR").map(PathBuf::from);
    let tmp = tempfile::tempdir().expect("tempdir");
    let base = kept.clone().unwrap_or_else(|| tmp.path().to_path_buf());
    let (home, cwd) = fixture(&base);
    println!("FIXTURE home={} cwd={}", home.display(), cwd.display());
    if bench {
        // Stamps younger than the racy window are re-read on every check.
        std::thread::sleep(lisa_context::Loader::RACY_WINDOW + Duration::from_millis(500));
    }
    let loader = Loader::builder()
        .home(&home)
        .build_lenient()
        .expect("loader");
    let first = loader.snapshot(&cwd).expect("snapshot");
    assert_eq!(
        first.instruction_files.len(),
        1 + LEVELS + LEVELS.div_ceil(4)
    );

    let mut crit = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    {
        let mut g = crit.benchmark_group("warm_loader");
        g.bench_function("fingerprint", |b| {
            b.iter(|| black_box(loader.fingerprint(&cwd).expect("fingerprint")))
        });
        g.bench_function("snapshot", |b| {
            b.iter(|| black_box(loader.snapshot(&cwd).expect("snapshot")))
        });
        g.bench_function("snapshot_to_json", |b| {
            b.iter(|| {
                let s = loader.snapshot(&cwd).expect("snapshot");
                black_box(serde_json::to_string(&*s).expect("json"))
            })
        });
        g.finish();
    }
    crit.final_summary();

    let (rounds, calls) = if bench { (9, 2000) } else { (1, 10) };
    let fp = per_call(rounds, calls, || {
        black_box(loader.fingerprint(&cwd).expect("fingerprint"));
    });
    let snap = per_call(rounds, calls, || {
        black_box(loader.snapshot(&cwd).expect("snapshot"));
    });
    let json = per_call(rounds, calls, || {
        let s = loader.snapshot(&cwd).expect("snapshot");
        black_box(serde_json::to_string(&*s).expect("json"));
    });
    println!("PERCALL rust fingerprint {fp:.2}");
    println!("PERCALL rust snapshot {snap:.2}");
    println!("PERCALL rust snapshot+json {json:.2}");
    println!(
        "SNAPSHOT bytes={} instructionFiles={} skills={}",
        serde_json::to_string(&*first).map(|s| s.len()).unwrap_or(0),
        first.instruction_files.len(),
        first.skills.len()
    );
}
