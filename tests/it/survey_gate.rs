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

/// The user's policy allows findings by kind and path (`[[survey.allow]]`,
/// given with `--policy FILE`): those pass the gate, still reported; the
/// same kind elsewhere still fails it; a kind the survey does not have is
/// `policy::unknown-value` (exit 2, a usage error of the gate), and a
/// repository's own files set nothing.
#[test]
fn the_users_policy_allows_findings_by_path() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    deep_repo(&repo);
    let home = tmp.path().join("home");
    let cwd = repo.to_str().unwrap();
    let policy = tmp.path().join("gate.toml");
    let gate = |policy_text: &str, extra: &[&str]| {
        fs::write(&policy, policy_text).unwrap();
        let mut args = vec!["--policy", policy.to_str().unwrap(), "--cwd", cwd];
        args.extend_from_slice(extra);
        survey_in(&home, &args)
    };
    // hidden-text at two depths, budget-clip at one: allowing both
    // hidden-text paths and the budget's lets `--deny warnings` pass.
    let all = "version = 1\n[survey]\nallow = [\n  { kind = \"hidden-text\", path = \"packages/**\" },\n  { kind = \"hidden-text\", path = \"a/b/*/AGENTS.md\" },\n  { kind = \"budget-clip\", path = \"packages/legacy/AGENTS.md\" },\n]\n";
    let pass = gate(all, &["--deny", "warnings", "--format", "github"]);
    assert_eq!(pass.status.code(), Some(0), "{pass:?}");
    let text = String::from_utf8(pass.stdout).unwrap();
    assert!(
        text.contains("file=a/b/c/AGENTS.md,line=1,col=5,title=hidden-text::"),
        "allowed findings are still reported: {text}"
    );
    // The deep one no longer matched: it alone fails the gate.
    let some = all.replace("a/b/*/AGENTS.md", "a/*/AGENTS.md");
    let fail = gate(&some, &["--deny", "warnings"]);
    assert_eq!(fail.status.code(), Some(1), "{fail:?}");
    // The kind must match too.
    let other_kind = all.replace("\"budget-clip\"", "\"not-text\"");
    let fail = gate(&other_kind, &["--deny", "warnings"]);
    assert_eq!(fail.status.code(), Some(1), "{fail:?}");
    // Without the policy, the same findings fail.
    let plain = survey_in(&home, &["--deny", "warnings", "--cwd", cwd]);
    assert_eq!(plain.status.code(), Some(1), "{plain:?}");
    // A repository's policy-looking file sets nothing: only the user's does.
    fs::write(repo.join("context-policy.toml"), all).unwrap();
    let still = survey_in(&home, &["--deny", "warnings", "--cwd", cwd]);
    assert_eq!(still.status.code(), Some(1), "{still:?}");
    // A mistyped kind, and a bad glob: the policy's own diagnostics.
    let typo = gate(
        "version = 1\n[survey]\nallow = [{ kind = \"hiden-text\", path = \"x\" }]\n",
        &["--deny", "warnings", "--color", "never"],
    );
    assert_eq!(typo.status.code(), Some(2), "{typo:?}");
    let stderr = String::from_utf8(typo.stderr).unwrap();
    assert!(stderr.contains("error[policy::unknown-value]"), "{stderr}");
    assert!(stderr.contains("did you mean \"hidden-text\"?"), "{stderr}");
    let glob = gate(
        "version = 1\n[survey]\nallow = [{ kind = \"hidden-text\", path = \"a/[b\" }]\n",
        &["--deny", "warnings", "--color", "never"],
    );
    assert_eq!(glob.status.code(), Some(2), "{glob:?}");
    let stderr = String::from_utf8(glob.stderr).unwrap();
    assert!(stderr.contains("error[policy::invalid-glob]"), "{stderr}");
    assert!(stderr.contains("help: close the `[` with `]`"), "{stderr}");
}

/// The kinds a policy's `[[survey.allow]]` takes are the survey's kinds.
#[test]
fn the_policy_takes_every_survey_kind() {
    let kinds: Vec<&str> = lisa_context::protocol::SURVEY_PROBLEM_KINDS
        .iter()
        .map(|k| k.kind)
        .collect();
    assert_eq!(kinds, lisa_context::policy::SURVEY_KINDS);
}
