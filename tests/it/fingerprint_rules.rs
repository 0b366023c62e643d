//! What moves the fingerprint, beyond content: naming the root the search
//! would find changes nothing, and `fingerprint.include-mtime` decides
//! whether a touch (a new modification time, the same bytes) is a change.
//! Each answer is checked on a plain loader, a watched one, and a fresh
//! build, which must agree.

use std::fs;
use std::path::Path;
use std::time::{Duration, SystemTime};

use lisa_context::policy::{Layer, Policy};
use lisa_context::{Loader, build};

use crate::support::layered;

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// Sets `path`'s modification time `secs` seconds into the future, as
/// `touch -d` or Node's `utimes` would: the bytes stay as they were.
fn touch_ahead(path: &Path, secs: u64) {
    let f = fs::File::options().write(true).open(path).unwrap();
    f.set_modified(SystemTime::now() + Duration::from_secs(secs))
        .unwrap();
}

struct Tree {
    _tmp: tempfile::TempDir,
    home: std::path::PathBuf,
    repo: std::path::PathBuf,
    deep: std::path::PathBuf,
}

fn tree() -> Tree {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let repo = tmp.path().join("repo");
    let deep = repo.join("pkg").join("deep");
    fs::create_dir_all(&home).unwrap();
    fs::create_dir_all(repo.join(".git")).unwrap();
    fs::create_dir_all(&deep).unwrap();
    write(&home.join("AGENTS.md"), "home rule");
    write(&repo.join("AGENTS.md"), "repo rule");
    write(
        &home.join("skills/release/SKILL.md"),
        "---\nname: release\ndescription: cut a release\n---\nbody\n",
    );
    Tree {
        _tmp: tmp,
        home,
        repo,
        deep,
    }
}

/// The fingerprint of a fresh build, a cached loader and a watched one
/// (asked twice, so the second answer comes from the cache), all equal.
fn fingerprint(policy: &Policy, t: &Tree, root: Option<&Path>) -> String {
    let fresh = build(policy, Some(&t.home), &t.deep, root)
        .unwrap()
        .fingerprint
        .clone();
    for loader in [
        Loader::new(policy.clone(), Some(t.home.clone())),
        Loader::new(policy.clone(), Some(t.home.clone())).watched(),
    ] {
        for _ in 0..2 {
            assert_eq!(loader.fingerprint_in(&t.deep, root).unwrap(), fresh);
        }
    }
    fresh
}

#[test]
fn naming_the_root_the_search_finds_keeps_the_fingerprint() {
    let t = tree();
    let policy = Policy::builtin().unwrap();
    let found = fingerprint(&policy, &t, None);
    assert_eq!(fingerprint(&policy, &t, Some(&t.repo)), found);
    // One loader asked both ways: the snapshot of one refreshes as
    // unchanged under the other.
    let loader = Loader::new(policy.clone(), Some(t.home.clone()));
    let named = loader.snapshot_in(&t.deep, Some(&t.repo)).unwrap();
    assert!(
        loader
            .refresh_in(&t.deep, None, &named.fingerprint)
            .unwrap()
            .is_none()
    );
    // Another root is another build: its own fingerprint, which still
    // moves with what it reads.
    let pkg = t.repo.join("pkg");
    let other = fingerprint(&policy, &t, Some(&pkg));
    assert_ne!(other, found);
    write(&pkg.join("AGENTS.md"), "package rule");
    assert_ne!(fingerprint(&policy, &t, Some(&pkg)), other);
    // A marker appearing between the named root and the cwd changes the
    // root the search finds, so the two ways part.
    fs::create_dir_all(pkg.join(".git")).unwrap();
    assert_ne!(
        fingerprint(&policy, &t, Some(&t.repo)),
        fingerprint(&policy, &t, None)
    );
}

#[test]
fn a_touch_moves_the_fingerprint_only_under_include_mtime() {
    let t = tree();
    let content = Policy::builtin().unwrap();
    let mtime = layered(
        Layer::Home,
        "mtime.toml",
        "version = 1\n[fingerprint]\ninclude-mtime = true\n",
    );
    let before = (
        fingerprint(&content, &t, None),
        fingerprint(&mtime, &t, None),
    );
    assert_ne!(before.0, before.1, "the key is part of the policy digest");

    // An instruction file touched: the bytes are the same.
    touch_ahead(&t.repo.join("AGENTS.md"), 5);
    assert_eq!(fingerprint(&content, &t, None), before.0);
    let touched = fingerprint(&mtime, &t, None);
    assert_ne!(touched, before.1);

    // A skill touched.
    touch_ahead(&t.home.join("skills/release/SKILL.md"), 7);
    assert_eq!(fingerprint(&content, &t, None), before.0);
    assert_ne!(fingerprint(&mtime, &t, None), touched);

    // A file created then deleted: both ways come back to where they were
    // (a folder's timestamps never count).
    let state = (
        fingerprint(&content, &t, None),
        fingerprint(&mtime, &t, None),
    );
    let added = t.deep.join("AGENTS.md");
    write(&added, "deep rule");
    assert_ne!(fingerprint(&content, &t, None), state.0);
    assert_ne!(fingerprint(&mtime, &t, None), state.1);
    fs::remove_file(&added).unwrap();
    assert_eq!(fingerprint(&content, &t, None), state.0);
    assert_eq!(fingerprint(&mtime, &t, None), state.1);
}

#[test]
fn a_loader_with_include_mtime_sees_a_touch_on_refresh() {
    let t = tree();
    let mtime = layered(
        Layer::Home,
        "mtime.toml",
        "version = 1\n[fingerprint]\ninclude-mtime = true\n",
    );
    for loader in [
        Loader::new(mtime.clone(), Some(t.home.clone())),
        Loader::new(mtime.clone(), Some(t.home.clone())).watched(),
    ] {
        let first = loader.snapshot(&t.deep).unwrap();
        assert!(
            loader
                .refresh(&t.deep, &first.fingerprint)
                .unwrap()
                .is_none()
        );
        touch_ahead(&t.home.join("AGENTS.md"), 11);
        let next = loader
            .refresh(&t.deep, &first.fingerprint)
            .unwrap()
            .expect("a touch is a change under include-mtime");
        assert_eq!(next.prompt, first.prompt, "the text is the same");
        assert!(
            loader
                .refresh(&t.deep, &next.fingerprint)
                .unwrap()
                .is_none()
        );
    }
}

/// Past the kernel's watch limits (injected: every watch added on this
/// thread fails as at `max_user_watches`), a watched loader checks by the
/// stat sweep, says it is limited, and stays exact.
#[cfg(target_os = "linux")]
#[test]
fn a_watch_limit_falls_back_to_the_sweep_and_stays_exact() {
    struct Restore;
    impl Drop for Restore {
        fn drop(&mut self) {
            lisa_context::internals::fail_watches(false);
        }
    }
    let _restore = Restore;
    lisa_context::internals::fail_watches(true);
    let t = tree();
    let policy = Policy::builtin().unwrap();
    // No racy window: a check may trust stamps made just now, so the first
    // one arms the build (and meets the failing watch).
    let loader = Loader::builder()
        .policy(policy.clone())
        .home(&t.home)
        .racy_window(Duration::ZERO)
        .build()
        .unwrap()
        .watched();
    assert!(!loader.watch_limited());
    // Past the tick the tree was written in, so that its stamps are not
    // racy (the probe goes in a folder nothing traces).
    let ticks = t._tmp.path().join("ticks");
    fs::create_dir_all(&ticks).unwrap();
    crate::support::next_timestamp_tick(&ticks);
    let first = loader.snapshot(&t.deep).unwrap();
    // A check arms the build once no stamp it holds is too fresh to trust
    // (the nonce key is written during the first build): a few ticks at
    // most.
    for _ in 0..20 {
        assert!(
            loader
                .refresh(&t.deep, &first.fingerprint)
                .unwrap()
                .is_none()
        );
        if loader.watch_limited() {
            break;
        }
        crate::support::next_timestamp_tick(&ticks);
    }
    assert!(loader.watch_limited(), "the failed watch is reported");
    for (i, text) in ["edited rule", "edited rule, again", "repo rule"]
        .iter()
        .enumerate()
    {
        write(&t.repo.join("AGENTS.md"), text);
        let fresh = build(&policy, Some(&t.home), &t.deep, None).unwrap();
        let got = loader.snapshot(&t.deep).unwrap();
        assert_eq!(got.prompt, fresh.prompt, "edit {i}");
        assert_eq!(got.fingerprint, fresh.fingerprint, "edit {i}");
    }
    // Back where it started, the fingerprint is the first one again.
    assert!(
        loader
            .refresh(&t.deep, &first.fingerprint)
            .unwrap()
            .is_none()
    );
}
