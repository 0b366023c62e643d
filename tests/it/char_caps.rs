//! Caps counted in characters (`instructions.max-file-chars`, `char-unit`):
//! real trees, the snapshot's flags, the note in the prompt, and the two
//! units told apart by characters beyond U+FFFF.

use std::fs;

use lisa_context::Loader;
use serde_json::Value;

use crate::support::World;
use crate::validate;

fn loader(w: &World, instructions: &str) -> Loader {
    let file = w.path("policy.toml");
    fs::write(
        &file,
        format!("version = 1\n[instructions]\n{instructions}"),
    )
    .unwrap();
    Loader::builder()
        .home(&w.home)
        .home_policy(false)
        .policy_file(&file)
        .build()
        .unwrap()
}

#[test]
fn a_file_over_the_cap_is_cut_at_a_character_and_says_so() {
    let w = World::new();
    // 10 characters: 5 ASCII, 5 two-byte.
    w.write("repo/AGENTS.md", "abcdeéééééTAIL");
    let l = loader(&w, "compat.max-file-chars = 10\n");
    let s = l.snapshot(&w.repo).unwrap();
    let b = &s.instruction_files[0];
    assert!(b.truncated && b.char_limit_cut && !b.budget_cut && !b.file_limit_cut);
    assert!(s.prompt.contains("abcdeééééé\n"), "{}", s.prompt);
    assert!(!s.prompt.contains("TAIL"));
    assert!(
        s.prompt
            .contains("has 14 characters (scalar); only the first 10 are shown"),
        "{}",
        s.prompt
    );
    let json: Value = serde_json::to_value(&*s).unwrap();
    validate::snapshot(&json);
    assert_eq!(json["instructionFiles"][0]["charLimitCut"], true);

    // At the cap exactly: whole, no note.
    w.write("repo/AGENTS.md", "abcdeéééé!");
    let s = loader(&w, "compat.max-file-chars = 10\n")
        .snapshot(&w.repo)
        .unwrap();
    assert!(!s.instruction_files[0].truncated);
    assert!(!s.prompt.contains("cut here"));
}

#[test]
fn utf16_counts_a_character_beyond_the_bmp_twice_and_never_splits_it() {
    let w = World::new();
    // Four emoji: 4 scalar values, 8 UTF-16 code units.
    w.write("repo/AGENTS.md", "😀😀😀😀");
    let scalar = loader(&w, "compat.max-file-chars = 5\n")
        .snapshot(&w.repo)
        .unwrap();
    assert!(!scalar.instruction_files[0].truncated, "4 scalars fit in 5");
    let utf16 = loader(
        &w,
        "compat.max-file-chars = 5\ncompat.char-unit = \"utf-16\"\n",
    )
    .snapshot(&w.repo)
    .unwrap();
    let b = &utf16.instruction_files[0];
    assert!(b.char_limit_cut);
    // 5 units hold two emoji (4 units); the third would straddle the cap.
    assert!(utf16.prompt.contains("\n😀😀\n"), "{}", utf16.prompt);
    assert!(
        utf16.prompt.contains("has 8 characters (utf-16)"),
        "{}",
        utf16.prompt
    );
}

#[test]
fn a_cut_text_is_never_taken_for_a_copy() {
    let w = World::new();
    w.write("repo/AGENTS.md", "shared prefix and more");
    w.write("repo/pkg/AGENTS.md", "shared prefix");
    let cwd = w.mkdir("repo/pkg");
    let s = loader(&w, "compat.max-file-chars = 13\n")
        .snapshot(&cwd)
        .unwrap();
    // The root's file, cut to "shared prefix", is not the whole of it: the
    // nearer file is kept, not folded into a cut one.
    assert_eq!(s.instruction_files.len(), 2, "{:?}", s.deduped);
}

#[test]
fn a_rule_is_counted_without_its_frontmatter() {
    let w = World::new();
    let front = format!(
        "---\ndescription: {}\nalwaysApply: true\n---\n",
        "d".repeat(200)
    );
    w.write("repo/.cursor/rules/a.mdc", &format!("{front}0123456789"));
    let file = w.path("policy.toml");
    fs::write(
        &file,
        "version = 1\n[instructions]\nlevel-files = [\".cursor/rules/*.mdc\"]\ncompat.max-file-chars = 10\n\
         [rules]\nfiles = [\".cursor/rules/*.mdc\"]\nalways-key = \"alwaysApply\"\n",
    )
    .unwrap();
    let l = Loader::builder()
        .home(&w.home)
        .home_policy(false)
        .policy_file(&file)
        .build()
        .unwrap();
    let s = l.snapshot(&w.repo).unwrap();
    assert!(!s.instruction_files[0].truncated, "{}", s.prompt);
    assert!(s.prompt.contains("0123456789"));
}

#[test]
fn the_windsurf_policy_cuts_at_twelve_thousand_utf16_units() {
    let w = World::new();
    w.write("repo/AGENTS.md", &format!("{}END", "x".repeat(11_999)));
    let l = Loader::builder()
        .home(&w.home)
        .home_policy(false)
        .shipped_policy("windsurf")
        .build()
        .unwrap();
    let s = l.snapshot(&w.repo).unwrap();
    let b = &s.instruction_files[0];
    assert!(b.char_limit_cut);
    assert_eq!(b.included_bytes, 12_000);
    assert!(s.prompt.contains("xE\n"), "the cap keeps 12,000 units");
    // explain names the cause.
    let out = w
        .command()
        .args([
            "--policy",
            "windsurf",
            "--no-home-policy",
            "explain",
            "--cwd",
        ])
        .arg(&w.repo)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("(character limit)"), "{text}");
}

#[test]
fn survey_names_the_harness_whose_character_cap_cuts_a_file() {
    let w = World::new();
    w.write("repo/AGENTS.md", &"y".repeat(13_000));
    let out = w
        .command()
        .args([
            "survey",
            "--format",
            "json",
            "--policies",
            "windsurf,codex",
            "--cwd",
        ])
        .arg(&w.repo)
        .output()
        .unwrap();
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    validate::cli(&json);
    let clips: Vec<&Value> = json["problems"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["kind"] == "budget-clip")
        .collect();
    assert_eq!(clips.len(), 1, "{json}");
    assert_eq!(clips[0]["policies"], serde_json::json!(["windsurf"]));
    assert!(
        clips[0]["message"].as_str().unwrap().contains("characters"),
        "{}",
        clips[0]
    );
}

/// The skipped reasons of a snapshot, by file name.
fn skipped(s: &lisa_context::Snapshot) -> Vec<(String, String)> {
    let json: Value = serde_json::to_value(s).unwrap();
    validate::snapshot(&json);
    json["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| {
            let path = k["path"].as_str().unwrap();
            let name = path.rsplit('/').next().unwrap().to_string();
            (name, k["reason"].as_str().unwrap().to_string())
        })
        .collect()
}

#[test]
fn a_source_cap_cuts_the_file_that_reaches_it_and_skips_the_files_after() {
    let w = World::new();
    w.write("home/A.md", "12345");
    w.write("home/B.md", "abcdefgh");
    w.write("home/C.md", "zzz");
    w.write("repo/AGENTS.md", &"p".repeat(40));
    let l = loader(
        &w,
        "home-files = [\"A.md\", \"B.md\", \"C.md\"]\ncompat.home-max-chars = 10\n",
    );
    let s = l.snapshot(&w.repo).unwrap();
    let names: Vec<String> = s
        .instruction_files
        .iter()
        .map(|b| b.path.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["A.md", "B.md", "AGENTS.md"]);
    let b = &s.instruction_files[1];
    assert!(b.char_limit_cut && b.truncated, "{b:?}");
    assert!(s.prompt.contains("abcde\n"), "{}", s.prompt);
    assert!(!s.prompt.contains("abcdef"));
    // The note gives the cap that cut it: what the source had left.
    assert!(
        s.prompt
            .contains("has 8 characters (scalar); only the first 5 are shown"),
        "{}",
        s.prompt
    );
    // The repository's files are another source: whole.
    assert!(!s.instruction_files[2].truncated);
    assert_eq!(
        skipped(&s),
        [("C.md".to_string(), "char-limit".to_string())]
    );
    // explain says why C.md is out.
    let out = w
        .command()
        .arg("--policy")
        .arg(w.path("policy.toml"))
        .args(["--no-home-policy", "explain", "--cwd"])
        .arg(&w.repo)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("char-limit"), "{text}");
}

#[test]
fn a_project_cap_and_a_file_cap_each_cut_where_they_reach_first() {
    let w = World::new();
    w.write("repo/AGENTS.md", "0123456789");
    w.write("repo/a/AGENTS.md", "abcdefghij");
    w.write("repo/a/b/AGENTS.md", "ABCDEFGHIJ");
    let l = loader(
        &w,
        "compat.max-file-chars = 8\ncompat.project-max-chars = 12\n",
    );
    let s = l.snapshot(&w.repo.join("a/b")).unwrap();
    let texts: Vec<&str> = s.instruction_files.iter().map(|b| &*b.text).collect();
    // 8 by the file's cap, then the 4 the source has left; the third is out.
    assert_eq!(texts, ["01234567", "abcd"]);
    assert!(
        s.prompt.contains("only the first 8 are shown"),
        "{}",
        s.prompt
    );
    assert!(
        s.prompt.contains("only the first 4 are shown"),
        "{}",
        s.prompt
    );
    assert_eq!(
        skipped(&s),
        [("AGENTS.md".to_string(), "char-limit".to_string())]
    );
    // Without the source cap, all three, each cut by its own.
    let s = loader(&w, "compat.max-file-chars = 8\n")
        .snapshot(&w.repo.join("a/b"))
        .unwrap();
    assert_eq!(s.instruction_files.len(), 3);
}

#[test]
fn the_windsurf_policy_cuts_the_global_rules_at_six_thousand_units() {
    let w = World::new();
    w.write(
        "home/memories/global_rules.md",
        &format!("{}END", "g".repeat(5_999)),
    );
    w.write("repo/AGENTS.md", &"w".repeat(7_000));
    let l = Loader::builder()
        .home(&w.home)
        .home_policy(false)
        .shipped_policy("windsurf")
        .build()
        .unwrap();
    let s = l.snapshot(&w.repo).unwrap();
    let global = &s.instruction_files[0];
    assert!(global.path.ends_with("memories/global_rules.md"));
    assert!(global.char_limit_cut);
    assert_eq!(global.included_bytes, 6_000);
    assert!(s.prompt.contains("gE\n"), "the cap keeps 6,000 units");
    // A workspace file of 7,000 is under its own cap of 12,000.
    assert!(!s.instruction_files[1].truncated);
}
