//! Loaders of one group (`LoaderBuilder::share`), as a server of many homes
//! runs them: one cache under one bound, each text held once, one watch,
//! and every loader still answering only from its own builds.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use lisa_context::Loader;

use crate::support::{next_timestamp_tick, write_file};

/// `n` homes below `base/homes`, each with an AGENTS.md of its own.
fn homes(base: &Path, n: usize) -> Vec<PathBuf> {
    (0..n)
        .map(|i| {
            let home = base.join("homes").join(format!("user-{i:03}"));
            write_file(&home.join("AGENTS.md"), &format!("home {i} rules"));
            home
        })
        .collect()
}

/// A repository with a root AGENTS.md of `bytes` and a package below it.
fn repo(base: &Path, name: &str, bytes: usize) -> PathBuf {
    let repo = base.join(name);
    fs::create_dir_all(repo.join(".git")).unwrap();
    write_file(
        &repo.join("AGENTS.md"),
        &format!("{name} rules {}", "r".repeat(bytes)),
    );
    write_file(
        &repo.join("pkg/AGENTS.md"),
        &format!("{name} package rules"),
    );
    repo
}

fn member(home: &Path, group: Option<&Loader>) -> Loader {
    let mut b = Loader::builder()
        .home(home)
        .env(|_| None)
        .racy_window(Duration::ZERO)
        .capacity(10_000);
    if let Some(first) = group {
        b = b.share(first);
    }
    b.build().unwrap()
}

#[test]
fn two_hundred_watched_homes_share_one_inotify_instance_and_each_text_once() {
    let tmp = tempfile::tempdir().unwrap();
    let homes = homes(tmp.path(), 200);
    let repo = repo(tmp.path(), "repo", 4000);
    write_file(
        &repo.join(".lisa/skills/deploy/SKILL.md"),
        "---\nname: deploy\ndescription: Ships the service.\n---\nSteps.",
    );
    let cwd = repo.join("pkg");
    let first = member(&homes[0], None).watched();
    let mut loaders = vec![];
    for home in &homes[1..] {
        loaders.push(member(home, Some(&first)).watched());
    }
    loaders.insert(0, first);
    let snaps: Vec<_> = loaders.iter().map(|l| l.snapshot(&cwd).unwrap()).collect();
    // Past the kernel's default of 128 inotify instances per user, had each
    // loader its own.
    for (i, l) in loaders.iter().enumerate() {
        assert!(!l.watch_limited(), "loader {i} could not watch");
        assert_eq!(l.cached_entries(), 1);
        // Checked by the watch: unchanged.
        assert_eq!(l.fingerprint(&cwd).unwrap(), snaps[i].fingerprint);
    }
    assert_eq!(loaders[0].group_cached_entries(), 200);
    // The repository's texts are held once; each home's own text is its own.
    for s in &snaps[1..] {
        assert_eq!(s.instruction_files.len(), 3, "home, root, package");
        assert!(Arc::ptr_eq(
            &s.instruction_files[1].text,
            &snaps[0].instruction_files[1].text
        ));
        assert!(!Arc::ptr_eq(
            &s.instruction_files[0].text,
            &snaps[0].instruction_files[0].text
        ));
        // The repository's skill, one record for every home.
        assert_eq!(s.skills.len(), 1);
        assert!(Arc::ptr_eq(&s.skills[0], &snaps[0].skills[0]));
    }
    // One edit is seen by every home, through the one watch.
    next_timestamp_tick(&repo);
    write_file(&repo.join("pkg/AGENTS.md"), "edited package rules");
    for (i, l) in loaders.iter().enumerate() {
        let now = l.snapshot(&cwd).unwrap();
        assert!(now.prompt.contains("edited package rules"), "loader {i}");
        assert_ne!(now.fingerprint, snaps[i].fingerprint);
    }
}

#[test]
fn one_bound_of_bytes_for_the_group_and_a_loader_leaving_takes_its_builds() {
    let tmp = tempfile::tempdir().unwrap();
    let homes = homes(tmp.path(), 4);
    let repos: Vec<PathBuf> = (0..30)
        .map(|i| repo(tmp.path(), &format!("repo-{i:02}"), 6000))
        .collect();
    let bound = Loader::MIN_CACHE_BYTES;
    let first = Loader::builder()
        .home(&homes[0])
        .env(|_| None)
        .racy_window(Duration::ZERO)
        .capacity(1000)
        .cache_bytes(bound)
        .build()
        .unwrap();
    // A member's own bounds are not used: the group's are the first's.
    let others: Vec<Loader> = homes[1..]
        .iter()
        .map(|h| {
            Loader::builder()
                .home(h)
                .env(|_| None)
                .racy_window(Duration::ZERO)
                .cache_bytes(Loader::MAX_CACHE_BYTES)
                .share(&first)
                .build()
                .unwrap()
        })
        .collect();
    let policy = lisa_context::policy::Policy::builtin().unwrap();
    for repo in &repos {
        for (home, loader) in homes.iter().zip(std::iter::once(&first).chain(&others)) {
            let got = loader.snapshot(repo).unwrap();
            let fresh = lisa_context::build(&policy, Some(home), repo, None).unwrap();
            assert_eq!(got.prompt, fresh.prompt);
            assert_eq!(got.fingerprint, fresh.fingerprint);
            let (entries, bytes) = (loader.group_cached_entries(), loader.cached_bytes());
            assert!(
                entries == 1 || bytes <= bound,
                "{entries} entries weigh {bytes} bytes, over {bound}"
            );
        }
    }
    assert!(first.group_cached_entries() < 4 * 30);
    // Each repository's text is held once for the four homes: four homes'
    // builds of one repository weigh much less than four times one.
    let alone = Loader::builder()
        .home(&homes[0])
        .env(|_| None)
        .build()
        .unwrap();
    let big = repo(tmp.path(), "big", 20_000);
    alone.snapshot(&big).unwrap();
    let one = alone.cached_bytes();
    let shared = member(&homes[0], None);
    let members: Vec<Loader> = homes[1..]
        .iter()
        .map(|h| member(h, Some(&shared)))
        .collect();
    shared.snapshot(&big).unwrap();
    for m in &members {
        m.snapshot(&big).unwrap();
    }
    let four = shared.cached_bytes();
    // Each build keeps its own prompt (which holds the text), but the three
    // more homes did not pay for the 20,000 bytes of the file's text again.
    assert!(
        four <= 4 * one - 3 * 20_000,
        "four homes weigh {four}, one {one}"
    );
    // A loader dropped leaves nothing behind.
    assert_eq!(shared.group_cached_entries(), 4);
    drop(members);
    assert_eq!(shared.group_cached_entries(), 1);
    assert_eq!(shared.cached_bytes(), one);
}

#[test]
fn a_policy_reload_in_one_home_keeps_the_other_homes_builds() {
    let tmp = tempfile::tempdir().unwrap();
    let homes = homes(tmp.path(), 2);
    let repo = repo(tmp.path(), "repo", 100);
    let first = member(&homes[0], None);
    let second = member(&homes[1], Some(&first));
    // The first builds write each home's nonce key; then stamps older than
    // the builds, so that a build unchanged is kept.
    first.snapshot(&repo).unwrap();
    second.snapshot(&repo).unwrap();
    next_timestamp_tick(tmp.path());
    let before = second.snapshot(&repo).unwrap();
    first.snapshot(&repo).unwrap();
    assert_eq!(first.group_cached_entries(), 2);
    next_timestamp_tick(&homes[0]);
    write_file(
        &homes[0].join("context-policy.toml"),
        "version = 1\n[instructions]\nbudget-bytes = 5\n",
    );
    // The first loader reads its new policy and drops its old builds.
    let now = first.snapshot(&repo).unwrap();
    assert!(now.budget.exhausted);
    assert_eq!(first.cached_entries(), 1);
    assert_eq!(second.cached_entries(), 1);
    // The second's build is still the one it had.
    assert!(Arc::ptr_eq(&second.snapshot(&repo).unwrap(), &before));
}
