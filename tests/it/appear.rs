//! Something appears where nothing was: a candidate, a marker, the target
//! of a link that pointed at nothing, a skill folder in a source that was
//! emptied. Checks have just found everything unchanged, so a cached
//! loader (with the stat sweep, and watched) holds a clean answer; the next
//! check must answer what a fresh build answers.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::time::Duration;

use lisa_context::{Loader, LoaderBuilder};

use crate::support::{World, next_timestamp_tick};

/// The cwd of every test here, three folders below the repository root.
const CWD: &str = "repo/a/b/c";

/// A repository with files at its root and at the cwd, and links to
/// nothing yet: a candidate and a marker.
fn world() -> World {
    let w = World::new();
    let repo = &w.repo;
    let cwd = w.mkdir(CWD);
    fs::write(repo.join("AGENTS.md"), "Root rules.\n").unwrap();
    fs::write(cwd.join("AGENTS.md"), "Leaf rules.\n").unwrap();
    // Links to nothing yet: a candidate and a marker.
    symlink("../later.md", repo.join("a/CLAUDE.md")).unwrap();
    symlink("../../later-git", repo.join("a/b/.git")).unwrap();
    w
}

fn loader(home: &Path) -> Loader {
    LoaderBuilder::new()
        .home(home.to_path_buf())
        .home_policy(false)
        .racy_window(Duration::ZERO)
        .build()
        .unwrap()
}

fn skill(w: &World) -> PathBuf {
    w.repo.join(".lisa/skills/deploy")
}

/// What a snapshot says, for comparing a cached answer with a fresh one:
/// its fingerprint, repository root and prompt.
type Answer = (String, PathBuf, String);

/// The answer of `loader` for `cwd`.
fn answer(loader: &Loader, cwd: &Path) -> Answer {
    let snap = loader.snapshot(cwd).unwrap();
    (
        snap.fingerprint.clone(),
        snap.repo_root.clone(),
        snap.prompt.clone(),
    )
}

/// Writes the `deploy` skill into `folder`.
fn write_skill(folder: &Path) {
    fs::create_dir_all(folder).unwrap();
    fs::write(
        folder.join("SKILL.md"),
        "---\nname: deploy\ndescription: Ship it.\n---\n",
    )
    .unwrap();
}

/// A cached loader (watched or not) answers for `w`, then twice more after
/// a tick (full checks that find nothing changed: the folders become
/// quiet); then `change` is made. Returns the first answer, the cached
/// answer after the change and a fresh loader's.
fn quiet_then(w: &World, watched: bool, what: &str, change: fn(&World)) -> [Answer; 3] {
    let cached = loader(&w.home);
    let cached = if watched { cached.watched() } else { cached };
    let before = answer(&cached, &w.path(CWD));
    next_timestamp_tick(&w.base);
    assert_eq!(answer(&cached, &w.path(CWD)), before, "{what}: unchanged");
    assert_eq!(
        answer(&cached, &w.path(CWD)),
        before,
        "{what}: unchanged again"
    );
    change(w);
    next_timestamp_tick(&w.base);
    let now = answer(&cached, &w.path(CWD));
    let fresh = answer(&loader(&w.home), &w.path(CWD));
    [before, now, fresh]
}

#[test]
fn what_appears_in_a_quiet_folder_is_seen() {
    type Change = fn(&World);
    let cases: &[(&str, Change)] = &[
        ("a candidate where there was none", |w| {
            fs::write(w.repo.join("a/AGENTS.md"), "Middle rules, new.\n").unwrap()
        }),
        ("a candidate in the cwd", |w| {
            fs::write(w.path(CWD).join("CLAUDE.md"), "Leaf notes, new.\n").unwrap()
        }),
        ("a marker that moves the root", |w| {
            fs::create_dir(w.repo.join("a/b/c/.git")).unwrap()
        }),
        ("the target of a candidate link", |w| {
            fs::write(w.repo.join("later.md"), "Linked rules, new.\n").unwrap()
        }),
        ("the target of a marker link", |w| {
            fs::create_dir(w.repo.join("later-git")).unwrap()
        }),
        ("a skill folder in an emptied source", |w| {
            write_skill(&skill(w))
        }),
    ];
    for ((what, change), watched) in cases.iter().flat_map(|c| [(c, false), (c, true)]) {
        let w = world();
        // The source exists and is empty (a skill came and went).
        fs::create_dir_all(w.repo.join(".lisa/skills")).unwrap();
        let [before, now, fresh] = quiet_then(&w, watched, what, *change);
        assert_ne!(
            now, before,
            "{what} (watched: {watched}): the change must show"
        );
        assert_eq!(now, fresh, "{what} (watched: {watched}): as fresh");
    }
}

/// A link to nothing appears where nothing was, after the checks went
/// quiet; then its target appears in another folder. The watched loader
/// hears of the link (an event in its folder) but not of the target (its
/// folder names nothing traced), so the link must be stamped from then on.
#[test]
fn a_link_that_appears_later_is_followed_to_its_target() {
    for watched in [false, true] {
        let w = world();
        let cached = loader(&w.home);
        let cached = if watched { cached.watched() } else { cached };
        let before = answer(&cached, &w.path(CWD));
        next_timestamp_tick(&w.base);
        assert_eq!(answer(&cached, &w.path(CWD)), before);
        assert_eq!(answer(&cached, &w.path(CWD)), before);
        symlink("../../elsewhere.md", w.repo.join("a/b/AGENTS.md")).unwrap();
        next_timestamp_tick(&w.base);
        assert_eq!(
            answer(&cached, &w.path(CWD)),
            before,
            "a link to nothing adds nothing"
        );
        assert_eq!(answer(&cached, &w.path(CWD)), before);
        fs::write(w.repo.join("elsewhere.md"), "Reached through a link.\n").unwrap();
        next_timestamp_tick(&w.base);
        let now = answer(&cached, &w.path(CWD));
        assert!(
            now.2.contains("Reached through a link."),
            "watched: {watched}"
        );
        assert_eq!(
            now,
            answer(&loader(&w.home), &w.path(CWD)),
            "watched: {watched}"
        );
    }
}

/// A skill source whose parent folder is missing (`.lisa` is not there at
/// all): a check finds the parent missing and takes the source as missing
/// too, without looking for it. Whatever then appears in the parent's place
/// (the source with a skill, a link to a folder holding one, a file) must
/// get the answer a fresh build gives, and the skill must show where it
/// is really there.
#[test]
fn what_appears_under_a_missing_folder_is_seen() {
    type Change = fn(&World);
    let cases: &[(&str, Change, bool)] = &[
        ("the source with a skill", |w| write_skill(&skill(w)), true),
        (
            "a link to a folder holding the source",
            |w| {
                write_skill(&w.repo.join("kept/skills/deploy"));
                symlink("kept", w.repo.join(".lisa")).unwrap()
            },
            false,
        ),
        (
            "a file in the folder's place",
            |w| fs::write(w.repo.join(".lisa"), "not a folder\n").unwrap(),
            false,
        ),
    ];
    for ((what, change, shows), watched) in cases.iter().flat_map(|c| [(c, false), (c, true)]) {
        let w = world();
        assert!(!w.repo.join(".lisa").exists());
        let [before, now, fresh] = quiet_then(&w, watched, what, *change);
        assert_eq!(now, fresh, "{what} (watched: {watched}): as fresh");
        if *shows {
            assert_ne!(now, before, "{what} (watched: {watched}): must show");
            assert!(now.2.contains("deploy"), "{what}: {}", now.2);
        }
    }
}
