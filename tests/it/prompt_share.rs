//! The repository's share of the prompt is bounded (issue 49, item 7):
//! everything a repository brings to the prompt (its blocks with headers
//! and footers that repeat its paths, its listed skills and rules with
//! their names, descriptions, labels and paths, the headings and notes
//! these bring) is charged to `instructions.project-prompt-bytes`, under
//! every policy. The budget counts file text only: 3,000 tiny rule files,
//! half of them in a folder 2.4 KB deep, made a 4 MiB prompt with 11,280
//! budget bytes used, and 300 listed rules with 30 KB names one of 8.9 MiB
//! with none used.
//!
//! The share is measured as a user sees it: how many bytes longer the
//! prompt is than the same home's prompt over an empty repository.

use std::path::{Path, PathBuf};

use lisa_context::policy::{Layer, Policy, PolicySource, SHIPPED_NAMES};
use proptest::prelude::*;
use serde_json::{Value, json};

use crate::support::World;

/// The team example of `docs/policy.md` ("A team that keeps Lisa's framing
/// ..."): Lisa's policy with rules from `.claude/rules/*.md` at every
/// level, scoped rules and on-access loading. Taken from the page, so the
/// test follows what the page documents.
pub(crate) fn team_example() -> String {
    let page =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/policy.md"))
            .unwrap();
    let after = page
        .split("A team that keeps Lisa's framing")
        .nth(1)
        .expect("docs/policy.md documents the team example");
    let block = after
        .split("```toml\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("the team example is a toml block");
    assert!(block.contains(".claude/rules/*.md"), "{block}");
    block.to_string()
}

/// The policies the trees are read under: every shipped one, and the
/// documented team example; each with its name, the text `--policy` is
/// given (a file for the team example) and the policy itself.
fn policies(w: &World) -> Vec<(String, String, Policy)> {
    let mut out: Vec<(String, String, Policy)> = SHIPPED_NAMES
        .iter()
        .map(|&name| {
            let policy = Policy::from_sources(&[PolicySource::shipped(name).unwrap()]).unwrap();
            (name.to_string(), name.to_string(), policy)
        })
        .collect();
    let text = team_example();
    let file = w.write("team.toml", &text);
    let policy = Policy::from_sources(&[
        PolicySource::builtin(),
        PolicySource::from_text(Layer::CommandLine, "team.toml", text),
    ])
    .unwrap();
    out.push((
        "the team example".to_string(),
        file.to_string_lossy().into_owned(),
        policy,
    ));
    out
}

/// The bound the policy states: `instructions.project-prompt-bytes`, from
/// its own declarations.
fn bound(policy: &Policy) -> usize {
    usize::try_from(policy.instructions.project_prompt_bytes).unwrap()
}

/// `snapshot --format json` for `cwd` under `--policy policy`, with the
/// user's own `~` inside the world (so that nothing of the machine's user
/// is read).
fn snapshot(w: &World, policy: &str, cwd: &Path) -> Value {
    let out = w
        .cli()
        .env("HOME", w.path("user"))
        .args(["--policy", policy, "snapshot", "--format", "json", "--cwd"])
        .arg(cwd)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "--policy {policy}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The prompt's bytes.
fn prompt_len(snap: &Value) -> usize {
    snap["prompt"].as_str().unwrap().len()
}

/// A folder `depth` levels of `width`-byte names below `base`.
fn deep(base: &Path, depth: usize, width: usize) -> PathBuf {
    let mut p = base.to_path_buf();
    for i in 0..depth {
        p.push(format!("{i}{}", "d".repeat(width - 1)));
    }
    p
}

/// The folders the shipped policies and the team example read rule files
/// from, each with the name a file there takes and its frontmatter (what
/// makes it `always`, so that it is a block, under each harness's keys).
const RULE_PLACES: &[(&str, &str)] = &[
    (".claude/rules", "md"),
    (".cursor/rules", "mdc"),
    (".windsurf/rules", "md"),
    (".kiro/steering", "md"),
    (".continue/rules", "md"),
    (".clinerules", "md"),
];

/// Writes `count` files of `text(i)` in each rule folder under `level`.
fn rules_in(level: &Path, count: usize, text: impl Fn(usize) -> String) {
    for (folder, ext) in RULE_PLACES {
        let dir = level.join(folder);
        std::fs::create_dir_all(&dir).unwrap();
        for i in 0..count {
            std::fs::write(dir.join(format!("r{i}.{ext}")), text(i)).unwrap();
        }
    }
}

/// Checks one snapshot against the bound its policy states: the prompt is
/// at most `bound` bytes longer than `baseline` (the same home over an
/// empty repository), and `projectShare` says what it took.
fn assert_within(name: &str, snap: &Value, baseline: &Value, bound: usize) {
    let share = prompt_len(snap).saturating_sub(prompt_len(baseline));
    assert!(
        share <= bound,
        "under {name} the repository put {share} bytes in the prompt, past the {bound} its policy states"
    );
    let ps = &snap["projectShare"];
    assert_eq!(ps["limit"], json!(bound), "{name}");
    let used = ps["used"].as_u64().unwrap() as usize;
    assert!(
        share <= used && used <= bound,
        "{name}: {share} <= {used} <= {bound}"
    );
}

/// The bound `docs/policy.md` states for each shipped policy is the one
/// the policy declares (`instructions.project-prompt-bytes`), every
/// shipped policy listed once, and the team example's is its parent's.
#[test]
fn the_documented_share_of_each_policy_is_the_declared_one() {
    let page =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/policy.md"))
            .unwrap();
    let table = page
        .split("<!-- share:begin -->")
        .nth(1)
        .and_then(|rest| rest.split("<!-- share:end -->").next())
        .expect("docs/policy.md has the share table");
    let rows: Vec<(String, usize)> = table
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let name = cells.get(1)?.strip_prefix('`')?.strip_suffix('`')?;
            let bytes = cells.get(2)?.strip_suffix(" bytes")?.parse().ok()?;
            Some((name.to_string(), bytes))
        })
        .collect();
    let declared: Vec<(String, usize)> = SHIPPED_NAMES
        .iter()
        .map(|&name| {
            let policy = Policy::from_sources(&[PolicySource::shipped(name).unwrap()]).unwrap();
            (name.to_string(), bound(&policy))
        })
        .collect();
    assert_eq!(rows, declared);
    let w = World::new();
    let team = policies(&w).pop().unwrap().2;
    assert_eq!(bound(&team), declared[0].1, "the team example keeps lisa's");
    assert!(page.contains(&format!("(the team example above: {})", bound(&team))));
}

/// 3,000 tiny rule files, half at the root and half in a folder 2.4 KB
/// deep (the cwd), each path repeated by its block's header and footer:
/// under every shipped policy and the documented team example the prompt
/// stays within the stated share, the files past it are left out with
/// `prompt-share`, and the prompt says so.
#[test]
fn three_thousand_tiny_rules_in_a_deep_folder_stay_within_the_share() {
    let w = World::new();
    let cwd = deep(&w.repo, 12, 200);
    assert!(cwd.as_os_str().len() > 2400);
    // Always on under every harness that reads these folders.
    let text = |level: &'static str| {
        move |i: usize| {
            format!(
                "---\nalwaysApply: true\ntrigger: always_on\ninclusion: always\n---\n{level}{i}\n"
            )
        }
    };
    rules_in(&w.repo, 1500, text("r"));
    rules_in(&cwd, 1500, text("q"));
    let empty = w.repo_at("empty");
    let empty_cwd = deep(&empty, 12, 200);
    std::fs::create_dir_all(&empty_cwd).unwrap();
    let mut left_out_somewhere = false;
    for (name, arg, policy) in policies(&w) {
        let snap = snapshot(&w, &arg, &cwd);
        let baseline = snapshot(&w, &arg, &empty_cwd);
        assert_within(&name, &snap, &baseline, bound(&policy));
        let skipped = snap["skipped"].as_array().unwrap();
        let left_out = skipped
            .iter()
            .filter(|s| s["reason"] == "prompt-share")
            .count();
        if left_out > 0 {
            left_out_somewhere = true;
            assert_eq!(snap["projectShare"]["exhausted"], json!(true), "{name}");
            let note = policy.templates.share_note.fill(&[
                ("count", &left_out.to_string()),
                ("limit", &bound(&policy).to_string()),
            ]);
            assert!(
                snap["prompt"].as_str().unwrap().contains(&note),
                "under {name} the prompt says what the share left out"
            );
        }
    }
    assert!(left_out_somewhere, "the tree fills the share somewhere");
}

/// The same tree through `serve`: the `snapshot` op answers the same
/// bounded prompt as the command line, under the team example.
#[test]
fn serve_answers_the_same_bounded_prompt() {
    let w = World::new();
    let cwd = deep(&w.repo, 12, 200);
    rules_in(&w.repo, 1500, |i| format!("r{i}\n"));
    rules_in(&cwd, 1500, |i| format!("q{i}\n"));
    let team = w.write("team.toml", &team_example());
    let policy = Policy::from_sources(&[
        PolicySource::builtin(),
        PolicySource::from_text(Layer::CommandLine, "team.toml", team_example()),
    ])
    .unwrap();
    let cli = snapshot(&w, &team.to_string_lossy(), &cwd);
    let request = json!({"id": 1, "op": "snapshot", "cwd": cwd}).to_string() + "\n";
    let out = w
        .cli()
        .env("HOME", w.path("user"))
        .arg("--policy")
        .arg(&team)
        .arg("serve")
        .write_stdin(request)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    let served = &answer["snapshot"];
    assert_eq!(served["prompt"], cli["prompt"]);
    assert!(
        prompt_len(served) <= bound(&policy),
        "{}",
        prompt_len(served)
    );
    assert!(
        served["skipped"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["reason"] == "prompt-share")
    );
}

/// 300 rules whose `name:` is 30 KB: the names are capped as skill names
/// are (`skills.name-max-chars`), and under every shipped policy and the
/// team example the prompt stays within the stated share, the listed ones
/// included.
#[test]
fn three_hundred_rules_with_huge_names_stay_within_the_share() {
    let w = World::new();
    let huge = "n".repeat(30_000);
    // Listed under every harness that lists rules (a description, Windsurf's
    // `model_decision`, Kiro's `auto`).
    let text = |i: usize| {
        format!(
            "---\nname: {huge}{i}\ndescription: rule {i}\ntrigger: model_decision\ninclusion: auto\n---\nbody {i}\n"
        )
    };
    rules_in(&w.repo, 300, text);
    let empty = w.repo_at("empty");
    let mut listed_somewhere = false;
    for (name, arg, policy) in policies(&w) {
        let snap = snapshot(&w, &arg, &w.repo);
        let baseline = snapshot(&w, &arg, &empty);
        assert_within(&name, &snap, &baseline, bound(&policy));
        let cap = usize::try_from(policy.skills.name_max_chars).unwrap();
        for rule in snap["rules"].as_array().unwrap() {
            let n = rule["name"].as_str().unwrap();
            assert!(
                n.chars().count() <= cap,
                "under {name}: a rule named {} characters",
                n.chars().count()
            );
            if rule["mode"] == "listed" {
                listed_somewhere = true;
            }
        }
    }
    assert!(listed_somewhere, "some policy lists the rules");
}

/// A capped rule name is the name the rule answers to.
#[test]
fn a_capped_rule_name_is_the_one_rule_show_answers_to() {
    let w = World::new();
    let long = "a".repeat(200);
    w.write(
        "repo/.kiro/steering/long.md",
        &format!("---\nname: {long}\ninclusion: auto\n---\nlong body\n"),
    );
    let snap = snapshot(&w, "kiro", &w.repo);
    let name = snap["rules"][0]["name"].as_str().unwrap().to_string();
    assert_eq!(name.chars().count(), 64, "{name}");
    assert!(name.ends_with('…'));
    assert!(snap["prompt"].as_str().unwrap().contains(&name));
    let out = w
        .cli()
        .env("HOME", w.path("user"))
        .args(["--policy", "kiro", "rule", "show", &name, "--cwd"])
        .arg(&w.repo)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("long body"));
}

/// The block that crosses the share is cut there, with the truncation note
/// and `shareCut`; the ones after it are left out; the user's own file is
/// never charged nor cut, however small the share.
#[test]
fn the_crossing_block_is_cut_and_the_home_is_never_charged() {
    let w = World::new();
    w.write("home/AGENTS.md", &"home words ".repeat(400));
    w.write("repo/AGENTS.md", &"root words ".repeat(100));
    w.write("repo/a/AGENTS.md", &"inner words ".repeat(100));
    let policy = w.write(
        "small.toml",
        "version = 1\n[instructions]\nproject-prompt-bytes = 900\n",
    );
    let snap = snapshot(&w, &policy.to_string_lossy(), &w.path("repo/a"));
    let files = snap["instructionFiles"].as_array().unwrap();
    let home = &files[0];
    assert_eq!(home["origin"], "home");
    assert_eq!(home["truncated"], json!(false));
    assert_eq!(files.len(), 2, "{files:#?}");
    assert_eq!(files[1]["shareCut"], json!(true));
    assert_eq!(files[1]["truncated"], json!(true));
    let skipped = snap["skipped"].as_array().unwrap();
    assert!(
        skipped.iter().any(|s| s["reason"] == "prompt-share"
            && s["path"].as_str().unwrap().ends_with("a/AGENTS.md"))
    );
    let prompt = snap["prompt"].as_str().unwrap();
    assert!(
        prompt.contains("[cut here: the context budget ran out after"),
        "{prompt}"
    );
    assert!(
        prompt.contains("1 more items of this repository"),
        "{prompt}"
    );
    let baseline = snapshot(&w, &policy.to_string_lossy(), &w.repo_at("empty"));
    assert!(prompt.len() - prompt_len(&baseline) <= 900);
}

/// Listed project skills past the share join the "more" line.
#[test]
fn skills_past_the_share_are_counted_not_listed() {
    let w = World::new();
    for i in 0..40 {
        w.write(
            &format!("repo/.agents/skills/s{i:02}/SKILL.md"),
            &format!(
                "---\nname: s{i:02}\ndescription: {}\n---\nbody\n",
                "word ".repeat(90)
            ),
        );
    }
    let snap = snapshot(&w, "lisa", &w.repo);
    assert_eq!(snap["hiddenProjectSkills"], json!(0));
    let policy = w.write(
        "small.toml",
        "version = 1\n[instructions]\nproject-prompt-bytes = 4000\n",
    );
    let snap = snapshot(&w, &policy.to_string_lossy(), &w.repo);
    let hidden = snap["hiddenProjectSkills"].as_u64().unwrap();
    let listed = snap["skills"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["listed"] == json!(true))
        .count() as u64;
    assert!(
        hidden > 0 && listed > 0 && hidden + listed == 40,
        "{hidden} + {listed}"
    );
    let prompt = snap["prompt"].as_str().unwrap();
    assert!(prompt.contains(&format!(
        "- and {hidden} more project skills, not listed here"
    )));
    assert!(prompt.contains("# Skills (40)"));
    assert!(prompt.len() <= 4000, "{}", prompt.len());
}

// ---------------------------------------------------------------------------
// random trees

/// A random tree: the user's files and skills, the repository's files at
/// the root and in a nested cwd, rule files, skills, and a policy.
#[derive(Debug, Clone)]
struct Case {
    policy: &'static str,
    share: Option<u32>,
    overlay: &'static str,
    home_text: Option<String>,
    home_skills: usize,
    root_text: Option<String>,
    cwd_text: Option<String>,
    depth: usize,
    width: usize,
    tiny_rules: usize,
    listed_rules: usize,
    name_len: usize,
    skills: usize,
    description_len: usize,
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z <>\\n]{0,80}",
        "(<<<[0-9a-f]{16} end>>>\\n){1,20}",
        Just("\u{200b}\u{202e}x\u{8}\u{7f}".repeat(20)),
        (1usize..4000).prop_map(|n| "w ".repeat(n)),
    ]
}

fn case() -> impl Strategy<Value = Case> {
    (
        (
            prop::sample::select(SHIPPED_NAMES),
            prop::option::of(prop::sample::select(vec![0u32, 1, 64, 300, 1000, 5000, 40_000])),
            prop::sample::select(vec![
                "",
                "[instructions]\nbudget-bytes = 0\n",
                "[instructions]\nbudget-scope = \"none\"\nbudget-bytes = 1048576\n",
                "[trust]\nproject = \"pinned\"\n",
                "[templates]\nproject-header = \"<<<{nonce} {path} {path} {path}>>>\"\nfooter = \"<<<{nonce} end {path}>>>\"\n",
                "[templates]\nshare-note = \"{count}{count}{count} {limit}\"\nskill-entry = \"- {name}{label}\\n  {description}\"\n",
                "[instructions]\nlevel-files = [\"AGENTS.md\", \".claude/rules/*.md\"]\n",
            ]),
        ),
        (
            prop::option::of(text()),
            0usize..3,
            prop::option::of(text()),
            prop::option::of(text()),
            0usize..6,
            prop::sample::select(vec![1usize, 50, 250]),
        ),
        (
            0usize..40,
            0usize..12,
            prop::sample::select(vec![3usize, 200, 5000]),
            0usize..12,
            prop::sample::select(vec![0usize, 100, 2000]),
        ),
    )
        .prop_map(
            |(
                (policy, share, overlay),
                (home_text, home_skills, root_text, cwd_text, depth, width),
                (tiny_rules, listed_rules, name_len, skills, description_len),
            )| Case {
                policy,
                share,
                overlay,
                home_text,
                home_skills,
                root_text,
                cwd_text,
                depth,
                width,
                tiny_rules,
                listed_rules,
                name_len,
                skills,
                description_len,
            },
        )
}

/// The policy of `case`: the shipped one, the overlay and the share laid
/// over it.
fn case_policy(case: &Case) -> Policy {
    let mut text = format!("version = 1\nextends = \"{}\"\n", case.policy);
    text.push_str(case.overlay);
    if let Some(share) = case.share {
        if case.overlay.starts_with("[instructions]") {
            text.push_str(&format!("project-prompt-bytes = {share}\n"));
        } else {
            text.push_str(&format!("[instructions]\nproject-prompt-bytes = {share}\n"));
        }
    }
    Policy::from_sources(&[PolicySource::from_text(
        Layer::CommandLine,
        "case.toml",
        text,
    )])
    .unwrap()
}

/// Writes the home of `case` under `home`, and its repository under
/// `repo` when `full` (else only the marker and the cwd); returns the cwd.
fn write_case(case: &Case, home: &Path, repo: &Path, full: bool) -> PathBuf {
    let put = |path: PathBuf, text: &str| {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    if let Some(t) = &case.home_text {
        for name in ["AGENTS.md", "CLAUDE.md", "GEMINI.md"] {
            put(home.join(name), t);
        }
    }
    for i in 0..case.home_skills {
        let skill = format!("---\nname: h{i}\ndescription: home skill {i}\n---\nbody\n");
        for dir in [
            "skills",
            ".agents/skills",
            ".claude/skills",
            "agents/skills",
        ] {
            put(home.join(format!("{dir}/h{i}/SKILL.md")), &skill);
        }
    }
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    let cwd = deep(repo, case.depth, case.width);
    std::fs::create_dir_all(&cwd).unwrap();
    if !full {
        return cwd;
    }
    for level in [repo, cwd.as_path()] {
        let text = if level == repo {
            &case.root_text
        } else {
            &case.cwd_text
        };
        if let Some(t) = text {
            for name in ["AGENTS.md", "CLAUDE.md", "GEMINI.md"] {
                put(level.join(name), t);
            }
        }
    }
    rules_in(&cwd, case.tiny_rules, |i| {
        format!("---\nalwaysApply: true\ntrigger: always_on\n---\nr{i}\n")
    });
    let name = "n".repeat(case.name_len);
    for (folder, ext) in RULE_PLACES {
        for i in 0..case.listed_rules {
            put(
                repo.join(format!("{folder}/l{i}.{ext}")),
                &format!(
                    "---\nname: {name}{i}\ndescription: listed {i} {}\ntrigger: model_decision\ninclusion: auto\n---\nbody\n",
                    "d".repeat(case.description_len)
                ),
            );
        }
    }
    for i in 0..case.skills {
        let skill = format!(
            "---\nname: p{i}\ndescription: {}\n---\nbody\n",
            "x".repeat(case.description_len + 1)
        );
        for dir in [
            ".lisa/skills",
            ".agents/skills",
            ".claude/skills",
            ".gemini/skills",
        ] {
            put(repo.join(format!("{dir}/p{i}/SKILL.md")), &skill);
        }
    }
    cwd
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    /// For random trees under random policies (every shipped one, with
    /// budgets, templates, trust and shares of their own), the bytes the
    /// repository adds to the prompt never exceed the policy's
    /// `instructions.project-prompt-bytes`, and `projectShare.used` lies
    /// between the two.
    #[test]
    fn a_repository_never_takes_more_than_its_share(case in case()) {
        let policy = case_policy(&case);
        let bound = bound(&policy) as u64;
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        let cwd = write_case(&case, &home, &tmp.path().join("repo"), true);
        let empty_cwd = write_case(&case, &home, &tmp.path().join("empty"), false);
        let snap = lisa_context::build(&policy, Some(&home), &cwd, None).unwrap();
        let baseline = lisa_context::build(&policy, Some(&home), &empty_cwd, None).unwrap();
        let share = (snap.prompt.len() as u64).saturating_sub(baseline.prompt.len() as u64);
        prop_assert!(share <= bound, "{} bytes past a share of {}", share, bound);
        prop_assert!(share <= snap.project_share.used, "{} > used {}", share, snap.project_share.used);
        prop_assert!(snap.project_share.used <= bound);
        prop_assert_eq!(snap.project_share.limit, bound);
    }
}
