//! The constraints declared with the schema's keys: every template held to
//! its placeholders (the ones the code fills), the shipped names in one
//! list, and `explain` naming the key behind a reason.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use lisa_context::Loader;
use lisa_context::policy::{
    Layer, Policy, PolicyError, PolicySource, Problem, SHIPPED, SHIPPED_NAMES,
};

fn layered(text: &str) -> Result<Policy, PolicyError> {
    Policy::from_sources(&[
        PolicySource::builtin(),
        PolicySource::from_text(Layer::CommandLine, "extra.toml", text),
    ])
}

/// The (code, spanned text, message) of every problem `text` has.
fn refused(text: &str) -> Vec<(String, String, String)> {
    let Err(PolicyError::Invalid(inv)) = layered(text) else {
        panic!("accepted:\n{text}");
    };
    inv.problems
        .iter()
        .map(|p: &Problem| {
            (
                p.kind.code().to_string(),
                text[p.span.clone()].to_string(),
                p.message.clone(),
            )
        })
        .collect()
}

#[test]
fn an_ancestor_header_is_held_to_its_placeholders_and_its_nonce() {
    let text = "version = 1\n[templates]\nancestor-header = \"<<<{path} {bogus}>>>\"\n";
    let found = refused(text);
    assert_eq!(
        found,
        [
            (
                "policy::missing-placeholder".to_string(),
                "\"<<<{path} {bogus}>>>\"".to_string(),
                "template `templates.ancestor-header` must contain {nonce}".to_string(),
            ),
            (
                "policy::unknown-placeholder".to_string(),
                "bogus".to_string(),
                "template `templates.ancestor-header` uses unknown placeholder {bogus}".to_string(),
            ),
        ]
    );
    let Err(PolicyError::Invalid(inv)) = layered(text) else {
        unreachable!()
    };
    let unknown = &inv.problems[1];
    assert_eq!(unknown.label, "unknown placeholder");
    assert_eq!(
        unknown.help.as_deref(),
        Some("this template accepts {path}, {origin}, {nonce}; write {{ and }} for literal braces")
    );
    assert_eq!(inv.problems[0].label, "missing {nonce}");
}

#[test]
fn the_templates_never_checked_before_refuse_what_the_code_does_not_fill() {
    let cases = [
        // (key, a placeholder the code does not fill)
        ("description-cut-suffix", "count"),
        ("import-open", "reason"),
        ("import-close", "nonce"),
        ("import-failed", "origin"),
    ];
    for (key, bad) in cases {
        let text = format!("version = 1\n[templates]\n{key} = \"x {{{bad}}} y\"\n");
        let found = refused(&text);
        assert_eq!(found.len(), 1, "{key}: {found:?}");
        assert_eq!(found[0].0, "policy::unknown-placeholder", "{key}");
        assert_eq!(found[0].1, bad, "{key}");
        assert_eq!(
            found[0].2,
            format!("template `templates.{key}` uses unknown placeholder {{{bad}}}")
        );
    }
    // What the code does fill is accepted.
    layered(
        "version = 1\n[templates]\ndescription-cut-suffix = \" [cut]\"\nimport-open = \"[{path}]\"\n\
         import-close = \"[/{path}]\"\nimport-failed = \"[{path}: {reason}]\"\n\
         ancestor-header = \"<<<{nonce} {origin} {path}>>>\"\n",
    )
    .expect("the placeholders the code fills are accepted");
}

#[test]
fn every_shipped_policy_still_validates() {
    assert_eq!(
        SHIPPED.iter().map(|(n, _)| *n).collect::<Vec<_>>(),
        SHIPPED_NAMES
    );
    for name in SHIPPED_NAMES {
        let source = PolicySource::shipped(name).expect("shipped");
        source.check().unwrap_or_else(|e| panic!("{name}: {e:?}"));
        Policy::from_sources(&[source]).unwrap_or_else(|e| panic!("{name}: {e:?}"));
    }
}

/// The import templates get exactly the placeholders declared for them:
/// `{path}` in the open and close lines, `{path}` and `{reason}` where an
/// import failed.
#[test]
fn import_templates_are_filled_with_their_placeholders() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::create_dir_all(root.join("home")).unwrap();
    fs::create_dir_all(root.join("repo/.git")).unwrap();
    fs::write(root.join("repo/AGENTS.md"), "@there.md\n@missing.md\n").unwrap();
    fs::write(root.join("repo/there.md"), "imported text\n").unwrap();
    let policy = layered(
        "version = 1\n[instructions]\nimport-depth = 1\ncompat.import-failure = \"comment\"\n\
         [templates]\nimport-open = \"[open {path}]\"\nimport-close = \"[close {path}]\"\n\
         import-failed = \"[failed {path}: {reason}]\"\n",
    )
    .unwrap();
    let snap = Loader::new(policy, Some(root.join("home")))
        .snapshot(&root.join("repo"))
        .unwrap();
    for line in [
        "[open there.md]",
        "imported text",
        "[close there.md]",
        "[failed missing.md: import-missing]",
    ] {
        assert!(snap.prompt.contains(line), "{line}:\n{}", snap.prompt);
    }
}

fn run(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lisa-context"))
        .args(args)
        .env_remove("LISA_HOME")
        .env_remove("NO_COLOR")
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn help_and_completions_list_every_shipped_policy() {
    let out = run(&["--help".as_ref()]);
    assert!(out.status.success(), "{out:?}");
    let help = text(&out.stdout);
    let list = SHIPPED_NAMES.join(", ");
    assert!(
        help.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .contains(&format!("({list})")),
        "{help}"
    );
    let out = run(&["completions".as_ref(), "bash".as_ref()]);
    assert!(out.status.success(), "{out:?}");
    let script = text(&out.stdout);
    for name in SHIPPED_NAMES {
        assert!(script.contains(name), "bash completion lacks {name}");
    }
    // A path is still a path.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("p.toml");
    fs::write(&file, "version = 1\n").unwrap();
    let out = run(&[
        "--home".as_ref(),
        dir.path().as_os_str(),
        "--policy".as_ref(),
        file.as_os_str(),
        "policy".as_ref(),
        "check".as_ref(),
    ]);
    assert!(out.status.success(), "{out:?}");
}

fn explain(home: &Path, cwd: &Path) -> String {
    let out = run(&[
        "--home".as_ref(),
        home.as_os_str(),
        "explain".as_ref(),
        "--cwd".as_ref(),
        cwd.as_os_str(),
    ]);
    assert!(out.status.success(), "{out:?}");
    text(&out.stdout)
}

#[test]
fn explain_names_the_key_behind_a_reason_and_the_layer_that_set_it() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let repo = dir.path().join("repo");
    fs::create_dir_all(&home).unwrap();
    fs::create_dir_all(repo.join(".git")).unwrap();
    fs::write(repo.join("notes.md"), "notes\n").unwrap();
    std::os::unix::fs::symlink("notes.md", repo.join("AGENTS.md")).unwrap();
    fs::write(repo.join("CLAUDE.md"), "x".repeat(100)).unwrap();
    // The built-in policy follows a link inside the root.
    let table = explain(&home, &repo);
    assert!(!table.contains("symlink-refused"), "{table}");
    fs::write(
        home.join("context-policy.toml"),
        "version = 1\n[trust]\nsymlinks = \"never\"\n[instructions]\nskip-larger-than = 10\n",
    )
    .unwrap();
    let table = explain(&home, &repo);
    assert!(
        table.contains("symlink-refused (trust.symlinks, set in home)"),
        "{table}"
    );
    assert!(
        table.contains("too-large (instructions.skip-larger-than, set in home)"),
        "{table}"
    );
}
