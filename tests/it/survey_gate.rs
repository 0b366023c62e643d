//! `survey` as a gate a repository can pass: `--deny KIND|warnings`,
//! `--allow KIND`, a baseline of known findings by fingerprint
//! (`--write-baseline`, `--baseline`; a malformed one is a usage error),
//! `--format github` annotations; exit 0 / 1 (findings fail the gate) / 2
//! (usage or tool error).

use std::fs;

use crate::survey_scope::{deep_repo, json, survey_in};

/// The repository with a finding at three depths fails `--deny warnings`
/// with 1 and an annotation per finding; with the baseline it wrote, it
/// passes; a new finding fails it again, and only the new one is new.
#[test]
fn a_baseline_lets_known_findings_pass_and_new_ones_fail() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    deep_repo(&repo);
    let home = tmp.path().join("home");
    let cwd = repo.to_str().unwrap();
    let gate = survey_in(
        &home,
        &["--deny", "warnings", "--format", "github", "--cwd", cwd],
    );
    assert_eq!(gate.status.code(), Some(1), "{gate:?}");
    let text = String::from_utf8(gate.stdout).unwrap();
    for want in [
        "::warning file=packages/web/AGENTS.md,line=2,col=5,title=hidden-text::",
        "::warning file=packages/legacy/AGENTS.md,title=budget-clip::",
        "::warning file=a/b/c/AGENTS.md,line=1,col=5,title=hidden-text::",
        "::notice file=AGENTS.md,title=read-by-some::",
    ] {
        assert!(text.lines().any(|l| l.starts_with(want)), "{want}: {text}");
    }

    let baseline = tmp.path().join("baseline.json");
    let write = survey_in(
        &home,
        &[
            "--deny",
            "warnings",
            "--write-baseline",
            baseline.to_str().unwrap(),
            "--cwd",
            cwd,
        ],
    );
    assert_eq!(write.status.code(), Some(0), "{write:?}");
    let file: serde_json::Value = serde_json::from_slice(&fs::read(&baseline).unwrap()).unwrap();
    assert_eq!(file["version"], 1, "{file}");
    let listed = file["findings"].as_array().unwrap();
    assert!(
        listed
            .iter()
            .any(|f| f["kind"] == "hidden-text" && f["path"] == "a/b/c/AGENTS.md"),
        "{file}"
    );
    let known = json(&survey_in(&home, &["--format", "json", "--cwd", cwd]));
    assert_eq!(
        listed.len(),
        known["problems"].as_array().unwrap().len(),
        "{file}"
    );

    let pass = survey_in(
        &home,
        &[
            "--deny",
            "warnings",
            "--baseline",
            baseline.to_str().unwrap(),
            "--cwd",
            cwd,
        ],
    );
    assert_eq!(pass.status.code(), Some(0), "{pass:?}");

    // A line moved above a known finding: still known.
    fs::write(
        repo.join("packages/web/AGENTS.md"),
        "moved\n\nweb\nuse \u{200b}spaces\n",
    )
    .unwrap();
    let moved = survey_in(
        &home,
        &[
            "--deny",
            "warnings",
            "--baseline",
            baseline.to_str().unwrap(),
            "--cwd",
            cwd,
        ],
    );
    assert_eq!(moved.status.code(), Some(0), "{moved:?}");

    // A new finding fails it.
    fs::create_dir_all(repo.join("tools")).unwrap();
    fs::write(repo.join("tools/AGENTS.md"), "new \u{200b}\n").unwrap();
    let new = survey_in(
        &home,
        &[
            "--deny",
            "warnings",
            "--baseline",
            baseline.to_str().unwrap(),
            "--cwd",
            cwd,
        ],
    );
    assert_eq!(new.status.code(), Some(1), "{new:?}");
}

/// `--deny KIND` fails on that kind alone, notes included (`read-by-some`
/// fails only when named); `--allow KIND` takes a kind out of
/// `--deny warnings`.
#[test]
fn deny_and_allow_name_kinds() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    fs::create_dir_all(repo.join(".git")).unwrap();
    fs::write(repo.join("AGENTS.md"), "Use tabs.\n").unwrap();
    let home = tmp.path().join("home");
    let cwd = repo.to_str().unwrap();
    let run = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(["--cwd", cwd]);
        survey_in(&home, &all).status.code()
    };
    assert_eq!(run(&["--deny", "warnings"]), Some(0));
    assert_eq!(run(&["--deny", "read-by-some"]), Some(1));
    assert_eq!(run(&["--deny", "hidden-text"]), Some(0));
    fs::create_dir_all(repo.join("web")).unwrap();
    fs::write(repo.join("web/AGENTS.md"), "x\u{200b}\n").unwrap();
    assert_eq!(run(&["--deny", "warnings"]), Some(1));
    assert_eq!(run(&["--deny", "hidden-text"]), Some(1));
    assert_eq!(run(&["--deny", "budget-clip"]), Some(0));
    assert_eq!(
        run(&["--deny", "warnings", "--allow", "hidden-text"]),
        Some(0)
    );
    assert_eq!(
        run(&[
            "--deny",
            "warnings",
            "--deny",
            "read-by-some",
            "--allow",
            "hidden-text"
        ]),
        Some(1)
    );
    // Findings without --deny: 0.
    assert_eq!(run(&[]), Some(0));
    // A kind that does not exist is a usage error.
    assert_eq!(run(&["--deny", "hiden-text"]), Some(2));
    assert_eq!(run(&["--allow", "warnings"]), Some(2));
}

/// A baseline that is missing, not JSON, not of the baseline's shape, or
/// of another version is a usage error: exit 2, said on stderr, nothing
/// surveyed.
#[test]
fn a_malformed_baseline_exits_2() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    deep_repo(&repo);
    let home = tmp.path().join("home");
    let cwd = repo.to_str().unwrap();
    for (name, text) in [
        ("missing.json", None),
        ("garbage.json", Some("not json")),
        ("shape.json", Some("{\"version\": 1}")),
        ("version.json", Some("{\"version\": 99, \"findings\": []}")),
    ] {
        let file = tmp.path().join(name);
        if let Some(text) = text {
            fs::write(&file, text).unwrap();
        }
        let out = survey_in(
            &home,
            &[
                "--deny",
                "warnings",
                "--baseline",
                file.to_str().unwrap(),
                "--cwd",
                cwd,
            ],
        );
        assert_eq!(out.status.code(), Some(2), "{name}: {out:?}");
        assert!(out.stdout.is_empty(), "{name}: {out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        let said = if text.is_some() {
            "is malformed"
        } else {
            "cannot read the baseline"
        };
        assert!(err.contains(said), "{name}: {err}");
    }
}

/// `--format github` escapes what GitHub's runner would misread: `,` and
/// `:` in a file name (a property), as `%2C` and `%3A`.
#[test]
fn github_annotations_escape_properties() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    fs::create_dir_all(repo.join(".git")).unwrap();
    fs::write(repo.join("AGENTS.md"), "Use tabs.\n").unwrap();
    fs::create_dir_all(repo.join("a,b:c")).unwrap();
    fs::write(repo.join("a,b:c/AGENTS.md"), "x\u{200b}\n").unwrap();
    let home = tmp.path().join("home");
    let out = survey_in(
        &home,
        &["--format", "github", "--cwd", repo.to_str().unwrap()],
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.lines().any(|l| l
            .starts_with("::warning file=a%2Cb%3Ac/AGENTS.md,line=1,col=2,title=hidden-text::")),
        "{text}"
    );
}
