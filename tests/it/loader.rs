//! The library API for many sessions: one shared [`Loader`], explicit cwds,
//! a cache that never serves stale content, a bounded cache, and threads.
//!
//! Every tree is built under a temporary directory, with an explicit home, so
//! nothing here reads the real `~/.lisa` or depends on the process's cwd.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock, mpsc};
use std::time::Duration;

use lisa_context::policy::Policy;
use lisa_context::{Loader, Snapshot, SnapshotError};
use serde_json::Value;

use crate::support::next_timestamp_tick;

// ---------------------------------------------------------------------------
// Helpers

fn policy() -> Policy {
    Policy::builtin().unwrap()
}

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

fn skill_text(name: &str, description: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\n\n# {name}\n\nHow to {name}.\n")
}

/// A skill folder `dir/name` with a valid `SKILL.md`.
fn add_skill(dir: &Path, name: &str, description: &str) {
    write(
        &dir.join(name).join("SKILL.md"),
        &skill_text(name, description),
    );
}

/// A repository root: a directory holding a `.git` directory.
fn make_repo(path: &Path) {
    fs::create_dir_all(path.join(".git")).unwrap();
}

fn loader_for(home: &Path) -> Loader {
    Loader::new(policy(), Some(home.to_path_buf()))
}

fn file_paths(s: &Snapshot) -> Vec<PathBuf> {
    s.instruction_files.iter().map(|b| b.path.clone()).collect()
}

fn skill_names(s: &Snapshot) -> Vec<String> {
    s.skills.iter().map(|k| k.name.clone()).collect()
}

fn json(s: &Snapshot) -> Value {
    serde_json::to_value(s).unwrap()
}

/// The snapshot built from scratch, without any cache, for the same place.
fn fresh(home: &Path, cwd: &Path, root: Option<&Path>) -> Value {
    let built = lisa_context::build(&policy(), Some(home), cwd, root).unwrap();
    json(&built)
}

/// What a fresh build says about a place: its snapshot, or the error.
fn fresh_result(home: &Path, cwd: &Path) -> Result<Value, String> {
    lisa_context::build(&policy(), Some(home), cwd, None)
        .map(|b| json(&b))
        .map_err(|e| format!("{e:?}"))
}

/// Rewrites `path` with `text` (same length as before) and puts the old
/// modification time back, so only the content and the ctime change.
fn rewrite_keeping_mtime(path: &Path, text: &str) {
    let before = fs::metadata(path).unwrap();
    assert_eq!(
        before.len(),
        text.len() as u64,
        "the rewrite must keep the size"
    );
    let mtime = before.modified().unwrap();
    fs::write(path, text).unwrap();
    let f = fs::File::options().write(true).open(path).unwrap();
    f.set_modified(mtime).unwrap();
    drop(f);
    let after = fs::metadata(path).unwrap();
    assert_eq!(after.len(), before.len());
    assert_eq!(after.modified().unwrap(), mtime, "mtime restored");
}

// ---------------------------------------------------------------------------
// Settled trees: created once, then read by loaders whose racy window is zero,
// so that they trust their stamps at once and really serve from their cache.
// No test waits on the wall clock: the only wait is for the file system's
// timestamp clock to tick once after the setup (a few milliseconds), so that
// every later change moves a ctime.

type Setup = fn(&Path);

/// The scenarios, each set up in `<base>/<name>/` before the one sleep.
const SCENARIOS: &[(&str, Setup)] = &[
    ("unchanged", setup_standard),
    ("same-size-edit", setup_standard),
    ("bigger-edit", setup_standard),
    ("deleted-file", setup_standard),
    ("new-skill", setup_standard),
    ("renamed-skill", setup_standard),
    ("skill-file-edit", setup_standard),
    ("new-level-file", setup_standard),
    ("replaced-repo", setup_standard),
    ("home-created-later", setup_without_home),
    ("deleted-cwd", setup_standard),
];

/// `home/` with an AGENTS.md and a skill; `repo/` (marked) with a root
/// AGENTS.md, a nested package with its own AGENTS.md, an empty nested
/// `docs/` directory, and two project skills.
fn setup_standard(dir: &Path) {
    let home = dir.join("home");
    write(&home.join("AGENTS.md"), "home: be brief");
    add_skill(&home.join("skills"), "home-tool", "a tool from home");
    let repo = dir.join("repo");
    make_repo(&repo);
    write(&repo.join("AGENTS.md"), "root: use tabs");
    write(
        &repo.join("packages/api/AGENTS.md"),
        "api: return JSON errors",
    );
    fs::create_dir_all(repo.join("docs/guide")).unwrap();
    add_skill(&repo.join(".agents/skills"), "deploy", "deploy the app");
    add_skill(&repo.join(".agents/skills"), "lint", "lint the code");
}

/// Like [`setup_standard`], but the home directory does not exist yet.
fn setup_without_home(dir: &Path) {
    setup_standard(dir);
    fs::remove_dir_all(dir.join("home")).unwrap();
}

struct Settled {
    dir: PathBuf,
}

impl Settled {
    fn home(&self) -> PathBuf {
        self.dir.join("home")
    }
    fn repo(&self) -> PathBuf {
        self.dir.join("repo")
    }
}

impl Drop for Settled {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.dir);
        // The last scenario to finish removes the (then empty) base.
        if let Some(base) = self.dir.parent() {
            let _ = fs::remove_dir(base);
        }
    }
}

/// A loader over a settled tree: it trusts every stamp taken before its
/// build (a zero racy window).
fn settled_loader(home: &Path) -> Loader {
    Loader::builder()
        .policy(policy())
        .home(home)
        .racy_window(Duration::ZERO)
        .build()
        .unwrap()
}

/// The scenario `name`, set up before the file system's clock last ticked.
fn settled(name: &str) -> Settled {
    static BASE: OnceLock<PathBuf> = OnceLock::new();
    let base = BASE.get_or_init(|| {
        let base = tempfile::Builder::new()
            .prefix("lisa-loader-settled")
            .tempdir()
            .unwrap()
            .keep();
        for (name, setup) in SCENARIOS {
            let dir = base.join(name);
            fs::create_dir(&dir).unwrap();
            setup(&dir);
        }
        next_timestamp_tick(&base);
        base
    });
    assert!(
        SCENARIOS.iter().any(|(n, _)| *n == name),
        "unknown scenario {name}"
    );
    Settled {
        dir: base.join(name),
    }
}

// ---------------------------------------------------------------------------
// Many sessions, one loader

#[test]
fn sessions_in_two_repositories_share_one_loader() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    write(&home.join("AGENTS.md"), "home-note");
    add_skill(&home.join("skills"), "home-tool", "from home");

    let alpha = tmp.path().join("alpha");
    make_repo(&alpha);
    write(&alpha.join("AGENTS.md"), "alpha-root");
    write(&alpha.join("packages/api/AGENTS.md"), "alpha-api");
    add_skill(&alpha.join(".agents/skills"), "alpha-skill", "alpha only");

    let beta = tmp.path().join("beta");
    make_repo(&beta);
    write(&beta.join("CLAUDE.md"), "beta-root");
    fs::create_dir_all(beta.join("sub/dir")).unwrap();
    add_skill(&beta.join(".lisa/skills"), "beta-skill", "beta only");

    let alpha_api = alpha.join("packages/api");
    let beta_sub = beta.join("sub/dir");
    let loader = loader_for(&home);

    struct Want<'a> {
        cwd: &'a Path,
        root: &'a Path,
        files: Vec<PathBuf>,
        skills: Vec<&'a str>,
        texts: Vec<&'a str>,
        absent: Vec<&'a str>,
    }
    let wants = [
        Want {
            cwd: &alpha,
            root: &alpha,
            files: vec![home.join("AGENTS.md"), alpha.join("AGENTS.md")],
            skills: vec!["alpha-skill", "home-tool"],
            texts: vec!["home-note", "alpha-root"],
            absent: vec!["alpha-api", "beta-root", "beta-skill"],
        },
        Want {
            cwd: &alpha_api,
            root: &alpha,
            files: vec![
                home.join("AGENTS.md"),
                alpha.join("AGENTS.md"),
                alpha.join("packages/api/AGENTS.md"),
            ],
            skills: vec!["alpha-skill", "home-tool"],
            texts: vec!["home-note", "alpha-root", "alpha-api"],
            absent: vec!["beta-root", "beta-skill"],
        },
        Want {
            cwd: &beta,
            root: &beta,
            files: vec![home.join("AGENTS.md"), beta.join("CLAUDE.md")],
            skills: vec!["beta-skill", "home-tool"],
            texts: vec!["home-note", "beta-root"],
            absent: vec!["alpha-root", "alpha-api", "alpha-skill"],
        },
        Want {
            cwd: &beta_sub,
            root: &beta,
            files: vec![home.join("AGENTS.md"), beta.join("CLAUDE.md")],
            skills: vec!["beta-skill", "home-tool"],
            texts: vec!["home-note", "beta-root"],
            absent: vec!["alpha-root", "alpha-api", "alpha-skill"],
        },
    ];

    // Twice, interleaved, so that the second round is served from the same
    // (shared) cache and must not mix the sessions up.
    for round in 0..2 {
        for w in &wants {
            let s = loader.snapshot(w.cwd).unwrap();
            let at = format!("round {round}, cwd {}", w.cwd.display());
            assert_eq!(s.cwd, w.cwd, "{at}");
            assert_eq!(s.repo_root, w.root, "{at}");
            assert_eq!(s.home.as_deref(), Some(home.as_path()), "{at}");
            assert_eq!(file_paths(&s), w.files, "{at}");
            assert_eq!(skill_names(&s), w.skills, "{at}");
            for t in &w.texts {
                assert!(s.prompt.contains(t), "{at}: prompt lacks {t:?}");
            }
            for t in &w.absent {
                assert!(!s.prompt.contains(t), "{at}: prompt has {t:?}");
            }
            // The result depends on the explicit cwd alone: it equals a
            // build from scratch for that cwd (never the process's cwd).
            assert_eq!(json(&s), fresh(&home, w.cwd, None), "{at}");
            assert_eq!(loader.fingerprint(w.cwd).unwrap(), s.fingerprint, "{at}");
        }
    }
    assert_eq!(loader.cached_entries(), wants.len());

    // Sessions of the same repository, and of different ones, differ.
    let fps: std::collections::HashSet<String> = wants
        .iter()
        .map(|w| loader.fingerprint(w.cwd).unwrap())
        .collect();
    assert_eq!(
        fps.len(),
        wants.len(),
        "every session has its own fingerprint"
    );

    // The process's cwd is somewhere else entirely, and nothing above
    // mentions it.
    let process_cwd = std::env::current_dir().unwrap();
    for w in &wants {
        let s = loader.snapshot(w.cwd).unwrap();
        assert!(!s.cwd.starts_with(&process_cwd));
        assert!(
            !file_paths(&s).iter().any(|p| p.starts_with(&process_cwd)),
            "no file from the process's cwd"
        );
    }
}

#[test]
fn a_cwd_is_normalized_lexically() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let repo = tmp.path().join("repo");
    make_repo(&repo);
    write(&repo.join("pkg/AGENTS.md"), "pkg-note");
    let loader = loader_for(&home);

    let plain = loader.snapshot(&repo.join("pkg")).unwrap();
    let dotted = loader.snapshot(&repo.join("./other/../pkg/.")).unwrap();
    assert_eq!(dotted.cwd, repo.join("pkg"));
    assert_eq!(json(&dotted), json(&plain));
    assert_eq!(loader.cached_entries(), 1, "both spellings share one entry");
}

// ---------------------------------------------------------------------------
// refresh and fingerprint

#[test]
fn refresh_reports_edits_and_undoing_restores_the_fingerprint() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    fs::create_dir_all(&home).unwrap();
    let repo = tmp.path().join("repo");
    make_repo(&repo);
    let agents = repo.join("AGENTS.md");
    write(&agents, "original text");
    add_skill(&repo.join(".agents/skills"), "deploy", "deploy it");
    let cwd = repo.clone();
    let loader = loader_for(&home);

    let s0 = loader.snapshot(&cwd).unwrap();
    assert_eq!(s0.fingerprint.len(), 32);
    assert!(s0.fingerprint.chars().all(|c| c.is_ascii_hexdigit()));
    assert!(loader.refresh(&cwd, &s0.fingerprint).unwrap().is_none());
    assert_eq!(loader.fingerprint(&cwd).unwrap(), s0.fingerprint);

    // An edit: refresh hands back the new snapshot.
    write(&agents, "edited text, longer than before");
    let s1 = loader
        .refresh(&cwd, &s0.fingerprint)
        .unwrap()
        .expect("the edit is a change");
    assert_ne!(s1.fingerprint, s0.fingerprint);
    assert_eq!(s1.fingerprint, loader.fingerprint(&cwd).unwrap());
    assert!(s1.prompt.contains("edited text, longer than before"));
    assert!(!s1.prompt.contains("original text"));
    assert_eq!(json(&s1), fresh(&home, &cwd, None));
    assert!(loader.refresh(&cwd, &s1.fingerprint).unwrap().is_none());

    // Undo: the fingerprint is the original one again (it hashes content,
    // never inodes or times).
    write(&agents, "original text");
    assert_eq!(loader.fingerprint(&cwd).unwrap(), s0.fingerprint);
    assert!(loader.refresh(&cwd, &s0.fingerprint).unwrap().is_none());
    let back = loader.refresh(&cwd, &s1.fingerprint).unwrap().unwrap();
    assert_eq!(json(&back), json(&s0));

    // A skill edit (its description) is a change too, and undoing it
    // restores the fingerprint.
    let skill_md = repo.join(".agents/skills/deploy/SKILL.md");
    write(&skill_md, &skill_text("deploy", "deploy it to production"));
    let s2 = loader.refresh(&cwd, &s0.fingerprint).unwrap().unwrap();
    assert_eq!(s2.skills[0].description, "deploy it to production");
    assert_eq!(s2.fingerprint, loader.fingerprint(&cwd).unwrap());
    write(&skill_md, &skill_text("deploy", "deploy it"));
    assert_eq!(loader.fingerprint(&cwd).unwrap(), s0.fingerprint);

    // A file appearing at a nested level changes only that session.
    let nested = repo.join("pkg");
    fs::create_dir_all(&nested).unwrap();
    let n0 = loader.snapshot(&nested).unwrap();
    write(&nested.join("CLAUDE.md"), "nested note");
    let n1 = loader.refresh(&nested, &n0.fingerprint).unwrap().unwrap();
    assert!(n1.prompt.contains("nested note"));
    assert!(loader.refresh(&cwd, &s0.fingerprint).unwrap().is_none());
    fs::remove_file(nested.join("CLAUDE.md")).unwrap();
    assert_eq!(loader.fingerprint(&nested).unwrap(), n0.fingerprint);
}

// ---------------------------------------------------------------------------
// No stale content while stamps are fresh (no sleeping)

#[test]
fn edits_of_a_different_size_are_seen_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let repo = tmp.path().join("repo");
    make_repo(&repo);
    let agents = repo.join("AGENTS.md");
    let loader = loader_for(&home);
    for i in 1..=6 {
        let text = format!("version {} {}", i, "x".repeat(i));
        write(&agents, &text);
        let s = loader.snapshot(&repo).unwrap();
        assert!(s.prompt.contains(&text), "edit {i} seen");
        assert_eq!(s.instruction_files[0].bytes, text.len() as u64);
        assert_eq!(json(&s), fresh(&home, &repo, None));
    }
}

#[test]
fn a_same_size_edit_with_the_old_mtime_is_seen() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let repo = tmp.path().join("repo");
    make_repo(&repo);
    let agents = repo.join("AGENTS.md");
    write(&agents, "answer: AAAA");
    let loader = loader_for(&home);
    let s0 = loader.snapshot(&repo).unwrap();
    assert!(s0.prompt.contains("answer: AAAA"));

    rewrite_keeping_mtime(&agents, "answer: BBBB");
    let s1 = loader.snapshot(&repo).unwrap();
    assert!(
        s1.prompt.contains("answer: BBBB"),
        "same size, same mtime: still seen"
    );
    assert_ne!(s1.fingerprint, s0.fingerprint);
    assert_eq!(loader.fingerprint(&repo).unwrap(), s1.fingerprint);
}

// ---------------------------------------------------------------------------
// No stale content once the cache trusts its stamps (settled trees)

#[test]
fn settled_unchanged_tree_is_served_from_cache_and_equals_a_fresh_build() {
    let sc = settled("unchanged");
    let (home, repo) = (sc.home(), sc.repo());
    let api = repo.join("packages/api");
    let loader = settled_loader(&home);
    for cwd in [&repo, &api] {
        let s0 = loader.snapshot(cwd).unwrap();
        for _ in 0..3 {
            assert!(loader.refresh(cwd, &s0.fingerprint).unwrap().is_none());
            assert_eq!(loader.fingerprint(cwd).unwrap(), s0.fingerprint);
            assert_eq!(json(&loader.snapshot(cwd).unwrap()), json(&s0));
        }
        assert_eq!(json(&s0), fresh(&home, cwd, None));
    }
    assert_eq!(loader.cached_entries(), 2);
}

#[test]
fn settled_same_size_edit_with_the_old_mtime_changes_the_fingerprint() {
    let sc = settled("same-size-edit");
    let (home, repo) = (sc.home(), sc.repo());
    let api = repo.join("packages/api");
    let loader = settled_loader(&home);
    let s0 = loader.snapshot(&api).unwrap();
    assert!(loader.refresh(&api, &s0.fingerprint).unwrap().is_none());

    // "api: return JSON errors" -> same length, other text, old mtime: only
    // the ctime moved.
    rewrite_keeping_mtime(
        &repo.join("packages/api/AGENTS.md"),
        "api: return XML! errors",
    );
    let fp = loader.fingerprint(&api).unwrap();
    assert_ne!(fp, s0.fingerprint, "the ctime change must be noticed");
    let s1 = loader.snapshot(&api).unwrap();
    assert!(s1.prompt.contains("api: return XML! errors"));
    assert!(!s1.prompt.contains("api: return JSON errors"));
    assert_eq!(s1.fingerprint, fp);
    assert_eq!(json(&s1), fresh(&home, &api, None));
}

#[test]
fn settled_bigger_edit_is_seen_on_the_next_call() {
    let sc = settled("bigger-edit");
    let (home, repo) = (sc.home(), sc.repo());
    let loader = settled_loader(&home);
    let s0 = loader.snapshot(&repo).unwrap();
    assert!(s0.prompt.contains("root: use tabs"));
    write(&repo.join("AGENTS.md"), "root: use four spaces");
    let s1 = loader.snapshot(&repo).unwrap();
    assert!(s1.prompt.contains("root: use four spaces"));
    assert_ne!(s1.fingerprint, s0.fingerprint);

    // The home file is watched as well.
    write(&home.join("AGENTS.md"), "home: be very brief");
    let s2 = loader.snapshot(&repo).unwrap();
    assert!(s2.prompt.contains("home: be very brief"));
    assert_eq!(json(&s2), fresh(&home, &repo, None));
}

#[test]
fn settled_deleted_file_is_seen_on_the_next_call() {
    let sc = settled("deleted-file");
    let (home, repo) = (sc.home(), sc.repo());
    let api = repo.join("packages/api");
    let loader = settled_loader(&home);
    let s0 = loader.snapshot(&api).unwrap();
    assert_eq!(s0.instruction_files.len(), 3);

    fs::remove_file(repo.join("AGENTS.md")).unwrap();
    let s1 = loader.snapshot(&api).unwrap();
    assert_eq!(
        file_paths(&s1),
        vec![home.join("AGENTS.md"), repo.join("packages/api/AGENTS.md")]
    );
    assert!(!s1.prompt.contains("root: use tabs"));
    assert_eq!(json(&s1), fresh(&home, &api, None));

    // A deleted skill file: the skill is gone.
    fs::remove_file(repo.join(".agents/skills/lint/SKILL.md")).unwrap();
    assert_ne!(loader.fingerprint(&api).unwrap(), s1.fingerprint);
    let s2 = loader.snapshot(&api).unwrap();
    assert_eq!(skill_names(&s2), vec!["deploy", "home-tool"]);
    assert!(matches!(
        loader.skill(&api, "lint"),
        Err(lisa_context::SkillError::NotFound { .. })
    ));
}

#[test]
fn settled_new_skill_folder_is_seen_on_the_next_call() {
    let sc = settled("new-skill");
    let (home, repo) = (sc.home(), sc.repo());
    let loader = settled_loader(&home);
    let s0 = loader.snapshot(&repo).unwrap();
    assert_eq!(skill_names(&s0), vec!["deploy", "home-tool", "lint"]);

    add_skill(&repo.join(".agents/skills"), "bench", "run the benchmarks");
    let s1 = loader.snapshot(&repo).unwrap();
    assert_eq!(
        skill_names(&s1),
        vec!["bench", "deploy", "home-tool", "lint"]
    );
    assert!(s1.prompt.contains("run the benchmarks"));

    // A new source (.lisa/skills did not exist) and a new home skill.
    add_skill(&repo.join(".lisa/skills"), "triage", "triage issues");
    add_skill(&home.join("skills"), "notes", "keep notes");
    let s2 = loader.snapshot(&repo).unwrap();
    assert_eq!(
        skill_names(&s2),
        vec!["bench", "deploy", "home-tool", "lint", "notes", "triage"]
    );
    assert_eq!(json(&s2), fresh(&home, &repo, None));
}

#[test]
fn settled_renamed_skill_folder_is_seen_on_the_next_call() {
    let sc = settled("renamed-skill");
    let (home, repo) = (sc.home(), sc.repo());
    let loader = settled_loader(&home);
    let s0 = loader.snapshot(&repo).unwrap();
    assert_eq!(skill_names(&s0), vec!["deploy", "home-tool", "lint"]);

    let skills = repo.join(".agents/skills");
    fs::rename(skills.join("lint"), skills.join("check")).unwrap();
    let s1 = loader.snapshot(&repo).unwrap();
    // The folder is now `check` but its frontmatter still says `lint`.
    assert_eq!(skill_names(&s1), vec!["deploy", "home-tool"]);
    assert!(
        s1.rejected_skills
            .iter()
            .any(|r| r.path == skills.join("check") && r.reason.as_str() == "impostor"),
        "{:?}",
        s1.rejected_skills
    );
    assert_eq!(json(&s1), fresh(&home, &repo, None));
    assert!(matches!(
        loader.skill(&repo, "lint"),
        Err(lisa_context::SkillError::NotFound { .. })
    ));
}

#[test]
fn settled_skill_file_edit_is_seen_on_the_next_call() {
    let sc = settled("skill-file-edit");
    let (home, repo) = (sc.home(), sc.repo());
    let loader = settled_loader(&home);
    let s0 = loader.snapshot(&repo).unwrap();
    let deploy = s0.skills.iter().find(|k| k.name == "deploy").unwrap();
    assert_eq!(deploy.description, "deploy the app");

    // Same size, old mtime.
    let path = repo.join(".agents/skills/deploy/SKILL.md");
    rewrite_keeping_mtime(&path, &skill_text("deploy", "deploy the API"));
    let s1 = loader.snapshot(&repo).unwrap();
    let deploy = s1.skills.iter().find(|k| k.name == "deploy").unwrap();
    assert_eq!(deploy.description, "deploy the API");
    assert_ne!(s1.fingerprint, s0.fingerprint);
    // And `skill` reads the file as it is now.
    assert_eq!(
        loader.skill(&repo, "deploy").unwrap().content,
        skill_text("deploy", "deploy the API")
    );
}

#[test]
fn settled_new_file_at_a_nested_level_is_seen_on_the_next_call() {
    let sc = settled("new-level-file");
    let (home, repo) = (sc.home(), sc.repo());
    let guide = repo.join("docs/guide");
    let loader = settled_loader(&home);
    let s0 = loader.snapshot(&guide).unwrap();
    assert_eq!(
        file_paths(&s0),
        vec![home.join("AGENTS.md"), repo.join("AGENTS.md")]
    );

    write(&repo.join("docs/CLAUDE.md"), "docs: plain English");
    let s1 = loader.snapshot(&guide).unwrap();
    assert_eq!(
        file_paths(&s1),
        vec![
            home.join("AGENTS.md"),
            repo.join("AGENTS.md"),
            repo.join("docs/CLAUDE.md")
        ]
    );

    // A new `.git` between the cwd and the old root moves the root.
    fs::create_dir(repo.join("docs/.git")).unwrap();
    let s2 = loader.snapshot(&guide).unwrap();
    assert_eq!(s2.repo_root, repo.join("docs"));
    assert_eq!(
        file_paths(&s2),
        vec![home.join("AGENTS.md"), repo.join("docs/CLAUDE.md")]
    );
    assert_eq!(json(&s2), fresh(&home, &guide, None));
}

#[test]
fn settled_replaced_repository_directory_is_seen_on_the_next_call() {
    let sc = settled("replaced-repo");
    let (home, repo) = (sc.home(), sc.repo());
    let api = repo.join("packages/api");
    let loader = settled_loader(&home);
    let root0 = loader.snapshot(&repo).unwrap();
    let api0 = loader.snapshot(&api).unwrap();
    assert!(root0.prompt.contains("root: use tabs"));

    // Move the whole repository away and put a different one in its place
    // (the old directory still exists, so its handle stays valid).
    fs::rename(&repo, sc.dir.join("repo-old")).unwrap();
    make_repo(&repo);
    write(&repo.join("AGENTS.md"), "new repo: use spaces");
    write(&repo.join("packages/api/AGENTS.md"), "new api");

    let root1 = loader.snapshot(&repo).unwrap();
    assert!(root1.prompt.contains("new repo: use spaces"));
    assert!(!root1.prompt.contains("root: use tabs"));
    assert!(root1.skills.iter().all(|k| k.name == "home-tool"));
    assert_ne!(root1.fingerprint, root0.fingerprint);
    assert_eq!(json(&root1), fresh(&home, &repo, None));

    let api1 = loader.snapshot(&api).unwrap();
    assert!(api1.prompt.contains("new api"));
    assert!(!api1.prompt.contains("api: return JSON errors"));
    assert_ne!(api1.fingerprint, api0.fingerprint);
    assert_eq!(json(&api1), fresh(&home, &api, None));
}

/// The home directory did not exist when the loader first built the
/// snapshot; creating it (with an AGENTS.md and a skill) must show up, just
/// as a fresh build shows it.
#[test]
fn settled_home_created_after_the_first_snapshot_is_seen() {
    let sc = settled("home-created-later");
    let (home, repo) = (sc.home(), sc.repo());
    assert!(!home.exists());
    let loader = settled_loader(&home);
    let s0 = loader.snapshot(&repo).unwrap();
    assert_eq!(s0.home, None);
    assert_eq!(file_paths(&s0), vec![repo.join("AGENTS.md")]);

    write(&home.join("AGENTS.md"), "home: created later");
    add_skill(&home.join("skills"), "home-tool", "a tool from home");
    let expected = fresh(&home, &repo, None);
    assert_eq!(expected["home"], Value::from(home.to_str().unwrap()));

    let fp = loader.fingerprint(&repo).unwrap();
    assert_ne!(fp, s0.fingerprint, "a new home must change the fingerprint");
    let s1 = loader.snapshot(&repo).unwrap();
    assert!(s1.prompt.contains("home: created later"));
    assert_eq!(json(&s1), expected);
}

/// A nested cwd with no instruction files of its own is deleted (or
/// replaced by a file): the loader must answer as a fresh build does, with
/// an error, not with the cached snapshot of a directory that is gone.
#[test]
fn settled_deleted_cwd_is_an_error_on_the_next_call() {
    let sc = settled("deleted-cwd");
    let (home, repo) = (sc.home(), sc.repo());
    let guide = repo.join("docs/guide");
    let loader = settled_loader(&home);
    loader.snapshot(&guide).unwrap();

    fs::remove_dir(&guide).unwrap();
    assert!(matches!(
        fresh_result(&home, &guide),
        Err(e) if e.starts_with("Cwd")
    ));
    let got = loader.snapshot(&guide).map(|s| json(&s));
    assert!(
        matches!(got, Err(SnapshotError::Cwd { .. })),
        "a deleted cwd must be an error, got a snapshot: {:?}",
        got.map(|v| v["cwd"].clone())
    );

    // Replaced by a regular file.
    write(&guide, "not a directory");
    assert!(matches!(
        loader.snapshot(&guide),
        Err(SnapshotError::CwdNotADirectory(_))
    ));
}

// ---------------------------------------------------------------------------
// The cache's size

#[test]
fn the_cache_keeps_at_most_its_capacity() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    write(&home.join("AGENTS.md"), "home note");
    let mut cwds = Vec::new();
    for r in 0..2 {
        let repo = tmp.path().join(format!("repo{r}"));
        make_repo(&repo);
        write(&repo.join("AGENTS.md"), &format!("repo {r} root"));
        for p in 0..3 {
            let pkg = repo.join(format!("pkg{p}"));
            write(&pkg.join("AGENTS.md"), &format!("repo {r} package {p}"));
            cwds.push(pkg);
        }
    }
    let cwds = &cwds[..5];

    let loader = with_capacity(&home, 3);
    assert_eq!(loader.cached_entries(), 0);
    assert_eq!(loader.cached_bytes(), 0);
    for cwd in cwds {
        let s = loader.snapshot(cwd).unwrap();
        assert!(loader.cached_entries() <= 3);
        assert!(loader.cached_bytes() >= s.prompt.len());
    }
    assert_eq!(loader.cached_entries(), 3);

    // Evicted cwds still work, and give what a fresh build gives.
    for cwd in cwds.iter().chain(cwds.iter().rev()) {
        let s = loader.snapshot(cwd).unwrap();
        assert_eq!(json(&s), fresh(&home, cwd, None));
        assert!(loader.cached_entries() <= 3);
    }

    // An explicit root is another entry; the bound still holds.
    let with_root = loader
        .snapshot_in(&cwds[0], Some(cwds[0].parent().unwrap()))
        .unwrap();
    assert_eq!(
        json(&with_root),
        fresh(&home, &cwds[0], Some(cwds[0].parent().unwrap()))
    );
    assert!(loader.cached_entries() <= 3);

    // A capacity of zero is refused; one keeps one.
    let refused = Loader::builder()
        .policy(policy())
        .home(&home)
        .capacity(0)
        .build();
    assert!(
        matches!(
            refused,
            Err(lisa_context::BootstrapError::OutOfRange {
                setting: "capacity",
                value: 0,
                ..
            })
        ),
        "{refused:?}"
    );
    let tiny = with_capacity(&home, 1);
    for cwd in cwds {
        let s = tiny.snapshot(cwd).unwrap();
        assert_eq!(json(&s), fresh(&home, cwd, None));
        assert_eq!(tiny.cached_entries(), 1);
    }

    // Errors are not cached.
    let unused = with_capacity(&home, 3);
    assert!(unused.snapshot(&tmp.path().join("missing")).is_err());
    assert_eq!(unused.cached_entries(), 0);
}

// ---------------------------------------------------------------------------
// Threads

fn hammer(loader: Arc<Loader>, repos: &[(PathBuf, String)], home: &Path) {
    let (done_tx, done_rx) = mpsc::channel::<usize>();
    let mut handles = Vec::new();
    for (i, (cwd, token)) in repos.iter().cloned().enumerate() {
        let loader = Arc::clone(&loader);
        let done = done_tx.clone();
        let others: Vec<String> = repos
            .iter()
            .filter(|(_, t)| *t != token)
            .map(|(_, t)| t.clone())
            .collect();
        handles.push(std::thread::spawn(move || {
            let skill = format!("skill-{i}");
            let mut fingerprint = None;
            for n in 0..200 {
                let fp = loader.fingerprint(&cwd).unwrap();
                let s = loader.snapshot(&cwd).unwrap();
                assert_eq!(s.cwd, cwd, "thread {i}, call {n}");
                assert_eq!(s.fingerprint, fp, "thread {i}, call {n}");
                assert!(s.prompt.contains(&token), "thread {i}, call {n}");
                for o in &others {
                    assert!(!s.prompt.contains(o.as_str()), "thread {i} sees {o}");
                }
                assert_eq!(skill_names(&s), vec![skill.clone()]);
                if n % 50 == 0 {
                    assert_eq!(loader.skill(&cwd, &skill).unwrap().name, skill);
                }
                match &fingerprint {
                    None => fingerprint = Some(fp),
                    Some(first) => assert_eq!(*first, fp, "thread {i}: stable"),
                }
            }
            done.send(i).unwrap();
        }));
    }
    drop(done_tx);
    for _ in 0..repos.len() {
        done_rx
            .recv_timeout(Duration::from_secs(120))
            .expect("a thread neither finished nor panicked in time (deadlock?)");
    }
    for h in handles {
        h.join().expect("no thread panics");
    }
    for (cwd, _) in repos {
        assert_eq!(json(&loader.snapshot(cwd).unwrap()), fresh(home, cwd, None));
    }
}

#[test]
fn eight_threads_share_one_loader() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    fs::create_dir_all(&home).unwrap();
    let mut repos = Vec::new();
    for i in 0..8 {
        let repo = tmp.path().join(format!("repo{i}"));
        make_repo(&repo);
        let token = format!("token-of-repo-{i}-");
        write(&repo.join("AGENTS.md"), &token);
        add_skill(&repo.join(".agents/skills"), &format!("skill-{i}"), "mine");
        // Half the threads work in a nested cwd.
        let cwd = if i % 2 == 0 {
            repo
        } else {
            let pkg = repo.join("pkg");
            fs::create_dir_all(&pkg).unwrap();
            pkg
        };
        repos.push((cwd, token));
    }

    hammer(Arc::new(loader_for(&home)), &repos, &home);
    // With a cache smaller than the number of sessions: constant eviction.
    hammer(Arc::new(with_capacity(&home, 3)), &repos, &home);
}

// ---------------------------------------------------------------------------
// skill(cwd, name)

#[test]
fn skill_resolves_exactly_as_the_snapshot_did() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    add_skill(&home.join("skills"), "shared", "home version");
    let repo = tmp.path().join("repo");
    make_repo(&repo);
    let lisa = repo.join(".lisa/skills");
    let agents = repo.join(".agents/skills");
    add_skill(&agents, "shared", "project version");
    add_skill(&lisa, "both", "lisa version");
    add_skill(&agents, "both", "agents version");
    add_skill(&agents, "local", "project only");
    let other = tmp.path().join("other");
    make_repo(&other);
    add_skill(&other.join(".agents/skills"), "elsewhere", "other repo");
    let nested = repo.join("a/b");
    fs::create_dir_all(&nested).unwrap();

    let loader = loader_for(&home);
    for cwd in [&repo, &nested] {
        let s = loader.snapshot(cwd).unwrap();
        assert_eq!(skill_names(&s), vec!["both", "local", "shared"]);
        for entry in &s.skills {
            let got = loader.skill(cwd, &entry.name).unwrap();
            assert_eq!(got.name, entry.name);
            assert_eq!(got.path, entry.path, "same resolution as the snapshot");
            assert_eq!(got.origin, entry.origin);
            assert_eq!(got.content, fs::read_to_string(&entry.path).unwrap());
        }
        // Home wins over the project; .lisa (rank 100) over .agents (200).
        let shared = loader.skill(cwd, "shared").unwrap();
        assert_eq!(shared.path, home.join("skills/shared/SKILL.md"));
        assert!(shared.content.contains("home version"));
        let both = loader.skill(cwd, "both").unwrap();
        assert_eq!(both.path, lisa.join("both/SKILL.md"));
        assert_eq!(
            loader.skill(cwd, "local").unwrap().path,
            agents.join("local/SKILL.md")
        );
        // A skill of another repository is not found from here.
        match loader.skill(cwd, "elsewhere") {
            Err(lisa_context::SkillError::NotFound { name, cwd: at, .. }) => {
                assert_eq!(name, "elsewhere");
                assert_eq!(at, *cwd);
            }
            other => panic!("expected SkillNotFound, got {other:?}"),
        }
    }
    assert_eq!(
        loader.skill(&other, "elsewhere").unwrap().path,
        other.join(".agents/skills/elsewhere/SKILL.md")
    );

    // The body is read as it is now (the frontmatter is unchanged).
    let local = agents.join("local/SKILL.md");
    let edited = format!(
        "{}\nA new paragraph.\n",
        skill_text("local", "project only")
    );
    write(&local, &edited);
    assert_eq!(loader.skill(&repo, "local").unwrap().content, edited);
}

#[test]
fn skill_names_are_checked_before_any_file_is_touched() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let repo = tmp.path().join("repo");
    make_repo(&repo);
    add_skill(&repo.join(".agents/skills"), "deploy", "deploy");
    let loader = loader_for(&home);

    let missing = tmp.path().join("does/not/exist");
    let long = "a".repeat(65);
    for bad in [
        "../x",
        "../../etc",
        "Upper",
        "a/b",
        "",
        "-lead",
        "trail-",
        "a--b",
        ".hidden",
        "a b",
        long.as_str(),
    ] {
        for cwd in [&repo, &missing] {
            match loader.skill(cwd, bad) {
                Err(lisa_context::SkillError::InvalidName(n)) => assert_eq!(n, bad),
                other => panic!("{bad:?} from {}: {other:?}", cwd.display()),
            }
        }
        // Even a relative cwd: the name comes first.
        assert!(matches!(
            loader.skill(Path::new("relative"), bad),
            Err(lisa_context::SkillError::InvalidName(_))
        ));
    }
    // The longest valid name is merely not found.
    assert!(matches!(
        loader.skill(&repo, &"a".repeat(64)),
        Err(lisa_context::SkillError::NotFound { .. })
    ));
    assert!(matches!(
        loader.skill(&repo, "nope"),
        Err(lisa_context::SkillError::NotFound { .. })
    ));
    // A valid name with a bad cwd is a cwd error.
    assert!(matches!(
        loader.skill(&missing, "deploy"),
        Err(lisa_context::SkillError::Snapshot(
            SnapshotError::Cwd { .. }
        ))
    ));
    assert!(loader.skill(&repo, "deploy").is_ok());
}

// ---------------------------------------------------------------------------
// Bad places, and explicit roots

#[test]
fn unusable_cwds_and_roots_are_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let repo = tmp.path().join("repo");
    make_repo(&repo);
    write(&repo.join("AGENTS.md"), "root");
    let file = repo.join("AGENTS.md");
    let loader = loader_for(&home);

    for rel in ["relative/dir", ".", "", "repo"] {
        match loader.snapshot(Path::new(rel)) {
            Err(SnapshotError::RelativeCwd(_)) => {}
            other => panic!("{rel:?}: {other:?}"),
        }
        assert!(matches!(
            loader.fingerprint(Path::new(rel)),
            Err(SnapshotError::RelativeCwd(_))
        ));
    }

    let missing = tmp.path().join("missing");
    match loader.snapshot(&missing) {
        Err(SnapshotError::Cwd { path, source }) => {
            assert_eq!(path, missing);
            assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
        }
        other => panic!("{other:?}"),
    }
    assert!(loader.refresh(&missing, "00").is_err());

    match loader.snapshot(&file) {
        Err(SnapshotError::CwdNotADirectory(p)) => assert_eq!(p, file),
        other => panic!("{other:?}"),
    }
    // Under a file.
    assert!(loader.snapshot(&file.join("below")).is_err());

    let sibling = tmp.path().join("sibling");
    fs::create_dir_all(&sibling).unwrap();
    // A root that is a string prefix of the cwd but not an ancestor.
    let prefix = tmp.path().join("rep");
    fs::create_dir_all(&prefix).unwrap();
    let inner = repo.join("inner");
    fs::create_dir_all(&inner).unwrap();
    for root in [&sibling, &prefix, &inner] {
        match loader.snapshot_in(&repo, Some(root)) {
            Err(SnapshotError::RootDoesNotContainCwd { root: r, cwd }) => {
                assert_eq!(r, *root);
                assert_eq!(cwd, repo);
            }
            other => panic!("root {}: {other:?}", root.display()),
        }
    }
    assert!(matches!(
        loader.refresh_in(&repo, Some(&sibling), "x"),
        Err(SnapshotError::RootDoesNotContainCwd { .. })
    ));
    assert!(matches!(
        loader.skill_in(&repo, Some(&sibling), "deploy"),
        Err(lisa_context::SkillError::Snapshot(
            SnapshotError::RootDoesNotContainCwd { .. }
        ))
    ));
    assert_eq!(loader.cached_entries(), 0, "no error is cached");

    // The errors are what a fresh build reports.
    assert!(matches!(
        lisa_context::build(&policy(), Some(&home), &missing, None),
        Err(SnapshotError::Cwd { .. })
    ));
}

#[test]
fn an_explicit_root_without_a_marker_starts_the_chain() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let outer = tmp.path().join("outer");
    write(&outer.join("AGENTS.md"), "outer note");
    write(&outer.join("mid/CLAUDE.md"), "mid note");
    write(&outer.join("mid/inner/AGENTS.md"), "inner note");
    add_skill(&outer.join(".agents/skills"), "outer-skill", "at the root");
    let inner = outer.join("mid/inner");
    let loader = loader_for(&home);

    // No marker anywhere: the cwd is its own root.
    let alone = loader.snapshot(&inner).unwrap();
    assert_eq!(alone.repo_root, inner);
    assert_eq!(file_paths(&alone), vec![inner.join("AGENTS.md")]);
    assert!(alone.skills.is_empty());
    assert_eq!(json(&alone), fresh(&home, &inner, None));

    // The explicit root: the chain starts there, outermost first.
    let rooted = loader.snapshot_in(&inner, Some(&outer)).unwrap();
    assert_eq!(rooted.repo_root, outer);
    assert_eq!(rooted.cwd, inner);
    assert_eq!(
        file_paths(&rooted),
        vec![
            outer.join("AGENTS.md"),
            outer.join("mid/CLAUDE.md"),
            inner.join("AGENTS.md")
        ]
    );
    assert_eq!(skill_names(&rooted), vec!["outer-skill"]);
    let o = rooted.prompt.find("outer note").unwrap();
    let m = rooted.prompt.find("mid note").unwrap();
    let i = rooted.prompt.find("inner note").unwrap();
    assert!(o < m && m < i, "outermost first");
    assert_eq!(json(&rooted), fresh(&home, &inner, Some(&outer)));
    assert_eq!(
        loader.fingerprint_in(&inner, Some(&outer)).unwrap(),
        rooted.fingerprint
    );
    assert_ne!(rooted.fingerprint, alone.fingerprint);
    assert_eq!(
        loader
            .skill_in(&inner, Some(&outer), "outer-skill")
            .unwrap()
            .path,
        outer.join(".agents/skills/outer-skill/SKILL.md")
    );
    assert!(matches!(
        loader.skill(&inner, "outer-skill"),
        Err(lisa_context::SkillError::NotFound { .. })
    ));

    // Root = cwd is the same as no root here.
    let same = loader.snapshot_in(&inner, Some(&inner)).unwrap();
    assert_eq!(file_paths(&same), file_paths(&alone));

    // An explicit root below a marked one wins over the marker.
    make_repo(&outer);
    let marked = loader.snapshot(&inner).unwrap();
    assert_eq!(marked.repo_root, outer);
    let mid = loader
        .snapshot_in(&inner, Some(&outer.join("mid")))
        .unwrap();
    assert_eq!(mid.repo_root, outer.join("mid"));
    assert_eq!(
        file_paths(&mid),
        vec![outer.join("mid/CLAUDE.md"), inner.join("AGENTS.md")]
    );
}

/// A loader under the test policy that keeps at most `entries` snapshots.
fn with_capacity(home: &Path, entries: usize) -> Loader {
    Loader::builder()
        .policy(policy())
        .home(home)
        .capacity(entries)
        .build()
        .unwrap()
}
