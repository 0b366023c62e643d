//! Skill discovery: a cold snapshot of a repository holding 200 and 1,000
//! project skills (with the home's frontmatter memo, as every run after the
//! first has it, and without), and the unchanged fingerprint through a
//! `Loader`, each
//! beside its floor with plain `std::fs` (list the folder, open every
//! `SKILL.md` and read its first KiB; or one stat per `SKILL.md`).
//!
//! After the criterion groups the bench measures both sides again,
//! interleaved, and prints one `RATIO ...` line per pair.
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "examples and benches build their demo trees on the real disk"
)]

use std::hint::black_box;
use std::io::Read;
use std::path::PathBuf;
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

/// The built-in policy without the frontmatter memo: every build parses
/// every frontmatter, as a first run on a machine does.
fn policy_without_memo() -> Policy {
    use lisa_context::policy::{Layer, PolicySource};
    Policy::from_sources(&[
        PolicySource::builtin(),
        PolicySource::from_text(
            Layer::CommandLine,
            "no memo",
            "version = 1\n[skills]\nfrontmatter-memo-max-bytes = 0\n",
        ),
    ])
    .expect("policy without the memo")
}

// ---------------------------------------------------------------------------
// The two sides.

fn lisa_cold(p: &Policy, s: &Skills) -> usize {
    let built = lisa_context::build(p, Some(&s.home), &s.repo, None).expect("snapshot");
    built.skills.len()
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
    let built = lisa_context::build(p, Some(&s.home), &s.repo, None).expect("snapshot");
    let snap = &built;
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

// ---------------------------------------------------------------------------
// Ratio measurement: both sides in the same process, interleaved.

// ---------------------------------------------------------------------------

fn main() {
    let quick = !bench_mode();
    let p = policy();
    let bare = policy_without_memo();
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
        let mut g = crit.benchmark_group("skills_cold_snapshot_no_memo");
        for s in &sets {
            g.bench_function(s.count.to_string(), |b| {
                b.iter(|| black_box(lisa_cold(&bare, s)))
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
    for s in &sets {
        let n = s.count;
        ratio(
            quick,
            "skills",
            &format!("skills_cold_snapshot_no_memo/{n}"),
            &format!("skills_floor_read/{n}"),
            &mut || {
                black_box(lisa_cold(&bare, s));
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
