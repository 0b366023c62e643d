//! Command-line conventions: completions and a man page from the clap
//! definition, cargo-like error lines, `--color`, `--verbose`, suggestions
//! for a mistyped skill, and a one-run bypass of a broken home policy.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

fn run(args: &[&str], extra_env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_lisa-context"));
    cmd.args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("LISA_HOME")
        .env_remove("NO_COLOR");
    for (k, v) in extra_env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

const DEMO: &[&str] = &["--home", "examples/demo/home"];
const API: &str = "examples/demo/repo/packages/api";

#[test]
fn completions_and_man_page_come_from_the_command_definition() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = run(&["completions", shell], &[]);
        assert!(out.status.success(), "{shell}: {out:?}");
        let script = text(&out.stdout);
        for word in [
            "lisa-context",
            "snapshot",
            "fingerprint",
            "serve",
            "mcp",
            "instructions",
        ] {
            assert!(script.contains(word), "{shell} completion lacks {word}");
        }
    }
    let out = run(&["man"], &[]);
    assert!(out.status.success());
    let page = text(&out.stdout);
    assert!(page.contains(".TH lisa-context 1"), "{page}");
    for word in [
        "snapshot",
        "explain",
        "\\-\\-home",
        "\\-\\-no\\-home\\-policy",
        ".SH COMMANDS",
        ".SS \"lisa\\-context skill show",
        ".SH \"EXIT STATUS\"",
        ".SH ENVIRONMENT",
        "LISA_HOME",
        "LISA_CONTEXT_POLICY",
        "NO_COLOR",
        ".SH FILES",
        "context\\-policy.toml",
        "context\\-nonce.key",
        "context\\-trust.json",
        "context\\-frontmatter.memo",
    ] {
        assert!(page.contains(word), "the man page lacks {word}");
    }
    // One page: it points to no per-command page that is not installed.
    assert!(!page.contains("lisa\\-context\\-snapshot(1)"), "{page}");
    for command in [
        "snapshot",
        "explain",
        "fingerprint",
        "access",
        "serve",
        "mcp",
        "trust status",
        "policy check",
    ] {
        let heading = format!(".SS \"lisa\\-context {}", command.replace('-', "\\-"));
        assert!(page.contains(&heading), "the man page lacks {heading}");
    }
}

#[test]
fn errors_start_like_cargos_and_colour_follows_the_flag() {
    let args = ["fingerprint", "--cwd", "/nonexistent/lisa-context-cli"];
    let plain = run(&args, &[]);
    assert_eq!(plain.status.code(), Some(1));
    let stderr = text(&plain.stderr);
    assert!(
        stderr.starts_with("error[snapshot::bad-cwd]: cannot use /nonexistent/lisa-context-cli"),
        "{stderr}"
    );
    assert!(
        !stderr.contains('\u{1b}'),
        "no colour on a pipe: {stderr:?}"
    );

    let always = run(&[&["--color", "always"], &args[..]].concat(), &[]);
    assert!(
        text(&always.stderr).contains('\u{1b}'),
        "--color always colours"
    );
    let never = run(&[&["--color", "never"], &args[..]].concat(), &[]);
    assert!(!text(&never.stderr).contains('\u{1b}'));
    // NO_COLOR only matters to `auto`, which a pipe already keeps plain.
    let no_color = run(&args, &[("NO_COLOR", "1")]);
    assert!(!text(&no_color.stderr).contains('\u{1b}'));
}

#[test]
fn verbose_narrates_the_decisions_on_stderr_only() {
    let quiet = run(&[DEMO, &["fingerprint", "--cwd", API]].concat(), &[]);
    let loud = run(&[DEMO, &["-v", "fingerprint", "--cwd", API]].concat(), &[]);
    assert!(loud.status.success());
    assert_eq!(quiet.stdout, loud.stdout, "stdout is the same");
    let said = text(&loud.stderr);
    for word in [
        "policy layers",
        "  built-in: ",
        "home root:",
        "STATUS",
        "deduped",
        "shadowed",
        "skill changelog",
    ] {
        assert!(said.contains(word), "--verbose lacks {word}:\n{said}");
    }
    assert!(quiet.stderr.is_empty());
}

#[test]
fn a_mistyped_skill_name_gets_suggestions() {
    let out = run(
        &[DEMO, &["skill", "show", "releas", "--cwd", API]].concat(),
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("did you mean `release`?"), "{stderr}");
    assert!(
        stderr.contains("Available here: changelog, release"),
        "{stderr}"
    );
}

#[test]
fn a_broken_home_policy_names_the_way_around_it() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    fs::create_dir_all(&home).unwrap();
    fs::write(home.join("AGENTS.md"), "HOME-NOTE").unwrap();
    fs::write(
        home.join("context-policy.toml"),
        "version = 1\n[instructions]\nbudget-bytes = \"lots\"\n",
    )
    .unwrap();
    let repo = tmp.path().join("repo");
    fs::create_dir_all(repo.join(".git")).unwrap();
    let home_s = home.to_str().unwrap();
    let repo_s = repo.to_str().unwrap();
    let failed = run(&["--home", home_s, "snapshot", "--cwd", repo_s], &[]);
    assert_eq!(failed.status.code(), Some(1), "fails closed");
    let stderr = text(&failed.stderr);
    assert!(stderr.contains("context-policy.toml"), "{stderr}");
    assert!(stderr.contains("--no-home-policy"), "{stderr}");
    let bypassed = run(
        &[
            "--home",
            home_s,
            "--no-home-policy",
            "snapshot",
            "--cwd",
            repo_s,
        ],
        &[],
    );
    assert!(bypassed.status.success(), "{bypassed:?}");
    assert!(
        text(&bypassed.stdout).contains("HOME-NOTE"),
        "home files are still read"
    );
    assert!(Path::new(home_s).join("context-policy.toml").exists());
}

/// Every problem of a policy file reads `error[code]: message` once, then
/// its source lines and help: no second headline in miette's own form, no
/// wrapped list of names, the same text whatever the terminal width; the
/// suggestions prefer a word the mistake begins.
#[test]
fn each_policy_problem_is_one_cargo_style_error() {
    let tmp = tempfile::tempdir().unwrap();
    let policy = tmp.path().join("team.toml");
    fs::write(
        &policy,
        "version = 1\nextends = \"claude\"\n[trust]\nproject = \"pin\"\nsymlinks = \"sometimes\"\n\
         [instructions]\nbudget-bytes = -4\n",
    )
    .unwrap();
    let out = run(
        &["policy", "check", policy.to_str().unwrap()],
        &[("COLUMNS", "40")],
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    let heads: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error")).collect();
    assert_eq!(heads.len(), 5, "{stderr}");
    assert!(heads[0].starts_with("error[policy::invalid]: "), "{stderr}");
    for head in &heads[1..] {
        assert!(head.starts_with("error[policy::"), "{head}");
    }
    assert!(!stderr.contains("Error:"), "{stderr}");
    assert!(!stderr.contains('×'), "{stderr}");
    assert!(
        stderr.contains("it takes one of `lisa`, `codex`, `gemini`, `claude-code`"),
        "{stderr}"
    );
    assert!(stderr.contains("did you mean \"claude-code\"?"), "{stderr}");
    assert!(stderr.contains("did you mean \"pinned\"?"), "{stderr}");
    assert!(stderr.contains("team.toml:4:11"), "{stderr}");
}

/// `skill list` and `explain`, as a table (paths relative to their root, no
/// trailing blanks) and as JSON matching `schema/cli.schema.json`.
#[test]
fn skill_list_and_explain_print_tables_and_json() {
    let list = run(&[DEMO, &["skill", "list", "--cwd", API]].concat(), &[]);
    assert!(list.status.success(), "{list:?}");
    let table = text(&list.stdout);
    assert!(table.starts_with("NAME"), "{table}");
    assert!(
        table.contains("changelog  project  .lisa/skills/changelog/SKILL.md"),
        "{table}"
    );
    assert!(
        table.contains("release    home     skills/release/SKILL.md"),
        "{table}"
    );
    assert!(
        table.contains("shadowed: release at .lisa/skills/release/SKILL.md"),
        "{table}"
    );
    let json = run(
        &[DEMO, &["skill", "list", "--cwd", API, "--format", "json"]].concat(),
        &[],
    );
    let value: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    crate::validate::cli(&value);
    assert_eq!(value["skills"].as_array().map(Vec::len), Some(2));
    assert_eq!(value["shadowed"][0]["name"], "release");

    let explain = run(&[DEMO, &["explain", "--cwd", API]].concat(), &[]);
    let table = text(&explain.stdout);
    for line in table.lines() {
        assert_eq!(line, line.trim_end(), "a trailing blank: {line:?}");
    }
    assert!(
        table.contains("included         project  packages/api/AGENTS.md"),
        "{table}"
    );
    for row in table
        .lines()
        .filter(|l| l.starts_with("included") || l.starts_with("absent"))
    {
        assert!(!row.contains("examples/demo"), "an absolute path: {row}");
    }
    let json = run(
        &[DEMO, &["explain", "--cwd", API, "--format", "json"]].concat(),
        &[],
    );
    let value: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    crate::validate::cli(&value);
    let rows = value["rows"].as_array().unwrap();
    assert!(
        rows.iter()
            .any(|r| r["shown"] == "packages/api/AGENTS.md" && r["status"] == "included")
    );
}

/// `trust`: an approve with nothing named is a usage error (exit 2); an
/// `--expect` whose hash is not one is refused as such (exit 1, the path
/// shown escaped); `status` under the default `open`
/// says nothing is held back, and rows read one state each.
#[test]
fn trust_usage_errors_and_status_words() {
    let none = run(&[DEMO, &["trust", "approve", "--cwd", API]].concat(), &[]);
    assert_eq!(none.status.code(), Some(2), "{none:?}");
    let bad = run(
        &[
            DEMO,
            &[
                "trust",
                "approve",
                "--cwd",
                API,
                "--expect",
                "AGENTS.md=0000",
            ],
        ]
        .concat(),
        &[],
    );
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        text(&bad.stderr).contains("`0000` is not a content hash"),
        "{bad:?}"
    );
    let status = run(&[DEMO, &["trust", "status", "--cwd", API]].concat(), &[]);
    assert!(status.status.success());
    let out = text(&status.stdout);
    assert!(out.contains("nothing is held back"), "{out}");
    assert!(
        out.lines().any(|l| l.starts_with("new      instruction ")),
        "{out}"
    );
    assert!(!out.contains("pending  new"), "{out}");
    // The tables have their JSON, as serve answers the same questions.
    for command in ["status", "diff"] {
        let json = run(
            &[DEMO, &["trust", command, "--cwd", API, "--format", "json"]].concat(),
            &[],
        );
        assert!(json.status.success(), "{json:?}");
        let value: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
        crate::validate::cli(&value);
        assert!(
            value["items"].as_array().is_some_and(|i| !i.is_empty()),
            "{value}"
        );
    }
}

/// `policy check FILE` says under which role it checked the file, and
/// checks a home's policy file as the home layer.
#[test]
fn policy_check_names_the_role_and_checks_a_home_file_as_home() {
    let tmp = tempfile::tempdir().unwrap();
    let home_file = tmp.path().join("context-policy.toml");
    let team = tmp.path().join("team.toml");
    let text_of = "version = 1\n[roots]\nhome = [\"/somewhere\"]\n";
    fs::write(&home_file, text_of).unwrap();
    fs::write(&team, text_of).unwrap();
    let home = run(&["policy", "check", home_file.to_str().unwrap()], &[]);
    assert_eq!(home.status.code(), Some(1));
    assert!(
        text(&home.stderr).contains("cannot set `roots.home`"),
        "{home:?}"
    );
    let cli = run(&["policy", "check", team.to_str().unwrap()], &[]);
    assert!(cli.status.success(), "{cli:?}");
    assert!(
        text(&cli.stdout).contains("checked as a --policy file"),
        "{cli:?}"
    );
}

/// Completion that knows the values (`COMPLETE=SHELL lisa-context`):
/// `--policy` offers the shipped names, `skill show` the skills and `rule
/// show` the rules of the current directory.
#[test]
fn dynamic_completion_offers_policy_and_skill_names() {
    let complete = |dir: &Path, index: &str, words: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_lisa-context"))
            .arg("--")
            .arg("lisa-context")
            .args(words)
            .current_dir(dir)
            .env("COMPLETE", "bash")
            .env("_CLAP_COMPLETE_INDEX", index)
            .env("_CLAP_IFS", "\n")
            .env(
                "LISA_HOME",
                Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/demo/home"),
            )
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        text(&out.stdout)
            .lines()
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let policies = complete(root, "2", &["--policy", "cl"]);
    assert!(
        policies.contains(&"claude-code".to_string()),
        "{policies:?}"
    );
    let api = root.join(API);
    let skills = complete(&api, "3", &["skill", "show", ""]);
    assert!(
        skills.contains(&"changelog".to_string()) && skills.contains(&"release".to_string()),
        "{skills:?}"
    );
    // `rule show` offers the rules of the current directory, each name
    // once, under the home's policy.
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let repo = tmp.path().join("repo");
    fs::create_dir_all(repo.join(".git")).unwrap();
    fs::create_dir_all(repo.join(".cursor/rules")).unwrap();
    fs::create_dir_all(&home).unwrap();
    fs::write(
        home.join("context-policy.toml"),
        "version = 1\nextends = \"cursor\"\n",
    )
    .unwrap();
    // Cursor names a rule by its file.
    for name in ["db", "deploy", "style"] {
        fs::write(
            repo.join(".cursor/rules").join(format!("{name}.mdc")),
            format!("---\ndescription: the {name} rule\n---\nbody\n"),
        )
        .unwrap();
    }
    let out = Command::new(env!("CARGO_BIN_EXE_lisa-context"))
        .args(["--", "lisa-context", "rule", "show", "d"])
        .current_dir(&repo)
        .env("COMPLETE", "bash")
        .env("_CLAP_COMPLETE_INDEX", "3")
        .env("_CLAP_IFS", "\n")
        .env("LISA_HOME", &home)
        .output()
        .unwrap();
    let rules: Vec<String> = text(&out.stdout).lines().map(str::to_string).collect();
    assert_eq!(rules, ["db", "deploy"], "{out:?}");
    // The registration script itself.
    let script = Command::new(env!("CARGO_BIN_EXE_lisa-context"))
        .env("COMPLETE", "bash")
        .output()
        .unwrap();
    assert!(text(&script.stdout).contains("_clap_complete_lisa_context"));
}

/// `access` under a policy that loads nothing on access says so, naming
/// the shipped policies that do.
#[test]
fn access_without_on_access_says_so() {
    let out = run(
        &[DEMO, &["access", "--cwd", API, "src/main.ts"]].concat(),
        &[],
    );
    assert!(out.status.success(), "{out:?}");
    assert!(out.stdout.is_empty());
    let stderr = text(&out.stderr);
    assert!(stderr.contains("loads nothing on access"), "{stderr}");
    assert!(stderr.contains("gemini"), "{stderr}");
    let gemini = run(
        &[
            DEMO,
            &["--policy", "gemini", "access", "--cwd", API, "src/main.ts"],
        ]
        .concat(),
        &[],
    );
    assert!(
        !text(&gemini.stderr).contains("loads nothing"),
        "{gemini:?}"
    );
}

/// `survey`: every shipped policy side by side, and the problems an author
/// wants to know, as a table and as JSON matching `schema/cli.schema.json`;
/// `--deny warnings` fails when there are any.
#[test]
fn survey_compares_the_harnesses_and_names_the_problems() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let repo = tmp.path().join("repo");
    fs::create_dir_all(&home).unwrap();
    fs::create_dir_all(repo.join(".git")).unwrap();
    // Over every budget of 32 KiB; a zero-width space hidden in it.
    fs::write(
        repo.join("AGENTS.md"),
        format!("use tabs\u{200b}\n{}", "x".repeat(40_000)),
    )
    .unwrap();
    fs::write(repo.join("GEMINI.md"), "gemini only").unwrap();
    let impostor = repo.join(".agents/skills/innocent");
    fs::create_dir_all(&impostor).unwrap();
    fs::write(
        impostor.join("SKILL.md"),
        "---\nname: release\ndescription: pretends to be another\n---\nbody\n",
    )
    .unwrap();
    let base = [
        "--home",
        home.to_str().unwrap(),
        "survey",
        "--cwd",
        repo.to_str().unwrap(),
    ];
    let table = run(&base, &[]);
    assert!(table.status.success(), "{table:?}");
    let text = text(&table.stdout);
    for name in lisa_context::policy::SHIPPED_NAMES {
        assert!(text.lines().any(|l| l.starts_with(name)), "{name}: {text}");
    }
    assert!(
        text.contains("budget-clip AGENTS.md (lisa, codex)"),
        "{text}"
    );
    assert!(text.contains("hidden-text AGENTS.md"), "{text}");
    assert!(text.contains("read-by-some GEMINI.md (gemini)"), "{text}");
    assert!(
        // The policies whose names must match their folders (the Agent
        // Skills rule) and that read .agents/skills.
        text.contains(
            "rejected-skill .agents/skills/innocent/SKILL.md (lisa, cursor, copilot, zed): refused: impostor"
        ),
        "{text}"
    );

    let json = run(&[&base[..], &["--format", "json"]].concat(), &[]);
    let value: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    crate::validate::cli(&value);
    assert_eq!(
        value["policies"].as_array().map(Vec::len),
        Some(lisa_context::policy::SHIPPED_NAMES.len())
    );
    // SARIF 2.1.0, valid against the standard's schema: one rule per
    // declared kind, one result per problem, paths relative to the root.
    let sarif = run(&[&base[..], &["--format", "sarif"]].concat(), &[]);
    assert!(sarif.status.success(), "{sarif:?}");
    let log: serde_json::Value = serde_json::from_slice(&sarif.stdout).unwrap();
    crate::validate::sarif(&log);
    // The check bites: a wrong version, a result without a message.
    let mut wrong = log.clone();
    wrong["version"] = serde_json::json!("2.2.0");
    assert!(!crate::validate::is_sarif(&wrong));
    let mut wrong = log.clone();
    wrong["runs"][0]["results"][0]
        .as_object_mut()
        .unwrap()
        .remove("message");
    assert!(!crate::validate::is_sarif(&wrong));
    let run0 = &log["runs"][0];
    let rules: Vec<&str> = run0["tool"]["driver"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    let declared: Vec<&str> = lisa_context::protocol::SURVEY_PROBLEM_KINDS
        .iter()
        .map(|k| k.kind)
        .collect();
    assert_eq!(rules, declared);
    // The manual's list of kinds is the declared one, in its order.
    let doc =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/cli.md")).unwrap();
    let section = doc
        .split("## Audit your repository")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .unwrap();
    let documented: Vec<&str> = section
        .lines()
        .filter_map(|l| l.strip_prefix("| `")?.split('`').next())
        .collect();
    assert_eq!(documented, declared, "docs/cli.md, Audit your repository");
    let results = run0["results"].as_array().unwrap();
    assert_eq!(
        results.len(),
        value["problems"].as_array().map_or(0, Vec::len)
    );
    assert!(!results.is_empty());
    for r in results {
        let id = r["ruleId"].as_str().unwrap();
        assert_eq!(rules[r["ruleIndex"].as_u64().unwrap() as usize], id);
        let at = &r["locations"][0]["physicalLocation"]["artifactLocation"];
        if at["uriBaseId"] == "%SRCROOT%" {
            assert!(!at["uri"].as_str().unwrap().starts_with('/'), "{r}");
        }
    }
    assert!(results.iter().any(|r| r["ruleId"] == "budget-clip"
        && r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "AGENTS.md"));
    // No absolute URI, not even the root's (tests/it/sarif.rs says more).
    assert!(run0.get("originalUriBaseIds").is_none());

    let only = run(&[&base[..], &["--policies", "lisa,gemini"]].concat(), &[]);
    assert!(!text_of(&only).lines().any(|l| l.starts_with("codex")));
    let denied = run(&[&base[..], &["--deny", "warnings"]].concat(), &[]);
    assert_eq!(denied.status.code(), Some(1));
    let unknown = run(&[&base[..], &["--policies", "cursorr"]].concat(), &[]);
    // A tool error, told apart from findings (tests/it/survey_exit.rs).
    assert_eq!(unknown.status.code(), Some(2));
    assert!(
        text_of_err(&unknown).contains("no policy named `cursorr`"),
        "{unknown:?}"
    );
}

fn text_of(o: &Output) -> String {
    text(&o.stdout)
}

fn text_of_err(o: &Output) -> String {
    text(&o.stderr)
}

/// `survey`'s `rule-unmatched`: an on-access rule whose globs match no path
/// of the repository, found by a walk through the sandbox.
#[test]
fn survey_names_the_rules_no_path_would_load() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let repo = tmp.path().join("repo");
    fs::create_dir_all(&home).unwrap();
    fs::create_dir_all(repo.join(".git")).unwrap();
    fs::create_dir_all(repo.join(".cursor/rules")).unwrap();
    fs::create_dir_all(repo.join("src/deep")).unwrap();
    fs::write(repo.join("src/deep/x.ts"), "x").unwrap();
    // A link out of the repository is not followed: its files are not the
    // repository's.
    fs::create_dir_all(tmp.path().join("outside")).unwrap();
    fs::write(tmp.path().join("outside/y.zig"), "y").unwrap();
    std::os::unix::fs::symlink(tmp.path().join("outside"), repo.join("linked")).unwrap();
    fs::write(
        repo.join(".cursor/rules/ts.mdc"),
        "---\nglobs: src/**/*.ts\n---\nts\n",
    )
    .unwrap();
    fs::write(
        repo.join(".cursor/rules/zig.mdc"),
        "---\nglobs: \"**/*.zig\"\n---\nzig\n",
    )
    .unwrap();
    let out = run(
        &[
            "--home",
            home.to_str().unwrap(),
            "survey",
            "--policies",
            "cursor,lisa",
            "--format",
            "json",
            "--cwd",
            repo.to_str().unwrap(),
        ],
        &[],
    );
    let value: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    crate::validate::cli(&value);
    let unmatched: Vec<(String, serde_json::Value)> = value["problems"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["kind"] == "rule-unmatched")
        .map(|p| {
            (
                p["path"].as_str().unwrap().to_string(),
                p["policies"].clone(),
            )
        })
        .collect();
    assert_eq!(unmatched.len(), 1, "{value}");
    assert!(unmatched[0].0.ends_with(".cursor/rules/zig.mdc"));
    assert_eq!(unmatched[0].1, serde_json::json!(["cursor"]));
}
