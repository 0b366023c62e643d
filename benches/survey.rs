//! `survey`'s cost: every shipped policy on the 12-level, 200-skill tree
//! (benches/common/tree.rs), built as the command builds them
//! (`Survey::run`: thirteen ordinary builds, each by a loader of its own,
//! side by side, a snapshot and the rule reach of each, each summed up and
//! dropped on the thread that built it),
//! beside its floor: one `--policy lisa` snapshot by a fresh loader. Both sides run with the
//! frontmatter memo warm (written by a first run), as every run after the
//! first has it. The survey has no target ratio (issue 31's 3x was retired
//! by issue 50): it may cost what the thirteen snapshots cost separately.
//!
//! Also prints, once, each policy's own cold snapshot time (a fresh loader
//! alone), to show where the survey's time goes.
//!
//! `cargo bench --bench survey`; without `--bench` (as `cargo test
//! --benches` runs it) each side runs once and no ratio is measured. With
//! `SURVEY_PROFILE=1` in the environment, it runs five surveys in
//! `profiled` and stops, for a profiler; with `SURVEY_PROFILE=floor`, five
//! floors in `profiled_floor`; with `SURVEY_PROFILE=0`, neither (what the
//! set-up costs, to subtract from a count of system calls).
//! `SURVEY_POLICIES=lisa,codex` surveys only the policies named, to count
//! what one policy adds to a survey.
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "examples and benches build their demo trees on the real disk"
)]

use std::ffi::OsString;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::Criterion;
use lisa_context::{Loader, Snapshot};

mod common;
use common::*;

/// The environment every loader sees: `$HOME` is the fixture's home (the
/// compat policies keep their state under `~/.local/state`), nothing else
/// is set.
fn builder(policy: &str, home: &Path) -> lisa_context::LoaderBuilder {
    let env_home: OsString = home.as_os_str().to_owned();
    Loader::builder()
        .shipped_policy(policy.to_string())
        .home(home)
        .home_policy(false)
        .env(move |k| (k == "HOME").then(|| env_home.clone()))
}

/// One `--policy lisa` snapshot by a fresh loader.
fn one_lisa(home: &Path, cwd: &Path) -> Arc<Snapshot> {
    builder("lisa", home)
        .build()
        .expect("loader")
        .snapshot(cwd)
        .expect("snapshot")
}

/// The policies surveyed: every shipped one, or those `SURVEY_POLICIES`
/// names (comma-separated), to count what one policy adds to a survey.
fn surveyed_names() -> Vec<String> {
    match std::env::var("SURVEY_POLICIES") {
        Ok(names) => names.split(',').map(str::to_string).collect(),
        Err(_) => lisa_context::policy::SHIPPED_NAMES
            .iter()
            .map(|name| name.to_string())
            .collect(),
    }
}

/// What `lisa-context survey` does: every shipped policy.
fn survey(home: &Path, cwd: &Path) -> lisa_context::protocol::Survey {
    let builders = surveyed_names()
        .into_iter()
        .map(|name| (name.clone(), builder(&name, home)));
    lisa_context::protocol::Survey::run(builders, cwd, None).expect("survey")
}

/// Five surveys, for a profiler to single out
/// (`valgrind --tool=callgrind --toggle-collect='survey::profiled'`).
#[inline(never)]
fn profiled(home: &Path, cwd: &Path) -> lisa_context::protocol::Survey {
    let mut last = survey(home, cwd);
    for _ in 1..5 {
        last = black_box(survey(home, cwd));
    }
    last
}

/// Five floors, for a profiler to single out
/// (`valgrind --tool=callgrind --toggle-collect='survey::profiled_floor'`).
#[inline(never)]
fn profiled_floor(home: &Path, cwd: &Path) -> Arc<Snapshot> {
    let mut last = one_lisa(home, cwd);
    for _ in 1..5 {
        last = black_box(one_lisa(home, cwd));
    }
    last
}

fn main() {
    let quick = !bench_mode();
    let tmp = tempfile::tempdir().expect("tempdir");
    let tree = tree::write(tmp.path(), 12, 200, 31).expect("tree");
    // With SURVEY_KEEP set, the tree stays on disk (for `strace` of the
    // command on it), and its paths are printed.
    let _tmp = if std::env::var_os("SURVEY_KEEP").is_some() {
        let _ = tmp.keep();
        eprintln!(
            "tree kept: home {}, cwd {}",
            tree.home.display(),
            tree.cwd.display()
        );
        None
    } else {
        Some(tmp)
    };
    let (home, cwd): (PathBuf, PathBuf) = (tree.home.clone(), tree.cwd.clone());

    // Warm the memos (each policy's state root), and check both sides.
    let s = survey(&home, &cwd);
    assert_eq!(s.policies.len(), surveyed_names().len());
    let lisa = one_lisa(&home, &cwd);
    assert!(!lisa.instruction_files.is_empty() && lisa.skills.len() >= 50);
    eprintln!(
        "survey: {} policies, {} problems; lisa alone: {} files, {} skills",
        s.policies.len(),
        s.problems.len(),
        lisa.instruction_files.len(),
        lisa.skills.len()
    );

    // With SURVEY_PROFILE set, only the five surveys of `profiled` (or
    // floors of `profiled_floor`) run after the warm-up.
    if let Some(mode) = std::env::var_os("SURVEY_PROFILE") {
        if mode == "floor" {
            black_box(profiled_floor(&home, &cwd));
        } else if mode != "0" {
            black_box(profiled(&home, &cwd));
        }
        return;
    }
    if !quick {
        // Each policy alone, a fresh loader, the median of 9.
        for name in lisa_context::policy::SHIPPED_NAMES {
            let mut times: Vec<f64> = (0..9)
                .map(|_| {
                    let t = Instant::now();
                    let loader = builder(name, &home).build().expect("loader");
                    black_box(loader.snapshot(&cwd).expect("snapshot"));
                    t.elapsed().as_secs_f64() * 1e9
                })
                .collect();
            eprintln!("alone {name:<12} {}", fmt_ns(median(&mut times)));
        }
    }

    let mut crit = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4))
        .configure_from_args();
    {
        let mut g = crit.benchmark_group("survey_12x200");
        g.bench_function("every_shipped_policy", |b| {
            b.iter(|| black_box(survey(&home, &cwd)))
        });
        g.bench_function("floor_one_lisa_snapshot", |b| {
            b.iter(|| black_box(one_lisa(&home, &cwd)))
        });
        g.finish();
    }
    ratio(
        quick,
        "survey 12x200",
        "every shipped policy",
        "one lisa snapshot",
        &mut || {
            black_box(survey(&home, &cwd));
        },
        &mut || {
            black_box(one_lisa(&home, &cwd));
        },
    );
    crit.final_summary();
}
