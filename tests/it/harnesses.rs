//! The policies of the harnesses beside the recorded differential suite
//! (Cursor, Copilot, Windsurf, Cline, OpenCode, Amp, Zed, Kiro, Continue),
//! held to what each harness does: `tests/compat/harnesses/<policy>.json`
//! gives the sources (commits and paths, or pages and the date they were
//! read) and one tree per rule, with what the harness loads at the start
//! and on each access, and the mode of each rule. OpenCode's and Amp's
//! answers, and the startup files and skills of Copilot's, Continue's and
//! Cline's (a file's `recorded` names the program), are recordings of the
//! real programs (OpenCode's with the bytes of each startup block and each
//! skill's name and description). Where the policy differs on purpose, the
//! case says what the policy does instead (`ours`) and why (or, for a known
//! difference being fixed, the `pending` class of intended.json); the two
//! must differ, so the list of differences stays true.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use lisa_context::Loader;
use serde::Deserialize;

#[derive(Debug, Deserialize)]
struct Harness {
    policy: String,
    evidence: String,
    /// Set where `expect`'s startup files and skills are a recording
    /// (record-peers.mjs).
    #[serde(default)]
    recorded: Option<Recorded>,
    sources: Vec<String>,
    cases: Vec<Case>,
}

#[derive(Debug, Deserialize)]
struct Recorded {
    /// npm package and version.
    program: String,
    date: String,
    keys: Vec<String>,
}

#[derive(Debug, Deserialize)]
struct Case {
    name: String,
    about: String,
    tree: Vec<Entry>,
    cwd: String,
    expect: Outcome,
    #[serde(default)]
    ours: Option<Outcome>,
    #[serde(default)]
    why: Option<String>,
    /// Instead of `why`: the `pending` class of tests/compat/intended.json
    /// (a known difference being fixed) that `ours` shows.
    #[serde(default)]
    pending: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Entry {
    path: String,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    dir: bool,
    /// A link with this target, written as given.
    #[serde(default)]
    symlink: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Outcome {
    instructions: Vec<String>,
    /// The bytes of each startup file the prompt carries, where recorded
    /// (OpenCode): a file shown whole counts all its bytes.
    #[serde(default)]
    included_bytes: Option<BTreeMap<String, u64>>,
    #[serde(default)]
    rules: Option<Vec<RuleMode>>,
    #[serde(default)]
    accesses: Option<Vec<Accessed>>,
    /// Each skill the harness lists: its `SKILL.md`, or (where recorded)
    /// its `SKILL.md`, name and description; compared sorted.
    #[serde(default)]
    skills: Option<Vec<Listed>>,
}

/// One listed skill: the path of its `SKILL.md` alone, or with the name
/// and description the prompt shows.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
#[serde(untagged)]
enum Listed {
    Path(String),
    Shown {
        path: String,
        name: String,
        description: String,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
struct RuleMode {
    path: String,
    mode: String,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
struct Accessed {
    path: String,
    instructions: Vec<String>,
}

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/compat/harnesses")
}

fn harnesses() -> Vec<Harness> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|p| {
            let text = fs::read_to_string(p).unwrap();
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        })
        .collect()
}

/// What the policy loads on `case`'s tree, in the shape of its expectation
/// (rules, accesses and skills only where the expectation has them).
fn run(policy: &str, case: &Case, want: &Outcome) -> Outcome {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    fs::create_dir_all(root.join("home")).unwrap();
    fs::create_dir_all(root.join("repo")).unwrap();
    for e in &case.tree {
        let path = root.join(&e.path);
        if e.dir {
            fs::create_dir_all(&path).unwrap();
        } else if let Some(target) = &e.symlink {
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::os::unix::fs::symlink(target, &path).unwrap();
        } else {
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            let text = e.text.clone().unwrap_or_else(|| format!("[{}]\n", e.path));
            fs::write(&path, text).unwrap();
        }
    }
    let home = root.join("home");
    let loader = Loader::builder()
        .shipped_policy(policy)
        .home_policy(false)
        .env(move |k| (k == "HOME").then(|| home.clone().into_os_string()))
        .build()
        .unwrap();
    let rel = |p: &Path| {
        p.strip_prefix(&root)
            .unwrap_or(p)
            .to_string_lossy()
            .into_owned()
    };
    let cwd = root.join(&case.cwd);
    fs::create_dir_all(&cwd).unwrap();
    let s = loader
        .snapshot(&cwd)
        .unwrap_or_else(|e| panic!("{policy}/{}: {e}", case.name));
    let rules = want.rules.as_ref().map(|_| {
        let mut rules: Vec<RuleMode> = s
            .rules
            .iter()
            .map(|r| RuleMode {
                path: rel(&r.path),
                mode: r.mode.as_str().to_string(),
            })
            .collect();
        rules.sort();
        rules
    });
    let accesses = want.accesses.as_ref().map(|list| {
        list.iter()
            .map(|a| {
                let got = loader
                    .access_named("session", &cwd, None, &root.join(&a.path))
                    .unwrap_or_else(|e| panic!("{policy}/{}: access: {e}", case.name));
                Accessed {
                    path: a.path.clone(),
                    instructions: got.instruction_files.iter().map(|b| rel(&b.path)).collect(),
                }
            })
            .collect()
    });
    // A file shown whole (white space at its ends aside, which the engine
    // trims) counts all its bytes, as a harness that shows the file as it
    // is; a cut one the bytes of text it kept.
    let included_bytes = want.included_bytes.as_ref().map(|_| {
        s.instruction_files
            .iter()
            .map(|b| {
                let raw = fs::read(&b.path).unwrap_or_default();
                let text_len = String::from_utf8_lossy(&raw).trim().len() as u64;
                let whole = !b.truncated || b.included_bytes >= text_len;
                let bytes = if whole {
                    raw.len() as u64
                } else {
                    b.included_bytes
                };
                (rel(&b.path), bytes)
            })
            .collect()
    });
    let shown = want
        .skills
        .as_ref()
        .is_some_and(|w| w.iter().any(|k| matches!(k, Listed::Shown { .. })));
    let skills = want.skills.as_ref().map(|_| {
        let mut skills: Vec<Listed> = s
            .skills
            .iter()
            .map(|k| {
                if !shown {
                    return Listed::Path(rel(&k.path));
                }
                // The description as the prompt carries it: whole (its
                // white space runs made one space), or marked.
                let one_line = k
                    .description
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ");
                let description = if k.listed && s.prompt.contains(&one_line) {
                    k.description.clone()
                } else {
                    format!("{} [not whole in the prompt]", k.description)
                };
                Listed::Shown {
                    path: rel(&k.path),
                    name: k.name.clone(),
                    description,
                }
            })
            .collect();
        skills.sort();
        skills
    });
    Outcome {
        instructions: s.instruction_files.iter().map(|b| rel(&b.path)).collect(),
        included_bytes,
        rules,
        accesses,
        skills,
    }
}

#[test]
fn each_harness_policy_loads_what_its_harness_does_or_says_why_not() {
    // (class, peer) of each pending class of intended.json.
    let intended: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(dir().join("../intended.json")).unwrap()).unwrap();
    let pending: BTreeSet<(String, String)> = intended["pending"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| {
            let name = c["name"].as_str().unwrap().to_string();
            c["peers"]
                .as_array()
                .unwrap()
                .iter()
                .map(move |p| (name.clone(), p.as_str().unwrap().to_string()))
        })
        .collect();
    let mut failures = Vec::new();
    let mut cases = 0;
    for h in harnesses() {
        assert!(
            !h.sources.is_empty() && !h.evidence.is_empty(),
            "{}",
            h.policy
        );
        if let Some(r) = &h.recorded {
            assert!(
                r.program.contains(' ') && r.date.len() == 10 && !r.keys.is_empty(),
                "{}: `recorded` names a program, its version, a date and the keys: {r:?}",
                h.policy
            );
        }
        for case in &h.cases {
            cases += 1;
            assert!(!case.about.is_empty(), "{}/{}", h.policy, case.name);
            assert!(
                case.pending.is_none() || case.ours.is_some(),
                "{}/{}: a pending difference shows what the policy does (`ours`)",
                h.policy,
                case.name
            );
            let mut want = case.ours.as_ref().unwrap_or(&case.expect).clone();
            if let Some(skills) = want.skills.as_mut() {
                skills.sort();
            }
            let want = &want;
            let got = run(&h.policy, case, want);
            if &got != want {
                failures.push(format!(
                    "{}/{} ({}):\n  want {want:?}\n  got  {got:?}",
                    h.policy, case.name, case.about
                ));
            }
            if let Some(ours) = &case.ours {
                match &case.pending {
                    None => assert!(
                        case.why.as_deref().is_some_and(|w| !w.is_empty()),
                        "{}/{}: an intended difference says why",
                        h.policy,
                        case.name
                    ),
                    Some(class) => assert!(
                        case.why.is_none() && pending.contains(&(class.clone(), h.policy.clone())),
                        "{}/{}: a pending difference names a pending class of \
                         tests/compat/intended.json for its policy ({class}), and no why",
                        h.policy,
                        case.name
                    ),
                }
                assert_ne!(
                    ours, &case.expect,
                    "{}/{}: listed as a difference, but the policy does what the harness does",
                    h.policy, case.name
                );
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(cases >= 30, "only {cases} cases");
}

/// Every shipped policy is judged: by the recorded differential suite
/// (the peers that run here) or by a file of cases here.
#[test]
fn every_shipped_policy_has_its_evidence() {
    let recorded = ["codex", "gemini", "claude-code"];
    // Recorded from their real programs by record-peers.mjs (startup files
    // and skills): such a file keeps its `recorded`.
    for h in harnesses() {
        if ["copilot", "continue", "cline"].contains(&h.policy.as_str()) {
            assert!(
                h.recorded.is_some(),
                "tests/compat/harnesses/{}.json lost its `recorded`",
                h.policy
            );
        }
    }
    let here: BTreeSet<String> = harnesses().into_iter().map(|h| h.policy).collect();
    for name in lisa_context::policy::SHIPPED_NAMES {
        if *name == "lisa" || recorded.contains(name) {
            continue;
        }
        assert!(
            here.contains(*name),
            "policy `{name}` has no tests/compat/harnesses/{name}.json"
        );
    }
    for name in &here {
        assert!(
            lisa_context::policy::SHIPPED_NAMES.contains(&name.as_str()),
            "tests/compat/harnesses/{name}.json names no shipped policy"
        );
    }
}
