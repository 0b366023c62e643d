//! `survey --scope repo` (the default): every folder of the repository
//! some shipped policy reads from is surveyed as a cwd, so a problem three
//! levels down fails the gate run at the root; each file's problem once;
//! links out and version-control metadata never walked; a cap that says
//! when it was hit; the user's home left out unless `--with-home`; the
//! harmless differences between harnesses (`read-by-some`, a CLAUDE.md
//! that links to or copies AGENTS.md) notes that pass `--deny warnings`.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

/// `lisa-context survey ARGS` with `HOME` set to `home` and no other home
/// variable: what a CI runner with a home of its own runs.
pub(crate) fn survey_in(home: &Path, args: &[&str]) -> Output {
    fs::create_dir_all(home).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_lisa-context"));
    cmd.arg("survey").args(args).env("HOME", home);
    for var in [
        "LISA_HOME",
        "CODEX_HOME",
        "CLAUDE_CONFIG_DIR",
        "GEMINI_CLI_HOME",
        "XDG_CONFIG_HOME",
        "LISA_CONTEXT_POLICY",
    ] {
        cmd.env_remove(var);
    }
    cmd.output().unwrap()
}

/// The survey's JSON.
pub(crate) fn json(out: &Output) -> Value {
    assert!(
        out.status.code() == Some(0) || out.status.code() == Some(1),
        "{out:?}"
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `(kind, path relative to repo)` of every problem.
pub(crate) fn problems(v: &Value, repo: &Path) -> Vec<(String, String)> {
    v["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let path = p["path"].as_str().unwrap();
            let rel = Path::new(path)
                .strip_prefix(repo)
                .map_or(path.to_string(), |r| r.to_string_lossy().into_owned());
            (p["kind"].as_str().unwrap().to_string(), rel)
        })
        .collect()
}

/// A repository with a problem at three depths below a clean root: hidden
/// text in `packages/web/AGENTS.md`, a file over every budget in
/// `packages/legacy/AGENTS.md`, hidden text in `a/b/c/CLAUDE.md`.
pub(crate) fn deep_repo(repo: &Path) {
    fs::create_dir_all(repo.join(".git")).unwrap();
    fs::write(repo.join("AGENTS.md"), "# Rules\n\nUse tabs.\n").unwrap();
    fs::create_dir_all(repo.join("packages/web")).unwrap();
    fs::write(
        repo.join("packages/web/AGENTS.md"),
        "web\nuse \u{200b}spaces\n",
    )
    .unwrap();
    fs::create_dir_all(repo.join("packages/legacy")).unwrap();
    fs::write(repo.join("packages/legacy/AGENTS.md"), "y".repeat(100_000)).unwrap();
    fs::create_dir_all(repo.join("a/b/c")).unwrap();
    fs::write(repo.join("a/b/c/AGENTS.md"), "deep\u{202e}text\n").unwrap();
    fs::create_dir_all(repo.join("src/empty")).unwrap();
    fs::write(repo.join("src/empty/main.rs"), "fn main() {}\n").unwrap();
}

/// Run at the root, the repository scope finds the problems of every depth
/// and fails the gate; `--scope cwd` sees the root alone and passes. The
/// folders surveyed are those holding a file a policy reads.
#[test]
fn the_repository_scope_finds_problems_at_every_depth() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    deep_repo(&repo);
    let home = tmp.path().join("home");
    let cwd = repo.to_str().unwrap();
    let all = json(&survey_in(&home, &["--format", "json", "--cwd", cwd]));
    let found = problems(&all, &repo);
    for want in [
        ("hidden-text", "packages/web/AGENTS.md"),
        ("budget-clip", "packages/legacy/AGENTS.md"),
        ("hidden-text", "a/b/c/AGENTS.md"),
    ] {
        assert!(
            found.iter().any(|(k, p)| k == want.0 && p == want.1),
            "{want:?} missing: {found:?}"
        );
    }
    let folders: Vec<String> = all["folders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap().to_string())
        .collect();
    assert_eq!(folders[0], cwd);
    for f in ["packages/web", "packages/legacy", "a/b/c"] {
        assert!(
            folders.contains(&repo.join(f).to_string_lossy().into_owned()),
            "{f}: {folders:?}"
        );
    }
    // A folder holding nothing a policy reads is not a cwd.
    assert!(!folders.iter().any(|f| f.contains("src")), "{folders:?}");
    let gate = survey_in(&home, &["--deny", "warnings", "--cwd", cwd]);
    assert_eq!(gate.status.code(), Some(1), "{gate:?}");
    // The table says which other folders were surveyed (breadth first).
    let table = String::from_utf8(gate.stdout).unwrap();
    assert!(
        table.contains(
            "also surveyed: 3 folder(s) of the repository: packages/legacy, packages/web, a/b/c"
        ),
        "{table}"
    );
    let explicit = survey_in(
        &home,
        &["--scope", "repo", "--deny", "warnings", "--cwd", cwd],
    );
    assert_eq!(explicit.status.code(), Some(1), "{explicit:?}");

    let alone = json(&survey_in(
        &home,
        &["--scope", "cwd", "--format", "json", "--cwd", cwd],
    ));
    assert_eq!(alone["folders"].as_array().unwrap().len(), 1);
    assert!(
        problems(&alone, &repo)
            .iter()
            .all(|(k, _)| k == "read-by-some"),
        "{alone}"
    );
    let gate = survey_in(
        &home,
        &["--scope", "cwd", "--deny", "warnings", "--cwd", cwd],
    );
    assert_eq!(gate.status.code(), Some(0), "{gate:?}");
}

/// A file's problem seen from several folders (the root's AGENTS.md is in
/// every folder's chain) is one problem, each policy named once.
#[test]
fn a_problem_seen_from_several_folders_is_one() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    deep_repo(&repo);
    fs::write(repo.join("AGENTS.md"), "root\u{200b}\n").unwrap();
    let home = tmp.path().join("home");
    let v = json(&survey_in(
        &home,
        &["--format", "json", "--cwd", repo.to_str().unwrap()],
    ));
    // Seen from every folder of the repository.
    assert!(v["folders"].as_array().map_or(0, Vec::len) >= 4, "{v}");
    let at_root: Vec<&Value> = v["problems"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| {
            p["kind"] == "hidden-text" && p["path"] == repo.join("AGENTS.md").to_str().unwrap()
        })
        .collect();
    assert_eq!(at_root.len(), 1, "{v}");
    let names: Vec<&str> = at_root[0]["policies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    let mut unique = names.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), names.len(), "{names:?}");
    let mut fingerprints: Vec<&str> = v["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["fingerprint"].as_str().unwrap())
        .collect();
    let count = fingerprints.len();
    fingerprints.sort_unstable();
    fingerprints.dedup();
    assert_eq!(fingerprints.len(), count, "{v}");
}

/// The walk does not follow a link (a folder linked from outside the
/// repository holding hostile text is not surveyed) and does not enter
/// version-control metadata (`.git`).
#[test]
fn the_walk_stays_inside_and_out_of_vcs_metadata() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    fs::create_dir_all(repo.join(".git/sub")).unwrap();
    fs::write(repo.join("AGENTS.md"), "clean\n").unwrap();
    fs::write(repo.join(".git/sub/AGENTS.md"), "in git\u{200b}\n").unwrap();
    let outside = tmp.path().join("outside");
    fs::create_dir_all(&outside).unwrap();
    fs::write(outside.join("AGENTS.md"), "outside\u{200b}\n").unwrap();
    std::os::unix::fs::symlink(&outside, repo.join("linked")).unwrap();
    let home = tmp.path().join("home");
    let v = json(&survey_in(
        &home,
        &["--format", "json", "--cwd", repo.to_str().unwrap()],
    ));
    let folders = v["folders"].as_array().unwrap();
    assert_eq!(folders.len(), 1, "{v}");
    assert!(!v.to_string().contains("outside"), "{v}");
    let gate = survey_in(
        &home,
        &["--deny", "warnings", "--cwd", repo.to_str().unwrap()],
    );
    assert_eq!(gate.status.code(), Some(0), "{gate:?}");
}

/// Past `--max-folders` the survey says it stopped short
/// (`survey-incomplete`, a warning that fails `--deny warnings`).
#[test]
fn a_capped_walk_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    fs::create_dir_all(repo.join(".git")).unwrap();
    fs::write(repo.join("AGENTS.md"), "clean\n").unwrap();
    for i in 0..4 {
        fs::create_dir_all(repo.join(format!("p{i}"))).unwrap();
        fs::write(repo.join(format!("p{i}/AGENTS.md")), "clean\n").unwrap();
    }
    let home = tmp.path().join("home");
    let cwd = repo.to_str().unwrap();
    let v = json(&survey_in(
        &home,
        &["--max-folders", "2", "--format", "json", "--cwd", cwd],
    ));
    assert_eq!(v["folders"].as_array().unwrap().len(), 2, "{v}");
    assert!(
        problems(&v, &repo)
            .iter()
            .any(|(k, _)| k == "survey-incomplete"),
        "{v}"
    );
    let gate = survey_in(
        &home,
        &["--max-folders", "2", "--deny", "warnings", "--cwd", cwd],
    );
    assert_eq!(gate.status.code(), Some(1), "{gate:?}");
    let whole = survey_in(&home, &["--deny", "warnings", "--cwd", cwd]);
    assert_eq!(whole.status.code(), Some(0), "{whole:?}");
}

/// The user's home (here `HOME`, with Claude Code's and Codex's home
/// files holding hidden text) is left out by default, so that the answer
/// is the commit's alone; `--with-home` brings it in.
#[test]
fn the_home_is_left_out_unless_asked_for() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    fs::create_dir_all(repo.join(".git")).unwrap();
    fs::write(repo.join("AGENTS.md"), "clean\n").unwrap();
    let home = tmp.path().join("home");
    fs::create_dir_all(home.join(".claude")).unwrap();
    fs::create_dir_all(home.join(".codex")).unwrap();
    fs::write(home.join(".claude/CLAUDE.md"), "home\u{200b}\n").unwrap();
    fs::write(home.join(".codex/AGENTS.md"), "home\u{200b}\n").unwrap();
    let cwd = repo.to_str().unwrap();
    let plain = survey_in(&home, &["--format", "json", "--cwd", cwd]);
    let v = json(&plain);
    assert!(
        !v["problems"].to_string().contains(home.to_str().unwrap()),
        "{v}"
    );
    let gate = survey_in(&home, &["--deny", "warnings", "--cwd", cwd]);
    assert_eq!(gate.status.code(), Some(0), "{gate:?}");
    let with = json(&survey_in(
        &home,
        &["--with-home", "--format", "json", "--cwd", cwd],
    ));
    assert!(
        problems(&with, &repo)
            .iter()
            .any(|(k, p)| k == "hidden-text" && p.starts_with(home.to_str().unwrap())),
        "{with}"
    );
    let gate = survey_in(&home, &["--with-home", "--deny", "warnings", "--cwd", cwd]);
    assert_eq!(gate.status.code(), Some(1), "{gate:?}");
    // Asking for the home's policy asks for the home.
    let gate = survey_in(
        &home,
        &["--with-home-policy", "--deny", "warnings", "--cwd", cwd],
    );
    assert_eq!(gate.status.code(), Some(1), "{gate:?}");
}

/// An ordinary repository passes `--deny warnings`: AGENTS.md alone, or
/// with a CLAUDE.md that links to it or copies it, at the root and in
/// packages: only notes.
#[test]
fn harmless_differences_are_notes_that_pass_the_gate() {
    for how in ["alone", "link", "copy"] {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("repo");
        fs::create_dir_all(repo.join(".git")).unwrap();
        for dir in [repo.clone(), repo.join("packages/api")] {
            fs::create_dir_all(&dir).unwrap();
            fs::write(dir.join("AGENTS.md"), "# Rules\n\nUse tabs.\n").unwrap();
            match how {
                "link" => std::os::unix::fs::symlink("AGENTS.md", dir.join("CLAUDE.md")).unwrap(),
                "copy" => fs::copy(dir.join("AGENTS.md"), dir.join("CLAUDE.md"))
                    .map(drop)
                    .unwrap(),
                _ => {}
            }
        }
        let home = tmp.path().join("home");
        let cwd = repo.to_str().unwrap();
        let v = json(&survey_in(&home, &["--format", "json", "--cwd", cwd]));
        assert_eq!(v["folders"].as_array().map(Vec::len), Some(2), "{how}: {v}");
        let kinds = problems(&v, &repo);
        assert!(
            kinds.iter().all(|(k, _)| k == "read-by-some"),
            "{how}: {kinds:?}"
        );
        let gate = survey_in(&home, &["--deny", "warnings", "--cwd", cwd]);
        assert_eq!(gate.status.code(), Some(0), "{how}: {gate:?}");
    }
}
