//! Instruction counts (valgrind's callgrind, through gungraun) for a cold
//! snapshot (a first run, and a run that finds the frontmatter memo an
//! earlier one left) and for the per-turn check of a cached `Loader`, on the shared
//! depth × skills trees (`benches/common/tree.rs`). Counts do not move with
//! the load of the machine, so a regression shows even where the wall-clock
//! benches are noise.
//!
//! Run with `cargo bench --bench callgrind` (needs valgrind and a
//! `gungraun-runner` of the same version as the `gungraun` crate; `.ci/run`
//! installs it). The trees are built in each benchmark's setup, which
//! callgrind does not count.
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "benches build their trees on the real disk"
)]

use std::hint::black_box;
use std::time::Duration;

use gungraun::prelude::*;
use lisa_context::policy::Policy;
use lisa_context::{Loader, LoaderBuilder};
use tempfile::TempDir;

mod common;
use common::tree::{self, Tree};

/// A written tree, kept alive for the benchmark.
struct Fixture {
    _tmp: TempDir,
    tree: Tree,
    policy: Policy,
}

fn fixture(depth: usize, skills: usize) -> Fixture {
    let tmp = tempfile::tempdir().expect("tempdir");
    let tree = tree::write(
        tmp.path(),
        depth,
        skills,
        depth as u64 * 7919 + skills as u64,
    )
    .expect("fixture tree");
    Fixture {
        _tmp: tmp,
        tree,
        policy: Policy::builtin().expect("built-in policy"),
    }
}

/// A loader that has built the tree's snapshot once; a zero racy window, so
/// the stamps just taken are trusted and the next call is a pure check.
fn warm(f: &Fixture) -> Loader {
    warm_with(f, false)
}

fn warm_with(f: &Fixture, watched: bool) -> Loader {
    let loader = LoaderBuilder::new()
        .policy(f.policy.clone())
        .home(f.tree.home.clone())
        .home_policy(false)
        .racy_window(Duration::ZERO)
        .build()
        .expect("loader");
    let loader = if watched { loader.watched() } else { loader };
    // The first build creates the home's nonce key, which the second one
    // reads: from then on nothing changes.
    // (A watched loader arms its watches on the check after that.)
    for _ in 0..3 {
        loader.fingerprint(&f.tree.cwd).expect("first builds");
    }
    loader
}

fn cold_setup(shape: (usize, usize)) -> Fixture {
    fixture(shape.0, shape.1)
}

fn check_setup(shape: (usize, usize)) -> (Fixture, Loader) {
    let f = fixture(shape.0, shape.1);
    let loader = warm(&f);
    (f, loader)
}

/// Drops the fixture outside the measured region (removing the tree is not
/// the loader's work).
fn teardown<T>(value: T) {
    drop(value);
}

#[library_benchmark]
#[bench::d3_s20(args = ((3, 20)), setup = cold_setup, teardown = teardown)]
#[bench::d12_s200(args = ((12, 200)), setup = cold_setup, teardown = teardown)]
fn cold_snapshot(f: Fixture) -> Fixture {
    let snap =
        lisa_context::build(&f.policy, Some(&f.tree.home), &f.tree.cwd, None).expect("snapshot");
    black_box(snap.prompt.len());
    f
}

fn memo_setup(shape: (usize, usize)) -> Fixture {
    let f = fixture(shape.0, shape.1);
    // One build leaves the nonce key and the frontmatter memo in the home,
    // as every run after the first finds them.
    lisa_context::build(&f.policy, Some(&f.tree.home), &f.tree.cwd, None).expect("first build");
    f
}

// A new process's build once an earlier one left the frontmatter memo: the
// same work as `cold_snapshot` but for the YAML, read back from the memo.
#[library_benchmark]
#[bench::d3_s20(args = ((3, 20)), setup = memo_setup, teardown = teardown)]
#[bench::d12_s200(args = ((12, 200)), setup = memo_setup, teardown = teardown)]
fn cold_snapshot_memo(f: Fixture) -> Fixture {
    let snap =
        lisa_context::build(&f.policy, Some(&f.tree.home), &f.tree.cwd, None).expect("snapshot");
    black_box(snap.prompt.len());
    f
}

#[library_benchmark]
#[bench::d3_s20(args = ((3, 20)), setup = check_setup, teardown = teardown)]
#[bench::d12_s200(args = ((12, 200)), setup = check_setup, teardown = teardown)]
fn unchanged_check(input: (Fixture, Loader)) -> (Fixture, Loader) {
    let (f, loader) = input;
    black_box(loader.fingerprint(&f.tree.cwd).expect("fingerprint"));
    (f, loader)
}

fn watched_setup(shape: (usize, usize)) -> (Fixture, Loader) {
    let f = fixture(shape.0, shape.1);
    let loader = warm_with(&f, true);
    (f, loader)
}

// The watched check (`Loader::watched`): the same cost at 200 and 2,000
// skills.
#[library_benchmark]
#[bench::d3_s200(args = ((3, 200)), setup = watched_setup, teardown = teardown)]
#[bench::d3_s2000(args = ((3, 2000)), setup = watched_setup, teardown = teardown)]
fn watched_check(input: (Fixture, Loader)) -> (Fixture, Loader) {
    let (f, loader) = input;
    black_box(loader.fingerprint(&f.tree.cwd).expect("fingerprint"));
    (f, loader)
}

library_benchmark_group!(
    name = snapshot;
    benchmarks = cold_snapshot, cold_snapshot_memo, unchanged_check, watched_check
);

main!(library_benchmark_groups = snapshot);
