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

// ------------------------------------------------------------ Claude Code

/// A loader on the shipped Claude Code policy whose `HOME` is this world's
/// `home` (so its home root is `home/.claude` and its named root `user` is
/// `home`), with `overlay` laid over it when not empty.
fn claude(w: &World, overlay: &str) -> Loader {
    let home = w.home.clone();
    let mut b = Loader::builder()
        .shipped_policy("claude-code")
        .home_policy(false)
        .env(move |name| (name == "HOME").then(|| home.clone().into_os_string()))
        .racy_window(std::time::Duration::ZERO);
    if !overlay.is_empty() {
        let file = w.write("overlay.toml", &format!("version = 1\n{overlay}"));
        b = b.policy_file(file);
    }
    b.build().unwrap()
}

/// (file the import is in, relative to `base`; spec; outcome).
fn outcomes_from(w: &World, s: &Snapshot) -> Vec<(String, String, String)> {
    s.imports
        .iter()
        .map(|i| {
            let outcome = i.reason.map_or("inlined", |r| r.as_str());
            (w.rel(&i.from), i.spec.clone(), outcome.to_string())
        })
        .collect()
}

fn triples(list: &[(&str, &str, &str)]) -> Vec<(String, String, String)> {
    list.iter()
        .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
        .collect()
}

/// `instructions.compat.home-import-root = "user-roots"` and `tilde-imports`
/// (Claude Code 2.1.332, recorded: `claude-imports-home-roots`): the user's
/// CLAUDE.md imports from its own folder and from the home above it,
/// wherever the cwd is, `@~/` names a file in the home, and from the
/// repository the same `@~/` lies outside the cwd. Each import is traced
/// through the root it was read in.
#[test]
fn the_users_claude_md_imports_from_the_users_roots_wherever_the_cwd_is() {
    let w = World::new();
    w.write(
        "home/.claude/CLAUDE.md",
        "User @inc/part.md @../up.md @~/notes.md @missing.md\n",
    );
    w.write("home/.claude/inc/part.md", "PART-TEXT\n");
    w.write("home/up.md", "UP-TEXT @./more.md\n");
    w.write("home/more.md", "MORE-TEXT\n");
    w.write("home/notes.md", "NOTES-TEXT\n");
    w.write("repo/app/CLAUDE.md", "Project @~/notes.md @../x.md\n");
    w.write("repo/x.md", "X-TEXT\n");
    let loader = claude(&w, "");
    let cwd = w.path("repo/app");
    let s = loader.snapshot(&cwd).unwrap();
    assert_eq!(
        outcomes_from(&w, &s),
        triples(&[
            ("home/.claude/CLAUDE.md", "inc/part.md", "inlined"),
            ("home/.claude/CLAUDE.md", "../up.md", "inlined"),
            ("home/up.md", "./more.md", "inlined"),
            ("home/.claude/CLAUDE.md", "~/notes.md", "inlined"),
            ("home/.claude/CLAUDE.md", "missing.md", "import-missing"),
            ("repo/app/CLAUDE.md", "~/notes.md", "import-outside-root"),
            ("repo/app/CLAUDE.md", "../x.md", "import-outside-root"),
        ])
    );
    let paths: Vec<String> = s
        .imports
        .iter()
        .filter_map(|i| i.path.as_deref().map(|p| w.rel(p)))
        .collect();
    assert_eq!(
        paths,
        [
            "home/.claude/inc/part.md",
            "home/up.md",
            "home/more.md",
            "home/notes.md",
            "home/.claude/missing.md"
        ]
    );
    let home_block = &s.instruction_files[0].text;
    for text in ["PART-TEXT", "UP-TEXT", "MORE-TEXT", "NOTES-TEXT"] {
        assert!(home_block.contains(text), "{text}: {home_block}");
    }
    assert!(!s.prompt.contains("X-TEXT"), "{}", s.prompt);
    // A file read through the home above the home root is traced there.
    let first = loader.fingerprint(&cwd).unwrap();
    next_timestamp_tick(&w.base);
    w.write("home/more.md", "MORE-TEXT, changed\n");
    assert_ne!(loader.fingerprint(&cwd).unwrap(), first);
    // Without the two keys the home's imports stay inside the cwd, and
    // `@~/` is no import at all.
    let plain = claude(
        &w,
        "[instructions.compat]\nhome-import-root = \"import-root\"\ntilde-imports = false\n",
    )
    .snapshot(&cwd)
    .unwrap();
    assert_eq!(
        outcomes_from(&w, &plain),
        triples(&[
            (
                "home/.claude/CLAUDE.md",
                "inc/part.md",
                "import-outside-root"
            ),
            ("home/.claude/CLAUDE.md", "../up.md", "import-outside-root"),
            (
                "home/.claude/CLAUDE.md",
                "missing.md",
                "import-outside-root"
            ),
            ("repo/app/CLAUDE.md", "../x.md", "import-outside-root"),
        ])
    );
    assert!(!plain.prompt.contains("PART-TEXT"));
}

/// A home file's imports never leave the user's roots: not by `..` past
/// the home, an absolute path or `~/..`, and not by a link, whether it
/// leaves the home root for the home above it (each root is its own
/// sandbox) or leaves the home altogether. Claude Code reads all of these
/// (`claude-imports-home-outside`, intended: guarantee 2).
#[test]
fn a_home_import_cannot_escape_the_users_roots_by_dotdot_or_a_link() {
    let w = World::new();
    w.write("outside/secret.md", "SECRET-OUTSIDE\n");
    w.write("home/notes.md", "NOTES-IN-HOME\n");
    let link = |target: &str, at: &str| {
        std::os::unix::fs::symlink(target, w.path(at)).unwrap();
    };
    w.mkdir("home/.claude");
    link("../../outside/secret.md", "home/.claude/out.md");
    link("../notes.md", "home/.claude/up-link.md");
    link("../outside/secret.md", "home/out.md");
    link("..", "home/parent");
    let secret = w.path("outside/secret.md");
    w.write(
        "home/.claude/CLAUDE.md",
        &format!(
            "@../../outside/secret.md @~/../outside/secret.md @{} @out.md @up-link.md \
             @~/out.md @~/parent/outside/secret.md\n",
            secret.display()
        ),
    );
    let s = claude(&w, "").snapshot(&w.repo).unwrap();
    let reasons: Vec<String> = outcomes_from(&w, &s).into_iter().map(|t| t.2).collect();
    assert_eq!(
        reasons,
        [
            "import-outside-root",
            "import-outside-root",
            "import-outside-root",
            "symlink-escape",
            "symlink-escape",
            "symlink-escape",
            "symlink-escape",
        ],
        "{:?}",
        s.imports
    );
    assert!(!s.prompt.contains("SECRET-OUTSIDE"), "{}", s.prompt);
    assert!(!s.prompt.contains("NOTES-IN-HOME"), "{}", s.prompt);
}

/// A home file never imports a file of the repository through the home
/// above the home root (its bytes would enter as the user's, where no
/// approval is asked): not by `@~/`, not by `..`, not by a link in the
/// home that leads into it. Claude Code reads it
/// (`claude-imports-home-into-repo`, intended: guarantee 12).
#[test]
fn a_home_import_never_takes_in_the_repositorys_files() {
    let w = World::new();
    let repo = w.repo_at("home/proj");
    w.write("home/proj/notes.md", "REPO-NOTES\n");
    std::os::unix::fs::symlink("proj/notes.md", w.path("home/via-link.md")).unwrap();
    w.write(
        "home/.claude/CLAUDE.md",
        "@~/proj/notes.md @../proj/notes.md @~/via-link.md\n",
    );
    let s = claude(&w, "").snapshot(&repo).unwrap();
    let reasons: Vec<String> = outcomes_from(&w, &s).into_iter().map(|t| t.2).collect();
    assert_eq!(reasons, ["import-outside-root"; 3], "{:?}", s.imports);
    assert!(!s.prompt.contains("REPO-NOTES"), "{}", s.prompt);
}

/// `instructions.compat.import-once` (Claude Code 2.1.332, recorded:
/// `claude-imports-home-roots`): a file the build has read is not imported
/// again, by the same file or another chain file; a missing one is looked
/// for each time. Without it a file is inlined each time it is named.
#[test]
fn import_once_reads_each_file_once_a_build() {
    let w = World::new();
    w.write(
        "repo/CLAUDE.md",
        "@shared.md @shared.md @missing.md @missing.md @CLAUDE.local.md\n",
    );
    w.write("repo/CLAUDE.local.md", "LOCAL @shared.md @./CLAUDE.md\n");
    w.write("repo/shared.md", "SHARED-TEXT\n");
    let s = claude(&w, "").snapshot(&w.repo).unwrap();
    assert_eq!(
        outcomes_from(&w, &s),
        triples(&[
            ("repo/CLAUDE.md", "shared.md", "inlined"),
            ("repo/CLAUDE.md", "shared.md", "import-repeated"),
            ("repo/CLAUDE.md", "missing.md", "import-missing"),
            ("repo/CLAUDE.md", "missing.md", "import-missing"),
            ("repo/CLAUDE.md", "CLAUDE.local.md", "inlined"),
            ("repo/CLAUDE.local.md", "shared.md", "import-repeated"),
            ("repo/CLAUDE.local.md", "./CLAUDE.md", "import-cycle"),
            ("repo/CLAUDE.local.md", "shared.md", "import-repeated"),
            ("repo/CLAUDE.local.md", "./CLAUDE.md", "import-repeated"),
        ])
    );
    assert_eq!(
        s.instruction_files[0].text.matches("SHARED-TEXT").count(),
        1
    );
    let twice = claude(&w, "[instructions.compat]\nimport-once = false\n")
        .snapshot(&w.repo)
        .unwrap();
    assert_eq!(
        twice.instruction_files[0]
            .text
            .matches("SHARED-TEXT")
            .count(),
        3,
        "{}",
        twice.instruction_files[0].text
    );
}

/// An import outside the folder imports must stay in (Claude Code: the
/// cwd) is refused before it is looked for, in a file of the repository
/// above the cwd and in a file above the repository alike (recorded:
/// `claude-imports-above-cwd`, `rand-20261206-151-claude-code`): whether
/// the file exists makes no difference, to the answer or to the
/// fingerprint. An ancestor file's import inside the cwd is still not
/// followed (`import-from-ancestor`).
#[test]
fn an_import_outside_the_cwd_is_refused_before_it_is_looked_for() {
    let w = World::new();
    let inner = w.repo_at("repo/x");
    w.write("repo/CLAUDE.md", "Above @gone.md @x/a/here.md\n");
    w.write("repo/x/CLAUDE.md", "Root @gone.md @notes.md @a/here.md\n");
    w.write("repo/x/notes.md", "ROOT-NOTES\n");
    w.write("repo/x/a/here.md", "HERE-TEXT\n");
    let loader = claude(&w, "");
    let cwd = inner.join("a");
    let s = loader.snapshot(&cwd).unwrap();
    assert_eq!(
        outcomes_from(&w, &s),
        triples(&[
            ("repo/CLAUDE.md", "gone.md", "import-outside-root"),
            ("repo/CLAUDE.md", "x/a/here.md", "import-from-ancestor"),
            ("repo/x/CLAUDE.md", "gone.md", "import-outside-root"),
            ("repo/x/CLAUDE.md", "notes.md", "import-outside-root"),
            ("repo/x/CLAUDE.md", "a/here.md", "inlined"),
        ])
    );
    assert!(!s.prompt.contains("ROOT-NOTES"));
    let before = loader.fingerprint(&cwd).unwrap();
    next_timestamp_tick(&w.base);
    w.write("repo/gone.md", "NOW-HERE\n");
    w.write("repo/x/gone.md", "NOW-HERE\n");
    assert_eq!(loader.fingerprint(&cwd).unwrap(), before);
    let again = loader.snapshot(&cwd).unwrap();
    assert_eq!(outcomes_from(&w, &again), outcomes_from(&w, &s));
}

/// `@~/` from a repository file: the user's home, read only when the cwd
/// holds it (Claude Code 2.1.332, recorded: `claude-imports-tilde-cwd-home`,
/// the cwd at the home).
#[test]
fn a_tilde_import_from_the_repository_is_read_only_inside_the_cwd() {
    let w = World::new();
    w.repo_at("home");
    w.write(
        "home/CLAUDE.md",
        "Home project @~/notes.md @~/../outside.md\n",
    );
    w.write("home/notes.md", "NOTES-IN-CWD\n");
    w.write("outside.md", "ABOVE-THE-CWD\n");
    let s = claude(&w, "").snapshot(&w.home).unwrap();
    assert_eq!(
        outcomes_from(&w, &s),
        triples(&[
            ("home/CLAUDE.md", "~/notes.md", "inlined"),
            ("home/CLAUDE.md", "~/../outside.md", "import-outside-root"),
        ])
    );
    assert!(s.prompt.contains("NOTES-IN-CWD"));
    assert!(!s.prompt.contains("ABOVE-THE-CWD"));
}
