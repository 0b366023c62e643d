//! The policy language's compat part (`docs/policy.md`, "The compat part"):
//! the keys that exist to reproduce one harness's behaviour are written
//! under `compat` in their section (`[instructions.compat]`); their old
//! spelling, at the section's top level, is read for one release with a
//! `policy::deprecated-key` warning at its span; both spellings at once are
//! refused. Every test loops over every compat key, and over every shipped
//! policy where the policy matters.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use lisa_context::policy::{
    Layer, Policy, PolicyError, PolicySource, Problem, ProblemKind, SHIPPED_NAMES,
};
use serde_json::Value;

use crate::support::World;

/// The effective policy `name` as a table: `section.key` (compat keys as
/// `section.compat.key`) to its value.
fn values(policy: &Policy) -> BTreeMap<String, toml::Value> {
    let doc: toml::Table = policy.to_toml().parse().unwrap();
    let mut out = BTreeMap::new();
    for (section, table) in &doc {
        let Some(table) = table.as_table() else {
            continue;
        };
        for (key, value) in table {
            match value.as_table().filter(|_| key == "compat") {
                Some(part) => {
                    for (key, value) in part {
                        out.insert(format!("{section}.compat.{key}"), value.clone());
                    }
                }
                None => {
                    out.insert(format!("{section}.{key}"), value.clone());
                }
            }
        }
    }
    out
}

fn shipped(name: &str) -> Policy {
    Policy::from_sources(&[PolicySource::shipped(name).unwrap()]).unwrap()
}

/// For each compat key: a value some shipped policy gives it other than
/// Lisa's (Lisa's own when none does), as TOML text.
fn sample_values() -> Vec<(&'static str, String)> {
    let lisa = values(&shipped("lisa"));
    let others: Vec<BTreeMap<String, toml::Value>> = SHIPPED_NAMES
        .iter()
        .filter(|n| **n != "lisa")
        .map(|n| values(&shipped(n)))
        .collect();
    Policy::compat_keys()
        .map(|key| {
            let default = &lisa[key];
            let value = others
                .iter()
                .map(|o| &o[key])
                .find(|v| *v != default)
                .unwrap_or(default);
            (key, value.to_string())
        })
        .collect()
}

fn team(text: &str) -> Result<Policy, PolicyError> {
    Policy::from_sources(&[
        PolicySource::builtin(),
        PolicySource::from_text(Layer::Home, "team.toml", text.to_string()),
    ])
}

fn problems(e: PolicyError) -> Vec<Problem> {
    match e {
        PolicyError::Invalid(invalid) => invalid.problems,
        other => panic!("not a report of problems: {other}"),
    }
}

/// A team policy that writes a compat key in its old spelling gets the
/// effective policy (values and digest) of the new spelling, and one
/// warning, `policy::deprecated-key`, naming the new key, labelled at the
/// old key in the file; the new spelling gives no warning. Every compat
/// key, over every shipped policy as the base.
#[test]
fn an_old_spelling_gives_the_new_spellings_policy_and_a_warning_at_its_span() {
    let samples = sample_values();
    assert!(samples.len() >= 20, "{samples:?}");
    for base in SHIPPED_NAMES {
        for (key, value) in &samples {
            let old_key = Policy::old_spelling(key).unwrap();
            let (section, name) = old_key.split_once('.').unwrap();
            let head = format!("version = 1\nextends = \"{base}\"\n");
            let old = format!("{head}[{section}]\n{name} = {value}\n");
            let new = format!("{head}[{section}.compat]\n{name} = {value}\n");
            let dotted = format!("{head}[{section}]\ncompat.{name} = {value}\n");
            let from_old = team(&old).unwrap_or_else(|e| panic!("{base} {old_key}: {e:?}"));
            let from_new = team(&new).unwrap_or_else(|e| panic!("{base} {key}: {e:?}"));
            let from_dotted = team(&dotted).unwrap_or_else(|e| panic!("{base} {key}: {e:?}"));
            assert_eq!(from_old.to_toml(), from_new.to_toml(), "{base} {key}");
            assert_eq!(from_old.digest(), from_new.digest(), "{base} {key}");
            assert_eq!(from_dotted.digest(), from_new.digest(), "{base} {key}");
            assert_eq!(values(&from_new)[*key].to_string(), *value, "{base} {key}");
            assert!(from_new.deprecations().is_empty(), "{base} {key}");
            assert!(from_dotted.deprecations().is_empty(), "{base} {key}");

            let [warning] = from_old.deprecations() else {
                panic!("{base} {old_key}: {:?}", from_old.deprecations());
            };
            assert_eq!(warning.kind, ProblemKind::DeprecatedKey);
            assert_eq!(warning.kind.code(), "policy::deprecated-key");
            assert!(warning.kind.is_warning());
            assert!(
                warning.message.contains(&format!("`{key}`")),
                "{}",
                warning.message
            );
            assert!(
                warning.message.contains(&format!("`{old_key}`")),
                "{}",
                warning.message
            );
            let at = old.find(&format!("\n{name} = ")).unwrap() + 1;
            assert_eq!(warning.span, at..at + name.len(), "{base} {old_key}");
            assert_eq!(warning.key().as_deref(), Some(old_key.as_str()));
            assert_eq!(warning.file_name(), "team.toml");
            // A policy's own problem report (policy check) keeps it apart:
            // the file is taken.
            assert!(
                PolicySource::from_text(Layer::Home, "team.toml", old.clone())
                    .check()
                    .is_ok()
            );
        }
    }
}

/// One key in both spellings in one file is refused: the old spelling is
/// labelled, the new one too, and the help keeps the new one.
#[test]
fn both_spellings_of_one_key_are_refused_at_both_spans() {
    for (key, value) in sample_values() {
        let old_key = Policy::old_spelling(key).unwrap();
        let (section, name) = old_key.split_once('.').unwrap();
        for text in [
            format!(
                "version = 1\n[{section}]\n{name} = {value}\n[{section}.compat]\n{name} = {value}\n"
            ),
            format!("version = 1\n[{section}]\ncompat.{name} = {value}\n{name} = {value}\n"),
        ] {
            let problems = problems(team(&text).unwrap_err());
            let [problem] = &problems[..] else {
                panic!("{key}: {problems:?}");
            };
            assert_eq!(problem.kind.code(), "policy::duplicate-key", "{key}");
            let old_at = text.find(&format!("\n{name} = ")).unwrap() + 1;
            assert_eq!(problem.span, old_at..old_at + name.len(), "{key}");
            assert_eq!(problem.related_spans.len(), 1, "{key}");
            let (new_span, _) = &problem.related_spans[0];
            assert_eq!(&text[new_span.clone()], name, "{key}");
            assert_ne!(new_span.start, old_at, "{key}");
            assert!(problem.help.as_deref().unwrap().contains(key), "{key}");
        }
    }
}

/// The compat part holds only compat keys, and a compat key is not taken
/// under another name: a core key in `[instructions.compat]` is unknown
/// there, a near miss of a compat key at the top level is offered with its
/// `compat.` spelling, and `compat` is no key of a section without one.
#[test]
fn the_compat_part_holds_only_the_compat_keys() {
    let problems_of = |text: &str| problems(team(text).unwrap_err());
    let p = problems_of("version = 1\n[instructions.compat]\nbudget-bytes = 10\n");
    assert_eq!(p.len(), 1, "{p:?}");
    assert_eq!(p[0].kind.code(), "policy::unknown-key");
    let p = problems_of("version = 1\n[instructions]\ntrimm = \"javascript\"\n");
    assert_eq!(p[0].help.as_deref(), Some("did you mean `compat.trim`?"));
    let p = problems_of("version = 1\n[trust]\ncompat.symlinks = \"never\"\n");
    assert_eq!(p[0].kind.code(), "policy::unknown-key");
    let p = problems_of("version = 1\n[rules]\ncompat = 3\n");
    assert_eq!(p[0].kind.code(), "policy::wrong-type");
}

/// No shipped policy writes an old spelling, and each prints its compat
/// part as tables of their own.
#[test]
fn the_shipped_policies_use_the_new_spellings() {
    for name in SHIPPED_NAMES {
        let policy = shipped(name);
        assert!(
            policy.deprecations().is_empty(),
            "{name}: {:?}",
            policy.deprecations()
        );
        let shown = policy.to_toml();
        for section in ["instructions", "skills", "rules"] {
            assert!(
                shown.contains(&format!("\n[{section}.compat]\n")),
                "{name}: {section}"
            );
        }
        let text = lisa_context::policy::SHIPPED
            .iter()
            .find(|(n, _)| n == name)
            .unwrap()
            .1;
        let table: toml::Table = text.parse().unwrap();
        for key in Policy::compat_keys() {
            let old = Policy::old_spelling(key).unwrap();
            let (section, name_) = old.split_once('.').unwrap();
            let top = table.get(section).and_then(|t| t.as_table());
            assert!(
                top.is_none_or(|t| !t.contains_key(name_)),
                "{name} writes {old}"
            );
        }
    }
}

/// The compat table of docs/policy.md is the declared compat part, and its
/// "set by" column names exactly the shipped policies that change each key
/// from Lisa's default: at most one (the criterion; a compat key a second
/// policy comes to change belongs in the core).
#[test]
fn the_documented_compat_part_is_the_declared_one_and_its_criterion_holds() {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/policy.md"))
        .unwrap();
    let at = doc
        .find("| compat key |")
        .expect("docs/policy.md has the compat table");
    let rows: Vec<Vec<String>> = doc[at..]
        .lines()
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .map(|row| {
            row.split(" | ")
                .map(|c| c.trim_matches(['|', ' ']).to_string())
                .collect()
        })
        .collect();
    let documented: Vec<String> = rows
        .iter()
        .map(|r| r[0].trim_matches('`').to_string())
        .collect();
    let declared: Vec<String> = Policy::compat_keys().map(str::to_string).collect();
    assert_eq!(
        documented, declared,
        "the compat table, in declaration order"
    );

    let lisa = values(&shipped("lisa"));
    let others: Vec<(&str, BTreeMap<String, toml::Value>)> = SHIPPED_NAMES
        .iter()
        .filter(|n| **n != "lisa")
        .map(|n| (*n, values(&shipped(n))))
        .collect();
    for row in &rows {
        let key = row[0].trim_matches('`');
        let setters: BTreeSet<&str> = others
            .iter()
            .filter(|(_, v)| v[key] != lisa[key])
            .map(|(n, _)| *n)
            .collect();
        let said: BTreeSet<&str> = row[2]
            .split(", ")
            .filter(|c| c.starts_with('`'))
            .map(|c| c.trim_matches('`'))
            .collect();
        assert_eq!(said, setters, "the policies docs/policy.md says set {key}");
        assert!(
            setters.len() <= 1,
            "{key} is changed by {setters:?}: a key two shipped policies change is a core key"
        );
        if setters.is_empty() {
            assert!(
                row[2].starts_with("none ("),
                "{key}: say which peer it is for"
            );
        }
    }
}

/// What the user sees: `policy check` names the new key at the old one's
/// line (a `warning[policy::deprecated-key]`, exit 0), a snapshot carries
/// the warning, and both spellings fail `policy check` with
/// `policy::duplicate-key`.
#[test]
fn the_cli_shows_the_warning_and_refuses_both_spellings() {
    let w = World::new();
    let old = w.write(
        "team.toml",
        "version = 1\n[instructions]\nbudget-bytes = 100\ntrim = \"javascript\"\n",
    );
    let out = w
        .cli()
        .args(["policy", "check"])
        .arg(&old)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with(
            "warning[policy::deprecated-key]: `instructions.trim` is now spelt `instructions.compat.trim`"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("team.toml:4:1]"), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("ok: "));

    let out = w
        .cli()
        .arg("--policy")
        .arg(&old)
        .args(["snapshot", "--format", "json", "--cwd"])
        .arg(&w.repo)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let snap: Value = serde_json::from_slice(&out.stdout).unwrap();
    crate::validate::snapshot(&snap);
    let warnings: Vec<&Value> = snap["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["kind"] == "deprecated-policy-key")
        .collect();
    assert_eq!(warnings.len(), 1, "{snap}");
    let message = warnings[0]["message"].as_str().unwrap();
    assert!(message.contains("`instructions.compat.trim`"), "{message}");
    assert!(message.contains("line 4, column 1"), "{message}");

    let both = w.write(
        "both.toml",
        "version = 1\n[instructions]\ntrim = \"javascript\"\ncompat.trim = \"javascript\"\n",
    );
    let out = w
        .cli()
        .args(["policy", "check"])
        .arg(&both)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("error[policy::duplicate-key]"), "{stderr}");
}

/// The warnings of a snapshot are the policy's own: a watching loader
/// whose home policy is rewritten from the old spelling to the new one
/// (the same values, the same digest) answers without the warning from the
/// next call, and with it again (at its new line) when the old spelling
/// comes back one line lower; each answer is what a fresh build answers,
/// fingerprint included, and a fingerprint that a warning came or went
/// differs.
#[test]
fn a_reloaded_policy_brings_its_own_warnings_not_the_cached_ones() {
    let w = World::new();
    std::fs::write(w.repo.join("AGENTS.md"), "hello\n").unwrap();
    let file = w.home.join("context-policy.toml");
    let old = "version = 1\n[instructions]\ntrim = \"javascript\"\n";
    let new = "version = 1\n[instructions]\ncompat.trim = \"javascript\"\n";
    let lower =
        "version = 1\n# the old spelling, one line lower\n[instructions]\ntrim = \"javascript\"\n";
    let loader = lisa_context::Loader::builder()
        .home(&w.home)
        .env(|_| None)
        .racy_window(std::time::Duration::ZERO)
        .build()
        .unwrap();
    let deprecated = |s: &lisa_context::Snapshot| -> Vec<String> {
        s.warnings
            .iter()
            .filter(|w| w.kind.as_str() == "deprecated-policy-key")
            .map(|w| w.message.clone())
            .collect()
    };
    let mut seen = Vec::new();
    for (text, line) in [(old, Some(3)), (new, None), (lower, Some(4)), (new, None)] {
        std::fs::write(&file, text).unwrap();
        let snap = loader.snapshot(&w.repo).unwrap();
        let fresh =
            lisa_context::build(&loader.policy().unwrap(), Some(&w.home), &w.repo, None).unwrap();
        assert_eq!(snap.fingerprint, fresh.fingerprint, "{text}");
        assert_eq!(snap.warnings, fresh.warnings, "{text}");
        let said = deprecated(&snap);
        match line {
            Some(line) => {
                assert_eq!(said.len(), 1, "{text}: {said:?}");
                assert!(
                    said[0].contains(&format!("(line {line}, column 1)")),
                    "{}",
                    said[0]
                );
            }
            None => assert!(said.is_empty(), "{text}: {said:?}"),
        }
        seen.push(snap.fingerprint.clone());
    }
    assert_ne!(seen[0], seen[1]);
    assert_ne!(seen[0], seen[2]);
    assert_eq!(seen[1], seen[3]);
}

/// A key that left the compat part for the core (a second shipped policy
/// came to set it: `instructions.access-level-files`, set by opencode and
/// claude-code) is read in its compat spelling for one release, with a
/// `policy::deprecated-key` warning at that key naming the core one; both
/// spellings in one file are refused.
#[test]
fn a_key_that_left_the_compat_part_is_read_in_its_old_spelling_with_a_warning() {
    let head = "version = 1\n";
    let old = format!("{head}[instructions.compat]\naccess-level-files = [\"AGENTS.md\"]\n");
    let new = format!("{head}[instructions]\naccess-level-files = [\"AGENTS.md\"]\n");
    let from_old = team(&old).unwrap();
    let from_new = team(&new).unwrap();
    assert_eq!(from_old.to_toml(), from_new.to_toml());
    assert_eq!(from_old.digest(), from_new.digest());
    assert_eq!(
        values(&from_new)["instructions.access-level-files"].to_string(),
        "[\"AGENTS.md\"]"
    );
    assert!(from_new.deprecations().is_empty());
    let [warning] = from_old.deprecations() else {
        panic!("{:?}", from_old.deprecations());
    };
    assert_eq!(warning.kind.code(), "policy::deprecated-key");
    assert!(
        warning
            .message
            .contains("`instructions.compat.access-level-files`")
            && warning
                .message
                .contains("`instructions.access-level-files`"),
        "{}",
        warning.message
    );
    let at = old.find("access-level-files").unwrap();
    assert_eq!(warning.span, at..at + "access-level-files".len());

    let both = format!(
        "{head}[instructions]\naccess-level-files = []\n[instructions.compat]\naccess-level-files = []\n"
    );
    let problems = problems(team(&both).unwrap_err());
    let [problem] = &problems[..] else {
        panic!("{problems:?}");
    };
    assert_eq!(problem.kind.code(), "policy::duplicate-key");
}
