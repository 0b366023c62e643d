//! The per-turn check of a cached `Loader` as the number of skills grows:
//! the stat sweep (one `statx` per traced path) against the watched check
//! (`Loader::watched`: inotify says where to look), at 200 and 10,000
//! skills, each beside the floor of one plain `stat` per `SKILL.md`.
//!
//! Also the cold snapshot of a 1,000- and a 10,000-skill source examined on
//! one thread against the bounded pool (`skills::parallel`).
//!
//! Prints one `RATIO ...` line per pair, measured interleaved in the same
//! run, and asserts that the watched check answers without reading a file.
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "benches build their trees on the real disk"
)]

use std::hint::black_box;
use std::time::Duration;

use lisa_context::Loader;
use lisa_context::policy::{Layer, Policy, PolicySource};

mod common;
use common::tree::{self, Tree};
use common::*;

/// The built-in policy, with room for 10,000 skills in a source.
fn policy() -> Policy {
    Policy::from_sources(&[
        PolicySource::builtin(),
        PolicySource::from_text(
            Layer::Home,
            "bench.toml",
            "version = 1\n[skills]\nmax-entries-per-source = 16384\n",
        ),
    ])
    .expect("bench policy")
}

fn loader(t: &Tree, watched: bool, window: Duration) -> Loader {
    let l = Loader::builder()
        .policy(policy())
        .home(t.home.clone())
        .home_policy(false)
        .racy_window(window)
        .build()
        .expect("loader");
    if watched { l.watched() } else { l }
}

fn floor_stat(t: &Tree) -> usize {
    t.skill_files
        .iter()
        .filter(|p| std::fs::metadata(p).is_ok())
        .count()
}

fn main() {
    let quick = !bench_mode();
    let sizes: &[usize] = if quick { &[20] } else { &[200, 1_000, 10_000] };
    let mut trees = Vec::new();
    for &n in sizes {
        let tmp = tempfile::tempdir().expect("tempdir");
        let t = tree::write(tmp.path(), 3, n, n as u64).expect("tree");
        // Writes the home's nonce key now, so that it too is old enough to
        // be trusted when the loaders build.
        lisa_context::build(&policy(), Some(&t.home), &t.cwd, None).expect("snapshot");
        trees.push((tmp, t, n));
    }
    // Let every stamp age past the racy window before the loaders build.
    let window = if quick {
        Duration::ZERO
    } else {
        std::thread::sleep(Duration::from_millis(2500));
        lisa_context::Loader::RACY_WINDOW
    };
    let p = policy();
    for (_tmp, t, n) in trees.iter().filter(|(_, _, n)| *n >= 1_000 || quick) {
        let cold = |threshold: usize| {
            lisa_context::internals::set_parallel_threshold(threshold);
            black_box(
                lisa_context::build(&p, Some(&t.home), &t.cwd, None)
                    .expect("snapshot")
                    .prompt
                    .len(),
            );
        };
        ratio(
            quick,
            "skills",
            &format!("cold_parallel/{n}"),
            &format!("cold_sequential/{n}"),
            &mut || cold(0),
            &mut || cold(usize::MAX),
        );
        lisa_context::internals::set_parallel_threshold(256);
    }
    for (_tmp, t, n) in trees.iter().filter(|(_, _, n)| *n != 1_000) {
        let swept = loader(t, false, window);
        let watched = loader(t, true, window);
        for l in [&swept, &watched] {
            // The first build writes the home's nonce key; the second reads it.
            for _ in 0..3 {
                l.fingerprint(&t.cwd).expect("fingerprint");
            }
        }
        let snap = swept.snapshot(&t.cwd).expect("snapshot");
        eprintln!(
            "{n} skills: {} examined ({} listed)",
            snap.skills.len() + snap.rejected_skills.len() + snap.shadowed_project_skills.len(),
            snap.skills.len()
        );
        assert_no_reads(quick, &format!("swept check, {n} skills"), || {
            black_box(swept.fingerprint(&t.cwd).expect("fingerprint"));
        });
        // The watched check makes one `read`: of the inotify queue, empty.
        if let (false, Some(a), Some(b)) = (quick, read_syscalls(), read_syscalls()) {
            let baseline = b - a;
            let before = read_syscalls().unwrap_or_default();
            black_box(watched.fingerprint(&t.cwd).expect("fingerprint"));
            let after = read_syscalls().unwrap_or_default();
            assert_eq!(
                after - before,
                baseline + 1,
                "watched check, {n} skills: it read more than the inotify queue"
            );
        }
        ratio(
            quick,
            "skills",
            &format!("sweep_check/{n}"),
            &format!("floor_stat/{n}"),
            &mut || {
                black_box(swept.fingerprint(&t.cwd).expect("fingerprint"));
            },
            &mut || {
                black_box(floor_stat(t));
            },
        );
        ratio(
            quick,
            "skills",
            &format!("watched_check/{n}"),
            &format!("floor_stat/{n}"),
            &mut || {
                black_box(watched.fingerprint(&t.cwd).expect("fingerprint"));
            },
            &mut || {
                black_box(floor_stat(t));
            },
        );
    }
}
