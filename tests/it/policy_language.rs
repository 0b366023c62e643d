//! The policy language beyond Lisa's own: shipped policies by name, named
//! roots, pick rules, budget scope, sorted order, skill conflicts and names.
//! Each test builds a real tree and asserts on the snapshot.

use std::fs;
use std::process::Command;

use lisa_context::policy::{Policy, PolicySource};
use lisa_context::{Loader, Snapshot};

use crate::support::World;

/// Writes `rel_folder/SKILL.md`, named `name` in its frontmatter if given.
fn skill(w: &World, rel_folder: &str, name: Option<&str>, description: &str) {
    let name = name.map(|n| format!("name: {n}\n")).unwrap_or_default();
    w.write(
        &format!("{rel_folder}/SKILL.md"),
        &format!("---\n{name}description: {description}\n---\nbody\n"),
    );
}

/// A snapshot under `base` (a shipped policy) with `extra` laid over it,
/// `$HOME` being the world's `home`.
fn snapshot(w: &World, base: &str, extra: &str, cwd: &str) -> std::sync::Arc<Snapshot> {
    let file = w.path("policy.toml");
    fs::write(&file, format!("version = 1\n{extra}")).unwrap();
    let home = w.home.clone();
    Loader::builder()
        .shipped_policy(base)
        .policy_file(&file)
        .env(move |k| (k == "HOME").then(|| home.clone().into_os_string()))
        .build()
        .unwrap()
        .snapshot(&w.path(cwd))
        .unwrap()
}

fn files(w: &World, s: &Snapshot) -> Vec<(String, u64)> {
    s.instruction_files
        .iter()
        .map(|b| (w.rel(&b.path), b.included_bytes))
        .collect()
}

#[test]
fn first_file_pick_lets_a_blank_override_hold_its_level() {
    let w = World::new();
    w.write("repo/AGENTS.override.md", "  \n");
    w.write("repo/AGENTS.md", "root plain\n");
    w.write("repo/a/AGENTS.md", "level a\n");
    w.write("home/.codex/AGENTS.override.md", "\n");
    w.write("home/.codex/AGENTS.md", "home plain\n");
    let s = snapshot(&w, "codex", "", "repo/a");
    // Home: the first non-blank; the root: the blank override takes the slot.
    assert_eq!(
        files(&w, &s),
        [
            ("home/.codex/AGENTS.md".to_string(), 10),
            ("repo/a/AGENTS.md".to_string(), 7)
        ]
    );
    let passed: Vec<_> = s
        .considered
        .iter()
        .filter(|c| matches!(c.status, lisa_context::snapshot::Status::NotPicked(_)))
        .map(|c| w.rel(&c.path))
        .collect();
    assert_eq!(passed, ["repo/AGENTS.md"]);
}

#[test]
fn project_budget_scope_leaves_home_files_whole_and_counts_file_bytes() {
    let w = World::new();
    w.write("home/.codex/AGENTS.md", &"h".repeat(5000));
    w.write("repo/AGENTS.md", "0123456789\n");
    w.write("repo/a/AGENTS.md", &"x".repeat(100));
    let s = snapshot(&w, "codex", "[instructions]\nbudget-bytes = 20\n", "repo/a");
    // 11 file bytes for the root (its newline too), 9 left for level a.
    assert_eq!(
        files(&w, &s),
        [
            ("home/.codex/AGENTS.md".to_string(), 5000),
            ("repo/AGENTS.md".to_string(), 10),
            ("repo/a/AGENTS.md".to_string(), 9)
        ]
    );
    assert_eq!(s.budget.used, 20);
}

#[test]
fn sorted_paths_and_no_budget() {
    let w = World::new();
    w.write("repo/GEMINI.md", "root\n");
    w.write("repo/Alpha/GEMINI.md", "alpha\n");
    w.write("repo/Alpha/b/GEMINI.md", &"b".repeat(70_000));
    let s = snapshot(&w, "gemini", "", "repo/Alpha/b");
    assert_eq!(
        files(&w, &s),
        [
            ("repo/Alpha/GEMINI.md".to_string(), 5),
            ("repo/Alpha/b/GEMINI.md".to_string(), 70_000),
            ("repo/GEMINI.md".to_string(), 4)
        ]
    );
}

#[test]
fn extra_names_extend_a_shipped_list() {
    let w = World::new();
    w.write("repo/TEAM.md", "team\n");
    w.write("repo/a/AGENTS.md", "agents\n");
    w.write("repo/a/TEAM.md", "team a: passed over\n");
    let s = snapshot(
        &w,
        "codex",
        "[instructions]\nextra-level-files = [\"TEAM.md\"]\n",
        "repo/a",
    );
    assert_eq!(
        files(&w, &s),
        [
            ("repo/TEAM.md".to_string(), 4),
            ("repo/a/AGENTS.md".to_string(), 6)
        ]
    );
}

#[test]
fn named_roots_are_sandboxes_labelled_in_the_snapshot() {
    let w = World::new();
    skill(
        &w,
        "home/.agents/skills/mine",
        Some("mine"),
        "from the user's ~",
    );
    skill(
        &w,
        "repo/.agents/skills/mine",
        Some("mine"),
        "from the repo",
    );
    // A link out of the user's root is refused like any other.
    fs::create_dir_all(w.base.join("outside/evil")).unwrap();
    w.write(
        "outside/evil/SKILL.md",
        "---\nname: evil\ndescription: x\n---\n",
    );
    std::os::unix::fs::symlink(
        w.base.join("outside/evil"),
        w.base.join("home/.agents/skills/evil"),
    )
    .unwrap();
    let s = snapshot(&w, "gemini", "", "repo");
    assert_eq!(s.named_roots.len(), 1);
    assert_eq!(s.named_roots[0].name, "user");
    assert_eq!(
        s.named_roots[0].path.as_deref(),
        Some(&*w.base.join("home"))
    );
    let skills: Vec<_> = s
        .skills
        .iter()
        .map(|k| (k.name.as_str(), k.root.as_str(), w.rel(&k.path)))
        .collect();
    // The user's copy wins the name whatever the ranks (the workspace's
    // has rank 0): across origins the home side comes first, and the
    // workspace's copy is shadowed.
    assert_eq!(
        skills,
        [(
            "mine",
            "user",
            "home/.agents/skills/mine/SKILL.md".to_string()
        )]
    );
    assert!(
        s.shadowed_project_skills
            .iter()
            .any(|x| x.name == "mine" && w.rel(&x.path) == "repo/.agents/skills/mine/SKILL.md"),
        "{:?}",
        s.shadowed_project_skills
    );
    assert!(
        s.rejected_skills
            .iter()
            .any(|r| r.path.ends_with("evil") && r.reason.as_str() == "symlink-escape"),
        "{:?}",
        s.rejected_skills
    );
}

#[test]
fn list_all_lists_every_copy_and_names_come_from_frontmatter_else_folder() {
    let w = World::new();
    skill(
        &w,
        "repo/.agents/skills/deploy",
        Some("deploy"),
        "root copy",
    );
    skill(
        &w,
        "repo/a/.agents/skills/deploy",
        Some("deploy"),
        "level copy",
    );
    skill(
        &w,
        "repo/.agents/skills/group/nested",
        None,
        "nested, no name",
    );
    skill(
        &w,
        "repo/.agents/skills/long",
        Some("long"),
        &"word ".repeat(300),
    );
    let s = snapshot(&w, "codex", "", "repo/a");
    let skills: Vec<_> = s
        .skills
        .iter()
        .map(|k| (k.name.clone(), w.rel(&k.path)))
        .collect();
    assert_eq!(
        skills,
        [
            (
                "deploy".to_string(),
                "repo/.agents/skills/deploy/SKILL.md".to_string()
            ),
            (
                "deploy".to_string(),
                "repo/a/.agents/skills/deploy/SKILL.md".to_string()
            ),
            (
                "long".to_string(),
                "repo/.agents/skills/long/SKILL.md".to_string()
            ),
            (
                "nested".to_string(),
                "repo/.agents/skills/group/nested/SKILL.md".to_string()
            ),
        ]
    );
    let long = s.skills.iter().find(|k| k.name == "long").unwrap();
    assert_eq!(long.description.chars().count(), 1024);
    assert!(long.description.ends_with("..."));
}

#[test]
fn extends_names_the_base_and_unknown_roots_are_diagnosed() {
    let codex = Policy::from_sources(&[
        PolicySource::builtin(),
        PolicySource::from_text(
            lisa_context::policy::Layer::Home,
            "home.toml",
            "version = 1\nextends = \"codex\"\n[instructions]\nbudget-bytes = 100\n",
        ),
    ])
    .unwrap();
    assert_eq!(codex.instructions.level_files.len(), 2);
    assert_eq!(codex.instructions.budget_bytes, 100);
    assert_eq!(codex.roots.named.len(), 2);

    let bad = Policy::from_sources(&[
        PolicySource::builtin(),
        PolicySource::from_text(
            lisa_context::policy::Layer::CommandLine,
            "cli.toml",
            "version = 1\n[[skills.sources]]\nroot = \"usr\"\npath = \"s\"\nrank = 1\n\
             [[roots.named]]\nname = \"user\"\ncandidates = [\"~\"]\n",
        ),
    ])
    .unwrap_err();
    let text = format!("{bad:?}");
    assert!(text.contains("did you mean `user`"), "{text}");

    let taken = PolicySource::from_text(
        lisa_context::policy::Layer::CommandLine,
        "cli.toml",
        "version = 1\nextends = \"codx\"\n[[roots.named]]\nname = \"home\"\ncandidates = []\n",
    )
    .check()
    .unwrap_err();
    let text = format!("{taken:?}");
    assert!(text.contains("already a root"), "{text}");
    assert!(text.contains("no candidates"), "{text}");
    assert!(text.contains("codx"), "{text}");
}

#[test]
fn the_command_line_takes_a_shipped_name() {
    let w = World::new();
    w.write("repo/AGENTS.override.md", "override\n");
    w.write("repo/AGENTS.md", "plain\n");
    let run = |policy: &str| {
        Command::new(env!("CARGO_BIN_EXE_lisa-context"))
            .args(["--policy", policy, "--home"])
            .arg(w.base.join("home"))
            .args(["snapshot", "--format", "json", "--cwd"])
            .arg(w.base.join("repo"))
            .output()
            .unwrap()
    };
    let out = run("codex");
    assert!(out.status.success(), "{out:?}");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let paths: Vec<_> = json["instructionFiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["path"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(paths.len(), 1);
    assert!(paths[0].ends_with("AGENTS.override.md"), "{paths:?}");
    let out = run("codx");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no policy named `codx`"), "{err}");
}

/// `instructions.levels`: the root alone (Zed, Cline), the cwd alone, or
/// every level; the fallback names follow the same levels, and an access
/// under `root` loads no level file.
#[test]
fn levels_read_the_root_alone_the_cwd_alone_or_every_level() {
    let w = World::new();
    for dir in ["repo", "repo/a", "repo/a/b", "repo/a/b/c"] {
        w.write(&format!("{dir}/AGENTS.md"), &format!("{dir}\n"));
    }
    w.write("repo/a/b/c/x.txt", "x\n");
    let each = |levels: &str| {
        let s = snapshot(
            &w,
            "lisa",
            &format!(
                "[instructions]\nhome-files = []\nlevel-files = [\"AGENTS.md\"]\nlevels = \"{levels}\"\non-access = true\n"
            ),
            "repo/a/b",
        );
        files(&w, &s)
            .into_iter()
            .map(|(p, _)| p)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        each("every-level"),
        ["repo/AGENTS.md", "repo/a/AGENTS.md", "repo/a/b/AGENTS.md"]
    );
    assert_eq!(each("root"), ["repo/AGENTS.md"]);
    assert_eq!(each("cwd"), ["repo/a/b/AGENTS.md"]);

    // The fallback names stand in at the root only.
    fs::remove_file(w.path("repo/AGENTS.md")).unwrap();
    w.write("repo/.clinerules", "cline root\n");
    w.write("repo/a/.clinerules", "cline a\n");
    let s = snapshot(
        &w,
        "lisa",
        "[instructions]\nhome-files = []\nlevel-files = [\"AGENTS.md\"]\nlevels = \"root\"\nfallback-level-files = [\".clinerules\"]\n",
        "repo/a/b",
    );
    assert_eq!(files(&w, &s), [("repo/.clinerules".to_string(), 10)]);

    // An access under `root` adds no level file; under `every-level` it does.
    let access = |levels: &str| {
        let file = w.path("policy-access.toml");
        fs::write(
            &file,
            format!("version = 1\n[instructions]\nhome-files = []\nlevel-files = [\"AGENTS.md\"]\nlevels = \"{levels}\"\non-access = true\n"),
        )
        .unwrap();
        let home = w.home.clone();
        let loader = Loader::builder()
            .shipped_policy("lisa")
            .policy_file(&file)
            .env(move |k| (k == "HOME").then(|| home.clone().into_os_string()))
            .build()
            .unwrap();
        let a = loader
            .access_named("s", &w.path("repo/a/b"), None, &w.path("repo/a/b/c/x.txt"))
            .unwrap();
        a.instruction_files
            .iter()
            .map(|b| w.rel(&b.path))
            .collect::<Vec<_>>()
    };
    assert_eq!(access("every-level"), ["repo/a/b/c/AGENTS.md"]);
    assert!(access("root").is_empty());
}

/// A conditional source (`[[roots.named]]` with `unless-found`): the
/// named root's files stand in for the home's only when none is there.
const FALLBACK_HOME: &str = r#"
[instructions]
home-files = ["AGENTS.md"]
[[roots.named]]
name = "claude"
candidates = ["~/.claude"]
files = ["CLAUDE.md"]
unless-found = ["home"]
"#;

#[test]
fn a_named_root_unless_found_stands_in_only_for_a_missing_home_file() {
    let w = World::new();
    w.write("home/.claude/CLAUDE.md", "FALLBACK\n");
    w.write("repo/AGENTS.md", "PROJECT\n");
    // The lisa home root is ~/.lisa. No home file: the fallback is read,
    // in the home's place.
    let s = snapshot(&w, "lisa", FALLBACK_HOME, "repo");
    assert_eq!(
        files(&w, &s).into_iter().map(|f| f.0).collect::<Vec<_>>(),
        ["home/.claude/CLAUDE.md", "repo/AGENTS.md"]
    );
    // A home file, even a blank one, turns the fallback off.
    w.write("home/.lisa/AGENTS.md", "  \n");
    let s = snapshot(&w, "lisa", FALLBACK_HOME, "repo");
    assert_eq!(
        files(&w, &s).into_iter().map(|f| f.0).collect::<Vec<_>>(),
        ["repo/AGENTS.md"]
    );
    // So does a home file the sandbox refuses (a link out of the home):
    // the fallback never becomes a way around a refusal.
    fs::remove_file(w.path("home/.lisa/AGENTS.md")).unwrap();
    w.write("outside/AGENTS.md", "OUTSIDE\n");
    std::os::unix::fs::symlink(w.path("outside/AGENTS.md"), w.path("home/.lisa/AGENTS.md"))
        .unwrap();
    let s = snapshot(&w, "lisa", FALLBACK_HOME, "repo");
    let got = files(&w, &s);
    assert!(
        got.iter().all(|(p, _)| p != "home/.claude/CLAUDE.md"),
        "{got:?}"
    );
    assert!(!s.prompt.contains("OUTSIDE"));
}

#[test]
fn a_home_file_appearing_turns_the_fallback_off_at_the_next_refresh() {
    let w = World::new();
    w.write("home/.claude/CLAUDE.md", "FALLBACK\n");
    let file = w.path("policy.toml");
    fs::write(&file, format!("version = 1\n{FALLBACK_HOME}")).unwrap();
    let home = w.home.clone();
    let l = Loader::builder()
        .home(&w.home)
        .home_policy(false)
        .policy_file(&file)
        .env(move |k| (k == "HOME").then(|| home.clone().into_os_string()))
        .build()
        .unwrap();
    let first = l.snapshot(&w.repo).unwrap();
    assert!(first.prompt.contains("FALLBACK"));
    w.write("home/AGENTS.md", "MINE\n");
    let next = l
        .refresh(&w.repo, &first.fingerprint)
        .unwrap()
        .expect("the home file moves the fingerprint");
    assert!(next.prompt.contains("MINE") && !next.prompt.contains("FALLBACK"));
}

#[test]
fn the_opencode_policy_falls_back_to_claudes_global_file() {
    let w = World::new();
    w.write("home/.claude/CLAUDE.md", "CLAUDE GLOBAL\n");
    let s = snapshot(&w, "opencode", "", "repo");
    assert!(s.prompt.contains("CLAUDE GLOBAL"), "{}", s.prompt);
    w.write("home/.config/opencode/AGENTS.md", "OPENCODE GLOBAL\n");
    let s = snapshot(&w, "opencode", "", "repo");
    assert!(s.prompt.contains("OPENCODE GLOBAL"));
    assert!(!s.prompt.contains("CLAUDE GLOBAL"));
}

/// A glob name at the top of a root (`*.instructions.md` at the repository
/// root, or in the home) lists that root itself; it once listed nothing
/// there, loading only the matches of the levels below.
#[test]
fn a_glob_at_the_top_of_a_root_matches_there() {
    let w = World::new();
    w.write("repo/a.instructions.md", "ROOT-GLOB\n");
    w.write("repo/sub/b.instructions.md", "SUB-GLOB\n");
    w.write("home/.lisa/h.instructions.md", "HOME-GLOB\n");
    let extra = "[instructions]\nlevel-files = [\"*.instructions.md\"]\nhome-files = [\"*.instructions.md\"]\n";
    let s = snapshot(&w, "lisa", extra, "repo/sub");
    assert_eq!(
        files(&w, &s).into_iter().map(|f| f.0).collect::<Vec<_>>(),
        [
            "home/.lisa/h.instructions.md",
            "repo/a.instructions.md",
            "repo/sub/b.instructions.md"
        ]
    );
    // A new file at the top moves the fingerprint.
    let l = Loader::builder()
        .shipped_policy("lisa")
        .policy_file(w.path("policy.toml"))
        .home(w.path("home/.lisa"))
        .build()
        .unwrap();
    let first = l.snapshot(&w.path("repo/sub")).unwrap();
    w.write("repo/c.instructions.md", "NEW\n");
    let next = l.refresh(&w.path("repo/sub"), &first.fingerprint).unwrap();
    assert!(next.is_some_and(|s| s.prompt.contains("NEW")));
}

/// `access-level-files` and `access-level-pick`: a folder below the cwd,
/// loaded by an access, picks among its own names (OpenCode: `AGENTS.md`,
/// else `CLAUDE.md`), while the chain keeps its fallback rule.
#[test]
fn an_access_picks_each_folders_file_by_its_own_names() {
    let w = World::new();
    w.write("repo/AGENTS.md", "ROOT\n");
    w.write("repo/a/AGENTS.md", "A-AGENTS\n");
    w.write("repo/a/CLAUDE.md", "A-CLAUDE\n");
    w.write("repo/a/b/CLAUDE.md", "B-CLAUDE\n");
    w.write("repo/a/b/x.ts", "x\n");
    // What an access to `repo/a/b/x.ts` loads under the access keys above
    // and `extra`.
    let access = |extra: &str| {
        let file = w.path("policy.toml");
        fs::write(
            &file,
            format!(
                "version = 1\n[instructions]\nlevel-files = [\"AGENTS.md\"]\non-access = true\n\
                 compat.access-level-files = [\"AGENTS.md\", \"CLAUDE.md\"]\n\
                 compat.access-level-pick = \"first-file\"\n{extra}"
            ),
        )
        .unwrap();
        Loader::builder()
            .home(&w.home)
            .home_policy(false)
            .policy_file(&file)
            .build()
            .unwrap()
            .access_named("s", &w.repo, None, &w.path("repo/a/b/x.ts"))
            .unwrap()
    };
    let a = access("");
    let got: Vec<String> = a.instruction_files.iter().map(|b| w.rel(&b.path)).collect();
    assert_eq!(got, ["repo/a/AGENTS.md", "repo/a/b/CLAUDE.md"]);
    // `access-order = "nearest-first"`: the touched folder's own file first,
    // in the blocks and in the prompt.
    let a = access("compat.access-order = \"nearest-first\"\n");
    let got: Vec<String> = a.instruction_files.iter().map(|b| w.rel(&b.path)).collect();
    assert_eq!(got, ["repo/a/b/CLAUDE.md", "repo/a/AGENTS.md"]);
    let (b, a_) = (a.prompt.find("B-CLAUDE"), a.prompt.find("A-AGENTS"));
    assert!(b.is_some() && b < a_, "{}", a.prompt);
}
