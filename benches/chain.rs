//! The instruction chain: a cold snapshot and an unchanged fingerprint for a
//! 12-level and a 30-level chain, each beside its floor with plain `std::fs`:
//! the candidate files opened and read (cold), and two floors for the check:
//! one `stat` per traced path (every path the build examined: the
//! candidates, the repository markers looked for, the roots, the skill
//! sources, the nonce key), and the stricter one `stat` per candidate file.
//!
//! Absolute times on a shared machine are noise, so after the criterion groups
//! the bench measures both sides again, interleaved, and prints one
//! `RATIO ...` line per pair.
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "examples and benches build their demo trees on the real disk"
)]

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::Criterion;
use lisa_context::Loader;
use lisa_context::policy::Policy;
use tempfile::TempDir;

mod common;
use common::*;

// ---------------------------------------------------------------------------
// Deterministic varied text.

// ---------------------------------------------------------------------------
// Fixtures.

struct Chain {
    _tmp: TempDir,
    levels: usize,
    home: PathBuf,
    cwd: PathBuf,
    /// Every path the loader considers, in its order: the home files, then
    /// both names at every level from the root down to the cwd.
    candidates: Vec<PathBuf>,
    /// Every path a build examines, absolute (filled in by `main`).
    traced: Vec<PathBuf>,
}

const NAMES: [&str; 2] = ["AGENTS.md", "CLAUDE.md"];

/// A repository whose chain has `levels` levels (the root and `levels - 1`
/// folders below it); every level has an AGENTS.md of 1–2 KB, every third one
/// also a CLAUDE.md. The home has an AGENTS.md.
fn chain(levels: usize, seed: u64) -> Chain {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut rng = Lcg(seed);
    let home = tmp.path().join("home");
    std::fs::create_dir(&home).unwrap();
    std::fs::write(home.join("AGENTS.md"), text(&mut rng, 1024, 2048)).unwrap();
    let mut candidates: Vec<PathBuf> = NAMES.iter().map(|n| home.join(n)).collect();

    let repo = tmp.path().join("repo");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    let mut dir = repo.clone();
    for level in 0..levels {
        if level > 0 {
            dir.push(format!("{}{level:02}", WORDS[rng.below(WORDS.len())]));
            std::fs::create_dir(&dir).unwrap();
        }
        std::fs::write(dir.join("AGENTS.md"), text(&mut rng, 1024, 2048)).unwrap();
        if level % 3 == 1 {
            std::fs::write(dir.join("CLAUDE.md"), text(&mut rng, 1024, 2048)).unwrap();
        }
        candidates.extend(NAMES.iter().map(|n| dir.join(n)));
    }
    Chain {
        _tmp: tmp,
        levels,
        home,
        cwd: dir,
        candidates,
        traced: Vec::new(),
    }
}

fn policy() -> Policy {
    Policy::builtin().expect("built-in policy")
}

// ---------------------------------------------------------------------------
// The two sides.

fn lisa_cold(p: &Policy, c: &Chain) -> usize {
    let built = lisa_context::build(p, Some(&c.home), &c.cwd, None).expect("snapshot");
    built.prompt.len()
}

fn floor_read(c: &Chain) -> usize {
    let mut total = 0;
    for path in &c.candidates {
        match std::fs::read(path) {
            Ok(bytes) => total += bytes.len(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => panic!("{}: {e}", path.display()),
        }
    }
    total
}

fn floor_stat(c: &Chain) -> usize {
    c.candidates
        .iter()
        .filter(|p| std::fs::metadata(p).is_ok())
        .count()
}

fn floor_stat_traced(c: &Chain) -> usize {
    c.traced
        .iter()
        .filter(|p| std::fs::metadata(p).is_ok())
        .count()
}

// ---------------------------------------------------------------------------
// Checks.

/// The snapshot considered exactly the candidate list the floor uses.
fn check_candidates(p: &Policy, c: &Chain) {
    let built = lisa_context::build(p, Some(&c.home), &c.cwd, None).expect("snapshot");
    let considered: Vec<&Path> = built.considered.iter().map(|x| x.path.as_path()).collect();
    let ours: Vec<&Path> = c.candidates.iter().map(PathBuf::as_path).collect();
    assert_eq!(considered, ours, "candidate list differs from the loader's");
    assert!(!built.instruction_files.is_empty());
    eprintln!(
        "chain {}: {} candidates, {} files kept, {} skipped, budget used {} of {} B, prompt {} B",
        c.levels,
        c.candidates.len(),
        built.instruction_files.len(),
        built.skipped.len(),
        built.budget.used,
        built.budget.limit,
        built.prompt.len()
    );
}

// ---------------------------------------------------------------------------
// Ratio measurement: both sides in the same process, interleaved.

// ---------------------------------------------------------------------------

fn main() {
    let quick = !bench_mode();
    let p = policy();
    let mut chains = [chain(12, 12), chain(30, 30)];
    for c in &mut chains {
        check_candidates(&p, c);
        c.traced = lisa_context::internals::traced_paths(&p, Some(&c.home), &c.cwd, None)
            .expect("traced paths");
        eprintln!("chain {}: {} traced paths", c.levels, c.traced.len());
    }

    // Files modified less than RACY_WINDOW before a build are re-read on every
    // check; let every stamp age past it before the loaders build.
    if quick {
        eprintln!("test mode: no wait for the racy window, cache hits not asserted");
    } else {
        std::thread::sleep(Duration::from_millis(2500));
    }
    let loaders: Vec<Loader> = chains
        .iter()
        .map(|c| {
            let loader = Loader::new(policy(), Some(c.home.clone()));
            let first = loader.fingerprint(&c.cwd).expect("fingerprint");
            assert_no_reads(quick, &format!("chain {}", c.levels), || {
                let again = loader.fingerprint(&c.cwd).expect("fingerprint");
                assert_eq!(first, again, "fingerprint unstable with nothing changed");
            });
            loader
        })
        .collect();

    let mut crit = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();

    {
        let mut g = crit.benchmark_group("cold_snapshot");
        for c in &chains {
            g.bench_function(c.levels.to_string(), |b| {
                b.iter(|| black_box(lisa_cold(&p, c)))
            });
        }
        g.finish();
    }
    {
        let mut g = crit.benchmark_group("floor_read");
        for c in &chains {
            g.bench_function(c.levels.to_string(), |b| {
                b.iter(|| black_box(floor_read(c)))
            });
        }
        g.finish();
    }
    {
        let mut g = crit.benchmark_group("fingerprint_unchanged");
        for (c, loader) in chains.iter().zip(&loaders) {
            g.bench_function(c.levels.to_string(), |b| {
                b.iter(|| black_box(loader.fingerprint(&c.cwd).expect("fingerprint")))
            });
        }
        g.finish();
    }
    {
        let mut g = crit.benchmark_group("floor_stat");
        for c in &chains {
            g.bench_function(c.levels.to_string(), |b| {
                b.iter(|| black_box(floor_stat(c)))
            });
        }
        g.finish();
    }
    {
        let mut g = crit.benchmark_group("floor_stat_traced");
        for c in &chains {
            g.bench_function(c.levels.to_string(), |b| {
                b.iter(|| black_box(floor_stat_traced(c)))
            });
        }
        g.finish();
    }

    for c in &chains {
        let n = c.levels;
        ratio(
            quick,
            "chain",
            &format!("cold_snapshot/{n}"),
            &format!("floor_read/{n}"),
            &mut || {
                black_box(lisa_cold(&p, c));
            },
            &mut || {
                black_box(floor_read(c));
            },
        );
    }
    for (c, loader) in chains.iter().zip(&loaders) {
        let n = c.levels;
        ratio(
            quick,
            "chain",
            &format!("fingerprint_unchanged/{n}"),
            &format!("floor_stat/{n}"),
            &mut || {
                black_box(loader.fingerprint(&c.cwd).expect("fingerprint"));
            },
            &mut || {
                black_box(floor_stat(c));
            },
        );
        ratio(
            quick,
            "chain",
            &format!("fingerprint_unchanged/{n}"),
            &format!("floor_stat_traced/{n}"),
            &mut || {
                black_box(loader.fingerprint(&c.cwd).expect("fingerprint"));
            },
            &mut || {
                black_box(floor_stat_traced(c));
            },
        );
    }
    // The measured loop must still have been served from the cache.
    for (c, loader) in chains.iter().zip(&loaders) {
        assert_no_reads(quick, &format!("chain {} (after)", c.levels), || {
            black_box(loader.fingerprint(&c.cwd).expect("fingerprint"));
        });
    }

    crit.final_summary();
}
