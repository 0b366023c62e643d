//! `@path` imports under a policy that follows them (the Gemini policy, or
//! `instructions.import-depth > 0`): what is inlined, what is refused and
//! why, and the bounds that hold whatever a repository writes.

use std::sync::Arc;

use lisa_context::policy::{Layer, Policy};
use lisa_context::{Loader, Snapshot};

use crate::support::{self, World, next_timestamp_tick};

/// The import policy these tests lay over the built-in one.
trait ImportsWorld {
    fn policy(&self, extra: &str) -> Policy;
    fn snapshot(&self, extra: &str, cwd: &str) -> Arc<Snapshot>;
}

impl ImportsWorld for World {
    fn policy(&self, extra: &str) -> Policy {
        support::layered(
            Layer::CommandLine,
            "imports.toml",
            format!(
                "version = 1\n[instructions]\nimport-depth = 5\ncompat.import-failure = \"comment\"\n{extra}"
            ),
        )
    }

    fn snapshot(&self, extra: &str, cwd: &str) -> Arc<Snapshot> {
        self.loader_on(self.policy(extra))
            .snapshot(&self.path(cwd))
            .unwrap()
    }
}

/// (spec, outcome) of every import, the outcome a reason word or "inlined".
fn outcomes(s: &Snapshot) -> Vec<(String, String)> {
    s.imports
        .iter()
        .map(|i| {
            let outcome = i.reason.map_or("inlined", |r| r.as_str());
            (i.spec.clone(), outcome.to_string())
        })
        .collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[test]
fn imports_inline_relative_files_and_leave_code_alone() {
    let w = World::new();
    w.write(
        "repo/AGENTS.md",
        "Root.\n@docs/style.md\nSee `@not/this.md` and\n```\n@nor/this.md\n```\nmail me@example.com\n",
    );
    w.write("repo/docs/style.md", "Style: @./tabs.md\n");
    w.write("repo/docs/tabs.md", "Use tabs.\n");
    let s = w.snapshot("", "repo");
    assert_eq!(
        outcomes(&s),
        pairs(&[("docs/style.md", "inlined"), ("./tabs.md", "inlined")])
    );
    let text = &s.instruction_files[0].text;
    assert!(text.contains("<!-- Imported from: docs/style.md -->\nStyle: <!-- Imported from: ./tabs.md -->\nUse tabs.\n\n<!-- End of import from: ./tabs.md -->"), "{text}");
    assert!(text.contains("`@not/this.md`"), "{text}");
    assert!(text.contains("@nor/this.md"), "{text}");
    assert!(text.contains("me@example.com"), "{text}");
    // The inlined text is the block's text: the budget counts it.
    assert_eq!(s.budget.used, s.instruction_files[0].included_bytes);
    assert!(s.instruction_files[0].text_bytes > 40);
    let paths: Vec<_> = s
        .imports
        .iter()
        .map(|i| w.rel(i.path.as_deref().unwrap()))
        .collect();
    assert_eq!(paths, ["repo/docs/style.md", "repo/docs/tabs.md"]);
}

#[test]
fn imports_never_leave_the_importing_files_root() {
    let w = World::new();
    w.write("outside/secret.md", "SECRET\n");
    w.write("home/AGENTS.md", "HOME NOTES\n");
    std::os::unix::fs::symlink(
        w.base.join("outside/secret.md"),
        w.base.join("repo/link.md"),
    )
    .unwrap();
    let home_abs = w.base.join("home/AGENTS.md");
    w.write(
        "repo/AGENTS.md",
        &format!(
            "@../outside/secret.md @link.md @{} @file:///etc/passwd @https://example.com/x.md @missing.md\n",
            home_abs.display()
        ),
    );
    let s = w.snapshot("", "repo");
    let got = outcomes(&s);
    let reasons: Vec<&str> = got.iter().map(|(_, r)| r.as_str()).collect();
    assert_eq!(
        reasons,
        [
            "import-outside-root",
            "symlink-escape",
            "import-outside-root",
            "import-outside-root",
            "import-outside-root",
            "import-missing"
        ],
        "{got:?}"
    );
    let prompt = &s.prompt;
    assert!(!prompt.contains("SECRET"), "{prompt}");
    assert!(!prompt.contains("HOME NOTES\n\n<!--"), "{prompt}");
    assert!(prompt.contains("<!-- Import failed: ../outside/secret.md (import-outside-root) -->"));
    assert!(prompt.contains("<!-- Import failed: missing.md (import-missing) -->"));
}

#[test]
fn a_fifo_is_refused_at_once() {
    let w = World::new();
    let fifo = w.base.join("repo/pipe.md");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    w.write("repo/AGENTS.md", "@pipe.md\n");
    let s = w.snapshot("", "repo");
    assert_eq!(outcomes(&s), pairs(&[("pipe.md", "not-regular-file")]));
}

#[test]
fn cycles_are_cut_and_depth_is_bounded() {
    let w = World::new();
    w.write("repo/AGENTS.md", "top @a.md\n");
    w.write("repo/a.md", "a @b.md\n");
    w.write("repo/b.md", "b @a.md\n");
    let s = w.snapshot("", "repo");
    assert_eq!(
        outcomes(&s),
        pairs(&[
            ("a.md", "inlined"),
            ("b.md", "inlined"),
            ("a.md", "import-cycle")
        ])
    );
    // A chain of seven: five inlined, the sixth left as written.
    let w = World::new();
    w.write("repo/AGENTS.md", "@c1.md\n");
    for k in 1..=7 {
        w.write(&format!("repo/c{k}.md"), &format!("c{k} @c{}.md\n", k + 1));
    }
    let s = w.snapshot("", "repo");
    let got = outcomes(&s);
    assert_eq!(got.len(), 6, "{got:?}");
    assert!(got[..5].iter().all(|(_, o)| o == "inlined"), "{got:?}");
    assert_eq!(got[5], ("c6.md".to_string(), "import-too-deep".to_string()));
    assert!(s.prompt.contains("c5 @c6.md"), "{}", s.prompt);
}

#[test]
fn a_cycle_of_a_thousand_and_a_fan_out_of_ten_thousand_stay_bounded() {
    let w = World::new();
    w.write("repo/AGENTS.md", "@r0.md\n");
    for k in 0..1000 {
        w.write(
            &format!("repo/r{k}.md"),
            &format!("@r{}.md\n", (k + 1) % 1000),
        );
    }
    let s = w.snapshot("", "repo");
    // Depth 5 stops it long before the cycle closes.
    assert_eq!(s.imports.len(), 6);

    let w = World::new();
    let names: Vec<String> = (0..10_000).map(|k| format!("@f{k}.md")).collect();
    w.write("repo/AGENTS.md", &names.join(" "));
    for k in 0..200 {
        w.write(&format!("repo/f{k}.md"), "x\n");
    }
    let s = w.snapshot("import-max-files = 100\n", "repo");
    let inlined = s.imports.iter().filter(|i| i.reason.is_none()).count();
    assert_eq!(inlined, 100);
    // Every token read is accounted for: the file is read only as far as
    // the budget and the per-file limit go, and past the hundredth file
    // each token is refused without opening anything.
    assert!(s.imports.len() > 1000 && s.imports.len() <= 10_000);
    assert!(
        s.imports[100..]
            .iter()
            .all(|i| i.reason.map(|r| r.as_str()) == Some("import-limit"))
    );
}

#[test]
fn imports_are_traced_by_the_fingerprint() {
    let w = World::new();
    w.write("repo/AGENTS.md", "@docs/a.md @docs/later.md\n");
    w.write("repo/docs/a.md", "one\n");
    let loader = Loader::builder()
        .policy(w.policy(""))
        .home(w.base.join("home"))
        .racy_window(std::time::Duration::ZERO)
        .build()
        .unwrap();
    let cwd = w.base.join("repo");
    let first = loader.fingerprint(&cwd).unwrap();
    next_timestamp_tick(&w.base);
    w.write("repo/docs/a.md", "two\n");
    let second = loader.fingerprint(&cwd).unwrap();
    assert_ne!(first, second);
    // A missing import appearing changes it too.
    next_timestamp_tick(&w.base);
    w.write("repo/docs/later.md", "now here\n");
    let third = loader.fingerprint(&cwd).unwrap();
    assert_ne!(second, third);
    let fresh = lisa_context::build(&w.policy(""), Some(&w.base.join("home")), &cwd, None).unwrap();
    assert_eq!(fresh.fingerprint, third);
}

#[test]
fn lisa_does_not_import() {
    let w = World::new();
    w.write("repo/AGENTS.md", "@docs/a.md\n");
    w.write("repo/docs/a.md", "IMPORTED-TEXT\n");
    let s = Loader::new(Policy::builtin().unwrap(), Some(w.base.join("home")))
        .snapshot(&w.base.join("repo"))
        .unwrap();
    assert!(s.imports.is_empty());
    assert!(s.prompt.contains("@docs/a.md"));
    assert!(!s.prompt.contains("IMPORTED-TEXT"));
}

#[test]
fn hidden_text_is_treated_per_file_and_the_frames_stay() {
    let w = World::new();
    w.write("repo/AGENTS.md", "See @docs/a.md <!-- a note -->\n");
    w.write("repo/docs/a.md", "A\u{200B}B <!-- imported note -->\n");
    let s = w.snapshot("[trust]\nhidden-text = \"strip\"\n", "repo");
    let text = &s.instruction_files[0].text;
    assert!(
        text.contains("<!-- Imported from: docs/a.md -->\nAB"),
        "{text}"
    );
    assert!(
        text.contains("<!-- End of import from: docs/a.md -->"),
        "{text}"
    );
    assert!(
        !text.contains("a note") && !text.contains("imported note"),
        "{text}"
    );
    let found = &s.hidden_text[0].report;
    assert_eq!((found.characters, found.html_comments), (1, 2));
    assert_eq!(found.kinds, ["zero-width", "html-comment"]);
}

/// Kiro's `#[[file:path]]` (`import-syntax = "file-reference"`): paths from
/// the importing file's root, the same bounds as `@path`, and a failed
/// reference left as written.
#[test]
fn file_references_are_named_from_the_root_and_held_to_it() {
    let w = World::new();
    w.write("outside/secret.md", "SECRET\n");
    w.write(
        "repo/.kiro/steering/api.md",
        "API rules.\n#[[file:docs/openapi.md]]\nNot `#[[file:docs/openapi.md]]` here.\n\
         @docs/openapi.md stays text.\n#[[file:../outside/secret.md]] #[[file:missing.md]]\n",
    );
    w.write("repo/docs/openapi.md", "OPENAPI BODY\n");
    let policy = support::layered(
        Layer::CommandLine,
        "kiro-like.toml",
        "version = 1\n[instructions]\nimport-depth = 5\ncompat.import-failure = \"literal\"\n\
         compat.import-syntax = \"file-reference\"\nlevel-files = [\"AGENTS.md\", \".kiro/steering/*.md\"]\n",
    );
    let s = w.loader_on(policy).snapshot(&w.repo).unwrap();
    assert_eq!(
        outcomes(&s),
        pairs(&[
            ("docs/openapi.md", "inlined"),
            ("../outside/secret.md", "import-outside-root"),
            ("missing.md", "import-missing"),
        ])
    );
    let text = &s.instruction_files[0].text;
    assert!(text.contains("OPENAPI BODY"), "{text}");
    assert!(text.contains("`#[[file:docs/openapi.md]]`"), "{text}");
    assert!(text.contains("@docs/openapi.md stays text."), "{text}");
    assert!(
        text.contains("#[[file:../outside/secret.md]] #[[file:missing.md]]"),
        "{text}"
    );
    assert!(!s.prompt.contains("SECRET"));
}

#[test]
fn the_kiro_policy_follows_file_references() {
    let w = World::new();
    w.write(
        "repo/.kiro/steering/tech.md",
        "Stack notes.\n#[[file:package.json]]\n",
    );
    w.write("repo/package.json", "{\"name\": \"demo\"}\n");
    let l = Loader::builder()
        .home(&w.home)
        .home_policy(false)
        .shipped_policy("kiro")
        .build()
        .unwrap();
    let s = l.snapshot(&w.repo).unwrap();
    assert!(s.prompt.contains("{\"name\": \"demo\"}"), "{}", s.prompt);
    assert_eq!(outcomes(&s), pairs(&[("package.json", "inlined")]));
}

/// `instructions.compat.self-import-cycle`: a file that imports itself is a
/// cycle at once (Claude Code 2.1.332, recorded:
/// `tests/compat/expected/claude-code/rand-20261206-109-claude-code.json`),
/// also where the file lies outside the imports' bound; without it the file
/// is inlined once and the import inside that copy is the cycle.
#[test]
fn self_import_cycle_makes_a_self_import_a_cycle_at_once() {
    let w = World::new();
    w.write("repo/AGENTS.md", "Root.\n@AGENTS.md\n@./sub/../AGENTS.md\n");
    let once = w.snapshot("", "repo");
    assert_eq!(
        outcomes(&once),
        pairs(&[
            ("AGENTS.md", "inlined"),
            ("AGENTS.md", "import-cycle"),
            ("./sub/../AGENTS.md", "import-cycle"),
            ("./sub/../AGENTS.md", "inlined"),
            ("AGENTS.md", "import-cycle"),
            ("./sub/../AGENTS.md", "import-cycle"),
        ])
    );
    let at_once = w.snapshot("compat.self-import-cycle = true\n", "repo");
    assert_eq!(
        outcomes(&at_once),
        pairs(&[
            ("AGENTS.md", "import-cycle"),
            ("./sub/../AGENTS.md", "import-cycle"),
        ])
    );
    assert!(!at_once.instruction_files[0].text.contains("Imported from"));
}
