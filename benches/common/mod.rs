//! Shared by the benchmarks: deterministic varied text, and the in-process
//! ratio measurement that sets lisa-context beside its `std::fs` floor.
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "examples and benches build their demo trees on the real disk"
)]
#![allow(dead_code)]

pub mod counting;
pub mod tree;

use std::time::{Duration, Instant};

pub struct Lcg(pub u64);

impl Lcg {
    pub fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }
}

pub const WORDS: &[&str] = &[
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

pub fn sentence(rng: &mut Lcg) -> String {
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
pub fn text(rng: &mut Lcg, lo: usize, hi: usize) -> String {
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

/// A repository's chain of `levels` folders from `root` down (named from
/// [`WORDS`]), an AGENTS.md at every level and a CLAUDE.md at every fourth
/// from the third, and `sides` side folders off each level (the even ones
/// with an AGENTS.md): the chain folders, root first, and each level's
/// side folders. `root` must exist.
pub fn chain_with_sides(
    root: &std::path::Path,
    rng: &mut Lcg,
    levels: usize,
    sides: usize,
) -> (Vec<std::path::PathBuf>, Vec<Vec<std::path::PathBuf>>) {
    let mut chain = Vec::new();
    let mut all_sides = Vec::new();
    let mut dir = root.to_path_buf();
    for level in 0..levels {
        if level > 0 {
            dir.push(format!("{}{level:02}", WORDS[rng.below(WORDS.len())]));
            std::fs::create_dir(&dir).unwrap();
        }
        std::fs::write(dir.join("AGENTS.md"), text(rng, 800, 1200)).unwrap();
        if level % 4 == 2 {
            std::fs::write(dir.join("CLAUDE.md"), text(rng, 800, 1200)).unwrap();
        }
        let mut here = Vec::new();
        for k in 0..sides {
            let side = dir.join(format!("side{k}"));
            std::fs::create_dir(&side).unwrap();
            if k % 2 == 0 {
                std::fs::write(side.join("AGENTS.md"), text(rng, 800, 1200)).unwrap();
            }
            here.push(side);
        }
        chain.push(dir.clone());
        all_sides.push(here);
    }
    (chain, all_sides)
}

/// `read()` syscalls this process has made so far, when /proc says.
pub fn read_syscalls() -> Option<u64> {
    let io = std::fs::read_to_string("/proc/self/io").ok()?;
    io.lines()
        .find_map(|l| l.strip_prefix("syscr:"))
        .and_then(|v| v.trim().parse().ok())
}

/// Asserts that `f` reads no file: a cached fingerprint only stats. Not in
/// test mode (`cargo test --benches`), where the stamps are left too fresh to
/// be trusted, to keep that run short.
pub fn assert_no_reads(quick: bool, what: &str, mut f: impl FnMut()) {
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

pub fn fmt_ns(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.1} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

pub fn batch(n: u64, f: &mut dyn FnMut()) -> f64 {
    let t = Instant::now();
    for _ in 0..n {
        f();
    }
    t.elapsed().as_nanos() as f64 / n as f64
}

pub fn calibrate(f: &mut dyn FnMut(), target: Duration) -> u64 {
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

pub fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let m = v.len() / 2;
    if v.len().is_multiple_of(2) {
        (v[m - 1] + v[m]) / 2.0
    } else {
        v[m]
    }
}

/// Runs each side for about a second in rounds, alternating which goes
/// first, and prints the ratio of the median per-iteration times.
pub fn ratio(
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

pub fn bench_mode() -> bool {
    let args: Vec<String> = std::env::args().collect();
    args.iter().any(|a| a == "--bench") && !args.iter().any(|a| a == "--test" || a == "--list")
}
