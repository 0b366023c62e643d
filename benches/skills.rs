//! Skill discovery: a cold snapshot of a repository holding 200 and 1,000
//! project skills, and the unchanged fingerprint through a `Loader`, each
//! beside its floor with plain `std::fs` (list the folder, open every
//! `SKILL.md` and read its first KiB; or one stat per `SKILL.md`).
//!
//! After the criterion groups the bench measures both sides again,
//! interleaved, and prints one `RATIO ...` line per pair.

use std::hint::black_box;
use std::io::Read;
use std::path::PathBuf;
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

struct Skills {
    _tmp: TempDir,
    count: usize,
    home: PathBuf,
    repo: PathBuf,
    source: PathBuf,
    skill_files: Vec<PathBuf>,
}

/// An otherwise empty repository with `count` skills in `.lisa/skills`, each
/// `SKILL.md` a frontmatter of about 200 bytes and a body of about 2 KB.
fn skills(count: usize, seed: u64) -> Skills {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut rng = Lcg(seed);
    let home = tmp.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let repo = tmp.path().join("repo");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    let source = repo.join(".lisa/skills");
    std::fs::create_dir_all(&source).unwrap();
    let mut skill_files = Vec::new();
    for i in 0..count {
        let name = format!(
            "{}-{}-{i:04}",
            WORDS[rng.below(WORDS.len())],
            WORDS[rng.below(WORDS.len())]
        );
        let folder = source.join(&name);
        std::fs::create_dir(&folder).unwrap();
        let mut description = sentence(&mut rng);
        while description.len() < 130 {
            description.push(' ');
            description.push_str(&sentence(&mut rng));
        }
        description.truncate(150);
        let front = format!(
            "---\nname: {name}\ndescription: {}\nlicense: MIT\n---\n",
            description.trim_end()
        );
        let body = text(&mut rng, 1900, 2200);
        let file = folder.join("SKILL.md");
        std::fs::write(&file, front + &body).unwrap();
        skill_files.push(file);
    }
    Skills {
        _tmp: tmp,
        count,
        home,
        repo,
        source,
        skill_files,
    }
}

fn policy() -> Policy {
    Policy::builtin().expect("built-in policy")
}

// ---------------------------------------------------------------------------
// The two sides.

fn lisa_cold(p: &Policy, s: &Skills) -> usize {
    let built = snapshot::build(p, Some(&s.home), &s.repo, None).expect("snapshot");
    built.snapshot.skills.len()
}

fn floor_read(s: &Skills) -> usize {
    let mut buf = [0u8; 1024];
    let mut total = 0;
    for entry in std::fs::read_dir(&s.source).expect("read_dir") {
        let path = entry.expect("entry").path().join("SKILL.md");
        let mut f = std::fs::File::open(&path).expect("open");
        let mut got = 0;
        while got < buf.len() {
            match f.read(&mut buf[got..]).expect("read") {
                0 => break,
                n => got += n,
            }
        }
        total += got;
    }
    total
}

fn floor_stat(s: &Skills) -> usize {
    s.skill_files
        .iter()
        .filter(|p| std::fs::metadata(p).is_ok())
        .count()
}

fn check(p: &Policy, s: &Skills) {
    let built = snapshot::build(p, Some(&s.home), &s.repo, None).expect("snapshot");
    let snap = &built.snapshot;
    assert!(
        snap.rejected_skills.is_empty(),
        "{:?}",
        snap.rejected_skills
    );
    assert_eq!(
        snap.skills.len(),
        s.count,
        "every skill folder is a valid skill"
    );
    eprintln!(
        "skills {}: {} found, {} listed, {} hidden by the cap, prompt {} B",
        s.count,
        snap.skills.len(),
        snap.skills.iter().filter(|k| k.listed).count(),
        snap.hidden_project_skills,
        snap.prompt.len()
    );
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
    let sets = [skills(200, 200), skills(1000, 1000)];
    for s in &sets {
        check(&p, s);
    }

    // Files modified less than RACY_WINDOW before a build are re-read on every
    // check; let every stamp age past it before the loaders build.
    if quick {
        eprintln!("test mode: no wait for the racy window, cache hits not asserted");
    } else {
        std::thread::sleep(Duration::from_millis(2500));
    }
    let loaders: Vec<Loader> = sets
        .iter()
        .map(|s| {
            let loader = Loader::new(policy(), Some(s.home.clone()));
            let first = loader.fingerprint(&s.repo).expect("fingerprint");
            assert_no_reads(quick, &format!("skills {}", s.count), || {
                let again = loader.fingerprint(&s.repo).expect("fingerprint");
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
        let mut g = crit.benchmark_group("skills_cold_snapshot");
        for s in &sets {
            g.bench_function(s.count.to_string(), |b| {
                b.iter(|| black_box(lisa_cold(&p, s)))
            });
        }
        g.finish();
    }
    {
        let mut g = crit.benchmark_group("skills_floor_read");
        for s in &sets {
            g.bench_function(s.count.to_string(), |b| b.iter(|| black_box(floor_read(s))));
        }
        g.finish();
    }
    {
        let mut g = crit.benchmark_group("skills_fingerprint_unchanged");
        for (s, loader) in sets.iter().zip(&loaders) {
            g.bench_function(s.count.to_string(), |b| {
                b.iter(|| black_box(loader.fingerprint(&s.repo).expect("fingerprint")))
            });
        }
        g.finish();
    }
    {
        let mut g = crit.benchmark_group("skills_floor_stat");
        for s in &sets {
            g.bench_function(s.count.to_string(), |b| b.iter(|| black_box(floor_stat(s))));
        }
        g.finish();
    }

    for s in &sets {
        let n = s.count;
        ratio(
            quick,
            "skills",
            &format!("skills_cold_snapshot/{n}"),
            &format!("skills_floor_read/{n}"),
            &mut || {
                black_box(lisa_cold(&p, s));
            },
            &mut || {
                black_box(floor_read(s));
            },
        );
    }
    for (s, loader) in sets.iter().zip(&loaders) {
        let n = s.count;
        ratio(
            quick,
            "skills",
            &format!("skills_fingerprint_unchanged/{n}"),
            &format!("skills_floor_stat/{n}"),
            &mut || {
                black_box(loader.fingerprint(&s.repo).expect("fingerprint"));
            },
            &mut || {
                black_box(floor_stat(s));
            },
        );
    }
    for (s, loader) in sets.iter().zip(&loaders) {
        assert_no_reads(quick, &format!("skills {} (after)", s.count), || {
            black_box(loader.fingerprint(&s.repo).expect("fingerprint"));
        });
    }

    crit.final_summary();
}
