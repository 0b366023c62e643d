//! Names that look like the user's own (issue 49, items 5 and 9): a
//! project skill or rule named with a Cyrillic or Greek look-alike,
//! full-width letters, a digit for a letter or a decomposed accent of a
//! home skill's (rule's) name is that name, and loses it to the home as a
//! copy of the very name would, under every shipped policy and teams'
//! policies that allow any name; of two project names that look alike, one
//! is kept and the other reported. A rule asked for by a name it lost says
//! why and never suggests the name that failed.

use std::ffi::OsString;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use lisa_context::policy::{Layer, Policy, PolicySource, SHIPPED_NAMES};
use serde_json::{Value, json};

use crate::support::World;
use crate::validate;

/// The home skill and rule names.
const HOME_DEPLOY: &str = "deploy";
/// `café`, precomposed (U+00E9).
const HOME_CAFE: &str = "caf\u{e9}";

/// Project names that look like `deploy`.
const DEPLOY_ALIKES: [&str; 5] = [
    // A Cyrillic `е` (U+0435).
    "d\u{435}ploy",
    // Full-width letters.
    "\u{ff44}\u{ff45}\u{ff50}\u{ff4c}\u{ff4f}\u{ff59}",
    // A Greek omicron (U+03BF).
    "depl\u{3bf}y",
    // A digit one for the `l`: ASCII, so it passes the strictest name rule.
    "dep1oy",
    // A Cyrillic `о` (U+043E) and `р` (U+0440).
    "de\u{440}l\u{43e}y",
];

/// `café` with a decomposed accent (`e` and U+0301).
const CAFE_DECOMPOSED: &str = "cafe\u{301}";

/// Three project names that look alike, with no home skill of that name.
const RELEASE_ALIKES: [&str; 3] = ["release", "re1ease", "rel\u{435}ase"];

/// Teams' policies (laid over the built-in one) whose name rule allows any
/// name: one where the lowest rank claims a name, one listing every copy.
const TEAM_POLICIES: [(&str, &str); 2] = [
    (
        "team-any-name",
        "version = 1\n[skills]\nname-rule = '^[^\\r\\n]+$'\nname-from = \"frontmatter-else-folder\"\n",
    ),
    (
        "team-any-name-list-all",
        "version = 1\n[skills]\nname-rule = '^[^\\r\\n]+$'\nname-from = \"frontmatter-else-folder\"\nconflict = \"list-all\"\n",
    ),
];

/// Every policy of `policies/`, by name: each must be shipped.
fn shipped_policies() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("policies");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    for n in &names {
        assert!(SHIPPED_NAMES.contains(&n.as_str()), "{n} is not shipped");
    }
    assert_eq!(names.len(), SHIPPED_NAMES.len());
    names
}

/// A policy to test: its `--policy` argument and the effective policy.
struct Under {
    name: String,
    arg: OsString,
    policy: Policy,
}

fn every_policy(w: &World) -> Vec<Under> {
    let mut all: Vec<Under> = shipped_policies()
        .into_iter()
        .map(|name| Under {
            policy: Policy::from_sources(&[PolicySource::shipped(&name).unwrap()]).unwrap(),
            arg: name.clone().into(),
            name,
        })
        .collect();
    for (name, text) in TEAM_POLICIES {
        let file = w.write(&format!("{name}.toml"), text);
        all.push(Under {
            name: name.to_string(),
            arg: file.into(),
            policy: Policy::from_sources(&[
                PolicySource::builtin(),
                PolicySource::from_text(Layer::CommandLine, name, text),
            ])
            .unwrap(),
        });
    }
    all
}

/// The user's own `~` (named roots such as `user` expand it).
fn user_dir(w: &World) -> PathBuf {
    w.path("user")
}

/// Where `policy` looks for the user's skills and the project's: the first
/// home source (the home root, else the user's `~`) and the first
/// repository source.
fn skill_folders(w: &World, policy: &Policy) -> (PathBuf, PathBuf) {
    let sources = &policy.skills.sources;
    let home = sources
        .iter()
        .find(|s| s.root.get_ref() == "home")
        .map(|s| w.home.join(s.path.get_ref()))
        .or_else(|| {
            sources
                .iter()
                .find(|s| s.root.get_ref() == "user")
                .map(|s| user_dir(w).join(s.path.get_ref()))
        })
        .expect("a home skill source");
    let repo = sources
        .iter()
        .find(|s| s.root.get_ref() == "repo")
        .map(|s| w.repo.join(s.path.get_ref()))
        .expect("a repository skill source");
    (home, repo)
}

fn skill(folder: &Path, name: &str, body: &str) -> PathBuf {
    let file = folder.join(name).join("SKILL.md");
    crate::support::write_file(
        &file,
        &format!("---\nname: \"{name}\"\ndescription: the {name} skill\n---\n{body}\n"),
    );
    file
}

fn cli(w: &World, policy: &OsString, args: &[&str]) -> Output {
    w.command()
        .env("HOME", user_dir(w))
        .arg("--policy")
        .arg(policy)
        .args(args)
        .arg("--cwd")
        .arg(&w.repo)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn serve(w: &World, policy: &OsString, requests: &[Value]) -> Vec<Value> {
    let mut child = w
        .command()
        .env("HOME", user_dir(w))
        .arg("--policy")
        .arg(policy)
        .args(["serve", "--jobs", "1"])
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
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(out.status.success(), "serve: {out:?}");
    let responses: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for r in &responses {
        validate::response(r);
    }
    assert_eq!(responses.len(), requests.len(), "{responses:?}");
    responses
}

fn snapshot_json(w: &World, policy: &OsString) -> Value {
    let out = cli(w, policy, &["snapshot", "--format", "json"]);
    assert!(out.status.success(), "{out:?}");
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    validate::snapshot(&json);
    json
}

fn names_of(list: &Value) -> Vec<&str> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect()
}

/// The record of `name` in a list (`skills`, `shadowedProjectSkills`).
fn record<'a>(list: &'a Value, name: &str) -> Option<&'a Value> {
    list.as_array().unwrap().iter().find(|s| s["name"] == name)
}

/// Whether a refused skill's folder is `name`'s.
fn rejected(snap: &Value, name: &str) -> bool {
    let end = format!("/{name}");
    snap["rejectedSkills"].as_array().unwrap().iter().any(|r| {
        r["path"]
            .as_str()
            .unwrap()
            .trim_end_matches("/SKILL.md")
            .ends_with(&end)
    })
}

#[test]
fn a_project_skill_that_looks_like_a_home_skill_is_shadowed_under_every_policy() {
    let setup = World::new();
    for under in every_policy(&setup) {
        let p = &under.name;
        let w = World::new();
        std::fs::create_dir_all(user_dir(&w)).unwrap();
        let (home, repo) = skill_folders(&w, &under.policy);
        let home_deploy = skill(&home, HOME_DEPLOY, "HOME-DEPLOY-BODY");
        let home_cafe = skill(&home, HOME_CAFE, "HOME-CAFE-BODY");
        for name in DEPLOY_ALIKES.iter().chain([&CAFE_DECOMPOSED]) {
            skill(&repo, name, "PROJECT-LOOK-ALIKE-BODY");
        }
        for name in RELEASE_ALIKES {
            skill(&repo, name, "PROJECT-RELEASE-BODY");
        }
        let valid = |n: &str| under.policy.is_valid_skill_name(n);
        let arg = &under.arg;
        let snap = snapshot_json(&w, arg);
        let skills = &snap["skills"];
        let shadowed = &snap["shadowedProjectSkills"];

        // The home skills are listed, as the user's own.
        let deploy = record(skills, HOME_DEPLOY).unwrap_or_else(|| panic!("{p}: {snap}"));
        assert_eq!(deploy["origin"], "home", "{p}: {deploy}");
        if valid(HOME_CAFE) {
            let cafe = record(skills, HOME_CAFE).unwrap_or_else(|| panic!("{p}: {skills}"));
            assert_eq!(cafe["origin"], "home", "{p}: {cafe}");
        }
        // Every look-alike of a home name: never listed; shadowed by the
        // home skill, saying which name it looks like (or refused by the
        // policy's name rule before it could claim anything).
        let alikes = DEPLOY_ALIKES
            .iter()
            .map(|n| (*n, HOME_DEPLOY, &home_deploy))
            .chain([(CAFE_DECOMPOSED, HOME_CAFE, &home_cafe)]);
        for (name, like, home_file) in alikes {
            assert!(
                record(skills, name).is_none(),
                "{p}: the look-alike {name:?} of {like:?} is listed: {skills}"
            );
            if !valid(name) {
                assert!(
                    rejected(&snap, name),
                    "{p}: {name:?} is not reported: {snap}"
                );
                continue;
            }
            if !valid(like) {
                // No home skill of that name here: nothing to shadow it.
                continue;
            }
            let rec = record(shadowed, name)
                .unwrap_or_else(|| panic!("{p}: {name:?} is not reported as shadowed: {shadowed}"));
            assert_eq!(rec["looksLike"], like, "{p}: {rec}");
            assert_eq!(rec["shadowedBy"], home_file.to_str().unwrap(), "{p}: {rec}");
        }
        // Of the project names that look alike, one is listed and the
        // others are reported, each naming the one kept.
        let valid_releases: Vec<&str> = RELEASE_ALIKES.into_iter().filter(|n| valid(n)).collect();
        let listed: Vec<&str> = names_of(skills)
            .into_iter()
            .filter(|n| valid_releases.contains(n))
            .collect();
        assert_eq!(listed.len(), 1, "{p}: {skills}");
        for name in valid_releases.iter().filter(|n| **n != listed[0]) {
            let rec = record(shadowed, name)
                .unwrap_or_else(|| panic!("{p}: {name:?} is not reported: {shadowed}"));
            assert_eq!(rec["looksLike"], listed[0], "{p}: {rec}");
        }

        // The prompt lists none of the look-alikes.
        let text = cli(&w, arg, &["snapshot"]);
        assert!(text.status.success(), "{p}: {text:?}");
        let prompt = String::from_utf8(text.stdout).unwrap();
        for name in DEPLOY_ALIKES.iter().chain([&CAFE_DECOMPOSED]) {
            assert!(
                !prompt.contains(name),
                "{p}: {name:?} in the prompt: {prompt}"
            );
        }
        // Asking for a look-alike by its name never reads the project's body.
        for name in DEPLOY_ALIKES {
            let shown = cli(&w, arg, &["skill", "show", name]);
            assert!(
                !shown.status.success(),
                "{p}: {name:?} was served: {shown:?}"
            );
            let all = format!(
                "{}{}",
                String::from_utf8_lossy(&shown.stdout),
                String::from_utf8_lossy(&shown.stderr)
            );
            assert!(!all.contains("PROJECT-LOOK-ALIKE-BODY"), "{p}: {all}");
        }
        let home_shown = cli(&w, arg, &["skill", "show", HOME_DEPLOY]);
        assert!(
            String::from_utf8_lossy(&home_shown.stdout).contains("HOME-DEPLOY-BODY"),
            "{p}: {home_shown:?}"
        );
        // `skill list` says why each look-alike lost.
        let list = cli(&w, arg, &["skill", "list"]);
        assert!(list.status.success(), "{p}: {list:?}");
        let list = String::from_utf8(list.stdout).unwrap();
        if valid(DEPLOY_ALIKES[3]) {
            assert!(
                list.contains("shadowed: dep1oy") && list.contains("looks like `deploy`"),
                "{p}: {list}"
            );
        }
    }
}

#[test]
fn serve_answers_a_look_alike_as_the_command_line_does() {
    let setup = World::new();
    let policies = every_policy(&setup);
    for name in ["codex", "gemini", "continue", "opencode", "team-any-name"] {
        let under = policies.iter().find(|u| u.name == name).unwrap();
        let w = World::new();
        std::fs::create_dir_all(user_dir(&w)).unwrap();
        let (home, repo) = skill_folders(&w, &under.policy);
        skill(&home, HOME_DEPLOY, "HOME-DEPLOY-BODY");
        skill(&repo, DEPLOY_ALIKES[0], "PROJECT-LOOK-ALIKE-BODY");
        skill(&repo, DEPLOY_ALIKES[1], "PROJECT-LOOK-ALIKE-BODY");
        let cwd = w.repo.to_str().unwrap();
        let responses = serve(
            &w,
            &under.arg,
            &[
                json!({"id": 1, "op": "snapshot", "cwd": cwd}),
                json!({"id": 2, "op": "skill", "cwd": cwd, "name": DEPLOY_ALIKES[0]}),
                json!({"id": 3, "op": "skill", "cwd": cwd, "name": HOME_DEPLOY}),
            ],
        );
        let by_id = |id: u64| responses.iter().find(|r| r["id"] == id).unwrap();
        let snap = &by_id(1)["snapshot"];
        assert_eq!(
            names_of(&snap["skills"]),
            vec![HOME_DEPLOY],
            "{name}: {snap}"
        );
        let shadowed = &snap["shadowedProjectSkills"];
        for alike in &DEPLOY_ALIKES[..2] {
            let rec = record(shadowed, alike).unwrap_or_else(|| panic!("{name}: {shadowed}"));
            assert_eq!(rec["looksLike"], HOME_DEPLOY, "{name}: {rec}");
        }
        assert_eq!(by_id(2)["error"]["code"], "skill-not-found", "{name}");
        assert!(
            by_id(3)["skill"]["content"]
                .as_str()
                .unwrap()
                .contains("HOME-DEPLOY-BODY"),
            "{name}: {:?}",
            by_id(3)
        );
    }
}

/// Where a policy keeps home and project rules, and how a rule file is
/// written so that `rule show` serves it.
struct RuleLayout {
    policy: &'static str,
    home: &'static str,
    project: &'static str,
    extension: &'static str,
    frontmatter: &'static str,
}

/// Every shipped policy whose rules can come from the home and from the
/// project (the others read rules from the project alone).
const RULE_LAYOUTS: [RuleLayout; 4] = [
    RuleLayout {
        policy: "cline",
        home: ".cline/rules",
        project: ".cline/rules",
        extension: "md",
        frontmatter: "",
    },
    RuleLayout {
        policy: "continue",
        home: "rules",
        project: ".continue/rules",
        extension: "md",
        frontmatter: "alwaysApply: false\ndescription: a rule\n",
    },
    RuleLayout {
        policy: "copilot",
        home: "instructions",
        project: ".github/instructions",
        extension: "instructions.md",
        frontmatter: "",
    },
    RuleLayout {
        policy: "kiro",
        home: "steering",
        project: ".kiro/steering",
        extension: "md",
        frontmatter: "inclusion: manual\n",
    },
];

/// Policies whose rules are read from the project only.
const PROJECT_ONLY_RULES: [&str; 2] = ["cursor", "windsurf"];

fn rule(root: &Path, folder: &str, extension: &str, frontmatter: &str, name: &str, body: &str) {
    let file = root.join(folder).join(format!("{name}.{extension}"));
    let text = if frontmatter.is_empty() {
        format!("{body}\n")
    } else {
        format!("---\n{frontmatter}---\n{body}\n")
    };
    crate::support::write_file(&file, &text);
}

/// `text` without white space: what a terminal shows, whatever the error
/// report wrapped.
fn flat(text: &str) -> String {
    text.split_whitespace().collect()
}

fn rule_names(snap: &Value) -> Vec<(String, String)> {
    snap["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap().to_string(),
                r["origin"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn a_project_rule_that_looks_like_a_home_rule_is_not_served_in_its_place() {
    // Every shipped policy with rules is covered.
    for name in shipped_policies() {
        let policy = Policy::from_sources(&[PolicySource::shipped(&name).unwrap()]).unwrap();
        if policy.rules.files.is_empty() {
            continue;
        }
        assert!(
            RULE_LAYOUTS.iter().any(|l| l.policy == name)
                || PROJECT_ONLY_RULES.contains(&name.as_str()),
            "{name} has rules: give it a layout"
        );
    }
    for layout in &RULE_LAYOUTS {
        let p = layout.policy;
        let w = World::new();
        std::fs::create_dir_all(user_dir(&w)).unwrap();
        let write = |root: &Path, folder: &str, name: &str, body: &str| {
            rule(
                root,
                folder,
                layout.extension,
                layout.frontmatter,
                name,
                body,
            );
        };
        write(&w.home, layout.home, HOME_DEPLOY, "HOME-DEPLOY-RULE");
        for name in DEPLOY_ALIKES {
            write(&w.repo, layout.project, name, "PROJECT-LOOK-ALIKE-RULE");
        }
        let arg: OsString = p.into();
        let snap = snapshot_json(&w, &arg);
        let names = rule_names(&snap);
        let home_name = names
            .iter()
            .find(|(_, o)| o == "home")
            .map(|(n, _)| n.clone())
            .unwrap_or_else(|| panic!("{p}: no home rule in {names:?}"));
        // The home rule is served under its name, the look-alikes listed
        // as the ones it shadows.
        let out = cli(&w, &arg, &["rule", "show", &home_name, "--format", "json"]);
        assert!(out.status.success(), "{p}: {out:?}");
        let served: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(
            served["content"]
                .as_str()
                .unwrap()
                .contains("HOME-DEPLOY-RULE"),
            "{p}: {served}"
        );
        let project_names: Vec<String> = names
            .iter()
            .filter(|(_, o)| o == "project")
            .map(|(n, _)| n.clone())
            .collect();
        assert_eq!(project_names.len(), DEPLOY_ALIKES.len(), "{p}: {names:?}");
        // Each look-alike lost to it: shadowed when asked, or replaced
        // already (`rules.one-per-name`).
        let replaced = snap["rules"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["replacedBy"].is_string())
            .count();
        assert_eq!(
            served["shadowed"].as_array().unwrap().len() + replaced,
            DEPLOY_ALIKES.len(),
            "{p}: {served}"
        );
        // Asked for by its own name, a look-alike is not served: the error
        // names the home rule holding the name, and suggests no look-alike.
        for name in &project_names {
            let out = cli(&w, &arg, &["rule", "show", name]);
            assert!(!out.status.success(), "{p}: {name:?} was served: {out:?}");
            assert!(
                !String::from_utf8_lossy(&out.stdout).contains("PROJECT-LOOK-ALIKE-RULE"),
                "{p}: {out:?}"
            );
            let stderr = flat(&String::from_utf8_lossy(&out.stderr));
            assert!(
                stderr.contains(&flat(&format!("home rule `{home_name}`")))
                    && stderr.contains("holdsitsname"),
                "{p}: {name:?}: {stderr}"
            );
            assert!(!stderr.contains("didyoumean"), "{p}: {stderr}");
        }
        // No look-alike of the user's rule stands as a rule of its own
        // under the policy that keeps one rule per name.
        if p == "cline" {
            let prompt = snap["prompt"].as_str().unwrap();
            assert!(!prompt.contains("PROJECT-LOOK-ALIKE-RULE"), "{p}: {prompt}");
            for r in snap["rules"].as_array().unwrap() {
                if r["origin"] == "project" {
                    assert!(r["replacedBy"].is_string(), "{p}: {r}");
                }
            }
        }
        // `serve` answers the same.
        let cwd = w.repo.to_str().unwrap();
        let responses = serve(
            &w,
            &arg,
            &[json!({"id": 1, "op": "rule", "cwd": cwd, "name": project_names[0]})],
        );
        assert_eq!(responses[0]["error"]["code"], "rule-not-found", "{p}");
        let help = responses[0]["error"]["help"].as_str().unwrap();
        assert!(help.contains("holds its name"), "{p}: {help}");
    }
}

/// Item 9: `rule show Deploy`, with the user's `deploy` replacing the
/// project's `Deploy` under Cline's one-rule-per-name, says why it is not
/// served and never suggests `Deploy` back.
#[test]
fn a_rule_name_that_lost_says_why_and_is_never_suggested_back() {
    let w = World::new();
    std::fs::create_dir_all(user_dir(&w)).unwrap();
    let home_rule = w.write("home/.cline/rules/deploy.md", "HOME-DEPLOY-RULE\n");
    w.write("repo/.cline/rules/Deploy.md", "PROJECT-DEPLOY-RULE\n");
    let arg: OsString = "cline".into();
    let out = cli(&w, &arg, &["rule", "show", "Deploy"]);
    assert!(!out.status.success(), "{out:?}");
    let stderr = flat(&String::from_utf8_lossy(&out.stderr));
    assert!(!stderr.contains("didyoumean`Deploy`"), "{stderr}");
    assert!(!stderr.contains("PROJECT-DEPLOY-RULE"), "{stderr}");
    assert!(
        stderr.contains("homerule`deploy`") && stderr.contains("differonlyincase"),
        "{stderr}"
    );
    // The path of the rule holding the name is named.
    assert!(
        stderr.contains(&flat(&home_rule.to_string_lossy())),
        "{stderr}"
    );
    // Asked for by the name it holds, the user's rule answers.
    let out = cli(&w, &arg, &["rule", "show", "deploy"]);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("HOME-DEPLOY-RULE"),
        "{out:?}"
    );
    // A name no rule has still gets the nearest one, never itself.
    let out = cli(&w, &arg, &["rule", "show", "deplo"]);
    let stderr = flat(&String::from_utf8_lossy(&out.stderr));
    assert!(stderr.contains("didyoumean`deploy`"), "{stderr}");
    assert!(
        !stderr.contains("`Deploy`"),
        "a rule replaced is not available: {stderr}"
    );
    // `serve` says the same.
    let cwd = w.repo.to_str().unwrap();
    let responses = serve(
        &w,
        &arg,
        &[json!({"id": 1, "op": "rule", "cwd": cwd, "name": "Deploy"})],
    );
    let error = &responses[0]["error"];
    assert_eq!(error["code"], "rule-not-found", "{error}");
    let help = error["help"].as_str().unwrap();
    assert!(
        help.contains("home rule `deploy`") && !help.contains("did you mean"),
        "{help}"
    );
}
