//! One server for a whole team: 10,000 cwds over 100 repositories and 1,000
//! homes, each home a loader of one group (`LoaderBuilder::share`, as
//! `serve --homes-under` runs them), watched. Reports, each beside its
//! floor:
//!
//! * memory: the live heap the loaders hold (a counting global allocator)
//!   against the prompt bytes they hold, the floor; what a home costs with
//!   no session; what a cached cwd costs beyond its prompt; VmRSS;
//! * the per-turn check of an unchanged session: p50 and p99 with 10,000
//!   sessions held against the same with 10 held (a group of its own);
//! * cold builds per second, against reading the files each prompt draws
//!   on with `std::fs::read`.
//!
//! Run on demand: `cargo bench --bench server` (about a minute after the
//! build, most of it writing the tree). `LISA_BENCH_SESSIONS=N` scales it
//! (N cwds, N/100 repositories, N/10 homes; `LISA_BENCH_HOMES` sets the
//! homes). `cargo test --benches` runs it
//! with 200 sessions and prints no figures.
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "examples and benches build their demo trees on the real disk"
)]

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use lisa_context::Loader;

mod common;
use common::counting::{self, vm_rss_kib};
use common::*;

#[global_allocator]
static ALLOC: counting::Counting = counting::Counting;

const LEVELS: usize = 12;
const SIDES: usize = 8;
const REPO_SKILLS: usize = 20;
const HOME_SKILLS: usize = 3;
/// Sessions of the small server the per-turn check is set beside.
const SMALL: usize = 10;

struct World {
    _tmp: tempfile::TempDir,
    homes: Vec<PathBuf>,
    /// Every session's (home index, cwd).
    sessions: Vec<(usize, PathBuf)>,
}

fn skill(rng: &mut Lcg, folder: &Path, name: &str) {
    std::fs::create_dir_all(folder).unwrap();
    let mut description = sentence(rng);
    description.truncate(150);
    std::fs::write(
        folder.join("SKILL.md"),
        format!(
            "---\nname: {name}\ndescription: {}\n---\n{}",
            description.trim_end(),
            text(rng, 1000, 2000)
        ),
    )
    .unwrap();
}

/// A repository as in the sessions bench: a 12-level chain with an
/// AGENTS.md at every level (and a CLAUDE.md at some), 8 side folders per
/// level (half with an AGENTS.md), 20 skills. Its folders, chain first.
fn repo(base: &Path, index: usize, rng: &mut Lcg) -> Vec<PathBuf> {
    let root = base.join(format!("repo{index:03}"));
    std::fs::create_dir_all(root.join(".git")).unwrap();
    let (mut chain, sides) = chain_with_sides(&root, rng, LEVELS, SIDES);
    for i in 0..REPO_SKILLS {
        let name = format!("{}-{i:02}", WORDS[rng.below(WORDS.len())]);
        skill(rng, &root.join(".lisa/skills").join(&name), &name);
    }
    chain.extend(sides.into_iter().flatten());
    chain
}

fn world(sessions: usize) -> World {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut rng = Lcg(0x5e4e_7e41);
    let repos = (sessions / 100).max(1);
    let homes_n = std::env::var("LISA_BENCH_HOMES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(sessions / 10)
        .max(1);
    let homes: Vec<PathBuf> = (0..homes_n)
        .map(|i| {
            let home = tmp.path().join("homes").join(format!("user{i:04}"));
            std::fs::create_dir_all(&home).unwrap();
            std::fs::write(home.join("AGENTS.md"), text(&mut rng, 500, 1000)).unwrap();
            for k in 0..HOME_SKILLS {
                let name = format!("mine-{k}");
                skill(&mut rng, &home.join("skills").join(&name), &name);
            }
            home
        })
        .collect();
    let folders: Vec<Vec<PathBuf>> = (0..repos).map(|i| repo(tmp.path(), i, &mut rng)).collect();
    // Session c: repository c % repos, its folder c / repos (so every
    // repository's folders fill evenly), home c % homes.
    let sessions = (0..sessions)
        .map(|c| {
            let f = &folders[c % repos];
            (c % homes_n, f[(c / repos) % f.len()].clone())
        })
        .collect();
    World {
        _tmp: tmp,
        homes,
        sessions,
    }
}

/// The loaders of one server, one per home, the first's bounds the group's.
fn group(homes: &[PathBuf], sessions: usize) -> Vec<Loader> {
    let first = Loader::builder()
        .home(&homes[0])
        .env(|_| None)
        .racy_window(Duration::ZERO)
        .capacity(sessions + 200)
        .cache_bytes(Loader::MAX_CACHE_BYTES)
        // A root handle for every home and repository in use, as
        // `serve --handle-budget` is advised to be set.
        .handle_budget(homes.len() + sessions / 100 + 64)
        .build()
        .expect("first loader")
        .watched();
    let mut loaders = vec![];
    for home in &homes[1..] {
        let l = Loader::builder()
            .home(home)
            .env(|_| None)
            .racy_window(Duration::ZERO)
            .share(&first)
            .build()
            .expect("loader")
            .watched();
        loaders.push(l);
    }
    loaders.insert(0, first);
    loaders
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn mib(bytes: f64) -> String {
    format!("{:.1} MiB", bytes / (1024.0 * 1024.0))
}

fn main() {
    let quick = !bench_mode();
    let n: usize = std::env::var("LISA_BENCH_SESSIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if quick { 200 } else { 10_000 })
        .max(SMALL);
    let made = Instant::now();
    let w = world(n);
    eprintln!(
        "server: {n} sessions over {} repositories and {} homes, tree written in {:.1} s",
        (n / 100).max(1),
        w.homes.len(),
        made.elapsed().as_secs_f64()
    );
    // Stamps older than the builds (the racy window is zero below).
    std::thread::sleep(Duration::from_millis(50));

    // Memory: the loaders alone, then with every session cached.
    let rss_before = vm_rss_kib();
    let base = counting::start();
    let loaders = group(&w.homes, n);
    let empty = counting::live() - base;
    let started = Instant::now();
    let mut prompt_bytes = 0usize;
    let mut drawn: Vec<Vec<PathBuf>> = Vec::with_capacity(n);
    for (home, cwd) in &w.sessions {
        let s = loaders[*home].snapshot(cwd).expect("snapshot");
        prompt_bytes += s.prompt.len();
        drawn.push(
            s.instruction_files
                .iter()
                .map(|b| b.path.clone())
                .chain(s.skills.iter().map(|k| k.path.clone()))
                .collect(),
        );
    }
    let cold = started.elapsed();
    let drawn_bytes: isize = drawn
        .iter()
        .map(|d| {
            (d.capacity() * size_of::<PathBuf>() + d.iter().map(|p| p.capacity()).sum::<usize>())
                as isize
        })
        .sum::<isize>()
        + (drawn.capacity() * size_of::<Vec<PathBuf>>()) as isize;
    let held = counting::live() - base - drawn_bytes;
    assert_eq!(loaders[0].group_cached_entries(), n, "every session cached");
    let estimate = loaders[0].cached_bytes();

    // The floor of a cold build: reading the files its prompt draws on.
    let started = Instant::now();
    for files in &drawn {
        for f in files {
            black_box(std::fs::read(f).map(|b| b.len()).unwrap_or(0));
        }
    }
    let floor_cold = started.elapsed();

    // Arm every session's watch: the first check after a build arms it, and
    // a build whose home's state files were written while it ran (the
    // first of each home) is rebuilt at its first check and armed at the
    // next; a third pass finds every one armed.
    for _ in 0..3 {
        for (home, cwd) in &w.sessions {
            black_box(loaders[*home].fingerprint(cwd).expect("fingerprint"));
        }
    }
    let watching = counting::live() - base - drawn_bytes - held;
    let rss_held = vm_rss_kib();

    // What one more cwd costs when its blocks are all in the cache already:
    // a new user (home) in the group, in the folders of 100 sessions held.
    let newcomer = w.homes[0].with_file_name("newcomer");
    std::fs::create_dir_all(&newcomer).unwrap();
    std::thread::sleep(Duration::from_millis(20));
    let extra = Loader::builder()
        .home(&newcomer)
        .env(|_| None)
        .racy_window(Duration::ZERO)
        .share(&loaders[0])
        .build()
        .expect("loader")
        .watched();
    extra.snapshot(&w.sessions[0].1).expect("snapshot");
    let before = counting::live();
    let mut extra_prompts = 0usize;
    let picked: Vec<&PathBuf> = w
        .sessions
        .iter()
        .step_by(n / 100)
        .skip(1)
        .map(|(_, c)| c)
        .take(100)
        .collect();
    for cwd in &picked {
        extra_prompts += extra.snapshot(cwd).expect("snapshot").prompt.len();
    }
    let marginal = counting::live() - before;
    counting::stop();
    // The small server: the first SMALL sessions, in a group of their own.
    let small_homes: Vec<PathBuf> = w.sessions[..SMALL]
        .iter()
        .map(|(h, _)| w.homes[*h].clone())
        .collect();
    let small = group(&small_homes, SMALL);
    for _ in 0..3 {
        for (i, (_, cwd)) in w.sessions[..SMALL].iter().enumerate() {
            black_box(small[i].fingerprint(cwd).expect("fingerprint"));
        }
    }

    // Per turn: rounds of timed single calls, alternating the two servers.
    let rounds = if quick { 1 } else { 10 };
    let calls = if quick { 50 } else { 2_000 };
    let mut rng = Lcg(0xc4ec_4ed0);
    let (mut big_t, mut small_t) = (Vec::new(), Vec::new());
    let time = |f: &mut dyn FnMut(), out: &mut Vec<f64>| {
        let t = Instant::now();
        f();
        out.push(t.elapsed().as_nanos() as f64);
    };
    for round in 0..rounds {
        for half in 0..2 {
            if (round + half) % 2 == 0 {
                for _ in 0..calls {
                    let (home, cwd) = &w.sessions[rng.below(n)];
                    time(
                        &mut || {
                            black_box(loaders[*home].fingerprint(cwd).expect("fingerprint"));
                        },
                        &mut big_t,
                    );
                }
            } else {
                for k in 0..calls {
                    let (_, cwd) = &w.sessions[k % SMALL];
                    time(
                        &mut || {
                            black_box(small[k % SMALL].fingerprint(cwd).expect("fingerprint"));
                        },
                        &mut small_t,
                    );
                }
            }
        }
    }
    let limited = loaders.iter().any(Loader::watch_limited);
    drop(extra);
    drop(small);
    drop(loaders);

    if quick {
        println!("test mode: server ran with {n} sessions (no figures)");
        return;
    }
    big_t.sort_by(|a, b| a.total_cmp(b));
    small_t.sort_by(|a, b| a.total_cmp(b));
    let homes = w.homes.len();
    let all = held + watching;
    println!(
        "MEMORY server {n} sessions, {homes} homes: held {} for {} of prompts: RATIO held vs prompt bytes {:.2}x",
        mib(all as f64),
        mib(prompt_bytes as f64),
        all as f64 / prompt_bytes as f64
    );
    println!(
        "MEMORY server: {:.1} KiB per home with no session; per cached cwd {:.1} KiB of prompt on average, {:.1} KiB more in the cache, {:.1} KiB more in the watch; cached_bytes estimate {} ({:.0}% of the cache's live heap)",
        empty as f64 / 1024.0 / homes as f64,
        prompt_bytes as f64 / 1024.0 / n as f64,
        (held - empty - prompt_bytes as isize) as f64 / 1024.0 / n as f64,
        watching as f64 / 1024.0 / n as f64,
        mib(estimate as f64),
        100.0 * estimate as f64 / (held - empty) as f64
    );
    println!(
        "MEMORY server: a cwd whose blocks are all held already (one more user in {} folders held): {:.1} KiB of prompt, {:.1} KiB more (RATIO to its prompt {:.2}x)",
        picked.len(),
        extra_prompts as f64 / 1024.0 / picked.len() as f64,
        (marginal - extra_prompts as isize) as f64 / 1024.0 / picked.len() as f64,
        marginal as f64 / extra_prompts as f64
    );
    if let (Some(a), Some(b)) = (rss_before, rss_held) {
        println!(
            "MEMORY server: VmRSS +{} with every session cached (allocator included)",
            mib((b.saturating_sub(a) * 1024) as f64)
        );
    }
    println!(
        "TIME server per-turn check, unchanged watched session: {n} held p50 {} p99 {}; {SMALL} held p50 {} p99 {}: RATIO p99 {:.2}x, p50 {:.2}x{}",
        fmt_ns(percentile(&big_t, 0.5)),
        fmt_ns(percentile(&big_t, 0.99)),
        fmt_ns(percentile(&small_t, 0.5)),
        fmt_ns(percentile(&small_t, 0.99)),
        percentile(&big_t, 0.99) / percentile(&small_t, 0.99),
        percentile(&big_t, 0.5) / percentile(&small_t, 0.5),
        if limited {
            " (some builds past the kernel's watch limits: swept)"
        } else {
            ""
        }
    );
    println!(
        "TIME server cold builds: {:.0} per second ({} each); reading the files they draw on: {} each: RATIO {:.2}x",
        n as f64 / cold.as_secs_f64(),
        fmt_ns(cold.as_nanos() as f64 / n as f64),
        fmt_ns(floor_cold.as_nanos() as f64 / n as f64),
        cold.as_secs_f64() / floor_cold.as_secs_f64()
    );
}
