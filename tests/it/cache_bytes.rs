//! The snapshot cache bounded by bytes as well as entries: past the bound
//! the least recently used snapshots go, what is kept stays under it, and
//! every answer, kept or rebuilt, is the one a fresh build gives.

use std::fs;
use std::path::{Path, PathBuf};

use lisa_context::policy::Policy;
use lisa_context::{BootstrapError, Loader, build};

use crate::support::write_file;

/// `n` repositories, each with an AGENTS.md of about 3 KiB of its own text.
fn repos(base: &Path, n: usize) -> Vec<PathBuf> {
    (0..n)
        .map(|i| {
            let repo = base.join(format!("repo-{i}"));
            fs::create_dir_all(repo.join(".git")).unwrap();
            write_file(
                &repo.join("AGENTS.md"),
                &format!("rule {i}: {}\n", "x".repeat(3000)),
            );
            repo
        })
        .collect()
}

#[test]
fn the_cache_stays_under_its_bytes_and_answers_as_fresh_builds() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    write_file(&home.join("AGENTS.md"), "home rule");
    let repos = repos(tmp.path(), 40);
    let bound = Loader::MIN_CACHE_BYTES;
    let loader = Loader::builder()
        .home(&home)
        .env(|_| None)
        .capacity(1000)
        .cache_bytes(bound)
        .build()
        .unwrap();
    let policy = Policy::builtin().unwrap();
    for round in 0..2 {
        for (i, repo) in repos.iter().enumerate() {
            let got = loader.snapshot(repo).unwrap();
            let fresh = build(&policy, Some(&home), repo, None).unwrap();
            assert_eq!(got.prompt, fresh.prompt, "round {round}, repo {i}");
            assert_eq!(got.fingerprint, fresh.fingerprint);
            let (entries, bytes) = (loader.cached_entries(), loader.cached_bytes());
            assert!(entries >= 1);
            assert!(
                entries == 1 || bytes <= bound,
                "{entries} entries weigh {bytes} bytes, over {bound}"
            );
        }
    }
    // About 3 KiB of text and its trace per entry: far fewer than 40 kept.
    assert!(loader.cached_entries() < 40, "{}", loader.cached_entries());
    // The most recent is kept: asking again is a cache hit that still
    // refreshes as unchanged.
    let last = repos.last().unwrap();
    let snap = loader.snapshot(last).unwrap();
    assert!(loader.refresh(last, &snap.fingerprint).unwrap().is_none());
}

#[test]
fn a_bound_out_of_range_is_refused() {
    for bytes in [0, Loader::MIN_CACHE_BYTES - 1, Loader::MAX_CACHE_BYTES + 1] {
        let refused = Loader::builder().env(|_| None).cache_bytes(bytes).build();
        assert!(
            matches!(
                refused,
                Err(BootstrapError::OutOfRange {
                    setting: "cache_bytes",
                    ..
                })
            ),
            "{bytes}: {refused:?}"
        );
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_lisa-context"))
        .args(["serve", "--cache-bytes", "1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}
