//! The library's bootstrap: which home root, which policy layers, and the
//! loader built from both (`Loader::builder()`), with the environment
//! injected so nothing here reads the real home.

use std::collections::HashMap;
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};

use lisa_context::policy::{Layer, PolicyError};
use lisa_context::{BootstrapError, Loader};

use crate::support::World;

fn env(vars: &[(&str, &Path)]) -> impl Fn(&str) -> Option<OsString> + Send + Sync + 'static {
    let map: HashMap<String, OsString> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.as_os_str().to_os_string()))
        .collect();
    move |name| map.get(name).cloned()
}

/// A home root `base/name` holding an `AGENTS.md` that names it, and
/// optionally a policy file.
fn make_home(w: &World, name: &str, policy: Option<&str>) -> PathBuf {
    let home = w.write(&format!("{name}/AGENTS.md"), &format!("from {name}"));
    let home = home.parent().unwrap().to_path_buf();
    if let Some(p) = policy {
        fs::write(home.join("context-policy.toml"), p).unwrap();
    }
    home
}

/// `base/repo`, made a repository.
fn make_repo(w: &World) -> PathBuf {
    w.repo_at("repo")
}

/// (explicit --home, $LISA_HOME, $HOME) → which home directory wins.
#[test]
fn the_home_root_is_explicit_then_the_policy_candidates_in_order() {
    let w = World::empty();
    let explicit = make_home(&w, "explicit", None);
    let lisa = make_home(&w, "lisa", None);
    let user = w.base.join("user");
    let dot_lisa = user.join(".lisa");
    fs::create_dir_all(&dot_lisa).unwrap();
    let empty = Path::new("");
    type Case<'a> = (Option<&'a Path>, Vec<(&'a str, &'a Path)>, Option<PathBuf>);
    let cases: Vec<Case> = vec![
        (
            Some(&explicit),
            vec![("LISA_HOME", &lisa), ("HOME", &user)],
            Some(explicit.clone()),
        ),
        (
            None,
            vec![("LISA_HOME", &lisa), ("HOME", &user)],
            Some(lisa.clone()),
        ),
        // An empty variable counts as unset.
        (
            None,
            vec![("LISA_HOME", empty), ("HOME", &user)],
            Some(dot_lisa.clone()),
        ),
        (None, vec![("HOME", &user)], Some(dot_lisa.clone())),
        (None, vec![], None),
    ];
    for (explicit_home, vars, want) in cases {
        let mut b = Loader::builder().env(env(&vars));
        if let Some(h) = explicit_home {
            b = b.home(h);
        }
        let loader = b.build().unwrap();
        assert_eq!(
            loader.home().as_deref(),
            want.as_deref(),
            "explicit {explicit_home:?}, env {vars:?}"
        );
    }
}

#[test]
fn the_policy_is_read_from_the_home_that_was_chosen() {
    let w = World::empty();
    let home = make_home(
        &w,
        "lisa",
        Some("version = 1\n[instructions]\nbudget-bytes = 1234\n"),
    );
    let loader = Loader::builder()
        .env(env(&[("LISA_HOME", &home)]))
        .build()
        .unwrap();
    assert_eq!(loader.policy().unwrap().instructions.budget_bytes, 1234);
    assert_eq!(
        loader.policy().unwrap().origin("instructions.budget-bytes"),
        Some(Layer::Home)
    );
    let snap = loader.snapshot(&make_repo(&w)).unwrap();
    assert!(snap.prompt.contains("from lisa"));
}

#[test]
fn a_home_policy_that_sets_roots_home_is_refused_at_its_span() {
    let w = World::empty();
    let elsewhere = make_home(&w, "elsewhere", None);
    let policy = format!(
        "version = 1\n[roots]\nhome = [{:?}]\n",
        elsewhere.to_string_lossy()
    );
    let home = make_home(&w, "lisa", Some(&policy));
    let err = Loader::builder()
        .env(env(&[("LISA_HOME", &home)]))
        .build()
        .unwrap_err();
    let BootstrapError::Policy(PolicyError::Invalid(invalid)) = err else {
        panic!("expected an invalid policy, got {err:?}");
    };
    assert!(
        invalid.name.ends_with("context-policy.toml"),
        "{}",
        invalid.name
    );
    let problem = &invalid.problems[0];
    assert_eq!(
        &policy[problem.span.clone()],
        format!("[{:?}]", elsewhere.to_string_lossy())
    );
    assert!(
        problem.message.contains("roots.home"),
        "{}",
        problem.message
    );

    // The command line fails the same way, naming the file.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_lisa-context"))
        .args(["fingerprint", "--cwd"])
        .arg(make_repo(&w))
        .env("LISA_HOME", &home)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("roots.home"));
}

#[test]
fn an_explicit_home_must_exist_and_an_empty_lisa_home_is_unset() {
    let w = World::empty();
    let missing = w.base.join("no-such-home");
    let err = Loader::builder()
        .home(&missing)
        .env(env(&[]))
        .build()
        .unwrap_err();
    assert!(matches!(err, BootstrapError::MissingHome { .. }), "{err:?}");
    let file = w.base.join("a-file");
    fs::write(&file, "x").unwrap();
    let err = Loader::builder()
        .home(&file)
        .env(env(&[]))
        .build()
        .unwrap_err();
    assert!(matches!(err, BootstrapError::MissingHome { .. }), "{err:?}");

    let repo = make_repo(&w);
    let run = |args: &[&std::ffi::OsStr], lisa_home: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_lisa-context"))
            .args(args)
            .env("LISA_HOME", lisa_home)
            .env("HOME", w.base.join("user"))
            .output()
            .unwrap()
    };
    let out = run(
        &[
            "--home".as_ref(),
            missing.as_os_str(),
            "fingerprint".as_ref(),
            "--cwd".as_ref(),
            repo.as_os_str(),
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("no-such-home"));
    // `LISA_HOME=` counts as unset: the next candidate (~/.lisa, missing
    // here) applies, and a missing default home is fine.
    let out = run(
        &["fingerprint".as_ref(), "--cwd".as_ref(), repo.as_os_str()],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
}

#[test]
fn a_policy_file_is_laid_last_and_may_name_the_home() {
    let w = World::empty();
    let home = make_home(
        &w,
        "chosen",
        Some("version = 1\n[instructions]\nbudget-bytes = 1000\n"),
    );
    let file = w.base.join("team.toml");
    fs::write(
        &file,
        format!(
            "version = 1\n[roots]\nhome = [{:?}]\n[instructions]\nmax-file-bytes = 500\n",
            home.to_string_lossy()
        ),
    )
    .unwrap();
    let loader = Loader::builder()
        .env(env(&[]))
        .policy_file(&file)
        .build()
        .unwrap();
    assert_eq!(loader.home().as_deref(), Some(home.as_path()));
    let p = loader.policy().unwrap();
    assert_eq!(p.instructions.budget_bytes, 1000);
    assert_eq!(p.instructions.max_file_bytes, 500);
    assert_eq!(p.origin("instructions.budget-bytes"), Some(Layer::Home));
    assert_eq!(
        p.origin("instructions.max-file-bytes"),
        Some(Layer::CommandLine)
    );
}

#[test]
fn a_missing_policy_file_is_an_error_and_a_bad_home_policy_too() {
    let w = World::empty();
    let missing = w.base.join("missing.toml");
    let err = Loader::builder()
        .env(env(&[]))
        .policy_file(&missing)
        .build()
        .unwrap_err();
    assert!(
        matches!(err, BootstrapError::Policy(PolicyError::Unreadable { .. })),
        "{err:?}"
    );

    let home = make_home(
        &w,
        "broken",
        Some("version = 1\n[instructions]\nbudget-bytes = \"lots\"\n"),
    );
    let err = Loader::builder().home(&home).build().unwrap_err();
    assert!(
        matches!(err, BootstrapError::Policy(PolicyError::Invalid(_))),
        "{err:?}"
    );
}
