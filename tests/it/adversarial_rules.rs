//! Adversarial: what a repository's rule files can do to the rules around
//! them, under every shipped policy that reads rules (issue 49, items 3
//! and 6), through the command line and `serve`.
//!
//! * A repository's globs never change which of the user's own scoped
//!   rules apply: a glob the engine cannot compile costs its own rule only,
//!   with a warning naming the rule and the glob, and the work a
//!   repository's globs cost is bounded.
//! * A rule's frontmatter that cannot be read one way only (a key given
//!   twice, YAML that does not parse, an unknown mode word, a glob mode
//!   without globs, globs that are not text) gets the reading that loads
//!   least, and the snapshot's `misread` and the survey's `rule-misread`
//!   say so.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use lisa_context::policy::{Policy, PolicySource, SHIPPED_NAMES};
use serde_json::{Value, json};

use crate::support::World;

const BIN: &str = env!("CARGO_BIN_EXE_lisa-context");

/// A shipped policy, as shipped.
fn shipped(name: &str) -> Policy {
    Policy::from_sources(&[PolicySource::shipped(name).unwrap()]).unwrap()
}

/// Whether `name` reads rules scoped to paths (`instructions.scoped-rules`,
/// or `[rules]` with globs or content patterns).
fn reads_scoped_rules(name: &str) -> bool {
    let p = shipped(name);
    p.instructions.scoped_rules
        || (!p.rules.files.is_empty()
            && (!p.rules.globs_keys.is_empty() || !p.rules.regex_keys.is_empty()))
}

/// Whether `name` reads a mode from rule frontmatter (`[rules]`, or the
/// `paths:` of `instructions.scoped-rules`).
fn reads_rule_modes(name: &str) -> bool {
    let p = shipped(name);
    p.instructions.scoped_rules || !p.rules.files.is_empty()
}

/// How a shipped policy keeps a rule scoped to some paths.
struct Scoped {
    /// Its home root under the world's `home` (the `~/.x` it names).
    home_root: &'static str,
    /// Where a rule lives in that home root (`None`: it reads none there).
    home_rule: Option<&'static str>,
    /// Where a project rule named `{}` lives in the repository.
    repo_rule: &'static str,
    /// The frontmatter lines that scope a rule to a YAML list of globs.
    front: fn(&str) -> String,
}

/// The scoped-rule layout of each shipped policy that reads such rules.
fn scoped(policy: &str) -> Option<Scoped> {
    let s = |home_root, home_rule, repo_rule, front| {
        Some(Scoped {
            home_root,
            home_rule,
            repo_rule,
            front,
        })
    };
    match policy {
        "claude-code" => s(
            ".claude",
            Some("rules/home.md"),
            ".claude/rules/{}.md",
            |l| format!("paths: {l}"),
        ),
        "continue" => s(
            ".continue",
            Some("rules/home.md"),
            ".continue/rules/{}.md",
            |l| format!("globs: {l}"),
        ),
        "copilot" => s(
            ".copilot",
            Some("instructions/home.instructions.md"),
            ".github/instructions/{}.instructions.md",
            |l| format!("applyTo: {l}"),
        ),
        "kiro" => s(
            ".kiro",
            Some("steering/home.md"),
            ".kiro/steering/{}.md",
            |l| format!("inclusion: fileMatch\nfileMatchPattern: {l}"),
        ),
        "cursor" => s(".cursor", None, ".cursor/rules/{}.mdc", |l| {
            format!("globs: {l}")
        }),
        "windsurf" => s(".codeium/windsurf", None, ".windsurf/rules/{}.md", |l| {
            format!("trigger: glob\nglobs: {l}")
        }),
        _ => None,
    }
}

/// `globs` as a YAML flow list of double-quoted strings.
fn list(globs: &[String]) -> String {
    let quoted: Vec<String> = globs.iter().map(|g| format!("{g:?}")).collect();
    format!("[{}]", quoted.join(", "))
}

/// A glob of about a kilobyte whose compiled automaton is large: some
/// hundred and fifty of them are more than one glob set compiles.
fn heavy(i: usize) -> String {
    format!("h{i}{}", "*a".repeat(500))
}

/// The binary, with `--home home_root`, no home policy, and the shipped
/// policy `policy`.
fn command(w: &World, home_root: &Path, policy: &str) -> Command {
    let mut c = bare(w, home_root);
    c.arg("--policy").arg(policy);
    c
}

/// The binary, with `--home home_root` and no home policy.
fn bare(w: &World, home_root: &Path) -> Command {
    let mut c = Command::new(BIN);
    c.env_remove("LISA_HOME")
        .env_remove("LISA_CONTEXT_POLICY")
        .env("XDG_STATE_HOME", w.base.join("state"))
        .env("LISA_CONTEXT_COUNTS", "1")
        .arg("--home")
        .arg(home_root)
        .arg("--no-home-policy");
    c
}

/// Runs a one-shot command, which must succeed, and reads its JSON.
fn json_of(mut c: Command, args: &[&str]) -> (Value, Output) {
    let out = c.args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let value = serde_json::from_slice(&out.stdout).unwrap();
    (value, out)
}

/// The work counters a finished run printed.
fn counts(out: &Output) -> BTreeMap<String, u64> {
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = stderr
        .lines()
        .find_map(|l| l.strip_prefix("lisa-context counts: "))
        .unwrap_or_else(|| panic!("no counts on stderr:\n{stderr}"));
    serde_json::from_str(line).unwrap()
}

/// Runs `serve` on `requests`, returning the responses in order.
fn serve(mut c: Command, requests: &[Value]) -> Vec<Value> {
    let mut child = c
        .arg("serve")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = Vec::new();
    for r in requests {
        input.extend_from_slice(r.to_string().as_bytes());
        input.push(b'\n');
    }
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The warnings of a snapshot's JSON: kind, path, message.
fn warnings(snap: &Value) -> Vec<(String, String, String)> {
    snap["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            let t = |k: &str| w[k].as_str().unwrap().to_string();
            (t("kind"), t("path"), t("message"))
        })
        .collect()
}

/// The tree of issue 49, item 3, laid out for `policy`: the user's own
/// rule for `**/*.tf` (where the policy reads rules in the home), three
/// repository rules of 64 long globs each (more than one glob set
/// compiles), one with a glob that does not parse, and a repository rule
/// for `**/*.tf` read after all of them. Returns the home root and the
/// rule files: (bad, heavy ones).
fn issue_tree(w: &World, layout: &Scoped) -> (PathBuf, PathBuf, Vec<PathBuf>) {
    let home_root = w.home.join(layout.home_root);
    std::fs::create_dir_all(&home_root).unwrap();
    let rule = |front: String, body: &str| format!("---\n{front}\n---\n{body}\n");
    if let Some(at) = layout.home_rule {
        crate::support::write_file(
            &home_root.join(at),
            &rule((layout.front)("\"**/*.tf\""), "HOME-TF-RULE"),
        );
    }
    let repo_rule = |name: &str| w.repo.join(layout.repo_rule.replace("{}", name));
    let bad = repo_rule("a-bad");
    crate::support::write_file(
        &bad,
        &rule(
            (layout.front)(&list(&["src/[oops".into(), "docs/**".into()])),
            "BAD-GLOB-RULE",
        ),
    );
    let mut heavy_rules = Vec::new();
    for r in 1..=3 {
        let globs: Vec<String> = (0..64).map(|g| heavy(r * 100 + g)).collect();
        let path = repo_rule(&format!("r{r}"));
        crate::support::write_file(&path, &rule((layout.front)(&list(&globs)), "HEAVY-RULE"));
        heavy_rules.push(path);
    }
    crate::support::write_file(
        &repo_rule("zz-tf"),
        &rule((layout.front)("\"**/*.tf\""), "PROJECT-TF-RULE"),
    );
    crate::support::write_file(&w.repo.join("infra/main.tf"), "resource {}\n");
    crate::support::write_file(&w.repo.join("docs/a.md"), "# docs\n");
    (home_root, bad, heavy_rules)
}

/// Issue 49, item 3: the user's `~/.claude/rules/home.md` (`paths:
/// "**/*.tf"`, and its like under every other policy that reads scoped
/// rules in the home) still loads when a `.tf` file is touched, whatever
/// the repository's rules hold: three rules of 64 long globs (too many for
/// one compiled set), a glob that does not parse. The rule with the bad
/// glob keeps its other glob and is named, with the glob, in a warning;
/// the long rules are cut to the per-rule caps and named too; a repository
/// rule read after all of them still loads. Through `access`, `snapshot
/// --format json` and `serve`.
#[test]
fn a_repository_never_turns_off_the_users_scoped_rules() {
    let mut covered = Vec::new();
    for &policy in SHIPPED_NAMES {
        let layout = scoped(policy);
        assert_eq!(
            layout.is_some(),
            reads_scoped_rules(policy),
            "{policy}: give its scoped-rule layout here"
        );
        let Some(layout) = layout else { continue };
        covered.push(policy);
        let w = World::new();
        let (home_root, bad, heavy_rules) = issue_tree(&w, &layout);
        let tf = w.repo.join("infra/main.tf");

        let (access, _) = json_of(
            command(&w, &home_root, policy),
            &["access", s(&tf), "--cwd", s(&w.repo), "--format", "json"],
        );
        let prompt = access["prompt"].as_str().unwrap();
        if layout.home_rule.is_some() {
            assert!(prompt.contains("HOME-TF-RULE"), "{policy}: {access:#}");
        }
        assert!(prompt.contains("PROJECT-TF-RULE"), "{policy}: {access:#}");
        assert!(!prompt.contains("HEAVY-RULE"), "{policy}");

        // The rule with a glob that does not parse keeps its other glob.
        let (docs, _) = json_of(
            command(&w, &home_root, policy),
            &[
                "access",
                s(&w.repo.join("docs/a.md")),
                "--cwd",
                s(&w.repo),
                "--format",
                "json",
            ],
        );
        assert!(
            docs["prompt"].as_str().unwrap().contains("BAD-GLOB-RULE"),
            "{policy}: {docs:#}"
        );

        let (snap, _) = json_of(
            command(&w, &home_root, policy),
            &["snapshot", "--format", "json", "--cwd", s(&w.repo)],
        );
        let said = warnings(&snap);
        assert!(
            said.iter()
                .any(|(kind, path, message)| kind == "scoped-glob-invalid"
                    && path == s(&bad)
                    && message.contains("src/[oops")),
            "{policy}: {said:#?}"
        );
        for heavy in &heavy_rules {
            assert!(
                said.iter()
                    .any(|(kind, path, _)| kind == "scoped-glob-limit" && path == s(heavy)),
                "{policy}: {said:#?}"
            );
        }
        // No warning is about the user's own rule.
        let home_text = s(&home_root);
        assert!(
            said.iter().all(|(_, path, _)| !path.starts_with(home_text)),
            "{policy}: {said:#?}"
        );
        crate::validate::snapshot(&snap);

        let responses = serve(
            command(&w, &home_root, policy),
            &[
                json!({"id": 1, "op": "access", "cwd": s(&w.repo), "session": "s",
                     "path": s(&tf)}),
            ],
        );
        let served = responses[0]["access"]["prompt"].as_str().unwrap();
        if layout.home_rule.is_some() {
            assert!(
                served.contains("HOME-TF-RULE"),
                "{policy}: {:#}",
                responses[0]
            );
        }
        assert!(served.contains("PROJECT-TF-RULE"), "{policy}");
    }
    assert!(
        ["claude-code", "continue", "copilot", "kiro"]
            .iter()
            .all(|p| covered.contains(p)),
        "{covered:?}"
    );
}

/// Thousands of long globs cost a bounded build: a repository of forty
/// rules of 64 one-kilobyte globs keeps at most 32 KiB of glob text, in one
/// compiled set (the user's rules in a set of their own), and the user's
/// rule still loads.
#[test]
fn thousands_of_long_globs_cost_a_bounded_build() {
    let w = World::new();
    let layout = scoped("claude-code").unwrap();
    let home_root = w.home.join(layout.home_root);
    crate::support::write_file(
        &home_root.join("rules/home.md"),
        "---\npaths: \"**/*.tf\"\n---\nHOME-TF-RULE\n",
    );
    for r in 0..40 {
        let globs: Vec<String> = (0..64).map(|g| heavy(r * 100 + g)).collect();
        crate::support::write_file(
            &w.repo.join(format!(".claude/rules/r{r:02}.md")),
            &format!("---\npaths: {}\n---\nHEAVY\n", list(&globs)),
        );
    }
    crate::support::write_file(&w.repo.join("infra/main.tf"), "x\n");
    let (snap, out) = json_of(
        command(&w, &home_root, "claude-code"),
        &["snapshot", "--format", "json", "--cwd", s(&w.repo)],
    );
    let kept: usize = snap["scopedRules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["globs"].as_array().unwrap().len())
        .sum();
    let n = counts(&out);
    // 32 KiB of ~1 KiB globs, and the home's one.
    assert!(kept <= 33, "{kept}");
    assert_eq!(n["scoped-globs"] as usize, kept);
    assert_eq!(n["scoped-glob-sets"], 2, "{n:?}");
    let (access, _) = json_of(
        command(&w, &home_root, "claude-code"),
        &[
            "access",
            s(&w.repo.join("infra/main.tf")),
            "--cwd",
            s(&w.repo),
            "--format",
            "json",
        ],
    );
    assert!(access["prompt"].as_str().unwrap().contains("HOME-TF-RULE"));
}

/// One way a rule's frontmatter can say something this reading does not
/// take one way only.
struct Case {
    /// A short label, part of the rule's file name.
    label: &'static str,
    /// The frontmatter lines.
    front: &'static str,
    /// Written with `\r\n` line ends.
    crlf: bool,
    /// What `misread` must contain (`None`: no misread expected).
    misread: Option<&'static str>,
}

const fn case(label: &'static str, front: &'static str, misread: &'static str) -> Case {
    Case {
        label,
        front,
        crlf: false,
        misread: Some(misread),
    }
}

/// Where `policy` keeps a project rule named `{}`, and the frontmatters
/// that say "off" (manual, disabled, not always) plus one key given twice,
/// an unknown mode word, a glob mode without globs, and "off" with
/// `\r\n` line ends.
fn mode_cases(policy: &str) -> Option<(&'static str, Vec<Case>)> {
    let twice = "is given twice (lines 3 and 4)";
    let mode_twice = "is given twice (lines 2 and 3)";
    let crlf = |front| Case {
        label: "crlf",
        front,
        crlf: true,
        misread: None,
    };
    Some(match policy {
        "windsurf" => (
            ".windsurf/rules/{}.md",
            vec![
                case(
                    "off-twice",
                    "trigger: manual\ndescription: a\ndescription: b",
                    twice,
                ),
                case(
                    "mode-twice",
                    "trigger: manual\ntrigger: always_on",
                    mode_twice,
                ),
                case("unknown", "trigger: sometimes", "is no mode word"),
                case("glob-empty", "trigger: glob", "it would load on no path"),
                crlf("trigger: manual"),
            ],
        ),
        "kiro" => (
            ".kiro/steering/{}.md",
            vec![
                case("off-twice", "inclusion: manual\nname: a\nname: b", twice),
                case(
                    "mode-twice",
                    "inclusion: manual\ninclusion: always",
                    mode_twice,
                ),
                case("unknown", "inclusion: sometimes", "is no mode word"),
                case(
                    "glob-empty",
                    "inclusion: fileMatch",
                    "it would load on no path",
                ),
                crlf("inclusion: manual"),
            ],
        ),
        "continue" => (
            ".continue/rules/{}.md",
            vec![
                case("off-twice", "alwaysApply: false\nnote: a\nnote: b", twice),
                case(
                    "mode-twice",
                    "alwaysApply: false\nalwaysApply: true",
                    mode_twice,
                ),
                case("unknown", "alwaysApply: sometimes", "is not a boolean"),
                case("glob-empty", "globs: 42", "is not text"),
                crlf("alwaysApply: false"),
            ],
        ),
        "cline" => (
            ".clinerules/{}.md",
            vec![
                case("off-twice", "disabled: true\nnote: a\nnote: b", twice),
                case("mode-twice", "disabled: true\ndisabled: false", mode_twice),
                case("unknown", "disabled: maybe", "is no mode word"),
                crlf("disabled: true"),
            ],
        ),
        "cursor" => (
            ".cursor/rules/{}.mdc",
            vec![
                case("off-twice", "alwaysApply: false\nnote: a\nnote: b", twice),
                case(
                    "mode-twice",
                    "alwaysApply: false\nalwaysApply: true",
                    mode_twice,
                ),
                case("unknown", "alwaysApply: sometimes", "is not a boolean"),
                case("glob-empty", "globs: 42", "is not text"),
                crlf("alwaysApply: false"),
            ],
        ),
        "copilot" => (
            ".github/instructions/{}.instructions.md",
            vec![
                case("off-twice", "description: a\nnote: a\nnote: b", twice),
                case(
                    "mode-twice",
                    "applyTo: \"x/**\"\napplyTo: \"**\"",
                    mode_twice,
                ),
                case("glob-empty", "applyTo: 42", "is not text"),
                crlf("description: a"),
            ],
        ),
        "claude-code" => (
            ".claude/rules/{}.md",
            vec![
                case("off-twice", "paths: \"x/**\"\nnote: a\nnote: b", twice),
                case("mode-twice", "paths: \"x/**\"\npaths: \"**\"", mode_twice),
                case("glob-empty", "paths: 42", "is not a glob"),
                crlf("paths: \"x/**\""),
            ],
        ),
        _ => return None,
    })
}

/// Issue 49, item 6: under every shipped policy that reads a mode from a
/// rule's frontmatter, a rule whose frontmatter says "off" plus one key
/// given twice, the mode key given twice (off, then on), an unknown mode
/// word, a glob mode without globs (or globs that are not text), and an
/// "off" frontmatter with `\r\n` line ends: none of them puts its text in
/// the prompt, and each but the last is reported in the snapshot's
/// `misread` (`rules`, or `scopedRules` for `paths:`), with the lines of a
/// key given twice, and as `rule-misread` by `survey`.
#[test]
fn rule_frontmatter_that_cannot_be_read_one_way_loads_least_and_is_reported() {
    let w = World::new();
    let mut expected: Vec<(String, PathBuf, &'static str)> = Vec::new();
    for &policy in SHIPPED_NAMES {
        let cases = mode_cases(policy);
        assert_eq!(
            cases.is_some(),
            reads_rule_modes(policy),
            "{policy}: give its rule cases here"
        );
        let Some((at, cases)) = cases else { continue };
        for c in cases {
            let path = w
                .repo
                .join(at.replace("{}", &format!("{policy}-{}", c.label)));
            let mut text = format!(
                "---\n{}\n---\nBODY-{policy}-{} must not be in the prompt\n",
                c.front, c.label
            );
            if c.crlf {
                text = text.replace('\n', "\r\n");
            }
            crate::support::write_file(&path, &text);
            if let Some(m) = c.misread {
                expected.push((policy.to_string(), path, m));
            }
        }
    }
    for &policy in SHIPPED_NAMES {
        let Some((_, cases)) = mode_cases(policy) else {
            continue;
        };
        let (snap, _) = json_of(
            command(&w, &w.home, policy),
            &["snapshot", "--format", "json", "--cwd", s(&w.repo)],
        );
        let prompt = snap["prompt"].as_str().unwrap();
        for c in &cases {
            let body = format!("BODY-{policy}-{}", c.label);
            assert!(!prompt.contains(&body), "{policy}: {body} in\n{prompt}");
        }
        let said: BTreeMap<String, (String, Option<String>)> = snap["rules"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| (r["path"].clone(), r["mode"].clone(), r["misread"].clone()))
            .chain(
                snap["scopedRules"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|r| (r["path"].clone(), json!("on-access"), r["misread"].clone())),
            )
            .map(|(p, mode, m)| {
                (
                    p.as_str().unwrap().to_string(),
                    (
                        mode.as_str().unwrap().to_string(),
                        m.as_str().map(str::to_string),
                    ),
                )
            })
            .collect();
        for (p, path, want) in expected.iter().filter(|(p, ..)| p == policy) {
            let (mode, misread) = said
                .get(s(path))
                .unwrap_or_else(|| panic!("{p}: {path:?} not in rules: {said:#?}"));
            let misread = misread.as_deref().unwrap_or_default();
            assert!(misread.contains(want), "{p}: {path:?}: {misread:?}");
            assert_ne!(mode, "always", "{p}: {path:?}");
        }
        crate::validate::snapshot(&snap);
    }

    let (survey, _) = json_of(
        bare(&w, &w.home),
        &["survey", "--format", "json", "--cwd", s(&w.repo)],
    );
    crate::validate::cli(&survey);
    let problems: Vec<(String, Vec<String>, String)> = survey["problems"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["kind"] == "rule-misread")
        .map(|p| {
            (
                p["path"].as_str().unwrap().to_string(),
                p["policies"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|n| n.as_str().unwrap().to_string())
                    .collect(),
                p["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    for (policy, path, want) in &expected {
        assert!(
            problems.iter().any(|(p, policies, message)| p == s(path)
                && policies.contains(policy)
                && message.contains(want)),
            "{policy}: {path:?} not reported: {problems:#?}"
        );
    }
}
