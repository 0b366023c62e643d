//! Rules and their modes (`[rules]`): real trees, a policy laid over the
//! built-in one, and what the snapshot, the prompt and an access say.

use std::fs;
use std::sync::Arc;

use lisa_context::snapshot::{Activation, Reason};
use lisa_context::{Loader, Snapshot};

use crate::support::World;

/// A loader for `w` under the built-in policy with `extra` laid over it.
fn loader(w: &World, extra: &str) -> Loader {
    let file = w.path("policy.toml");
    fs::write(&file, format!("version = 1\n{extra}")).unwrap();
    Loader::builder()
        .home(&w.home)
        .home_policy(false)
        .policy_file(&file)
        .build()
        .unwrap()
}

/// Cursor's reading: `.mdc` files under `.cursor/rules`, `alwaysApply`,
/// `globs`, and a description making a rule listed.
const CURSOR_LIKE: &str = r#"
[instructions]
level-files = ["AGENTS.md", ".cursor/rules/**/*.mdc"]
home-files = []
on-access = true
[rules]
files = [".cursor/rules/**/*.mdc"]
always-key = "alwaysApply"
globs-keys = ["globs"]
"#;

fn modes(s: &Snapshot) -> Vec<(String, Activation, String)> {
    s.rules
        .iter()
        .map(|r| (r.name.clone(), r.mode, r.why.clone()))
        .collect()
}

fn cursor_tree(w: &World) {
    w.write("repo/AGENTS.md", "plain agents file\n");
    w.write(
        "repo/.cursor/rules/always.mdc",
        "---\nalwaysApply: true\n---\nALWAYS-RULE\n",
    );
    w.write(
        "repo/.cursor/rules/ts.mdc",
        "---\nglobs: src/**/*.ts, src/**/*.{tsx,jsx}\nalwaysApply: false\n---\nTS-RULE\n",
    );
    w.write(
        "repo/.cursor/rules/review.mdc",
        "---\ndescription: How to review a pull request\nalwaysApply: false\n---\nREVIEW-RULE\n",
    );
    w.write(
        "repo/.cursor/rules/manual.mdc",
        "---\nalwaysApply: false\n---\nMANUAL-RULE\n",
    );
    w.write(
        "repo/.cursor/rules/quoted.mdc",
        "---\nalwaysApply: \"true\"\n---\nQUOTED-RULE\n",
    );
    w.write("repo/src/deep/view.tsx", "x\n");
}

#[test]
fn cursor_like_modes_come_from_the_frontmatter() {
    let w = World::new();
    cursor_tree(&w);
    let l = loader(&w, CURSOR_LIKE);
    let s: Arc<Snapshot> = l.snapshot(&w.repo).unwrap();
    let got = modes(&s);
    let want = [
        ("always", Activation::Always, "alwaysApply: true"),
        (
            "manual",
            Activation::Manual,
            "alwaysApply: false, no globs, no description",
        ),
        (
            "quoted",
            Activation::Manual,
            "alwaysApply: \"true\" is not a boolean, no globs, no description",
        ),
        (
            "review",
            Activation::Listed,
            "alwaysApply: false, no globs, a description",
        ),
        ("ts", Activation::OnAccess, "globs"),
    ];
    assert_eq!(got, want.map(|(n, m, w)| (n.to_string(), m, w.to_string())));
    // Globs: a comma string split outside braces.
    let ts = s.rules.iter().find(|r| r.name == "ts").unwrap();
    assert_eq!(ts.globs, ["src/**/*.ts", "src/**/*.{tsx,jsx}"]);
    // The prompt: the always rule as a block, the listed one as an entry,
    // the others nowhere.
    assert!(s.prompt.contains("ALWAYS-RULE"));
    // A rule goes in as its body: its frontmatter is not prompt text.
    assert!(!s.prompt.contains("alwaysApply"), "{}", s.prompt);
    assert!(s.prompt.contains("plain agents file"));
    assert!(s.prompt.contains("# Rules to read when they apply (1)"));
    assert!(
        s.prompt.contains("- review (from this project"),
        "{}",
        s.prompt
    );
    assert!(s.prompt.contains("How to review a pull request (in "));
    for absent in ["REVIEW-RULE", "TS-RULE", "MANUAL-RULE", "QUOTED-RULE"] {
        assert!(!s.prompt.contains(absent), "{absent}");
    }
    let reasons: Vec<(String, Reason)> = s
        .skipped
        .iter()
        .map(|k| (w.rel(&k.path), k.reason))
        .collect();
    assert!(reasons.contains(&("repo/.cursor/rules/review.mdc".into(), Reason::RuleListed)));
    assert!(reasons.contains(&("repo/.cursor/rules/manual.mdc".into(), Reason::RuleManual)));
    assert!(reasons.contains(&("repo/.cursor/rules/ts.mdc".into(), Reason::Scoped)));
    // The on-access rule is a scoped rule, loaded by a matching access.
    assert_eq!(s.scoped_rules.len(), 1);
    let a = l
        .access_named("s", &w.repo, None, &w.path("repo/src/deep/view.tsx"))
        .unwrap();
    assert!(a.prompt.contains("TS-RULE"), "{}", a.prompt);
    assert!(!a.prompt.contains("globs:"), "{}", a.prompt);
    let again = l
        .access_named("s", &w.repo, None, &w.path("repo/src/deep/view.tsx"))
        .unwrap();
    assert!(again.instruction_files.is_empty());
}

#[test]
fn an_edit_that_changes_a_mode_moves_the_fingerprint() {
    let w = World::new();
    cursor_tree(&w);
    let l = loader(&w, CURSOR_LIKE);
    let before = l.snapshot(&w.repo).unwrap();
    w.write(
        "repo/.cursor/rules/manual.mdc",
        "---\nalwaysApply: true\n---\nMANUAL-RULE, now always\n",
    );
    let after = l.snapshot(&w.repo).unwrap();
    assert_ne!(before.fingerprint, after.fingerprint);
    assert!(after.prompt.contains("MANUAL-RULE, now always"));
    // A fresh loader agrees with the cached answer.
    let fresh = loader(&w, CURSOR_LIKE).snapshot(&w.repo).unwrap();
    assert_eq!(fresh.prompt, after.prompt);
}

#[test]
fn a_mode_word_decides_first_and_unknown_words_are_manual() {
    let w = World::new();
    let policy = r#"
[instructions]
level-files = [".windsurf/rules/*.md"]
home-files = []
[rules]
files = [".windsurf/rules/*.md"]
mode-key = "trigger"
always-words = ["always_on"]
on-access-words = ["glob"]
listed-words = ["model_decision"]
manual-words = ["manual"]
globs-keys = ["globs"]
absent = "manual"
"#;
    let rules = [
        ("a", "trigger: always_on\nalwaysApply: false"),
        ("b", "trigger: glob\nglobs: \"*.py\""),
        ("c", "trigger: glob"),
        ("d", "trigger: model_decision\ndescription: Deploys"),
        ("e", "trigger: sometimes"),
        ("f", "description: no trigger at all"),
    ];
    for (name, fm) in rules {
        w.write(
            &format!("repo/.windsurf/rules/{name}.md"),
            &format!("---\n{fm}\n---\nbody {name}\n"),
        );
    }
    let s = loader(&w, policy).snapshot(&w.repo).unwrap();
    let got: Vec<(String, Activation, String)> = modes(&s);
    assert_eq!(
        got,
        [
            ("a", Activation::Always, "trigger: always_on"),
            ("b", Activation::OnAccess, "trigger: glob"),
            ("c", Activation::Manual, "trigger: glob, but no globs"),
            ("d", Activation::Listed, "trigger: model_decision"),
            (
                "e",
                Activation::Manual,
                "trigger: \"sometimes\" is no mode word"
            ),
            ("f", Activation::Manual, "no mode in the frontmatter"),
        ]
        .map(|(n, m, w)| (n.to_string(), m, w.to_string()))
    );
}

#[test]
fn continue_like_absent_is_not_false_and_names_come_from_the_frontmatter() {
    let w = World::new();
    let policy = r#"
[instructions]
level-files = [".continue/rules/*.md"]
home-files = []
[rules]
files = [".continue/rules/*.md"]
always-key = "alwaysApply"
globs-keys = ["globs"]
name-key = "name"
absent = "always"
compat.described = "listed"
compat.undescribed = "manual"
"#;
    w.write(
        "repo/.continue/rules/01.md",
        "---\nname: Style\n---\nSTYLE\n",
    );
    w.write(
        "repo/.continue/rules/02.md",
        "---\nname: Deploy\nalwaysApply: false\ndescription: Deploying\n---\nDEPLOY\n",
    );
    w.write("repo/.continue/rules/03.md", "no frontmatter at all\n");
    w.write(
        "repo/.continue/rules/04.md",
        "---\n: not yaml [\n---\nBROKEN\n",
    );
    let s = loader(&w, policy).snapshot(&w.repo).unwrap();
    assert_eq!(
        modes(&s),
        [
            ("Style", Activation::Always, "no mode in the frontmatter"),
            (
                "Deploy",
                Activation::Listed,
                "alwaysApply: false, no globs, a description"
            ),
            ("03", Activation::Always, "no mode in the frontmatter"),
            // A frontmatter that does not parse says nothing this reading
            // can trust: the rule loads least, and `misread` says why.
            (
                "04",
                Activation::Manual,
                "a frontmatter that cannot be read one way only"
            ),
        ]
        .map(|(n, m, w)| (n.to_string(), m, w.to_string()))
    );
    assert!(s.prompt.contains("STYLE") && !s.prompt.contains("BROKEN"));
    let broken = s.rules.iter().find(|r| r.name == "04").unwrap();
    assert!(
        broken
            .misread
            .as_deref()
            .is_some_and(|m| m.starts_with("the frontmatter does not parse as YAML")),
        "{:?}",
        broken.misread
    );
    assert!(s.prompt.contains("- Deploy"));
}

#[test]
fn a_globs_prefix_and_aliases() {
    let w = World::new();
    let policy = r#"
[instructions]
level-files = ["rules/*.md"]
home-files = []
[rules]
files = ["rules/*.md"]
globs-keys = ["applyTo", "globs"]
compat.globs-prefix = "**/"
absent = "always"
"#;
    w.write(
        "repo/rules/a.md",
        "---\nglobs:\n  - \"*.rs\"\n  - \"**/*.toml\"\n---\nA\n",
    );
    w.write(
        "repo/rules/b.md",
        "---\napplyTo: \"*.go\"\nglobs: ignored\n---\nB\n",
    );
    let s = loader(&w, policy).snapshot(&w.repo).unwrap();
    let globs: Vec<Vec<String>> = s.rules.iter().map(|r| r.globs.clone()).collect();
    assert_eq!(globs, [vec!["**/*.rs", "**/*.toml"], vec!["**/*.go"]]);
    assert_eq!(s.rules[1].why, "applyTo");
}

#[test]
fn hidden_text_in_a_listed_rule_is_treated_and_reported() {
    let w = World::new();
    w.write(
        "repo/.cursor/rules/sneaky.mdc",
        "---\ndescription: \"Review\u{200b} code\u{202e}\"\n---\nbody\n",
    );
    let s = loader(&w, CURSOR_LIKE).snapshot(&w.repo).unwrap();
    assert_eq!(s.rules[0].mode, Activation::Listed);
    assert!(!s.prompt.contains('\u{200b}') && !s.prompt.contains('\u{202e}'));
    assert!(s.prompt.contains("[hidden U+200B]"), "{}", s.prompt);
    assert!(
        s.hidden_text
            .iter()
            .any(|h| h.path.ends_with(".cursor/rules/sneaky.mdc"))
    );
}

#[test]
fn a_rule_that_is_not_a_chain_file_is_not_read() {
    let w = World::new();
    // `rules.files` names the files; only `level-files` reads them.
    w.write(
        "repo/.cursor/rules/x.mdc",
        "---\nalwaysApply: true\n---\nX\n",
    );
    let s = loader(
        &w,
        "[rules]\nfiles = [\".cursor/rules/*.mdc\"]\nalways-key = \"alwaysApply\"\n",
    )
    .snapshot(&w.repo)
    .unwrap();
    assert!(s.rules.is_empty());
    assert!(!s.prompt.contains('X'));
}

/// Continue's reading of `regex`: patterns over a touched file's content.
const REGEX_RULES: &str = r#"
[instructions]
level-files = [".continue/rules/*.md"]
home-files = []
on-access = true
[rules]
files = [".continue/rules/*.md"]
always-key = "alwaysApply"
globs-keys = ["globs"]
compat.regex-keys = ["regex"]
compat.regex-max-bytes = 64
compat.regex-scan-bytes = 32
absent = "always"
"#;

/// What accessing `rel` (in a fresh session) loads: the rules' names.
fn loaded(l: &Loader, w: &World, session: &str, rel: &str) -> Vec<String> {
    l.access_named(session, &w.repo, None, &w.path(rel))
        .unwrap()
        .instruction_files
        .iter()
        .map(|b| w.rel(&b.path))
        .collect()
}

#[test]
fn content_patterns_load_a_rule_for_a_matching_file_only() {
    let w = World::new();
    w.write(
        "repo/.continue/rules/hooks.md",
        "---\nglobs: \"**/*.tsx\"\nregex: useEffect\n---\nHOOKS\n",
    );
    w.write(
        "repo/.continue/rules/todo.md",
        "---\nregex:\n  - \"TODO\\\\(\\\\w+\\\\)\"\n  - FIXME\n---\nTODO-RULE\n",
    );
    w.write("repo/src/a.tsx", "const x = 1;\n");
    w.write("repo/src/b.tsx", "useEffect(() => {});\n");
    w.write("repo/src/b.ts", "useEffect(() => {});\n");
    w.write("repo/notes.md", "FIXME later\n");
    // The pattern only past the bytes scanned: not seen.
    w.write("repo/late.md", &format!("{}TODO(me)\n", " ".repeat(40)));
    let l = loader(&w, REGEX_RULES);
    let s = l.snapshot(&w.repo).unwrap();
    let json = serde_json::to_value(&*s).unwrap();
    crate::validate::snapshot(&json);
    let modes: Vec<(String, Activation, String, Vec<String>)> = s
        .rules
        .iter()
        .map(|r| (r.name.clone(), r.mode, r.why.clone(), r.regex.clone()))
        .collect();
    assert_eq!(
        modes,
        [
            (
                "hooks".into(),
                Activation::OnAccess,
                "globs and regex".into(),
                vec!["useEffect".into()]
            ),
            (
                "todo".into(),
                Activation::OnAccess,
                "regex".into(),
                vec!["TODO\\(\\w+\\)".into(), "FIXME".into()]
            ),
        ]
    );
    assert!(loaded(&l, &w, "1", "repo/src/a.tsx").is_empty());
    assert!(
        loaded(&l, &w, "2", "repo/src/b.ts").is_empty(),
        "globs hold"
    );
    assert_eq!(
        loaded(&l, &w, "3", "repo/src/b.tsx"),
        ["repo/.continue/rules/hooks.md"]
    );
    assert_eq!(
        loaded(&l, &w, "4", "repo/notes.md"),
        ["repo/.continue/rules/todo.md"]
    );
    assert!(
        loaded(&l, &w, "5", "repo/late.md").is_empty(),
        "past regex-scan-bytes"
    );
    // A folder has no content: nothing.
    assert!(loaded(&l, &w, "6", "repo/src").is_empty());
}

#[test]
fn patterns_this_engine_cannot_bound_never_match_and_say_why() {
    let w = World::new();
    // Look-around (JavaScript has it; a linear-time engine does not).
    w.write(
        "repo/.continue/rules/look.md",
        "---\nregex: \"(?<=use)Effect\"\n---\nLOOK\n",
    );
    // Longer than regex-max-bytes (64).
    w.write(
        "repo/.continue/rules/long.md",
        &format!("---\nregex: \"{}\"\n---\nLONG\n", "a".repeat(65)),
    );
    // One bad pattern beside a good one: the good one still counts.
    w.write(
        "repo/.continue/rules/mixed.md",
        "---\nregex: [\"(a)\\\\1\", \"useEffect\"]\n---\nMIXED\n",
    );
    w.write("repo/x.ts", &format!("useEffect {}\n", "a".repeat(70)));
    let l = loader(&w, REGEX_RULES);
    let s = l.snapshot(&w.repo).unwrap();
    let misread = |name: &str| {
        s.rules
            .iter()
            .find(|r| r.name == name)
            .and_then(|r| r.misread.clone())
            .unwrap_or_default()
    };
    assert!(
        misread("look").contains("does not compile here"),
        "{}",
        misread("look")
    );
    assert!(misread("look").ends_with("the rule never loads"));
    assert!(
        misread("long").contains("longer than 64 bytes"),
        "{}",
        misread("long")
    );
    assert!(
        misread("mixed").ends_with("it never matches"),
        "{}",
        misread("mixed")
    );
    assert_eq!(
        loaded(&l, &w, "s", "repo/x.ts"),
        ["repo/.continue/rules/mixed.md"]
    );
}

#[test]
fn a_touched_link_out_of_the_root_or_a_fifo_is_not_read_for_patterns() {
    let w = World::new();
    w.write(
        "repo/.continue/rules/secret.md",
        "---\nregex: PRIVATE KEY\n---\nKEY-RULE\n",
    );
    let outside = w.write("outside/id_rsa", "-----BEGIN PRIVATE KEY-----\n");
    std::os::unix::fs::symlink(&outside, w.path("repo/key")).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(w.path("repo/pipe"))
        .status()
        .unwrap();
    assert!(made.success());
    let l = loader(&w, REGEX_RULES);
    assert!(loaded(&l, &w, "1", "repo/key").is_empty());
    assert!(loaded(&l, &w, "2", "repo/pipe").is_empty());
}

#[test]
fn a_build_compiles_a_bounded_number_of_patterns() {
    let w = World::new();
    // 40 rules of 16 patterns each: 640 written, at most 256 compiled.
    for i in 0..40 {
        let list: Vec<String> = (0..16).map(|k| format!("\"p{i}x{k}\"")).collect();
        w.write(
            &format!("repo/.continue/rules/r{i:02}.md"),
            &format!("---\nregex: [{}]\n---\nR{i}\n", list.join(", ")),
        );
    }
    let s = loader(&w, REGEX_RULES).snapshot(&w.repo).unwrap();
    let cut = s
        .rules
        .iter()
        .filter(|r| {
            r.misread
                .as_deref()
                .is_some_and(|m| m.contains("are not used"))
        })
        .count();
    assert_eq!(
        cut,
        40 - 256 / 16,
        "rules past the build's patterns are told"
    );
}

/// `rules.one-per-name`: one rule per name (trimmed, lower-cased), the
/// home's first, else the last read; the others leave the prompt whatever
/// their mode, and give their budget back.
#[test]
fn one_rule_per_name_the_home_first_then_the_last_read() {
    let w = World::new();
    let policy = r#"
[instructions]
home-files = ["rules/*.md"]
level-files = ["rules/*.md"]
budget-bytes = 64
on-access = true
[rules]
files = ["rules/*.md"]
name-key = "name"
description-key = "description"
mode-key = "mode"
always-words = ["always"]
listed-words = ["listed"]
on-access-words = ["glob"]
globs-keys = ["globs"]
absent = "always"
compat.one-per-name = true
"#;
    w.write("home/rules/style.md", "HOME-STYLE\n");
    w.write(
        "repo/rules/style.md",
        "PROJECT-STYLE-WHICH-WOULD-TAKE-THE-BUDGET\n",
    );
    w.write("repo/rules/a.md", "---\nname: Tabs\n---\nFIRST-TABS\n");
    w.write("repo/rules/b.md", "---\nname: tabs \n---\nLAST-TABS\n");
    w.write(
        "repo/rules/c.md",
        "---\nname: Review\nmode: listed\ndescription: how to review\n---\nR1\n",
    );
    w.write(
        "repo/rules/d.md",
        "---\nname: review\nmode: glob\nglobs: \"**/*.rs\"\n---\nR2\n",
    );
    let l = loader(&w, policy);
    let s = l.snapshot(&w.repo).unwrap();
    let json = serde_json::to_value(&*s).unwrap();
    crate::validate::snapshot(&json);
    assert!(s.prompt.contains("HOME-STYLE") && !s.prompt.contains("PROJECT-STYLE"));
    assert!(s.prompt.contains("LAST-TABS") && !s.prompt.contains("FIRST-TABS"));
    // The listed `Review` lost to the on-access `review` read after it.
    assert!(!s.prompt.contains("how to review"), "{}", s.prompt);
    assert_eq!(s.scoped_rules.len(), 1);
    let replaced: Vec<(String, String)> = s
        .rules
        .iter()
        .filter_map(|r| Some((w.rel(&r.path), w.rel(r.replaced_by.as_deref()?))))
        .collect();
    assert_eq!(
        replaced,
        [
            ("repo/rules/a.md".into(), "repo/rules/b.md".into()),
            ("repo/rules/c.md".into(), "repo/rules/d.md".into()),
            ("repo/rules/style.md".into(), "home/rules/style.md".into()),
        ]
    );
    let reasons: Vec<(String, Reason)> = s
        .skipped
        .iter()
        .map(|k| (w.rel(&k.path), k.reason))
        .collect();
    assert!(reasons.contains(&("repo/rules/style.md".into(), Reason::RuleReplaced)));
    // The replaced blocks gave their budget back: what is used is what
    // the prompt holds.
    let held: u64 = s.instruction_files.iter().map(|b| b.included_bytes).sum();
    assert_eq!(s.budget.used, held);
    // A replaced rule answers to no name.
    assert_eq!(
        l.rule(&w.repo, "Review").unwrap_err().wire_code().as_str(),
        "rule-not-found"
    );
}
