//! The policy keys that carry the peers' own text rules (issue 29): what a
//! blank file is (`instructions.trim`, `instructions.blank`,
//! `instructions.leading-bom`), how
//! `sorted-paths` compares (`instructions.path-order`), how a `SKILL.md`'s
//! frontmatter is read (`skills.leading-bom`, `skills.fences`,
//! `skills.scalars`, `skills.frontmatter` = `name-description-lines` or
//! `values-as-text`, `skills.skill-file-symlinks`), where imports and
//! accesses may reach (`import-root` and `access-root` = `cwd`), and
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
fn a_white_space_file_is_text_to_opencode_and_an_empty_one_is_not() {
    let world = World::new();
    world.write("repo/AGENTS.md", " \n\t\n");
    world.write("repo/CLAUDE.md", "Claude notes.\n");
    world.write("repo/a/AGENTS.md", "");
    world.write("repo/a/b/AGENTS.md", "\u{feff}");
    let cwd = world.path("repo/a/b");
    // OpenCode (`blank = "empty"`): the white space is a block of its own,
    // empty once trimmed; the empty file and the lone BOM show nothing, and
    // still turn CLAUDE.md off.
    let opencode = snapshot(&world, "opencode", None, &cwd);
    assert_eq!(files(&world, &opencode), ["repo/AGENTS.md"]);
    assert_eq!(&*opencode.instruction_files[0].text, "");
    assert!(
        opencode
            .prompt
            .contains(&world.path("repo/AGENTS.md").display().to_string()),
        "{}",
        opencode.prompt
    );
    let skipped: BTreeMap<String, String> = opencode
        .skipped
        .iter()
        .map(|s| (world.rel(&s.path), s.reason.as_str().to_string()))
        .collect();
    assert_eq!(
        skipped,
        BTreeMap::from([
            ("repo/a/AGENTS.md".to_string(), "empty".to_string()),
            ("repo/a/b/AGENTS.md".to_string(), "empty".to_string()),
        ])
    );
    // Lisa: white space alone is blank.
    let lisa = snapshot(&world, "lisa", None, &cwd);
    assert_eq!(files(&world, &lisa), ["repo/CLAUDE.md"]);
    // The key alone, over Lisa's policy.
    let empty = "version = 1\n[instructions.compat]\nblank = \"empty\"\n";
    let lisa_empty = snapshot(&world, "lisa", Some(empty), &cwd);
    assert_eq!(
        files(&world, &lisa_empty),
        ["repo/AGENTS.md", "repo/CLAUDE.md"]
    );
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
    let by_code_points = format!("{extra}compat.path-order = \"code-points\"\n");
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

/// Codex's retry of frontmatter that is not YAML (`values-as-text`), beside
/// Lisa's `lenient` subset, on the cases of tests/compat's
/// `skills-codex-retry` (what Codex 0.171.0 listed there).
#[test]
fn codex_retries_frontmatter_with_each_value_as_text() {
    let world = World::new();
    let skills = [
        ("colon-twice", "description: uses: a colon: twice"),
        ("comment", "description: text # a comment: here"),
        ("comment-retry", "description: a: b # c: d"),
        ("flow-start", "description: [a: b"),
        ("inner-quote", "description: he said \"x\": y"),
        ("backslash", "description: a\\n: b"),
        (
            "nested-map",
            "description: uses: a: twice\nmetadata:\n  short-description: nested: too",
        ),
        (
            "block-after",
            "description: |\n  Use when: deploying\n  More: lines\nother: x: y",
        ),
        ("tab-cont", "description: one two: three\n\tfour five"),
        ("space-cont", "description: one two: three\n  four five"),
        ("no-space", "description: x: y\nbroken:z"),
        ("quoted-goes-on", "description: \"a\": b"),
        ("unclosed", "description: 'open: quote"),
        ("dup-retry", "description: a: b\ndescription: c: d"),
    ];
    for (folder, lines) in skills {
        world.write(
            &format!("repo/.agents/skills/{folder}/SKILL.md"),
            &format!("---\nname: {folder}\n{lines}\n---\nBody.\n"),
        );
    }
    world.write(
        "repo/.agents/skills/quoted-name/SKILL.md",
        "---\nname: 'it''s'\ndescription: uses: a: twice\n---\n",
    );
    let codex = listed(&snapshot(&world, "codex", None, &world.repo));
    let expected: BTreeMap<String, String> = [
        ("backslash", "a\\n: b"),
        ("block-after", "Use when: deploying More: lines"),
        ("colon-twice", "uses: a colon: twice"),
        ("comment", "text"),
        ("comment-retry", "a: b"),
        ("flow-start", "[a: b"),
        ("inner-quote", "he said \"x\": y"),
        ("it's", "uses: a: twice"),
        ("nested-map", "uses: a: twice"),
    ]
    .into_iter()
    .map(|(n, d)| (n.to_string(), d.to_string()))
    .collect();
    assert_eq!(codex, expected);
    // Lisa's subset reads some of them otherwise: a comment in a value it
    // retries is text, a continuation joins, a flow start or a nested map
    // is refused.
    let lisa = listed(&snapshot(&world, "lisa", None, &world.repo));
    assert_eq!(
        lisa.get("comment-retry").map(String::as_str),
        Some("a: b # c: d")
    );
    assert_eq!(
        lisa.get("space-cont").map(String::as_str),
        Some("one two: three four five")
    );
    assert!(!lisa.contains_key("flow-start"), "{lisa:?}");
    assert!(!lisa.contains_key("nested-map"), "{lisa:?}");
}

/// A `SKILL.md` that is itself a link is refused under Codex's rule, even
/// inside the root; a linked skill folder is still followed; Lisa's and
/// Gemini's policies follow both.
#[cfg(unix)]
#[test]
fn a_linked_skill_file_is_refused_under_codex_and_a_linked_folder_is_not() {
    use std::os::unix::fs::symlink;
    let world = World::new();
    world.write(
        "repo/docs/real.md",
        "---\nname: linked-file\ndescription: The SKILL.md is a link.\n---\n",
    );
    world.mkdir("repo/.agents/skills/linked-file");
    symlink(
        "../../../docs/real.md",
        world.path("repo/.agents/skills/linked-file/SKILL.md"),
    )
    .unwrap();
    world.write(
        "repo/shared/linked-folder/SKILL.md",
        "---\nname: linked-folder\ndescription: The folder is a link.\n---\n",
    );
    symlink(
        "../../shared/linked-folder",
        world.path("repo/.agents/skills/linked-folder"),
    )
    .unwrap();
    let codex = snapshot(&world, "codex", None, &world.repo);
    assert_eq!(listed(&codex).keys().collect::<Vec<_>>(), ["linked-folder"]);
    let refused = codex
        .rejected_skills
        .iter()
        .find(|r| r.path.ends_with("linked-file/SKILL.md"))
        .expect("the linked SKILL.md is among the refused");
    assert_eq!(refused.reason.as_str(), "symlink-refused");
    for name in ["lisa", "gemini"] {
        let snap = snapshot(&world, name, None, &world.repo);
        assert_eq!(
            listed(&snap).keys().collect::<Vec<_>>(),
            ["linked-file", "linked-folder"],
            "{name}"
        );
    }
}

/// Codex reads `.codex/skills` at every level from the project root down
/// to the cwd (in a real repository: `.git` holding `HEAD`).
#[test]
fn codex_reads_codex_skills_at_every_level_from_the_root() {
    let world = World::new();
    world.write("repo/.git/HEAD", "ref: refs/heads/main\n");
    for (level, name) in [("repo", "top"), ("repo/a", "mid"), ("repo/a/b", "cwd")] {
        world.write(
            &format!("{level}/.codex/skills/{name}/SKILL.md"),
            &format!("---\nname: {name}\ndescription: From {level}.\n---\n"),
        );
    }
    let snap = snapshot(&world, "codex", None, &world.path("repo/a/b"));
    assert_eq!(
        listed(&snap).keys().collect::<Vec<_>>(),
        ["cwd", "mid", "top"]
    );
}

/// Claude Code 2.1.332 follows an import only to a file inside the cwd
/// (`import-root = "cwd"`) and loads nothing for a touched path outside the
/// cwd (`access-root = "cwd"`); Gemini's policy keeps its own rules.
#[test]
fn claude_code_imports_and_accesses_stay_inside_the_cwd() {
    let world = World::new();
    world.write("repo/CLAUDE.md", "Root: @docs/one.md and @a/near.md\n");
    world.write("repo/docs/one.md", "One.\n");
    world.write("repo/a/near.md", "Near.\n");
    world.write("repo/a/CLAUDE.md", "Level a.\n");
    world.write("repo/a/b/CLAUDE.md", "Below the cwd.\n");
    world.write("repo/src/CLAUDE.md", "Beside the cwd.\n");
    let cwd = world.path("repo/a");
    let claude = loader(&world, "claude-code", None);
    let snap = claude.snapshot(&cwd).unwrap();
    let outcome = |spec: &str| {
        snap.imports
            .iter()
            .find(|i| i.spec == spec)
            .map(|i| (i.path.is_some() && i.reason.is_none(), i.reason))
            .unwrap_or_else(|| panic!("no import {spec}: {:?}", snap.imports))
    };
    assert!(
        outcome("a/near.md").0,
        "an import inside the cwd is followed"
    );
    let (followed, reason) = outcome("docs/one.md");
    assert!(!followed, "an import outside the cwd is not followed");
    assert!(reason.is_some(), "and says why");
    assert_eq!(files(&world, &snap), ["repo/CLAUDE.md", "repo/a/CLAUDE.md"]);
    assert!(snap.prompt.contains("Near."));
    assert!(!snap.prompt.contains("One."));

    let mut session = lisa_context::Session::new(cwd.clone(), None);
    let inside = claude
        .access(&mut session, &world.path("repo/a/b/file.py"))
        .unwrap();
    let loaded: Vec<String> = inside
        .instruction_files
        .iter()
        .map(|b| world.rel(&b.path))
        .collect();
    assert_eq!(loaded, ["repo/a/b/CLAUDE.md"]);
    let outside = claude
        .access(&mut session, &world.path("repo/src/main.ts"))
        .unwrap();
    assert!(outside.instruction_files.is_empty(), "{outside:?}");
}

/// In Codex's retry a value spelled as YAML's null stays null: `name: null`
/// (or `~`, `NULL`, a comment after it) gives the folder's name, and a null
/// description no skill (tests/compat's `skills-codex-retry-null`, what
/// Codex 0.171.0 listed there).
#[test]
fn codex_retry_keeps_a_null_value_null() {
    let world = World::new();
    let skills = [
        ("null-name", "name: null\ndescription: uses: a: colon"),
        ("tilde-name", "name: ~\ndescription: uses: a: colon"),
        ("upper-null", "name: NULL\ndescription: uses: a: colon"),
        (
            "null-comment",
            "name: null # none\ndescription: uses: a: colon",
        ),
        ("nullish", "name: nullish\ndescription: null\nother: x: y"),
        ("true-name", "name: true\ndescription: uses: a: colon"),
    ];
    for (folder, lines) in skills {
        world.write(
            &format!("repo/.agents/skills/{folder}/SKILL.md"),
            &format!("---\n{lines}\n---\nBody.\n"),
        );
    }
    let codex = listed(&snapshot(&world, "codex", None, &world.repo));
    let expected: BTreeMap<String, String> = [
        "null-comment",
        "null-name",
        "tilde-name",
        "true",
        "upper-null",
    ]
    .into_iter()
    .map(|n| (n.to_string(), "uses: a: colon".to_string()))
    .collect();
    assert_eq!(codex, expected);
}

/// Under `skills.fences = "exact-open"` (Gemini CLI) a frontmatter's text
/// ends before the line break ahead of the closing fence: a `|+` block
/// ending in one blank line keeps one final line break, in two blank lines
/// two (tests/compat's `skills-gemini-keep-blank`, what Gemini CLI 0.61.0
/// listed there); Lisa's fences read the blank line.
#[test]
fn gemini_reads_a_kept_block_without_the_blank_line_before_the_fence() {
    let world = World::new();
    for (folder, blanks) in [("keep-one", "\n"), ("keep-two", "\n\n"), ("keep-none", "")] {
        world.write(
            &format!("repo/.agents/skills/{folder}/SKILL.md"),
            &format!("---\nname: {folder}\ndescription: |+\n  kept block\n{blanks}---\nBody.\n"),
        );
    }
    let gemini = listed(&snapshot(&world, "gemini", None, &world.repo));
    let want = |one: &str, two: &str, none: &str| -> BTreeMap<String, String> {
        [("keep-none", none), ("keep-one", one), ("keep-two", two)]
            .into_iter()
            .map(|(n, d)| (n.to_string(), d.to_string()))
            .collect()
    };
    assert_eq!(
        gemini,
        want("kept block\n", "kept block\n\n", "kept block\n")
    );
    let lisa = listed(&snapshot(
        &world,
        "lisa",
        Some("version = 1\n[skills.compat]\nkeep-final-breaks = true\n"),
        &world.repo,
    ));
    assert_eq!(
        lisa,
        want("kept block\n\n", "kept block\n\n\n", "kept block\n")
    );
}
