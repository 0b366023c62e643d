//! The instruction chain: a cold snapshot and an unchanged fingerprint for a
//! 12-level and a 30-level chain, each beside its floor (the same files opened
//! and read, or stat'ed, with plain `std::fs`).
//!
//! Absolute times on a shared machine are noise, so after the criterion groups
//! the bench measures both sides again, interleaved, and prints one
//! `RATIO ...` line per pair.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use criterion::Criterion;
use lisa_context::policy::Policy;
use lisa_context::{Loader, snapshot};
use tempfile::TempDir;

// ---------------------------------------------------------------------------
// Deterministic varied text.

struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }
}

const WORDS: &[&str] = &[
    "build",
    "test",
    "module",
    "crate",
    "function",
    "always",
    "never",
    "prefer",
    "avoid",
    "the",
    "a",
    "and",
    "or",
    "with",
    "without",
    "before",
    "after",
    "commit",
    "review",
    "branch",
    "error",
    "handle",
    "return",
    "value",
    "type",
    "trait",
    "struct",
    "enum",
    "field",
    "docs",
    "comment",
    "format",
    "lint",
    "warning",
    "release",
    "debug",
    "logging",
    "config",
    "path",
    "file",
    "folder",
    "script",
    "command",
    "run",
    "check",
    "deploy",
    "service",
    "client",
    "server",
    "request",
    "response",
    "schema",
    "migration",
    "database",
    "query",
    "index",
    "cache",
    "timeout",
    "retry",
    "async",
    "thread",
    "lock",
    "channel",
    "buffer",
    "stream",
    "parse",
    "encode",
    "decode",
    "naming",
    "style",
    "tabs",
    "spaces",
    "width",
    "import",
    "export",
    "public",
    "private",
    "internal",
];

fn sentence(rng: &mut Lcg) -> String {
    let n = rng.range(6, 16);
    let mut s = String::new();
    for i in 0..n {
        let w = WORDS[rng.below(WORDS.len())];
        if i == 0 {
            let mut c = w.chars();
            if let Some(f) = c.next() {
                s.extend(f.to_uppercase());
                s.push_str(c.as_str());
            }
        } else {
            s.push(' ');
            s.push_str(w);
        }
    }
    s.push('.');
    s
}

/// Markdown-ish text of `lo..=hi` bytes (roughly): headings, bullets, prose.
fn text(rng: &mut Lcg, lo: usize, hi: usize) -> String {
    let target = rng.range(lo, hi);
    let mut out = format!("# Notes {}\n\n", rng.next() % 10_000);
    let mut section = 1;
    while out.len() < target {
        match rng.below(5) {
            0 => {
                out.push_str(&format!("\n## Section {section}\n\n"));
                section += 1;
            }
            1 | 2 => {
                out.push_str("- ");
                out.push_str(&sentence(rng));
                out.push('\n');
            }
            _ => {
                out.push_str(&sentence(rng));
                out.push(' ');
                out.push_str(&sentence(rng));
                out.push_str("\n\n");
            }
        }
    }
    out.truncate(target);
    out.push('\n');
    out
}

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
    }
}

fn policy() -> Policy {
    Policy::builtin().expect("built-in policy")
}

// ---------------------------------------------------------------------------
// The two sides.

fn lisa_cold(p: &Policy, c: &Chain) -> usize {
    let built = snapshot::build(p, Some(&c.home), &c.cwd, None).expect("snapshot");
    built.snapshot.prompt.len()
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

// ---------------------------------------------------------------------------
// Checks.

/// `read()` syscalls this process has made so far, when /proc says.
fn read_syscalls() -> Option<u64> {
    let io = std::fs::read_to_string("/proc/self/io").ok()?;
    io.lines()
        .find_map(|l| l.strip_prefix("syscr:"))
        .and_then(|v| v.trim().parse().ok())
}

/// Asserts that `f` reads no file: a cached fingerprint only stats. Not in
/// test mode (`cargo test --benches`), where the stamps are left too fresh to
/// be trusted, to keep that run short.
fn assert_no_reads(quick: bool, what: &str, mut f: impl FnMut()) {
    if quick {
        return;
    }
    let (Some(a), Some(b)) = (read_syscalls(), read_syscalls()) else {
        eprintln!("note: /proc/self/io unavailable; cache hit for {what} not verified by syscalls");
        f();
        return;
    };
    let baseline = b - a;
    let before = read_syscalls().unwrap();
    f();
    let after = read_syscalls().unwrap();
    assert_eq!(
        after - before,
        baseline,
        "{what}: an unchanged fingerprint read files (the cache was missed)"
    );
}

/// The snapshot considered exactly the candidate list the floor uses.
fn check_candidates(p: &Policy, c: &Chain) {
    let built = snapshot::build(p, Some(&c.home), &c.cwd, None).expect("snapshot");
    let considered: Vec<&Path> = built
        .snapshot
        .considered
        .iter()
        .map(|x| x.path.as_path())
        .collect();
    let ours: Vec<&Path> = c.candidates.iter().map(PathBuf::as_path).collect();
    assert_eq!(considered, ours, "candidate list differs from the loader's");
    assert!(!built.snapshot.instruction_files.is_empty());
    eprintln!(
        "chain {}: {} candidates, {} files kept, {} skipped, budget used {} of {} B, prompt {} B",
        c.levels,
        c.candidates.len(),
        built.snapshot.instruction_files.len(),
        built.snapshot.skipped.len(),
        built.snapshot.budget.used,
        built.snapshot.budget.limit,
        built.snapshot.prompt.len()
    );
}

// ---------------------------------------------------------------------------
// Ratio measurement: both sides in the same process, interleaved.

fn fmt_ns(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.1} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

fn batch(n: u64, f: &mut dyn FnMut()) -> f64 {
    let t = Instant::now();
    for _ in 0..n {
        f();
    }
    t.elapsed().as_nanos() as f64 / n as f64
}

fn calibrate(f: &mut dyn FnMut(), target: Duration) -> u64 {
    f();
    let mut n = 1u64;
    loop {
        let t = Instant::now();
        for _ in 0..n {
            f();
        }
        if t.elapsed() >= target / 4 || n >= 1 << 30 {
            let per = t.elapsed().as_nanos().max(1) as f64 / n as f64;
            return ((target.as_nanos() as f64 / per) as u64).max(1);
        }
        n *= 2;
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let m = v.len() / 2;
    if v.len() % 2 == 0 {
        (v[m - 1] + v[m]) / 2.0
    } else {
        v[m]
    }
}

/// Runs each side for about a second in rounds, alternating which goes
/// first, and prints the ratio of the median per-iteration times.
fn ratio(
    quick: bool,
    label: &str,
    lisa_name: &str,
    floor_name: &str,
    lisa: &mut dyn FnMut(),
    floor: &mut dyn FnMut(),
) {
    let rounds = if quick { 1 } else { 10 };
    let per_round = Duration::from_millis(if quick { 1 } else { 100 });
    let nl = calibrate(lisa, per_round);
    let nf = calibrate(floor, per_round);
    let (mut l, mut f, mut r) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        let (a, b) = if round % 2 == 0 {
            let a = batch(nl, lisa);
            (a, batch(nf, floor))
        } else {
            let b = batch(nf, floor);
            (batch(nl, lisa), b)
        };
        l.push(a);
        f.push(b);
        r.push(a / b);
    }
    if quick {
        println!("test mode: {label} {lisa_name} and {floor_name} ran (no ratio measured)");
        return;
    }
    let (ml, mf) = (median(&mut l), median(&mut f));
    r.sort_by(|a, b| a.total_cmp(b));
    println!(
        "RATIO {label} {lisa_name} vs {floor_name}: {:.2}x (lisa {}, floor {}; per-round {:.2}x–{:.2}x)",
        ml / mf,
        fmt_ns(ml),
        fmt_ns(mf),
        r[0],
        r[r.len() - 1]
    );
}

// ---------------------------------------------------------------------------

fn bench_mode() -> bool {
    let args: Vec<String> = std::env::args().collect();
    args.iter().any(|a| a == "--bench") && !args.iter().any(|a| a == "--test" || a == "--list")
}

fn main() {
    let quick = !bench_mode();
    let p = policy();
    let chains = [chain(12, 12), chain(30, 30)];
    for c in &chains {
        check_candidates(&p, c);
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
    }
    // The measured loop must still have been served from the cache.
    for (c, loader) in chains.iter().zip(&loaders) {
        assert_no_reads(quick, &format!("chain {} (after)", c.levels), || {
            black_box(loader.fingerprint(&c.cwd).expect("fingerprint"));
        });
    }

    crit.final_summary();
}
