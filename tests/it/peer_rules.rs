//! The policy keys that carry the peers' own text rules (issue 29): what a
//! blank file is (`instructions.trim`, `instructions.leading-bom`), how
//! `sorted-paths` compares (`instructions.path-order`), how a `SKILL.md`'s
//! frontmatter is read (`skills.leading-bom`, `skills.fences`,
//! `skills.scalars`, `skills.frontmatter = "name-description-lines"`), and
//! `budget-bytes = 0`. Each is checked from the outside, on real trees,
//! under Lisa's policy (which keeps its behaviour) and under the compat
//! policy that sets it; tests/compat checks the same trees against the
//! real programs.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use lisa_context::{Loader, Snapshot};

use crate::support::World;

/// A loader under the shipped policy `name` (with `overlay` laid over it
/// when given), whose every home candidate is `world.home`.
fn loader(world: &World, name: &str, overlay: Option<&str>) -> Loader {
    let mut builder = Loader::builder()
        .shipped_policy(name)
        .home(world.home.clone())
        .home_policy(false);
    if let Some(text) = overlay {
        let file = world.path(format!("overlay-{name}.toml"));
        fs::write(&file, text).unwrap();
        builder = builder.policy_file(file);
    }
    let state = world.path("state");
    builder
        .env(move |var| (var == "XDG_STATE_HOME").then(|| state.clone().into_os_string()))
        .build()
        .unwrap()
}

fn snapshot(world: &World, name: &str, overlay: Option<&str>, cwd: &Path) -> Snapshot {
    (*loader(world, name, overlay).snapshot(cwd).unwrap()).clone()
}

/// The instruction files in the prompt, relative to the world.
fn files(world: &World, snap: &Snapshot) -> Vec<String> {
    snap.instruction_files
        .iter()
        .map(|b| world.rel(&b.path))
        .collect()
}

/// The listed skills: name and description.
fn listed(snap: &Snapshot) -> BTreeMap<String, String> {
    snap.skills
        .iter()
        .filter(|s| s.listed)
        .map(|s| (s.name.clone(), s.description.clone()))
        .collect()
}

/// Writes the skills whose frontmatter the peers read differently (the
/// trees of tests/compat's `skills-frontmatter-edges` and
/// `skills-fallback-readers`).
fn write_edge_skills(world: &World) {
    let skills = [
        (
            "bom",
            "\u{feff}---\nname: bom\ndescription: A BOM first.\n---\n",
        ),
        (
            "open-spaces",
            "---  \nname: open-spaces\ndescription: Blanks after the opening fence.\n---\n",
        ),
        (
            "lead-space",
            " ---\nname: lead-space\ndescription: A space before the opening fence.\n---\n",
        ),
        ("numeric", "---\nname: 123\ndescription: 1.50\n---\n"),
        (
            "tab-block",
            "---\nname: tab-block\ndescription: |\n\tline one\n\tline two\n---\n",
        ),
        (
            "dup",
            "---\nname: dup\ndescription: first\ndescription: second\n---\n",
        ),
        (
            "quoted",
            "---\nname: 7\ndescription: \"quoted text\"\n---\n",
        ),
        (
            "four-dashes",
            "---\nname: four-dashes\ndescription: Closed early?\n----\nmore: text\n---\n",
        ),
    ];
    for (folder, text) in skills {
        world.write(&format!("repo/.agents/skills/{folder}/SKILL.md"), text);
    }
}

#[test]
fn each_policy_reads_frontmatter_by_its_own_rules() {
    let world = World::new();
    write_edge_skills(&world);
    let pairs = |items: &[(&str, &str)]| -> BTreeMap<String, String> {
        items
            .iter()
            .map(|(n, d)| (n.to_string(), d.to_string()))
            .collect()
    };
    // What the real programs listed on this tree (tests/compat/expected).
    let codex = listed(&snapshot(&world, "codex", None, &world.repo));
    assert_eq!(
        codex,
        pairs(&[
            ("123", "1.50"),
            ("7", "quoted text"),
            ("lead-space", "A space before the opening fence."),
            ("open-spaces", "Blanks after the opening fence."),
        ])
    );
    let gemini = listed(&snapshot(&world, "gemini", None, &world.repo));
    assert_eq!(
        gemini,
        pairs(&[
            ("123", "1.50"),
            ("7", "\"quoted text\""),
            ("dup", "second"),
            ("four-dashes", "Closed early?"),
            ("tab-block", "| line one line two"),
        ])
    );
    // Lisa's policy keeps its rules: the BOM is dropped, `---` may have
    // trailing blanks, names and descriptions are strings.
    let lisa = listed(&snapshot(&world, "lisa", None, &world.repo));
    assert_eq!(
        lisa,
        pairs(&[
            ("bom", "A BOM first."),
            ("open-spaces", "Blanks after the opening fence."),
        ])
    );
}

#[test]
fn a_skill_refused_for_its_bom_says_why() {
    let world = World::new();
    write_edge_skills(&world);
    for name in ["codex", "gemini"] {
        let snap = snapshot(&world, name, None, &world.repo);
        let bom = snap
            .rejected_skills
            .iter()
            .find(|r| r.path.ends_with(".agents/skills/bom/SKILL.md"))
            .unwrap_or_else(|| panic!("{name}: the BOM skill is not among the refused"));
        assert_eq!(bom.reason.as_str(), "bad-frontmatter", "{name}");
    }
}

#[test]
fn a_bom_only_file_is_text_to_codex_and_blank_to_lisa() {
    let world = World::new();
    world.write("home/AGENTS.override.md", "\u{feff}");
    world.write("home/AGENTS.md", "Home notes.\n");
    world.write("repo/AGENTS.md", "\u{feff}");
    world.write("repo/a/AGENTS.md", "Level a.\n");
    let cwd = world.path("repo/a");
    // Codex: the override is not blank, so it takes the home's slot; the
    // root's BOM spends three bytes of the budget.
    let codex = snapshot(&world, "codex", None, &cwd);
    assert_eq!(
        files(&world, &codex),
        [
            "home/AGENTS.override.md",
            "repo/AGENTS.md",
            "repo/a/AGENTS.md"
        ]
    );
    assert_eq!(codex.budget.used, 3 + "Level a.\n".len() as u64);
    // Lisa: both are blank and skipped; the home's AGENTS.md is read.
    let lisa = snapshot(&world, "lisa", None, &cwd);
    assert_eq!(files(&world, &lisa), ["home/AGENTS.md", "repo/a/AGENTS.md"]);
    let skipped: Vec<String> = lisa.skipped.iter().map(|s| world.rel(&s.path)).collect();
    assert!(
        skipped.contains(&"repo/AGENTS.md".to_string()),
        "{skipped:?}"
    );
}

#[test]
fn a_nel_only_file_is_text_to_gemini_and_blank_to_lisa_and_codex() {
    let world = World::new();
    world.write("repo/GEMINI.md", "\u{85}");
    world.write("repo/AGENTS.md", "\u{85}");
    world.write("repo/a/GEMINI.md", "\u{a0}\u{3000}\n\t");
    world.write("repo/a/AGENTS.md", "\u{feff}\u{a0}\n");
    let cwd = world.path("repo/a");
    let gemini = snapshot(&world, "gemini", None, &cwd);
    assert_eq!(files(&world, &gemini), ["repo/GEMINI.md"]);
    // The NEL is a line break in the prompt: the block holds no text.
    assert_eq!(gemini.instruction_files[0].text.trim(), "");
    let lisa = snapshot(&world, "lisa", None, &cwd);
    assert!(
        files(&world, &lisa).is_empty(),
        "{:?}",
        files(&world, &lisa)
    );
    // Codex: the NEL is white space to Rust's trim; a BOM is text.
    let codex = snapshot(&world, "codex", None, &cwd);
    assert_eq!(files(&world, &codex), ["repo/a/AGENTS.md"]);
}

#[test]
fn sorted_paths_compare_by_the_policys_units() {
    let world = World::new();
    let names = ["GEMINI.md", "z.md", "\u{ff41}.md", "\u{1f600}.md"];
    for name in names {
        world.write(&format!("repo/{name}"), &format!("[{name}]\n"));
    }
    let extra = r#"
        version = 1
        [instructions]
        extra-level-files = ["z.md", "\uff41.md", "\U0001F600.md"]
    "#;
    let gemini = snapshot(&world, "gemini", Some(extra), &world.repo);
    assert_eq!(
        files(&world, &gemini),
        [
            "repo/GEMINI.md",
            "repo/z.md",
            "repo/\u{1f600}.md",
            "repo/\u{ff41}.md"
        ]
    );
    let by_code_points = format!("{extra}path-order = \"code-points\"\n");
    let points = snapshot(&world, "gemini", Some(&by_code_points), &world.repo);
    assert_eq!(
        files(&world, &points),
        [
            "repo/GEMINI.md",
            "repo/z.md",
            "repo/\u{ff41}.md",
            "repo/\u{1f600}.md"
        ]
    );
}

#[test]
fn a_zero_budget_is_valid_under_every_shipped_policy_and_loads_no_project_file() {
    let world = World::new();
    world.write("home/AGENTS.md", "Home.\n");
    world.write("home/GEMINI.md", "Home.\n");
    world.write("home/CLAUDE.md", "Home.\n");
    for name in ["AGENTS.md", "GEMINI.md", "CLAUDE.md"] {
        world.write(&format!("repo/{name}"), "Project.\n");
    }
    let zero = "version = 1\n[instructions]\nbudget-bytes = 0\n";
    for policy in lisa_context::policy::SHIPPED_NAMES {
        let snap = snapshot(&world, policy, Some(zero), &world.repo);
        let project: Vec<String> = files(&world, &snap)
            .into_iter()
            .filter(|f| f.starts_with("repo/"))
            .collect();
        assert!(project.is_empty(), "{policy}: {project:?}");
        assert_eq!(snap.budget.limit, 0, "{policy}");
    }
    // Codex counts project files only: its home file still goes in.
    let codex = snapshot(&world, "codex", Some(zero), &world.repo);
    assert_eq!(files(&world, &codex), ["home/AGENTS.md"]);
}

#[test]
fn a_memo_written_under_one_reading_never_answers_for_another() {
    // Codex and Gemini keep their state in the same folder for one home:
    // the frontmatter memo one writes is read by the other, keyed by the
    // reading, so each still answers what a fresh parse answers.
    let fresh = |name: &str| {
        let world = World::new();
        write_edge_skills(&world);
        listed(&snapshot(&world, name, None, &world.repo))
    };
    let (codex, gemini) = (fresh("codex"), fresh("gemini"));
    assert_ne!(codex, gemini);
    let world = World::new();
    write_edge_skills(&world);
    for _ in 0..2 {
        assert_eq!(listed(&snapshot(&world, "codex", None, &world.repo)), codex);
        assert_eq!(
            listed(&snapshot(&world, "gemini", None, &world.repo)),
            gemini
        );
    }
    let memo = fs::read_dir(world.path("state/lisa-context"))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path().join("context-frontmatter.memo"))
        .find(|p| p.is_file())
        .expect("a memo in the shared state folder");
    let text = fs::read_to_string(memo).unwrap();
    let readings: std::collections::BTreeSet<char> = text
        .lines()
        .skip(1)
        .filter_map(|line| line.chars().nth(32))
        .collect();
    assert!(
        readings.len() >= 2,
        "one memo, entries of both readings: {readings:?}"
    );
}
