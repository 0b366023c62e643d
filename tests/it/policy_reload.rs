//! A loader built from policy files watches them: an edit is used from the
//! next call, an invalid edit fails each call with its diagnostic until it
//! is fixed, and snapshots built under the old policy are never served.
//! A loader given its policy keeps it.

use std::fs;
use std::time::Duration;

use lisa_context::policy::Policy;
use lisa_context::{BootstrapError, Loader, SnapshotError};

use crate::support::World;

/// A repository with a 100-byte `AGENTS.md`.
fn world() -> World {
    let w = World::new();
    fs::write(w.repo.join("AGENTS.md"), "x".repeat(100)).unwrap();
    w
}

fn budget(limit: usize) -> String {
    format!("version = 1\n[instructions]\nbudget-bytes = {limit}\n")
}

const INVALID: &str = "version = 1\n[instructions]\nbudget-bytes = -1\n";

#[test]
fn a_watching_loader_follows_the_home_policy_and_drops_old_snapshots() {
    let w = world();
    let policy = w.home.join("context-policy.toml");
    fs::write(&policy, budget(50)).unwrap();
    let loader = Loader::builder()
        .home(&w.home)
        .env(|_| None)
        .racy_window(Duration::ZERO)
        .build()
        .unwrap();
    let first = loader.snapshot(&w.repo).unwrap();
    assert_eq!(first.budget.limit, 50);
    assert_eq!(loader.cached_entries(), 1);

    fs::write(&policy, budget(60)).unwrap();
    let second = loader.snapshot(&w.repo).unwrap();
    assert_eq!(second.budget.limit, 60);
    assert_eq!(loader.policy().unwrap().instructions.budget_bytes, 60);
    let fresh = lisa_context::build(&loader.policy().unwrap(), Some(&w.home), &w.repo, None);
    assert_eq!(second.fingerprint, fresh.unwrap().fingerprint);
    assert_eq!(loader.cached_entries(), 1, "the old snapshot went");

    // Invalid: every call fails with the diagnostic, nothing is cached.
    fs::write(&policy, INVALID).unwrap();
    let err = loader.fingerprint(&w.repo).unwrap_err();
    let SnapshotError::PolicyInvalid(failure) = &err else {
        panic!("{err:?}")
    };
    assert!(matches!(failure.error(), BootstrapError::Policy(_)));
    assert!(matches!(
        loader.policy(),
        Err(SnapshotError::PolicyInvalid(_))
    ));
    assert!(matches!(
        loader.skill(&w.repo, "anything"),
        Err(lisa_context::SkillError::Snapshot(
            SnapshotError::PolicyInvalid(_)
        ))
    ));

    // Back to the first policy: the first answer again.
    fs::write(&policy, budget(50)).unwrap();
    assert_eq!(loader.fingerprint(&w.repo).unwrap(), first.fingerprint);
}

#[test]
fn build_refuses_an_invalid_policy_and_build_lenient_starts_anyway() {
    let w = world();
    let policy = w.home.join("context-policy.toml");
    fs::write(&policy, INVALID).unwrap();
    let builder = || {
        Loader::builder()
            .home(&w.home)
            .env(|_| None)
            .racy_window(Duration::ZERO)
    };
    assert!(matches!(builder().build(), Err(BootstrapError::Policy(_))));
    let loader = builder().build_lenient().unwrap();
    assert!(matches!(
        loader.snapshot(&w.repo),
        Err(SnapshotError::PolicyInvalid(_))
    ));
    fs::write(&policy, budget(70)).unwrap();
    assert_eq!(loader.snapshot(&w.repo).unwrap().budget.limit, 70);

    // An explicit home that is not a directory is still refused.
    let err = Loader::builder()
        .home(w.home.join("missing"))
        .build_lenient()
        .unwrap_err();
    assert!(matches!(err, BootstrapError::MissingHome { .. }), "{err:?}");
}

#[test]
fn a_loader_given_its_policy_keeps_it() {
    let w = world();
    let policy = w.home.join("context-policy.toml");
    let fixed = Loader::new(Policy::builtin().unwrap(), Some(w.home.clone()));
    let ready = Loader::builder()
        .policy(Policy::builtin().unwrap())
        .home(&w.home)
        .racy_window(Duration::ZERO)
        .build()
        .unwrap();
    let before = fixed.fingerprint(&w.repo).unwrap();
    assert_eq!(ready.fingerprint(&w.repo).unwrap(), before);
    fs::write(&policy, INVALID).unwrap();
    assert_eq!(fixed.fingerprint(&w.repo).unwrap(), before);
    assert_eq!(ready.fingerprint(&w.repo).unwrap(), before);
    fs::write(&policy, budget(10)).unwrap();
    assert_eq!(fixed.fingerprint(&w.repo).unwrap(), before);
    assert_eq!(ready.policy().unwrap().instructions.budget_bytes, 32768);
}
