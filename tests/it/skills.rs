//! Skill discovery, from the outside: real directory trees in temp dirs, read
//! through the library (`Loader`) and the binary (`snapshot`, `explain`,
//! `skill show`, `fingerprint`).
//!
//! Every fixture has its own home root (`<tmp>/home`, skills in `skills/`),
//! a repository (`<tmp>/repo`, marked by a `.git` directory, skills in
//! `.lisa/skills` and `.agents/skills`) and a directory outside both roots
//! (`<tmp>/outside`) for symlink targets.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use assert_cmd::Command;
use lisa_context::Loader;
use lisa_context::policy::{Layer, Policy, PolicySource};
use serde_json::Value;

use crate::support::{self, World};
use crate::validate;

/// Planted in files outside the roots; must never show up in any output.
const MARKER: &str = "Q7-OUTSIDE-SECRET-MARKER-c41d";

/// How long a snapshot may take before it counts as hung.
const HANG: Duration = Duration::from_secs(20);

// ---------------------------------------------------------------------------
// Fixture
// ---------------------------------------------------------------------------

/// A [`World`] with the folder outside both roots.
fn fixture() -> World {
    let w = World::new();
    w.mkdir("outside");
    w
}

/// What these tests ask of their [`World`].
trait SkillsWorld {
    /// `<tmp>/outside`, outside both roots.
    fn outside(&self) -> PathBuf;
    /// `<home>/skills`.
    fn home_skills(&self) -> PathBuf;
    /// `<repo>/.lisa/skills`.
    fn lisa(&self) -> PathBuf;
    /// `<repo>/.agents/skills`.
    fn agents(&self) -> PathBuf;
    /// A loader whose policy has `overrides` (TOML, without `version`) laid
    /// over the built-in one.
    fn loader_with(&self, overrides: &str) -> Loader;
    /// The library's snapshot of the repository root, as JSON.
    fn json(&self) -> Value;
    /// The binary, with this fixture's home, no colour, and a deadline.
    fn bin(&self) -> Command;
    /// `snapshot --format json` from the binary.
    fn cli_json(&self, cwd: &Path) -> Value;
    /// `snapshot` (text) from the binary.
    fn cli_text(&self, cwd: &Path) -> String;
    /// `explain` from the binary.
    fn cli_explain(&self, cwd: &Path) -> String;
}

impl SkillsWorld for World {
    fn outside(&self) -> PathBuf {
        self.path("outside")
    }

    fn home_skills(&self) -> PathBuf {
        self.home.join("skills")
    }

    fn lisa(&self) -> PathBuf {
        self.repo.join(".lisa/skills")
    }

    fn agents(&self) -> PathBuf {
        self.repo.join(".agents/skills")
    }

    fn loader_with(&self, overrides: &str) -> Loader {
        self.loader_on(support::layered(
            Layer::CommandLine,
            "test override",
            format!("version = 1\n{overrides}"),
        ))
    }

    fn json(&self) -> Value {
        let snap = self.loader().snapshot(&self.repo).unwrap();
        serde_json::to_value(&*snap).unwrap()
    }

    fn bin(&self) -> Command {
        let mut cmd = self.cli();
        cmd.env("NO_COLOR", "1").timeout(HANG);
        cmd
    }

    fn cli_json(&self, cwd: &Path) -> Value {
        let out = stdout_of(
            self.bin()
                .args(["snapshot", "--format", "json", "--cwd"])
                .arg(cwd),
        );
        let json = serde_json::from_str(&out).expect("snapshot --format json prints JSON");
        validate::snapshot(&json);
        json
    }

    fn cli_text(&self, cwd: &Path) -> String {
        stdout_of(self.bin().args(["snapshot", "--cwd"]).arg(cwd))
    }

    fn cli_explain(&self, cwd: &Path) -> String {
        stdout_of(self.bin().args(["explain", "--cwd"]).arg(cwd))
    }
}

fn stdout_of(cmd: &mut Command) -> String {
    let out = cmd.assert().success().get_output().stdout.clone();
    String::from_utf8(out).expect("stdout is UTF-8")
}

/// A well-formed SKILL.md. Both values are written as YAML double-quoted
/// scalars (JSON string syntax is valid there), so any text goes.
fn skill_md(name: &str, description: &str) -> String {
    format!(
        "---\nname: {}\ndescription: {}\n---\n# {name}\n\nHow to use {name}.\n",
        serde_json::to_string(name).unwrap(),
        serde_json::to_string(description).unwrap()
    )
}

/// Writes `<source>/<folder>/SKILL.md` with `content`; returns its path.
fn put(source: &Path, folder: &str, content: &str) -> PathBuf {
    let dir = source.join(folder);
    fs::create_dir_all(&dir).unwrap();
    let file = dir.join("SKILL.md");
    fs::write(&file, content).unwrap();
    file
}

/// A well-formed skill `<source>/<name>`; returns the SKILL.md path.
fn add(source: &Path, name: &str, description: &str) -> PathBuf {
    put(source, name, &skill_md(name, description))
}

fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs");
    assert!(status.success(), "mkfifo {}", path.display());
}

fn symlink(target: impl AsRef<Path>, link: impl AsRef<Path>) {
    std::os::unix::fs::symlink(target, link).unwrap();
}

fn p(v: &Value) -> PathBuf {
    PathBuf::from(v.as_str().expect("a path string"))
}

fn skills(j: &Value) -> &Vec<Value> {
    j["skills"].as_array().expect("skills is an array")
}

fn skill<'a>(j: &'a Value, name: &str) -> Option<&'a Value> {
    skills(j).iter().find(|s| s["name"] == name)
}

fn names(j: &Value) -> Vec<String> {
    skills(j)
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_string())
        .collect()
}

fn rejected(j: &Value) -> &Vec<Value> {
    j["rejectedSkills"]
        .as_array()
        .expect("rejectedSkills is an array")
}

/// The reasons of every rejection at `path` or below it.
fn reasons_at(j: &Value, path: &Path) -> Vec<String> {
    rejected(j)
        .iter()
        .filter(|r| p(&r["path"]).starts_with(path))
        .map(|r| r["reason"].as_str().unwrap().to_string())
        .collect()
}

/// `(name, path, shadowedBy)` of every shadowed skill, sorted.
fn shadowed(j: &Value) -> Vec<(String, PathBuf, PathBuf)> {
    let mut v: Vec<_> = j["shadowedProjectSkills"]
        .as_array()
        .expect("shadowedProjectSkills is an array")
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_string(),
                p(&s["path"]),
                p(&s["shadowedBy"]),
            )
        })
        .collect();
    v.sort();
    v
}

fn prompt(j: &Value) -> &str {
    j["prompt"].as_str().expect("prompt is a string")
}

/// The built-in policy's template strings, read from `policies/lisa.toml`.
fn template(key: &str) -> String {
    let text = fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/policies/lisa.toml"))
        .expect("policies/lisa.toml is readable");
    let table: toml::Table = toml::from_str(&text).expect("policies/lisa.toml parses");
    table["templates"][key]
        .as_str()
        .unwrap_or_else(|| panic!("templates.{key} is a string"))
        .to_string()
}

fn project_label() -> String {
    template("project-skill-label")
}

/// The prompt line listing skill `name`, if any.
fn prompt_line<'a>(prompt: &'a str, name: &str) -> Option<&'a str> {
    let plain = format!("- {name}: ");
    let labelled = format!("- {name}{}: ", project_label());
    prompt
        .lines()
        .find(|l| l.starts_with(&plain) || l.starts_with(&labelled))
}

/// The description as the prompt shows it for skill `name`.
fn prompt_description(prompt: &str, name: &str) -> String {
    let line = prompt_line(prompt, name)
        .unwrap_or_else(|| panic!("no prompt line for {name} in:\n{prompt}"));
    let plain = format!("- {name}: ");
    let labelled = format!("- {name}{}: ", project_label());
    line.strip_prefix(&labelled)
        .or_else(|| line.strip_prefix(&plain))
        .unwrap()
        .to_string()
}

/// Runs `f` on another thread and fails the test if it takes longer than
/// [`HANG`] (a guard against blocking on a FIFO or exploding on YAML, not a
/// timing assertion).
fn without_hanging<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(HANG)
        .unwrap_or_else(|e| panic!("{what} did not finish within {HANG:?}: {e}"))
}

// ---------------------------------------------------------------------------
// Ranks and shadowing
// ---------------------------------------------------------------------------

#[test]
fn home_beats_lisa_beats_agents_and_losers_are_recorded_as_shadowed() {
    let fx = fixture();
    // One name per non-empty subset of the three sources: (name, in home, in
    // .lisa, in .agents).
    let cases: &[(&str, bool, bool, bool)] = &[
        ("all-three", true, true, true),
        ("home-and-lisa", true, true, false),
        ("home-and-agents", true, false, true),
        ("lisa-and-agents", false, true, true),
        ("only-home", true, false, false),
        ("only-lisa", false, true, false),
        ("only-agents", false, false, true),
    ];
    let sources = [
        (fx.home_skills(), "skills", 0, "home", "from home"),
        (fx.lisa(), ".lisa/skills", 100, "project", "from .lisa"),
        (
            fx.agents(),
            ".agents/skills",
            200,
            "project",
            "from .agents",
        ),
    ];
    for &(name, h, l, a) in cases {
        for (present, (dir, _, _, _, word)) in [h, l, a].into_iter().zip(&sources) {
            if present {
                add(dir, name, &format!("{name} {word}"));
            }
        }
    }

    let j = fx.json();
    let mut want_names: Vec<String> = cases.iter().map(|c| c.0.to_string()).collect();
    want_names.sort();
    assert_eq!(
        names(&j),
        want_names,
        "skills are in name order, one per name"
    );

    let mut want_shadowed = Vec::new();
    for &(name, h, l, a) in cases {
        let present: Vec<_> = [h, l, a]
            .into_iter()
            .zip(&sources)
            .filter(|(present, _)| *present)
            .map(|(_, s)| s)
            .collect();
        let (dir, source, rank, origin, word) = present[0];
        let winner = dir.join(name).join("SKILL.md");
        let s = skill(&j, name).unwrap();
        let keys: Vec<&str> = s.as_object().unwrap().keys().map(String::as_str).collect();
        for key in [
            "name",
            "description",
            "origin",
            "source",
            "rank",
            "path",
            "executable",
        ] {
            assert!(keys.contains(&key), "{name}: key {key} missing in {s}");
        }
        assert_eq!(s["name"], name);
        assert_eq!(s["description"], format!("{name} {word}"), "{name}");
        assert_eq!(s["origin"], *origin, "{name}");
        assert_eq!(s["source"], *source, "{name}");
        assert_eq!(s["rank"], *rank, "{name}");
        assert_eq!(p(&s["path"]), winner, "{name}");
        assert_eq!(s["executable"], false, "{name}");
        for (loser_dir, ..) in &present[1..] {
            want_shadowed.push((
                name.to_string(),
                loser_dir.join(name).join("SKILL.md"),
                winner.clone(),
            ));
        }
        // Only the winner's description reaches the prompt.
        let pr = prompt(&j);
        assert_eq!(prompt_description(pr, name), format!("{name} {word}"));
        for (_, _, _, _, other_word) in &present[1..] {
            assert!(
                !pr.contains(&format!("{name} {other_word}")),
                "{name}: a shadowed description reached the prompt"
            );
        }
    }
    want_shadowed.sort();
    assert_eq!(shadowed(&j), want_shadowed);
    assert!(rejected(&j).is_empty(), "{}", j["rejectedSkills"]);

    // The binary agrees with the library.
    let cli = fx.cli_json(&fx.repo);
    assert_eq!(cli["skills"], j["skills"]);
    assert_eq!(shadowed(&cli), want_shadowed);

    // explain lists each shadowed skill with its winner.
    let explain = fx.cli_explain(&fx.repo);
    for (name, loser, winner) in &want_shadowed {
        let row = format!("{name} is claimed by {}", in_repo(&fx.repo, winner));
        assert!(
            explain
                .lines()
                .any(|l| l.contains(&in_repo(&fx.repo, loser)) && l.contains(&row)),
            "explain has no shadowed row for {}:\n{explain}",
            loser.display()
        );
    }
}

// ---------------------------------------------------------------------------
// Impostors
// ---------------------------------------------------------------------------

#[test]
fn impostor_is_rejected_and_claims_nothing() {
    // A: `.lisa/skills/innocent` says it is `release`; nothing else is.
    let fx = fixture();
    put(&fx.lisa(), "innocent", &skill_md("release", "Ship it."));
    add(&fx.lisa(), "other", "An honest skill.");
    let j = fx.json();
    assert_eq!(
        reasons_at(&j, &fx.lisa().join("innocent")),
        vec!["impostor"]
    );
    assert_eq!(names(&j), vec!["other"]);
    assert!(skill(&j, "release").is_none() && skill(&j, "innocent").is_none());
    assert!(shadowed(&j).is_empty());
    assert!(!prompt(&j).contains("Ship it."), "{}", prompt(&j));
    let loader = fx.loader();
    assert!(matches!(
        loader.skill(&fx.repo, "release"),
        Err(lisa_context::SkillError::NotFound { .. })
    ));
    assert!(matches!(
        loader.skill(&fx.repo, "innocent"),
        Err(lisa_context::SkillError::NotFound { .. })
    ));
    for name in ["release", "innocent"] {
        fx.bin()
            .args(["skill", "show", name, "--cwd"])
            .arg(&fx.repo)
            .assert()
            .failure()
            .stdout("");
    }

    // B: a real `.agents/skills/release` (rank 200) still wins `release`: the
    // impostor at rank 100 shadows nothing.
    let fx = fixture();
    put(
        &fx.lisa(),
        "innocent",
        &skill_md("release", "Impostor text."),
    );
    let real = add(&fx.agents(), "release", "The real release skill.");
    let j = fx.json();
    let s = skill(&j, "release").expect("the real release skill wins");
    assert_eq!(p(&s["path"]), real);
    assert_eq!(s["rank"], 200);
    assert_eq!(s["description"], "The real release skill.");
    assert!(shadowed(&j).is_empty(), "{:?}", shadowed(&j));
    assert_eq!(
        reasons_at(&j, &fx.lisa().join("innocent")),
        vec!["impostor"]
    );
    assert!(!prompt(&j).contains("Impostor text."));
    let shown = stdout_of(
        fx.bin()
            .args(["skill", "show", "release", "--cwd"])
            .arg(&fx.repo),
    );
    assert_eq!(shown, fs::read_to_string(&real).unwrap());

    // C: an impostor in home does not beat the project's real skill either.
    let fx = fixture();
    put(
        &fx.home_skills(),
        "innocent",
        &skill_md("release", "Home impostor."),
    );
    let real = add(&fx.lisa(), "release", "Project release.");
    let j = fx.json();
    assert_eq!(p(&skill(&j, "release").unwrap()["path"]), real);
    assert!(shadowed(&j).is_empty());
    assert_eq!(
        reasons_at(&j, &fx.home_skills().join("innocent")),
        vec!["impostor"]
    );

    // D: a look-alike name (Cyrillic `е`) in the frontmatter of an ASCII
    // folder is an impostor too.
    let fx = fixture();
    put(
        &fx.lisa(),
        "deploy",
        &skill_md("d\u{0435}ploy", "Look-alike."),
    );
    let j = fx.json();
    assert!(skills(&j).is_empty());
    assert_eq!(reasons_at(&j, &fx.lisa().join("deploy")), vec!["impostor"]);
}

// ---------------------------------------------------------------------------
// Rejections
// ---------------------------------------------------------------------------

/// A SKILL.md of exactly `size` bytes: valid frontmatter, padded body.
fn padded_skill(name: &str, size: usize) -> String {
    let mut s = skill_md(name, "Padded.");
    assert!(s.len() < size);
    s.push_str(&"x".repeat(size - s.len()));
    s
}

fn billion_laughs(name: &str) -> String {
    let mut y = format!("---\nname: {name}\ndescription: Harmless.\n");
    y.push_str(
        "a0: &a0 [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    for i in 1..10 {
        let prev = format!("*a{}", i - 1);
        let items = [prev.as_str(); 9].join(",");
        y.push_str(&format!("a{i}: &a{i} [{items}]\n"));
    }
    y.push_str("---\nbody\n");
    y
}

#[test]
fn rejections_carry_their_reason() {
    let fx = fixture();
    let src = fx.lisa();
    let ok = |name: &str| skill_md(name, &format!("{name} is fine."));
    // (folder, expected reason); the folder is created by the match below.
    let cases: &[(&str, &str)] = &[
        ("Bad_Name", "invalid-name"),
        ("a--b", "invalid-name"),
        ("-x", "invalid-name"),
        ("x-", "invalid-name"),
        ("UPPER", "invalid-name"),
        ("d\u{0435}ploy", "invalid-name"),
        (
            "toolong-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            "invalid-name",
        ),
        (".hidden", "dot-folder"),
        (".git-tools", "dot-folder"),
        ("empty-folder", "missing-skill-file"),
        ("lowercase-file", "missing-skill-file"),
        ("huge", "too-large"),
        ("skill-md-is-dir", "not-regular-file"),
        ("no-fence", "bad-frontmatter"),
        ("unclosed", "bad-frontmatter"),
        ("broken-yaml", "bad-frontmatter"),
        ("list-root", "bad-frontmatter"),
        ("duplicate-keys", "bad-frontmatter"),
        // (An unquoted `: ` alone is read by Lisa's lenient fallback: see
        // `lenient_frontmatter_lists_skills_written_for_other_loaders`.)
        ("flow-unclosed", "bad-frontmatter"),
        ("no-desc", "missing-description"),
        ("empty-desc", "missing-description"),
        ("blank-desc", "missing-description"),
        ("list-desc", "missing-description"),
        ("no-name", "missing-name"),
        ("long-desc", "description-too-long"),
        ("notes", "not-a-directory"),
        ("innocent", "impostor"),
    ];
    assert_eq!(cases[6].0.chars().count(), 65);
    for &(folder, _) in cases {
        let dir = src.join(folder);
        match folder {
            "empty-folder" => fs::create_dir_all(&dir).unwrap(),
            "lowercase-file" => {
                fs::create_dir_all(&dir).unwrap();
                fs::write(dir.join("skill.md"), ok(folder)).unwrap();
            }
            "huge" => {
                put(&src, folder, &padded_skill(folder, 128 * 1024 + 1));
            }
            "skill-md-is-dir" => fs::create_dir_all(dir.join("SKILL.md")).unwrap(),
            "no-fence" => {
                put(&src, folder, "name: no-fence\ndescription: No fences.\n");
            }
            "unclosed" => {
                put(
                    &src,
                    folder,
                    "---\nname: unclosed\ndescription: Never closed.\n# body\n",
                );
            }
            "broken-yaml" => {
                put(
                    &src,
                    folder,
                    "---\nname: [broken-yaml\ndescription: x\n---\n",
                );
            }
            "list-root" => {
                put(&src, folder, "---\n- name\n- description\n---\n");
            }
            "duplicate-keys" => {
                put(
                    &src,
                    folder,
                    "---\nname: duplicate-keys\ndescription: One.\ndescription: Two.\n---\n",
                );
            }
            "flow-unclosed" => {
                put(
                    &src,
                    folder,
                    "---\nname: flow-unclosed\ndescription: [Deploy: ship the build\n---\n",
                );
            }
            "no-desc" => {
                put(&src, folder, "---\nname: no-desc\n---\n");
            }
            "empty-desc" => {
                put(
                    &src,
                    folder,
                    "---\nname: empty-desc\ndescription: \"\"\n---\n",
                );
            }
            "blank-desc" => {
                put(
                    &src,
                    folder,
                    "---\nname: blank-desc\ndescription: \"   \"\n---\n",
                );
            }
            "list-desc" => {
                put(
                    &src,
                    folder,
                    "---\nname: list-desc\ndescription: [a, b]\n---\n",
                );
            }
            "no-name" => {
                put(&src, folder, "---\ndescription: Nameless.\n---\n");
            }
            "long-desc" => {
                put(&src, folder, &skill_md(folder, &"d".repeat(1025)));
            }
            "notes" => {
                fs::create_dir_all(&src).unwrap();
                fs::write(&dir, ok("notes")).unwrap();
            }
            "innocent" => {
                put(&src, folder, &ok("release"));
            }
            _ => {
                put(&src, folder, &ok(folder));
            }
        }
    }
    // Accepted neighbours, right at the limits.
    let at_limit = put(&src, "at-limit", &padded_skill("at-limit", 128 * 1024));
    let max_name = "n".repeat(64);
    add(&src, &max_name, "A name of 64 characters.");
    add(&src, "fine", "Fine.");
    let long_ok = "e".repeat(1024);
    add(&src, "desc-at-limit", &long_ok);

    let j = fx.json();
    for &(folder, reason) in cases {
        assert_eq!(
            reasons_at(&j, &src.join(folder)),
            vec![reason],
            "folder {folder:?}"
        );
    }
    assert_eq!(
        rejected(&j).len(),
        cases.len(),
        "one rejection per case: {:#}",
        j["rejectedSkills"]
    );
    let mut want = vec![
        "at-limit".to_string(),
        max_name.clone(),
        "fine".to_string(),
        "desc-at-limit".to_string(),
    ];
    want.sort();
    assert_eq!(names(&j), want);
    assert_eq!(p(&skill(&j, "at-limit").unwrap()["path"]), at_limit);
    assert_eq!(skill(&j, "desc-at-limit").unwrap()["description"], long_ok);
    assert!(skill(&j, "release").is_none());

    // The binary reports the same rejections, and explain shows each reason.
    let cli = fx.cli_json(&fx.repo);
    assert_eq!(cli["rejectedSkills"], j["rejectedSkills"]);
    assert_eq!(cli["skills"], j["skills"]);
    let explain = fx.cli_explain(&fx.repo);
    for r in rejected(&j) {
        let path = in_repo(&fx.repo, &p(&r["path"]));
        let reason = r["reason"].as_str().unwrap();
        assert!(
            explain.lines().any(|l| l.starts_with("rejected")
                && l.contains(&path)
                && (l.ends_with(reason) || l.contains(&format!("  {reason} (")))),
            "explain has no row for {path} ({reason}):\n{explain}"
        );
    }
}

#[test]
fn home_skills_are_checked_by_the_same_rules() {
    let fx = fixture();
    let src = fx.home_skills();
    put(&src, "Bad_Name", &skill_md("Bad_Name", "x"));
    put(&src, ".dot", &skill_md(".dot", "x"));
    fs::create_dir_all(src.join("no-file")).unwrap();
    put(&src, "innocent", &skill_md("release", "x"));
    put(&src, "no-desc", "---\nname: no-desc\n---\n");
    add(&src, "good", "Good.");
    let j = fx.json();
    for (folder, reason) in [
        ("Bad_Name", "invalid-name"),
        (".dot", "dot-folder"),
        ("no-file", "missing-skill-file"),
        ("innocent", "impostor"),
        ("no-desc", "missing-description"),
    ] {
        assert_eq!(reasons_at(&j, &src.join(folder)), vec![reason], "{folder}");
    }
    assert_eq!(names(&j), vec!["good"]);
}

#[test]
fn non_utf8_folder_name_is_rejected_and_json_still_renders() {
    use std::os::unix::ffi::OsStrExt as _;
    let fx = fixture();
    add(&fx.lisa(), "fine", "Fine.");
    let bad = fx
        .lisa()
        .join(std::ffi::OsStr::from_bytes(b"bad-\xff-name"));
    fs::create_dir_all(&bad).unwrap();
    fs::write(bad.join("SKILL.md"), skill_md("bad-name", "x")).unwrap();

    let snap = fx.loader().snapshot(&fx.repo).unwrap();
    let reasons: Vec<&str> = snap
        .rejected_skills
        .iter()
        .filter(|r| r.path == bad)
        .map(|r| r.reason.as_str())
        .collect();
    assert_eq!(reasons, vec!["invalid-name"]);
    assert_eq!(snap.skills.len(), 1);

    // One oddly named folder in a repository must not make the JSON form of
    // the whole snapshot unavailable.
    let lib = serde_json::to_value(&*snap);
    assert!(
        lib.is_ok(),
        "the snapshot does not serialize: {}",
        lib.unwrap_err()
    );
    let cli = fx.cli_json(&fx.repo);
    assert!(skill(&cli, "fine").is_some());
    assert!(rejected(&cli).iter().any(|r| r["reason"] == "invalid-name"));
}

#[test]
fn fifo_skill_file_is_refused_without_hanging() {
    let fx = fixture();
    add(&fx.lisa(), "fine", "Fine.");
    fs::create_dir_all(fx.lisa().join("pipe")).unwrap();
    mkfifo(&fx.lisa().join("pipe/SKILL.md"));
    mkfifo(&fx.lisa().join("fifo-entry"));
    fs::create_dir_all(fx.home_skills().join("home-pipe")).unwrap();
    mkfifo(&fx.home_skills().join("home-pipe/SKILL.md"));

    let (home, repo) = (fx.home.clone(), fx.repo.clone());
    let (j, pipe_lookup) = without_hanging("a snapshot with FIFOs", move || {
        let loader = Loader::new(Policy::builtin().unwrap(), Some(home));
        let snap = loader.snapshot(&repo).unwrap();
        let lookup = loader.skill(&repo, "pipe").map(|s| s.content);
        (serde_json::to_value(&*snap).unwrap(), lookup.is_err())
    });
    assert_eq!(
        reasons_at(&j, &fx.lisa().join("pipe")),
        vec!["not-regular-file"]
    );
    assert_eq!(
        reasons_at(&j, &fx.home_skills().join("home-pipe")),
        vec!["not-regular-file"]
    );
    assert_eq!(
        reasons_at(&j, &fx.lisa().join("fifo-entry")),
        vec!["not-a-directory"]
    );
    assert_eq!(names(&j), vec!["fine"]);
    assert!(pipe_lookup, "skill(\"pipe\") must fail");

    // The binary neither (assert_cmd kills it after the timeout).
    let cli = fx.cli_json(&fx.repo);
    assert_eq!(cli["rejectedSkills"], j["rejectedSkills"]);
    fx.bin()
        .args(["skill", "show", "pipe", "--cwd"])
        .arg(&fx.repo)
        .assert()
        .failure();
}

#[test]
fn alias_bomb_and_deep_nesting_are_bad_frontmatter() {
    let fx = fixture();
    put(&fx.lisa(), "bomb", &billion_laughs("bomb"));
    put(&fx.home_skills(), "home-bomb", &billion_laughs("home-bomb"));
    let deep = format!(
        "---\nname: deep\ndescription: Deep.\nx: {}{}\n---\n",
        "[".repeat(5000),
        "]".repeat(5000)
    );
    put(&fx.lisa(), "deep", &deep);
    add(&fx.lisa(), "fine", "Fine.");

    let (home, repo) = (fx.home.clone(), fx.repo.clone());
    let j = without_hanging("a snapshot with an alias bomb", move || {
        let loader = Loader::new(Policy::builtin().unwrap(), Some(home));
        serde_json::to_value(&*loader.snapshot(&repo).unwrap()).unwrap()
    });
    for dir in [
        fx.lisa().join("bomb"),
        fx.home_skills().join("home-bomb"),
        fx.lisa().join("deep"),
    ] {
        assert_eq!(
            reasons_at(&j, &dir),
            vec!["bad-frontmatter"],
            "{}",
            dir.display()
        );
    }
    assert_eq!(names(&j), vec!["fine"]);
}

// ---------------------------------------------------------------------------
// Symlinks and leaks
// ---------------------------------------------------------------------------

#[test]
fn symlink_escapes_are_rejected_and_nothing_outside_leaks() {
    let fx = fixture();
    let out = &fx.outside();
    let secret = |name: &str| skill_md(name, &format!("{MARKER} from {name}"));

    // A SKILL.md that is an absolute link to a file outside the repo.
    fs::write(out.join("secret-abs.md"), secret("leak-file")).unwrap();
    fs::create_dir_all(fx.lisa().join("leak-file")).unwrap();
    symlink(
        out.join("secret-abs.md"),
        fx.lisa().join("leak-file/SKILL.md"),
    );
    // The same with a relative link (repo/.lisa/skills/leak-rel -> <tmp>).
    fs::write(out.join("secret-rel.md"), secret("leak-rel")).unwrap();
    fs::create_dir_all(fx.lisa().join("leak-rel")).unwrap();
    symlink(
        "../../../../outside/secret-rel.md",
        fx.lisa().join("leak-rel/SKILL.md"),
    );
    // A skill folder that is a link to a directory outside (relative, absolute).
    put(out, "leak-dir", &secret("leak-dir"));
    symlink("../../../outside/leak-dir", fx.lisa().join("leak-dir"));
    put(out, "leak-dir-abs", &secret("leak-dir-abs"));
    symlink(out.join("leak-dir-abs"), fx.lisa().join("leak-dir-abs"));
    // A repo link into the user's home (inside home, outside the repo).
    fs::create_dir_all(fx.home.join("notes")).unwrap();
    fs::write(fx.home.join("notes/private.md"), secret("steal-home")).unwrap();
    fs::create_dir_all(fx.lisa().join("steal-home")).unwrap();
    symlink(
        "../../../../home/notes/private.md",
        fx.lisa().join("steal-home/SKILL.md"),
    );
    // A whole skills source that is a link out of the repo.
    let srcdir = out.join("srcdir");
    put(&srcdir, "leak-src", &secret("leak-src"));
    fs::create_dir_all(fx.repo.join(".agents")).unwrap();
    symlink("../../outside/srcdir", fx.agents());
    // A home SKILL.md linking out of home.
    fs::write(out.join("home-secret.md"), secret("leak-home")).unwrap();
    fs::create_dir_all(fx.home_skills().join("leak-home")).unwrap();
    symlink(
        "../../../outside/home-secret.md",
        fx.home_skills().join("leak-home/SKILL.md"),
    );
    // Control: a relative link that stays inside the repo is followed.
    put(
        &fx.repo.join("docs"),
        "linked-inside",
        &skill_md("linked-inside", "Linked within the repository."),
    );
    symlink("../../docs/linked-inside", fx.lisa().join("linked-inside"));
    add(&fx.lisa(), "fine", "Fine.");

    let leaks = [
        "leak-file",
        "leak-rel",
        "leak-dir",
        "leak-dir-abs",
        "steal-home",
        "leak-src",
        "leak-home",
    ];
    let j = fx.json();
    for (at, name) in [
        (fx.lisa().join("leak-file"), "leak-file"),
        (fx.lisa().join("leak-rel"), "leak-rel"),
        (fx.lisa().join("leak-dir"), "leak-dir"),
        (fx.lisa().join("leak-dir-abs"), "leak-dir-abs"),
        (fx.lisa().join("steal-home"), "steal-home"),
        (fx.home_skills().join("leak-home"), "leak-home"),
    ] {
        assert_eq!(reasons_at(&j, &at), vec!["symlink-escape"], "{name}");
    }
    // The source itself is recorded, and nothing from it is examined.
    let agents_rows: Vec<&Value> = rejected(&j)
        .iter()
        .filter(|r| p(&r["path"]).starts_with(fx.agents()))
        .collect();
    assert_eq!(agents_rows.len(), 1, "{agents_rows:?}");
    assert_eq!(p(&agents_rows[0]["path"]), fx.agents());
    assert_eq!(agents_rows[0]["reason"], "symlink-escape");
    assert!(skills(&j).iter().all(|s| s["source"] != ".agents/skills"));

    assert_eq!(names(&j), vec!["fine", "linked-inside"]);
    assert_eq!(
        p(&skill(&j, "linked-inside").unwrap()["path"]),
        fx.lisa().join("linked-inside/SKILL.md")
    );

    // No output of any kind carries the outside text.
    let mut outputs = vec![
        ("library JSON", j.to_string()),
        ("snapshot --format json", fx.cli_json(&fx.repo).to_string()),
        ("snapshot", fx.cli_text(&fx.repo)),
        ("explain", fx.cli_explain(&fx.repo)),
    ];
    let loader = fx.loader();
    for name in leaks {
        match loader.skill(&fx.repo, name) {
            Ok(s) => panic!("skill({name}) resolved to {}", s.path.display()),
            Err(e) => outputs.push(("Loader::skill error", e.to_string())),
        }
        let o = fx
            .cli()
            .args(["skill", "show", name, "--cwd"])
            .arg(&fx.repo)
            .assert()
            .failure()
            .get_output()
            .clone();
        outputs.push((
            "skill show stdout",
            String::from_utf8_lossy(&o.stdout).into(),
        ));
        outputs.push((
            "skill show stderr",
            String::from_utf8_lossy(&o.stderr).into(),
        ));
    }
    for (what, text) in &outputs {
        assert!(
            !text.contains(MARKER),
            "{what} leaks the outside text:\n{text}"
        );
    }
}

// ---------------------------------------------------------------------------
// YAML forms
// ---------------------------------------------------------------------------

#[test]
fn quoted_colons_and_block_scalars_come_through() {
    let fx = fixture();
    // (source, name, frontmatter description lines, JSON description, prompt description)
    let home = fx.home_skills();
    let lisa = fx.lisa();
    let cases: Vec<(&Path, &str, &str, &str, &str)> = vec![
        (
            &home,
            "colon-double",
            "description: \"Deploy: ship the build, then tag it\"\n",
            "Deploy: ship the build, then tag it",
            "Deploy: ship the build, then tag it",
        ),
        (
            &lisa,
            "colon-single",
            "description: 'Note: it''s fine: really'\n",
            "Note: it's fine: really",
            "Note: it's fine: really",
        ),
        (
            &lisa,
            "folded",
            "description: >\n  Fill in PDF forms:\n  merge, split and sign.\n\n  Use it for any PDF task.\n",
            "Fill in PDF forms: merge, split and sign.\nUse it for any PDF task.",
            "Fill in PDF forms: merge, split and sign. Use it for any PDF task.",
        ),
        (
            &home,
            "folded-home",
            "description: >\n  Home: folded\n  over two lines.\n",
            "Home: folded over two lines.",
            "Home: folded over two lines.",
        ),
        (
            &lisa,
            "folded-strip",
            "description: >-\n  Stripped\n  folded.\n",
            "Stripped folded.",
            "Stripped folded.",
        ),
        (
            &lisa,
            "literal",
            "description: |\n  Line one: a.\n  Line two: b.\n",
            "Line one: a.\nLine two: b.",
            "Line one: a. Line two: b.",
        ),
    ];
    for (src, name, desc, ..) in &cases {
        put(
            src,
            name,
            &format!("---\nname: {name}\n{desc}license: MIT\n---\n# {name}\n"),
        );
    }
    // CRLF line endings.
    put(
        &lisa,
        "crlf",
        "---\r\nname: crlf\r\ndescription: \"Windows: line endings\"\r\n---\r\nbody\r\n",
    );

    let j = fx.json();
    assert!(rejected(&j).is_empty(), "{:#}", j["rejectedSkills"]);
    let pr = prompt(&j);
    for (src, name, _, want_json, want_prompt) in &cases {
        let s = skill(&j, name).unwrap_or_else(|| panic!("{name} missing"));
        assert_eq!(s["description"], *want_json, "{name} JSON");
        assert_eq!(p(&s["path"]), src.join(name).join("SKILL.md"));
        assert_eq!(prompt_description(pr, name), *want_prompt, "{name} prompt");
    }
    assert_eq!(
        skill(&j, "crlf").unwrap()["description"],
        "Windows: line endings"
    );
    assert_eq!(prompt_description(pr, "crlf"), "Windows: line endings");
    // Every skill entry is one line: no line after the heading is a loose
    // continuation of a description.
    let heading = pr
        .lines()
        .position(|l| l.starts_with("# Skills"))
        .expect("a skills heading");
    for line in pr.lines().skip(heading + 1) {
        assert!(
            line.starts_with("- "),
            "stray line in the skill list: {line:?}"
        );
    }

    // The binary's text output is the same prompt.
    assert_eq!(fx.cli_text(&fx.repo), pr);
}

// ---------------------------------------------------------------------------
// Caps
// ---------------------------------------------------------------------------

/// The expected prompt form of a project description: whitespace runs
/// collapsed, then at most `max` characters, the last being `…` when cut.
fn expected_cut(s: &str, max: usize) -> String {
    let one = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if one.chars().count() <= max {
        return one;
    }
    let mut out: String = one.chars().take(max - 1).collect();
    out.push('…');
    out
}

#[test]
fn project_descriptions_are_cut_to_500_chars_on_char_boundaries() {
    let fx = fixture();
    let mixed: String = "aé漢🦀".repeat(150);
    let spaced: String = "ab \n ".repeat(200);
    // (home?, name, description, whether the prompt cuts it)
    let cases: Vec<(bool, &str, String, bool)> = vec![
        (false, "cut-ascii", "a".repeat(600), true),
        (false, "cut-two-byte", "é".repeat(600), true),
        (false, "cut-cjk", "漢".repeat(600), true),
        (false, "cut-emoji", "🦀".repeat(600), true),
        (false, "cut-mixed", mixed, true),
        (false, "cut-after-collapse", spaced, true),
        (false, "exactly-500", "x".repeat(500), false),
        (false, "exactly-501", "y".repeat(501), true),
        (false, "short", "Short.".to_string(), false),
        (true, "home-long", "h".repeat(600), false),
        (true, "home-emoji", "🦀".repeat(700), false),
    ];
    for (home, name, desc, _) in &cases {
        let src = if *home { fx.home_skills() } else { fx.lisa() };
        add(&src, name, desc);
    }
    let j = fx.json();
    assert!(rejected(&j).is_empty(), "{:#}", j["rejectedSkills"]);
    let pr = prompt(&j);
    for (home, name, desc, cut) in &cases {
        // JSON keeps the whole description.
        assert_eq!(
            skill(&j, name).unwrap()["description"],
            desc.as_str(),
            "{name}"
        );
        let shown = prompt_description(pr, name);
        if *home {
            assert_eq!(shown, expected_cut(desc, usize::MAX), "{name}");
            continue;
        }
        assert_eq!(shown, expected_cut(desc, 500), "{name}");
        if *cut {
            assert_eq!(shown.chars().count(), 500, "{name}");
            assert!(shown.ends_with('…'), "{name}");
        } else {
            assert!(!shown.ends_with('…'), "{name}");
        }
    }
}

#[test]
fn sixty_project_skills_list_fifty_and_summarise_the_rest() {
    let fx = fixture();
    let project: Vec<String> = (0..60).map(|i| format!("p-{i:02}")).collect();
    for (i, name) in project.iter().enumerate() {
        // Spread over both project sources.
        let src = if i % 2 == 0 { fx.lisa() } else { fx.agents() };
        add(&src, name, &format!("Project skill {name}."));
    }
    // Home skills sort before and after the project ones and never count
    // toward the cap.
    add(&fx.home_skills(), "aa-home", "First home skill.");
    add(&fx.home_skills(), "zz-home", "Last home skill.");

    let j = fx.json();
    assert_eq!(j["hiddenProjectSkills"], 10);
    assert_eq!(skills(&j).len(), 62, "every skill still resolves");
    let pr = prompt(&j);
    let listed: Vec<&str> = pr
        .lines()
        .filter(|l| l.starts_with("- ") && !l.contains(" more "))
        .map(|l| {
            let rest = &l[2..];
            let end = rest.find([':', ' ']).unwrap();
            &rest[..end]
        })
        .collect();
    let mut want: Vec<&str> = vec!["aa-home"];
    want.extend(project[..50].iter().map(String::as_str));
    want.push("zz-home");
    assert_eq!(
        listed, want,
        "the first 50 project skills by name, plus home"
    );
    for name in &project[50..] {
        assert!(prompt_line(pr, name).is_none(), "{name} is listed");
        assert_eq!(skill(&j, name).unwrap()["listed"], false, "{name}");
    }
    for name in &project[..50] {
        assert_eq!(skill(&j, name).unwrap()["listed"], true, "{name}");
    }
    let more = template("more-skills").replace("{count}", "10");
    assert!(pr.lines().any(|l| l == more), "no {more:?} line in:\n{pr}");
    let heading = template("skills-heading").replace("{count}", "62");
    assert!(pr.lines().any(|l| l == heading), "no {heading:?} in:\n{pr}");
}

#[test]
fn scan_limit_stops_a_huge_source() {
    let fx = fixture();
    for i in 0..2000 {
        add(&fx.lisa(), &format!("s-{i:04}"), "Bulk.");
    }
    add(&fx.agents(), "agents-one", "Other source, unaffected.");
    let loader = fx.loader_with("[skills]\nmax-entries-per-source = 500\n");
    let snap = loader.snapshot(&fx.repo).unwrap();
    let j = serde_json::to_value(&*snap).unwrap();

    let src = fx.lisa();
    let limit_rows: Vec<&Value> = rejected(&j)
        .iter()
        .filter(|r| r["reason"] == "scan-limit")
        .collect();
    assert_eq!(limit_rows.len(), 1, "{:#}", j["rejectedSkills"]);
    assert_eq!(p(&limit_rows[0]["path"]), src);
    let from_source = skills(&j)
        .iter()
        .filter(|s| s["source"] == ".lisa/skills")
        .count();
    let rejected_below = rejected(&j)
        .iter()
        .filter(|r| p(&r["path"]).starts_with(&src) && p(&r["path"]) != src)
        .count();
    assert!(
        from_source + rejected_below <= 500,
        "{from_source} skills + {rejected_below} rejections examined"
    );
    assert_eq!(from_source, 500, "the cap examines 500 entries, not fewer");
    assert!(skill(&j, "agents-one").is_some());
    assert_eq!(j["hiddenProjectSkills"], 501 - 50);
}

#[test]
fn scan_limit_from_a_policy_file_on_the_command_line() {
    let fx = fixture();
    for i in 0..20 {
        add(&fx.lisa(), &format!("s-{i:02}"), "Bulk.");
    }
    let policy = fx.outside().join("policy.toml");
    fs::write(
        &policy,
        "version = 1\n[skills]\nmax-entries-per-source = 5\n",
    )
    .unwrap();
    let j = {
        let out = stdout_of(
            fx.bin()
                .arg("--policy")
                .arg(&policy)
                .args(["snapshot", "--format", "json", "--cwd"])
                .arg(&fx.repo),
        );
        serde_json::from_str::<Value>(&out).unwrap()
    };
    assert_eq!(skills(&j).len(), 5);
    assert_eq!(reasons_at(&j, &fx.lisa()), vec!["scan-limit"]);

    // A source holding exactly as many entries as the cap is not over it.
    let fx = fixture();
    for i in 0..5 {
        add(&fx.lisa(), &format!("s-{i:02}"), "Bulk.");
    }
    let loader = fx.loader_with("[skills]\nmax-entries-per-source = 5\n");
    let j = serde_json::to_value(&*loader.snapshot(&fx.repo).unwrap()).unwrap();
    assert_eq!(skills(&j).len(), 5);
    assert!(rejected(&j).is_empty(), "{:#}", j["rejectedSkills"]);
}

#[test]
fn two_thousand_skills_resolve_under_the_default_cap() {
    let fx = fixture();
    for i in 0..2000 {
        add(&fx.lisa(), &format!("s-{i:04}"), "Bulk.");
    }
    let j = fx.json();
    assert_eq!(skills(&j).len(), 2000);
    assert!(rejected(&j).is_empty(), "{:#}", j["rejectedSkills"]);
    assert_eq!(j["hiddenProjectSkills"], 1950);
    let more = template("more-skills").replace("{count}", "1950");
    assert!(prompt(&j).lines().any(|l| l == more));
}

// ---------------------------------------------------------------------------
// Labels and executables
// ---------------------------------------------------------------------------

#[test]
fn project_skills_carry_the_project_label_and_home_skills_none() {
    let label = project_label();
    assert_eq!(
        label, " (from this project: its convention, not your principle)",
        "the built-in label changed; update this test"
    );
    let fx = fixture();
    add(&fx.home_skills(), "h-one", "Home one.");
    add(&fx.lisa(), "p-lisa", "From lisa.");
    add(&fx.agents(), "p-agents", "From agents.");
    let j = fx.json();
    let pr = prompt(&j);
    let lines: Vec<&str> = pr.lines().filter(|l| l.starts_with("- ")).collect();
    assert_eq!(
        lines,
        vec![
            "- h-one: Home one.".to_string(),
            format!("- p-agents{label}: From agents."),
            format!("- p-lisa{label}: From lisa."),
        ]
    );
    assert_eq!(fx.cli_text(&fx.repo), pr);
}

#[test]
fn only_home_skills_with_the_executable_file_are_executable() {
    let fx = fixture();
    let tool = |dir: &Path| fs::write(dir.join("tool.js"), "console.log(1)\n").unwrap();
    // (source, name, how tool.js is there, executable?)
    let home = fx.home_skills();
    let lisa = fx.lisa();
    let agents = fx.agents();
    let cases: Vec<(&Path, &str, &str, bool)> = vec![
        (&home, "home-tool", "file", true),
        (&home, "home-plain", "none", false),
        (&home, "home-tool-dir", "dir", false),
        (&lisa, "lisa-tool", "file", false),
        (&agents, "agents-tool", "file", false),
    ];
    for (src, name, how, _) in &cases {
        let f = add(src, name, "Skill.");
        let dir = f.parent().unwrap();
        match *how {
            "file" => tool(dir),
            "dir" => fs::create_dir(dir.join("tool.js")).unwrap(),
            _ => {}
        }
    }
    // Shadowing: the winner decides.
    tool(add(&home, "both-home-exe", "Home.").parent().unwrap());
    add(&lisa, "both-home-exe", "Project.");
    add(&home, "both-proj-exe", "Home.");
    tool(add(&lisa, "both-proj-exe", "Project.").parent().unwrap());

    let j = fx.json();
    for (_, name, _, exe) in &cases {
        assert_eq!(skill(&j, name).unwrap()["executable"], *exe, "{name}");
    }
    assert_eq!(skill(&j, "both-home-exe").unwrap()["executable"], true);
    assert_eq!(skill(&j, "both-proj-exe").unwrap()["executable"], false);
    let cli = fx.cli_json(&fx.repo);
    assert_eq!(cli["skills"], j["skills"]);
}

// ---------------------------------------------------------------------------
// skill show
// ---------------------------------------------------------------------------

#[test]
fn skill_show_prints_the_winning_file_in_full() {
    let fx = fixture();
    let home_text = "---\nname: deploy\ndescription: \"Home deploy: the user's own\"\nlicense: MIT\nmetadata:\n  owner: me\n---\n# Deploy (home)\n\nStep 1.\nStep 2.\n";
    put(&fx.home_skills(), "deploy", home_text);
    put(
        &fx.lisa(),
        "deploy",
        "---\nname: deploy\ndescription: Project deploy\n---\n# Deploy (project)\n",
    );
    let lint_text =
        "---\nname: lint\ndescription: >\n  Lint the\n  code.\n---\n# Lint\n\nRun the linter.\n";
    put(&fx.lisa(), "lint", lint_text);
    let agents_text = skill_md("agents-only", "From .agents.");
    put(&fx.agents(), "agents-only", &agents_text);
    let sub = fx.repo.join("src/deep");
    fs::create_dir_all(&sub).unwrap();

    for (name, want) in [
        ("deploy", home_text),
        ("lint", lint_text),
        ("agents-only", agents_text.as_str()),
    ] {
        for cwd in [&fx.repo, &sub] {
            let shown = stdout_of(fx.bin().args(["skill", "show", name, "--cwd"]).arg(cwd));
            assert_eq!(shown, want, "skill show {name} from {}", cwd.display());
        }
        let lib = fx.loader().skill(&sub, name).unwrap();
        assert_eq!(lib.content, want, "{name}");
    }
    let lib = fx.loader().skill(&fx.repo, "deploy").unwrap();
    assert_eq!(lib.path, fx.home_skills().join("deploy/SKILL.md"));
}

#[test]
fn skill_show_refuses_unknown_and_invalid_names() {
    let fx = fixture();
    add(&fx.lisa(), "known", "Known.");
    // A folder with a bad name that would print if the name were not checked.
    put(&fx.lisa(), "Bad", &skill_md("Bad", "Bad folder."));

    let o = fx
        .cli()
        .args(["skill", "show", "nope", "--cwd"])
        .arg(&fx.repo)
        .assert()
        .failure()
        .stdout("")
        .get_output()
        .clone();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("no skill named") && err.contains("nope"),
        "unclear message: {err}"
    );

    // Invalid names fail before any file is touched: with a cwd that does
    // not exist, the error is about the name, not the directory.
    let missing_cwd = fx.repo.join("does/not/exist");
    for name in [
        "../etc",
        "Bad",
        "a--b",
        "known/../known",
        "",
        "d\u{0435}ploy",
    ] {
        for cwd in [&fx.repo, &missing_cwd] {
            let o = fx
                .cli()
                .args(["skill", "show", name, "--cwd"])
                .arg(cwd)
                .assert()
                .failure()
                .stdout("")
                .get_output()
                .clone();
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(
                err.contains("not a valid skill name"),
                "skill show {name:?} from {}: {err}",
                cwd.display()
            );
        }
        assert!(
            matches!(
                fx.loader().skill(&missing_cwd, name),
                Err(lisa_context::SkillError::InvalidName(n)) if n == name
            ),
            "{name:?}"
        );
    }
    assert!(matches!(
        fx.loader().skill(&fx.repo, "nope"),
        Err(lisa_context::SkillError::NotFound { .. })
    ));
}

#[test]
fn skill_show_resolves_exactly_like_the_snapshot() {
    let fx = fixture();
    let (home, lisa, agents) = (fx.home_skills(), fx.lisa(), fx.agents());
    add(&home, "home-only", "h");
    add(&home, "home-and-lisa", "h");
    add(&lisa, "home-and-lisa", "l");
    add(&lisa, "lisa-and-agents", "l");
    add(&agents, "lisa-and-agents", "a");
    add(&agents, "agents-only", "a");
    // A broken home skill claims nothing: the project's one wins.
    put(&home, "broken-home", "---\nname: broken-home\n---\n");
    add(&lisa, "broken-home", "l");
    // An impostor in .lisa claims nothing: .agents wins.
    put(&lisa, "fake", &skill_md("by-impostor", "l"));
    add(&agents, "by-impostor", "a");
    let sub = fx.repo.join("pkg");
    fs::create_dir_all(&sub).unwrap();

    let j = fx.cli_json(&sub);
    let loader = fx.loader();
    assert_eq!(skills(&j).len(), 6);
    for s in skills(&j) {
        let name = s["name"].as_str().unwrap();
        let path = p(&s["path"]);
        let shown = stdout_of(fx.bin().args(["skill", "show", name, "--cwd"]).arg(&sub));
        assert_eq!(shown, fs::read_to_string(&path).unwrap(), "{name}");
        let lib = loader.skill(&sub, name).unwrap();
        assert_eq!(lib.path, path, "{name}");
        assert_eq!(serde_json::to_value(lib.origin).unwrap(), s["origin"]);
    }
    let origin_of = |name: &str| p(&skill(&j, name).unwrap()["path"]);
    assert_eq!(origin_of("broken-home"), lisa.join("broken-home/SKILL.md"));
    assert_eq!(
        origin_of("by-impostor"),
        agents.join("by-impostor/SKILL.md")
    );
    assert_eq!(
        origin_of("home-and-lisa"),
        home.join("home-and-lisa/SKILL.md")
    );
    assert_eq!(
        origin_of("lisa-and-agents"),
        lisa.join("lisa-and-agents/SKILL.md")
    );
}

// ---------------------------------------------------------------------------
// Fingerprint
// ---------------------------------------------------------------------------

type Step = Box<dyn Fn(&World)>;

#[test]
fn fingerprint_follows_every_skill_change_and_undo_restores_it() {
    let fx = fixture();
    let alpha = add(&fx.home_skills(), "alpha", "Alpha tool.");
    let beta = add(&fx.lisa(), "beta", "Beta tool.");
    let alpha_text = fs::read_to_string(&alpha).unwrap();
    let beta_text = fs::read_to_string(&beta).unwrap();

    let loader = fx.loader();
    let fp0 = loader.fingerprint(&fx.repo).unwrap();
    assert_eq!(loader.snapshot(&fx.repo).unwrap().fingerprint, fp0);

    let write = |path: PathBuf, text: String| -> Step {
        Box::new(move |_| fs::write(&path, &text).unwrap())
    };
    let remove = |dir: PathBuf| -> Step { Box::new(move |_| fs::remove_dir_all(&dir).unwrap()) };
    let create = |src: PathBuf, name: &'static str, desc: &'static str| -> Step {
        Box::new(move |_| {
            add(&src, name, desc);
        })
    };
    // Same size, and the modification time put back: only the content differs.
    let sneaky = |path: PathBuf, text: String| -> Step {
        Box::new(move |_| {
            let before = fs::metadata(&path).unwrap().modified().unwrap();
            fs::write(&path, &text).unwrap();
            fs::File::options()
                .write(true)
                .open(&path)
                .unwrap()
                .set_modified(before)
                .unwrap();
        })
    };
    let home = fx.home_skills();
    let lisa = fx.lisa();
    let agents = fx.agents();
    let steps: Vec<(&str, Step, Step)> = vec![
        (
            "add a home skill",
            create(home.clone(), "gamma", "Gamma."),
            remove(home.join("gamma")),
        ),
        (
            "add a .lisa skill",
            create(lisa.clone(), "delta", "Delta."),
            remove(lisa.join("delta")),
        ),
        (
            "add an .agents skill (new source directory)",
            create(agents.clone(), "epsilon", "Epsilon."),
            remove(fx.repo.join(".agents")),
        ),
        (
            "add a project skill shadowed by home",
            create(lisa.clone(), "alpha", "Shadowed."),
            remove(lisa.join("alpha")),
        ),
        (
            "edit a home description",
            write(alpha.clone(), skill_md("alpha", "Alpha tool, edited.")),
            write(alpha.clone(), alpha_text.clone()),
        ),
        (
            "edit a home description, same size and mtime",
            sneaky(alpha.clone(), skill_md("alpha", "Alpha tooL.")),
            write(alpha.clone(), alpha_text.clone()),
        ),
        (
            "edit a home name",
            write(alpha.clone(), skill_md("alpha-x", "Alpha tool.")),
            write(alpha.clone(), alpha_text.clone()),
        ),
        (
            "edit a project description",
            write(beta.clone(), skill_md("beta", "Beta tool, edited.")),
            write(beta.clone(), beta_text.clone()),
        ),
        (
            "edit a project description, same size and mtime",
            sneaky(beta.clone(), skill_md("beta", "Beta tooL.")),
            write(beta.clone(), beta_text.clone()),
        ),
        (
            "edit a project name",
            write(beta.clone(), skill_md("beta-x", "Beta tool.")),
            write(beta.clone(), beta_text.clone()),
        ),
        (
            "remove a home skill",
            remove(home.join("alpha")),
            create(home.clone(), "alpha", "Alpha tool."),
        ),
        (
            "remove a project skill",
            remove(lisa.join("beta")),
            create(lisa.clone(), "beta", "Beta tool."),
        ),
        (
            "rename a project skill (folder and name)",
            Box::new(|fx: &World| {
                fs::remove_dir_all(fx.lisa().join("beta")).unwrap();
                add(&fx.lisa(), "beta-two", "Beta tool.");
            }),
            Box::new(|fx: &World| {
                fs::remove_dir_all(fx.lisa().join("beta-two")).unwrap();
                add(&fx.lisa(), "beta", "Beta tool.");
            }),
        ),
    ];
    for (what, change, undo) in &steps {
        change(&fx);
        let fp = loader.fingerprint(&fx.repo).unwrap();
        assert_ne!(fp, fp0, "{what}: the fingerprint did not change");
        assert_eq!(
            loader.snapshot(&fx.repo).unwrap().fingerprint,
            fp,
            "{what}: snapshot and fingerprint disagree"
        );
        undo(&fx);
        assert_eq!(
            loader.fingerprint(&fx.repo).unwrap(),
            fp0,
            "{what}: undoing did not restore the fingerprint"
        );
    }
    // A fresh loader and the binary agree.
    assert_eq!(fx.loader().fingerprint(&fx.repo).unwrap(), fp0);
    let cli = stdout_of(fx.bin().args(["fingerprint", "--cwd"]).arg(&fx.repo));
    assert_eq!(cli.trim_end(), fp0);
}

// ---------------------------------------------------------------------------
// Frontmatter that is not strict YAML

/// (folder, SKILL.md text, the description the lenient reading gives, or
/// `None` when it stays `bad-frontmatter` in both modes).
const NOT_STRICT: &[(&str, &str, Option<&str>)] = &[
    (
        "colon",
        "---\nname: colon\ndescription: Use when: the user asks to deploy\n---\nbody\n",
        Some("Use when: the user asks to deploy"),
    ),
    (
        "hash",
        "---\nname: hash\ndescription: Use when: C# code # is involved\n---\n",
        Some("Use when: C# code # is involved"),
    ),
    (
        "url",
        "---\nname: url\ndescription: Docs: https://example.com/a:b\n---\n",
        Some("Docs: https://example.com/a:b"),
    ),
    (
        "tab-continued",
        "---\nname: tab-continued\ndescription: First: part\n\tsecond: part\n---\n",
        Some("First: part second: part"),
    ),
    (
        "open-quote",
        "---\nname: open-quote\ndescription: \"never: closed\n---\n",
        None,
    ),
    (
        "bad-block",
        "---\nname: bad-block\ndescription: |\n  one\n two: x\n---\n",
        None,
    ),
    (
        "twice",
        "---\nname: twice\ndescription: a: b\ndescription: c\n---\n",
        None,
    ),
];

fn write_not_strict(fx: &World) -> Vec<PathBuf> {
    NOT_STRICT
        .iter()
        .map(|(folder, text, _)| put(&fx.lisa(), folder, text))
        .collect()
}

#[test]
fn lenient_frontmatter_lists_skills_written_for_other_loaders() {
    let fx = fixture();
    let files = write_not_strict(&fx);
    let j = fx.cli_json(&fx.repo);
    for ((folder, _, want), file) in NOT_STRICT.iter().zip(&files) {
        match want {
            Some(description) => {
                let s = skill(&j, folder).unwrap_or_else(|| panic!("{folder} is listed"));
                assert_eq!(s["description"], Value::from(*description), "{folder}");
                let warned = j["warnings"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|w| w["kind"] == "lenient-frontmatter" && p(&w["path"]) == *file);
                assert!(warned, "{folder}: {}", j["warnings"]);
                // `skill show` loads it.
                let shown = stdout_of(
                    fx.bin()
                        .args(["skill", "show", folder, "--cwd"])
                        .arg(&fx.repo),
                );
                assert!(shown.contains(description.split(':').next().unwrap_or_default()));
            }
            None => {
                assert!(skill(&j, folder).is_none(), "{folder} is not listed");
                assert_eq!(reasons_at(&j, file), vec!["bad-frontmatter"], "{folder}");
            }
        }
    }
    let explain = fx.cli_explain(&fx.repo);
    assert!(
        explain.contains("warning (lenient-frontmatter)"),
        "{explain}"
    );
}

#[test]
fn strict_frontmatter_rejects_them_all() {
    let fx = fixture();
    let files = write_not_strict(&fx);
    let loader = fx.loader_with("[skills]\nfrontmatter = \"strict\"\n");
    let j = serde_json::to_value(&*loader.snapshot(&fx.repo).unwrap()).unwrap();
    for ((folder, _, _), file) in NOT_STRICT.iter().zip(&files) {
        assert!(skill(&j, folder).is_none(), "{folder}");
        assert_eq!(reasons_at(&j, file), vec!["bad-frontmatter"], "{folder}");
    }
    assert!(j["warnings"].as_array().unwrap().is_empty());
}

/// A path as `explain` shows it: relative to the repository root when it
/// lies there, else absolute.
fn in_repo(repo: &std::path::Path, path: &std::path::Path) -> String {
    path.strip_prefix(repo)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// `skills.compat.name-dash-chars`: each listed character of a skill's
/// name becomes `-` before the name is checked and listed (Gemini CLI's
/// rewrite, recorded: `tests/compat/expected/gemini/skills-gemini-name-dashes.json`);
/// empty, the name is listed as written.
#[test]
fn name_dash_chars_turn_characters_of_a_name_into_dashes() {
    let w = World::new();
    w.write(
        "repo/.agents/skills/odd/SKILL.md",
        "---\nname: ns/tool*x\ndescription: Slash and star.\n---\nSteps.\n",
    );
    let names = |dashes: &str| -> Vec<String> {
        let policy = support::layered(
            Layer::CommandLine,
            "dashes.toml",
            format!(
                "version = 1\n[skills]\nname-from = \"frontmatter\"\nname-rule = '^[^\\r\\n]+$'\n\
                 [skills.compat]\nname-dash-chars = '{dashes}'\n"
            ),
        );
        let snap = w.loader_on(policy).snapshot(&w.repo).unwrap();
        snap.skills
            .iter()
            .filter(|s| s.listed)
            .map(|s| s.name.clone())
            .collect()
    };
    assert_eq!(names(":\\/<>*?\"|"), ["ns-tool-x"]);
    assert_eq!(names("*"), ["ns/tool-x"]);
    assert_eq!(names(""), ["ns/tool*x"]);
    // Gemini's policy sets the peer's nine characters.
    let gemini = Policy::from_sources(&[PolicySource::shipped("gemini").unwrap()]).unwrap();
    assert_eq!(gemini.skills.name_dash_chars, ":\\/<>*?\"|");
}

/// `skills.compat.levels-need-repository`: under Codex's policy a `.git`
/// folder with no `HEAD` (a marker, but no repository) leaves the cwd's
/// `.codex/skills` alone, while `.agents/skills` is read at every level
/// (recorded: `tests/compat/expected/codex/skills-codex-bare-git.json`); a
/// `HEAD` written later brings every level back, through the same loader.
#[test]
fn codex_reads_upper_codex_skills_only_in_a_repository() {
    let w = World::new();
    for (dir, name) in [
        (".codex/skills", "root-codex"),
        (".agents/skills", "root-agents"),
        ("a/.codex/skills", "cwd-codex"),
    ] {
        w.write(
            &format!("repo/{dir}/{name}/SKILL.md"),
            &format!("---\nname: {name}\ndescription: From {dir}.\n---\nSteps.\n"),
        );
    }
    let cwd = w.path("repo/a");
    let policy = Policy::from_sources(&[PolicySource::shipped("codex").unwrap()]).unwrap();
    let loader = w.loader_on(policy);
    let names = |loader: &Loader| -> Vec<String> {
        let snap = loader.snapshot(&cwd).unwrap();
        let mut names: Vec<String> = snap
            .skills
            .iter()
            .filter(|s| s.listed)
            .map(|s| s.name.clone())
            .collect();
        names.sort();
        names
    };
    assert_eq!(names(&loader), ["cwd-codex", "root-agents"]);
    w.write("repo/.git/HEAD", "ref: refs/heads/main\n");
    assert_eq!(names(&loader), ["cwd-codex", "root-agents", "root-codex"]);
}

/// `skills.compat.keep-final-breaks`: a block scalar's final line break is
/// cut from a description, or kept as YAML gives it (Gemini CLI, recorded:
/// `tests/compat/expected/gemini/skills-descriptions.json`). The parse keeps
/// it and discovery cuts it, so two policies of the same frontmatter
/// reading share the parse (and the memo) and each shows its own answer.
#[test]
fn keep_final_breaks_keeps_a_block_scalars_line_break() {
    let w = World::new();
    w.write(
        "repo/.agents/skills/literal/SKILL.md",
        "---\nname: literal\ndescription: |\n  line one\n  line two\n---\nSteps.\n",
    );
    let description = |keep: bool| -> String {
        let policy = support::layered(
            Layer::CommandLine,
            "breaks.toml",
            format!("version = 1\n[skills.compat]\nkeep-final-breaks = {keep}\n"),
        );
        let snap = w.loader_on(policy).snapshot(&w.repo).unwrap();
        let skill = snap
            .skills
            .iter()
            .find(|s| s.listed && s.name == "literal")
            .expect("literal is listed");
        skill.description.clone()
    };
    // Each answer twice: the second reads the memo the first wrote.
    for _ in 0..2 {
        assert_eq!(description(false), "line one\nline two");
        assert_eq!(description(true), "line one\nline two\n");
    }
    // The public parse cuts them, whatever a policy says.
    let fm = lisa_context::snapshot::Frontmatter::parse(
        "---\nname: literal\ndescription: |\n  line one\n---\n",
    )
    .unwrap();
    assert_eq!(fm.description, "line one");
}

/// `skills.compat.breaks-to-spaces`: Claude Code lists a description's tabs
/// and line breaks as spaces, its ends trimmed, runs of spaces kept
/// (recorded: `tests/compat/expected/claude-code/rand-20261206-113-claude-code.json`).
#[test]
fn breaks_to_spaces_lists_a_description_on_one_line() {
    let w = World::new();
    w.write(
        "repo/.agents/skills/tabbed/SKILL.md",
        "---\nname: tabbed\ndescription: \"a\\tb  c  \"\n---\nSteps.\n",
    );
    w.write(
        "repo/.agents/skills/block/SKILL.md",
        "---\nname: block\ndescription: |\n  line one\n  line two\n---\nSteps.\n",
    );
    let descriptions = |on: bool| -> Vec<String> {
        let policy = support::layered(
            Layer::CommandLine,
            "spaces.toml",
            format!("version = 1\n[skills.compat]\nbreaks-to-spaces = {on}\n"),
        );
        let snap = w.loader_on(policy).snapshot(&w.repo).unwrap();
        ["block", "tabbed"]
            .iter()
            .map(|n| {
                snap.skills
                    .iter()
                    .find(|s| s.listed && s.name == *n)
                    .expect("listed")
                    .description
                    .clone()
            })
            .collect()
    };
    // Each answer twice: the second reads the memo the first wrote.
    for _ in 0..2 {
        assert_eq!(descriptions(false), ["line one\nline two", "a\tb  c  "]);
        assert_eq!(descriptions(true), ["line one line two", "a b  c"]);
    }
}

/// A name rewritten by `skills.compat.name-dash-chars` meets the home's
/// names as rewritten: a project skill whose name becomes a home skill's
/// is shadowed like any other (SECURITY.md, guarantee 7), never listed in
/// its place.
#[test]
fn a_rewritten_project_name_cannot_take_a_home_skills_name() {
    let w = World::new();
    w.write(
        "home/skills/tool/SKILL.md",
        "---\nname: ns-tool-x\ndescription: The home's.\n---\nSteps.\n",
    );
    w.write(
        "repo/.agents/skills/odd/SKILL.md",
        "---\nname: ns/tool*x\ndescription: The project's.\n---\nSteps.\n",
    );
    let policy = support::layered(
        Layer::CommandLine,
        "dashes.toml",
        "version = 1\n[skills]\nname-from = \"frontmatter\"\nname-rule = '^[^\\r\\n]+$'\n\
         [skills.compat]\nname-dash-chars = '/*'\n",
    );
    let snap = w.loader_on(policy).snapshot(&w.repo).unwrap();
    let listed: Vec<(&str, &str)> = snap
        .skills
        .iter()
        .filter(|s| s.listed)
        .map(|s| (s.name.as_str(), s.description.as_str()))
        .collect();
    assert_eq!(listed, [("ns-tool-x", "The home's.")]);
    assert!(
        snap.shadowed_project_skills
            .iter()
            .any(|s| s.name == "ns-tool-x" && s.path.ends_with("repo/.agents/skills/odd/SKILL.md")),
        "{:#?}",
        snap.shadowed_project_skills
    );
}
