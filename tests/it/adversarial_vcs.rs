//! Nothing inside version-control metadata is ever read (issue 49, item 1).
//!
//! A committed link `AGENTS.md -> .git/config` survives `git clone`; after
//! `git remote set-url origin https://user:TOKEN@host/x/y` the token would
//! sit behind it. The door refuses every path whose resolution enters `.git`,
//! `.hg`, `.svn`, `.jj` or a configured marker folder, by name or through
//! any link (`vcs-metadata`), for every read the engine makes: chain files,
//! fallbacks, rules, skills, on-access loading, `skill show`, `rule show`,
//! the survey; the CLI and `serve`; under every shipped policy. The names
//! each policy reads are taken from the policy itself, so a policy that
//! gains a name is covered without touching this file.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::Stdio;

use lisa_context::policy::{Policy, PolicySource, SHIPPED_NAMES};

use crate::support::World;

/// The secret a clone's `.git/config` holds after `git remote set-url`.
const TOKEN: &str = "ghp_vcsTOKEN0a1b2c3d";

/// Text shaped to be taken by every reader if it were read: a frontmatter
/// each rule mode key and skill reads as "load me", then the secret.
fn bait(name: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: secret {TOKEN}\nalwaysApply: true\ntrigger: always_on\n\
         inclusion: always\napplyTo: \"**\"\n---\n[remote \"origin\"]\n\
         \turl = https://user:{TOKEN}@host/x/y\n"
    )
}

/// The metadata folders and the file in each the links below aim at.
const TARGETS: [&str; 4] = [
    ".git/config",
    ".hg/hgrc",
    ".svn/entries",
    ".jj/repo/config.toml",
];

/// A concrete path for a policy's name or glob (`**/` and `*` filled).
fn concrete(pattern: &str) -> String {
    pattern.replace("**/", "").replace('*', "x")
}

/// A relative link at `repo/rel` to `repo/target` (passed over when a
/// name the policy also reads as a file stands on the way: `.clinerules`
/// is a file or a folder of rules).
fn link_in_repo(repo: &Path, rel: &str, target: &str) {
    let at = repo.join(rel);
    if std::fs::create_dir_all(at.parent().expect("parent")).is_err() {
        return;
    }
    let depth = Path::new(rel).components().count() - 1;
    let up = "../".repeat(depth);
    let _ = std::fs::remove_file(&at);
    symlink(format!("{up}{target}"), &at).expect("symlink");
}

/// Every relative path `policy` reads in a repository: chain names,
/// fallbacks, on-access names, rule files; and its repository skill
/// sources.
fn read_names(policy: &Policy) -> (Vec<String>, Vec<String>) {
    let i = &policy.instructions;
    let mut files: Vec<String> = i
        .level_files
        .iter()
        .chain(i.fallback_level_files.iter())
        .chain(i.access_level_files.iter())
        .chain(i.ancestor_files.iter())
        .chain(policy.rules.files.iter())
        .map(|n| concrete(n.get_ref()))
        .collect();
    files.sort();
    files.dedup();
    let skills = policy
        .skills
        .sources
        .iter()
        .filter(|s| s.root.get_ref() == "repo")
        .map(|s| s.path.get_ref().clone())
        .collect();
    (files, skills)
}

fn shipped(name: &str) -> Policy {
    Policy::from_sources(&[PolicySource::shipped(name).expect("shipped")]).expect("policy")
}

/// A repository holding a secret in each metadata folder, and every name
/// `policy` reads linked into them: at the root, through a linked folder
/// (`sub -> .git/info`, holding the names too), and a skill folder linked
/// into `.git/hooks`.
fn hostile_repo(w: &World, policy: &Policy) {
    let repo = &w.repo;
    for target in TARGETS {
        w.write(&format!("repo/{target}"), &bait("config"));
    }
    let (files, sources) = read_names(policy);
    for (k, f) in files.iter().enumerate() {
        link_in_repo(repo, f, TARGETS[k % TARGETS.len()]);
        // The same names inside the metadata, reached through `sub`.
        let inside = w.repo.join(".git/info").join(f);
        if std::fs::create_dir_all(inside.parent().expect("parent")).is_ok() {
            let _ = std::fs::write(&inside, bait("info"));
        }
    }
    symlink(".git/info", repo.join("sub")).expect("symlink");
    w.write("repo/.git/hooks/SKILL.md", &bait("hooks"));
    for s in &sources {
        link_in_repo(repo, &format!("{s}/hooks"), ".git/hooks");
    }
    w.write("repo/README.md", "an ordinary file\n");
}

/// Runs the CLI under `policy` (a shipped name or a file) and returns what
/// it printed, both streams.
fn run(w: &World, policy: &str, args: &[&str]) -> String {
    let out = w
        .command()
        .arg("--policy")
        .arg(policy)
        .args(args)
        .output()
        .expect("run");
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    text
}

fn assert_no_token(text: &str, what: &str) {
    assert!(
        !text.contains(TOKEN),
        "{what}: a secret from version-control metadata reached the output:\n{text}"
    );
}

/// Every command that reads repository content, at the root and in a
/// linked folder, under every shipped policy: the secret never appears,
/// and the refusal is recorded as `vcs-metadata`.
#[test]
fn links_into_version_control_metadata_are_refused_under_every_shipped_policy() {
    for &name in SHIPPED_NAMES {
        let w = World::new();
        let policy = shipped(name);
        hostile_repo(&w, &policy);
        let repo = w.repo.to_string_lossy().into_owned();
        let sub = w.repo.join("sub").to_string_lossy().into_owned();
        let mut recorded = false;
        for cwd in [&repo, &sub] {
            let json = run(
                &w,
                name,
                &[
                    "snapshot", "--format", "json", "--root", &repo, "--cwd", cwd,
                ],
            );
            assert_no_token(&json, &format!("{name}: snapshot in {cwd}"));
            recorded |= json.contains("vcs-metadata");
            for args in [
                vec!["snapshot", "--root", &repo, "--cwd", cwd],
                vec!["explain", "--root", &repo, "--cwd", cwd],
                vec!["skill", "list", "--root", &repo, "--cwd", cwd],
                vec!["skill", "show", "hooks", "--root", &repo, "--cwd", cwd],
                vec!["rule", "show", "config", "--root", &repo, "--cwd", cwd],
                vec!["rule", "show", "info", "--root", &repo, "--cwd", cwd],
                vec!["access", "sub/x.md", "--root", &repo, "--cwd", &repo],
                vec!["access", "README.md", "--root", &repo, "--cwd", cwd],
                vec!["survey", "--root", &repo, "--cwd", cwd],
                vec!["survey", "--format", "json", "--root", &repo, "--cwd", cwd],
            ] {
                let out = run(&w, name, &args);
                assert_no_token(&out, &format!("{name}: {}", args.join(" ")));
            }
        }
        assert!(recorded, "{name}: no refusal was recorded as vcs-metadata");
    }
}

/// The lisa policy's own chain: the refusal is a `skipped` record with the
/// reason, for the link at the root and for the file reached through a
/// linked folder.
#[test]
fn the_refusal_is_recorded_with_its_reason() {
    let w = World::new();
    w.write("repo/.git/config", &bait("config"));
    w.write("repo/.git/info/AGENTS.md", &bait("info"));
    symlink(".git/config", w.repo.join("AGENTS.md")).expect("symlink");
    symlink(".git/info", w.repo.join("sub")).expect("symlink");
    let repo = w.repo.to_string_lossy().into_owned();
    let sub = w.repo.join("sub").to_string_lossy().into_owned();
    let json = run(
        &w,
        "lisa",
        &[
            "snapshot", "--format", "json", "--root", &repo, "--cwd", &sub,
        ],
    );
    let v: serde_json::Value = serde_json::from_str(&json).expect("json");
    let skipped = v["skipped"].as_array().expect("skipped");
    for rel in ["AGENTS.md", "sub/AGENTS.md"] {
        let path = w.repo.join(rel).to_string_lossy().into_owned();
        assert!(
            skipped
                .iter()
                .any(|s| s["path"] == path.as_str() && s["reason"] == "vcs-metadata"),
            "{rel} not skipped as vcs-metadata: {skipped:?}"
        );
    }
    assert_no_token(&json, "snapshot");
}

/// A working directory inside `.git` reads nothing there, and a cwd
/// reached through a link that leads inside reads nothing either; a link
/// into the metadata named in another case (`.GIT/config`) is refused the
/// same way (case-insensitive file systems open it as `.git/config`).
#[test]
fn a_cwd_inside_the_metadata_and_other_spellings_read_nothing_there() {
    let w = World::new();
    w.write("repo/.git/info/AGENTS.md", &bait("info"));
    w.write("repo/.GIT/config", &bait("config"));
    symlink(".GIT/config", w.repo.join("AGENTS.md")).expect("symlink");
    let repo = w.repo.to_string_lossy().into_owned();
    let inside = w.repo.join(".git/info").to_string_lossy().into_owned();
    for cwd in [&repo, &inside] {
        let json = run(
            &w,
            "lisa",
            &[
                "snapshot", "--format", "json", "--root", &repo, "--cwd", cwd,
            ],
        );
        assert_no_token(&json, cwd);
        assert!(json.contains("vcs-metadata"), "{cwd}: {json}");
    }
}

/// A marker folder a team's policy adds is metadata too: a link into it is
/// refused like one into `.git`.
#[test]
fn a_configured_marker_folder_is_refused_like_git() {
    let w = World::new();
    w.write("repo/.sl/config", &bait("config"));
    symlink(".sl/config", w.repo.join("AGENTS.md")).expect("symlink");
    let policy = w.write(
        "team.toml",
        "version = 1\n[roots]\nrepo-markers = [\".git\", \".sl\"]\n",
    );
    let repo = w.repo.to_string_lossy().into_owned();
    let json = run(
        &w,
        &policy.to_string_lossy(),
        &[
            "snapshot", "--format", "json", "--root", &repo, "--cwd", &repo,
        ],
    );
    assert_no_token(&json, "team policy");
    assert!(json.contains("vcs-metadata"), "{json}");
}

/// `serve` answers through the same door: a snapshot, an access and a
/// skill request under every shipped policy carry no secret.
#[test]
fn serve_refuses_the_same_links() {
    for &name in SHIPPED_NAMES {
        let w = World::new();
        let policy = shipped(name);
        hostile_repo(&w, &policy);
        let mut child = w
            .command()
            .arg("--policy")
            .arg(name)
            .arg("serve")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("serve");
        let mut stdin = child.stdin.take().expect("stdin");
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let repo = serde_json::to_string(&w.repo).expect("path");
        let sub = serde_json::to_string(&w.repo.join("sub")).expect("path");
        let requests = [
            format!(r#"{{"id":1,"op":"snapshot","cwd":{repo},"root":{repo}}}"#),
            format!(r#"{{"id":2,"op":"snapshot","cwd":{sub},"root":{repo}}}"#),
            format!(r#"{{"id":3,"op":"skill","cwd":{repo},"root":{repo},"name":"hooks"}}"#),
            format!(r#"{{"id":4,"op":"access","cwd":{repo},"root":{repo},"path":"sub/x.md"}}"#),
        ];
        for line in &requests {
            stdin.write_all(line.as_bytes()).expect("write");
            stdin.write_all(b"\n").expect("write");
            stdin.flush().expect("flush");
            let mut answer = String::new();
            stdout.read_line(&mut answer).expect("read");
            assert!(!answer.is_empty(), "{name}: no answer to {line}");
            assert_no_token(&answer, &format!("{name}: serve {line}"));
        }
        drop(stdin);
        let _ = child.wait();
    }
}
