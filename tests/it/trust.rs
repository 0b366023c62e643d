//! Trust pinned to content (`trust.project = "pinned"`): approvals in the
//! home root's trust store, checked against what is on disk. Every test
//! builds a real home and repository in a temporary directory and drives
//! the binary (`lisa-context --home … trust …`), or the library's `Loader`.

use std::fs;
use std::io::Write as _;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use crate::support::World;
use crate::validate;

const PINNED: &str = "version = 1\n[trust]\nproject = \"pinned\"\n";
const STORE: &str = "context-trust.json";

/// A home with a pinned policy and a repository with `AGENTS.md` and one
/// project skill.
fn tree() -> World {
    let w = World::new();
    fs::write(w.home.join("context-policy.toml"), PINNED).unwrap();
    fs::write(w.home.join("AGENTS.md"), "HOME-NOTE: the user's own words.").unwrap();
    fs::write(w.repo.join("AGENTS.md"), "PROJECT-RULE-ONE: use tabs.\n").unwrap();
    write_skill(&w.repo, ".lisa/skills", "deploy", "SKILL-DESC-ONE deploys");
    w
}

/// The binary run from the repository, and what these tests read of it.
trait TrustWorld {
    fn run(&self, args: &[&str]) -> Output;
    fn ok(&self, args: &[&str]) -> String;
    fn prompt(&self) -> String;
    fn json(&self) -> Value;
    fn approve_all(&self) -> String;
    fn store(&self) -> PathBuf;
}

impl TrustWorld for World {
    fn run(&self, args: &[&str]) -> Output {
        let mut cmd = self.command();
        cmd.args(args).current_dir(&self.repo).env("NO_COLOR", "1");
        cmd.output().unwrap()
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
        text(&out.stdout)
    }

    fn prompt(&self) -> String {
        self.ok(&["snapshot", "--cwd", path(&self.repo)])
    }

    fn json(&self) -> Value {
        let out = self.ok(&["snapshot", "--cwd", path(&self.repo), "--format", "json"]);
        let json = serde_json::from_str(&out).unwrap();
        validate::snapshot(&json);
        json
    }

    fn approve_all(&self) -> String {
        self.ok(&["trust", "approve", "--all", "--cwd", path(&self.repo)])
    }

    fn store(&self) -> PathBuf {
        self.home.join(STORE)
    }
}

fn write_skill(repo: &Path, dir: &str, name: &str, description: &str) {
    let folder = repo.join(dir).join(name);
    fs::create_dir_all(&folder).unwrap();
    fs::write(
        folder.join("SKILL.md"),
        format!("---\nname: {name}\ndescription: {description}\n---\nbody\n"),
    )
    .unwrap();
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn unapproved(json: &Value) -> Vec<(String, String)> {
    json["unapproved"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| {
            (
                u["path"].as_str().unwrap().to_string(),
                u["kind"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The `--expect PATH=HASH` arguments `trust diff` suggests.
fn expects(diff: &str) -> Vec<String> {
    diff.split_whitespace()
        .skip_while(|w| *w != "approve")
        .filter(|w| w.contains('='))
        .map(|w| w.trim_matches('\'').to_string())
        .collect()
}

#[test]
fn open_by_default_nothing_changes() {
    let t = tree();
    fs::remove_file(t.home.join("context-policy.toml")).unwrap();
    let json = t.json();
    assert!(
        json["prompt"]
            .as_str()
            .unwrap()
            .contains("PROJECT-RULE-ONE")
    );
    assert!(json["prompt"].as_str().unwrap().contains("SKILL-DESC-ONE"));
    assert_eq!(json["unapproved"], Value::Array(vec![]));
    assert!(!t.store().exists());
}

#[test]
fn approve_edit_revert() {
    let t = tree();
    // Before any approval: no project byte in the prompt, or anywhere in
    // the snapshot; home text is the user's own and goes in.
    let json = t.json();
    let whole = json.to_string();
    assert!(!whole.contains("PROJECT-RULE-ONE"), "{whole}");
    assert!(!whole.contains("SKILL-DESC-ONE"), "{whole}");
    let prompt = json["prompt"].as_str().unwrap();
    assert!(prompt.contains("HOME-NOTE"));
    assert!(prompt.contains("[2 project items"), "{prompt}");
    assert!(prompt.contains("`lisa-context trust diff`"), "{prompt}");
    let kinds: Vec<String> = unapproved(&json).into_iter().map(|(_, k)| k).collect();
    assert_eq!(kinds, ["new", "new"]);
    assert_eq!(json["skills"].as_array().unwrap().len(), 0);

    let approved = t.approve_all();
    assert!(
        approved.contains("approved instruction AGENTS.md"),
        "{approved}"
    );
    assert!(approved.contains("+PROJECT-RULE-ONE"), "{approved}");
    let prompt = t.prompt();
    assert!(prompt.contains("PROJECT-RULE-ONE"));
    assert!(prompt.contains("SKILL-DESC-ONE"));
    assert!(!prompt.contains("project items"), "{prompt}");
    assert!(
        t.ok(&["trust", "status"])
            .contains("2 approved, 0 pending (new or changed), 0 stale")
    );

    // An edit: the whole file leaves the prompt, old and new text alike.
    fs::write(
        t.repo.join("AGENTS.md"),
        "PROJECT-RULE-ONE: use tabs.\nEVIL-LINE\n",
    )
    .unwrap();
    write_skill(&t.repo, ".lisa/skills", "deploy", "SKILL-DESC-TWO deploys");
    let json = t.json();
    let whole = json.to_string();
    for marker in [
        "PROJECT-RULE-ONE",
        "EVIL-LINE",
        "SKILL-DESC-ONE",
        "SKILL-DESC-TWO",
    ] {
        assert!(!whole.contains(marker), "{marker} in {whole}");
    }
    let changes = unapproved(&json);
    assert_eq!(changes.len(), 2);
    assert!(changes.iter().all(|(_, k)| k == "changed"));
    let u = &json["unapproved"][0];
    assert_ne!(u["approvedHash"], u["currentHash"]);
    let diff = t.ok(&["trust", "diff"]);
    assert!(diff.contains("+EVIL-LINE"), "{diff}");
    assert!(
        diff.contains("-description: SKILL-DESC-ONE deploys"),
        "{diff}"
    );
    assert!(
        diff.contains("+description: SKILL-DESC-TWO deploys"),
        "{diff}"
    );

    // Back to the approved bytes: in again, without a new approval.
    fs::write(t.repo.join("AGENTS.md"), "PROJECT-RULE-ONE: use tabs.\n").unwrap();
    write_skill(&t.repo, ".lisa/skills", "deploy", "SKILL-DESC-ONE deploys");
    let json = t.json();
    assert!(unapproved(&json).is_empty());
    assert!(
        json["prompt"]
            .as_str()
            .unwrap()
            .contains("PROJECT-RULE-ONE")
    );
    assert!(json["prompt"].as_str().unwrap().contains("SKILL-DESC-ONE"));
}

#[test]
fn rename_is_a_new_item_and_a_stale_approval() {
    let t = tree();
    t.approve_all();
    fs::rename(t.repo.join("AGENTS.md"), t.repo.join("CLAUDE.md")).unwrap();
    fs::create_dir_all(t.repo.join(".agents/skills")).unwrap();
    fs::rename(
        t.repo.join(".lisa/skills/deploy"),
        t.repo.join(".agents/skills/deploy"),
    )
    .unwrap();
    let json = t.json();
    assert!(!json.to_string().contains("PROJECT-RULE-ONE"));
    assert!(!json.to_string().contains("SKILL-DESC-ONE"));
    let mut got = unapproved(&json);
    got.sort();
    let r = |p: &str| path(&t.repo).to_string() + p;
    let mut want = vec![
        (r("/AGENTS.md"), "removed".to_string()),
        (r("/CLAUDE.md"), "new".to_string()),
        (r("/.lisa/skills/deploy/SKILL.md"), "removed".to_string()),
        (r("/.agents/skills/deploy/SKILL.md"), "new".to_string()),
    ];
    want.sort();
    assert_eq!(got, want);
    let status = t.ok(&["trust", "status"]);
    assert!(
        status.contains("0 approved, 2 pending (new or changed), 2 stale"),
        "{status}"
    );
    // Approving everything takes the new names and forgets the old ones.
    t.approve_all();
    let json = t.json();
    assert!(unapproved(&json).is_empty(), "{json}");
    assert!(
        json["prompt"]
            .as_str()
            .unwrap()
            .contains("PROJECT-RULE-ONE")
    );
}

#[test]
fn a_change_between_diff_and_approve_is_not_approved() {
    let t = tree();
    let diff = t.ok(&["trust", "diff"]);
    let expect = expects(&diff);
    assert_eq!(expect.len(), 2, "{diff}");
    // The file changes after the user read the diff.
    fs::write(t.repo.join("AGENTS.md"), "SNUCK-IN after the diff\n").unwrap();
    let mut args = vec!["trust", "approve"];
    for e in &expect {
        args.push("--expect");
        args.push(e);
    }
    let out = t.run(&args);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("changed since it was shown"), "{err}");
    // Nothing approved, not even the unchanged skill.
    assert!(!t.store().exists() || !fs::read_to_string(t.store()).unwrap().contains("deploy"));
    assert!(!t.prompt().contains("SNUCK-IN"));
    assert!(t.ok(&["trust", "status"]).contains("0 approved, 2 pending"));

    // Approving what the new diff shows works, and records that hash.
    let diff = t.ok(&["trust", "diff"]);
    assert!(diff.contains("+SNUCK-IN"), "{diff}");
    let expect = expects(&diff);
    let mut args = vec!["trust", "approve"];
    for e in &expect {
        args.push("--expect");
        args.push(e);
    }
    let out = t.ok(&args);
    let hash = expect
        .iter()
        .find(|e| e.contains("AGENTS.md="))
        .and_then(|e| e.rsplit('=').next())
        .unwrap()
        .to_string();
    assert!(out.contains(&hash), "{out}");
    let store: Value = serde_json::from_str(&fs::read_to_string(t.store()).unwrap()).unwrap();
    let entry = &store["repositories"][path(&t.repo)]["AGENTS.md"];
    assert_eq!(entry["hash"], Value::String(hash));
    assert_eq!(entry["text"], "SNUCK-IN after the diff\n");
    assert!(entry["approvedAt"].as_u64().unwrap() > 0);
    assert_eq!(entry["policyDigest"].as_str().unwrap().len(), 32);
    assert!(t.prompt().contains("SNUCK-IN"));
}

#[test]
fn approve_by_path_shows_what_it_approves() {
    let t = tree();
    let out = t.ok(&["trust", "approve", "AGENTS.md"]);
    assert!(out.contains("approved instruction AGENTS.md"), "{out}");
    assert!(out.contains("+PROJECT-RULE-ONE"), "{out}");
    let json = t.json();
    assert_eq!(unapproved(&json).len(), 1);
    assert!(
        json["prompt"]
            .as_str()
            .unwrap()
            .contains("[1 project items")
    );
    // A skill by its folder; then revoke it again.
    t.ok(&["trust", "approve", ".lisa/skills/deploy"]);
    assert!(t.prompt().contains("SKILL-DESC-ONE"));
    let out = t.ok(&["trust", "revoke", ".lisa/skills/deploy"]);
    assert!(out.contains("revoked"), "{out}");
    assert!(!t.prompt().contains("SKILL-DESC-ONE"));
    t.ok(&["trust", "revoke", "--repo"]);
    assert!(!t.prompt().contains("PROJECT-RULE-ONE"));
    // Not an item: an error, nothing approved.
    let out = t.run(&["trust", "approve", "README.md"]);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn concurrent_approvals_are_all_kept() {
    // Eight repositories under one home, approved by eight processes at once.
    let t = tree();
    let base = t.repo.parent().unwrap().to_path_buf();
    let repos: Vec<PathBuf> = (0..8)
        .map(|i| {
            let r = base.join(format!("r{i}"));
            fs::create_dir_all(r.join(".git")).unwrap();
            fs::write(r.join("AGENTS.md"), format!("REPO-{i}\n")).unwrap();
            r
        })
        .collect();
    let children: Vec<_> = repos
        .iter()
        .map(|r| {
            Command::new(env!("CARGO_BIN_EXE_lisa-context"))
                .arg("--home")
                .arg(&t.home)
                .args(["trust", "approve", "--all", "--cwd"])
                .arg(r)
                .env_remove("LISA_HOME")
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    let store: Value = serde_json::from_str(&fs::read_to_string(t.store()).unwrap()).unwrap();
    for (i, r) in repos.iter().enumerate() {
        assert_eq!(
            store["repositories"][path(r)]["AGENTS.md"]["text"],
            format!("REPO-{i}\n")
        );
        let prompt = t.ok(&["snapshot", "--cwd", path(r)]);
        assert!(prompt.contains(&format!("REPO-{i}")));
    }
    // No lock or temporary file is left behind.
    let names: Vec<String> = fs::read_dir(&t.home)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names
            .iter()
            .all(|n| !n.ends_with(".lock") && !n.ends_with(".tmp")),
        "{names:?}"
    );
}

/// Under an unusable store, nothing is approved: the snapshot leaves every
/// project item out and warns; the trust commands fail with a clear error.
fn assert_store_unusable(t: &World) {
    let json = t.json();
    let whole = json.to_string();
    assert!(!whole.contains("PROJECT-RULE-ONE"), "{whole}");
    assert!(!whole.contains("SKILL-DESC-ONE"), "{whole}");
    let warned = json["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w["kind"] == "trust-store");
    assert!(warned, "{whole}");
    for args in [
        &["trust", "status"][..],
        &["trust", "diff"],
        &["trust", "approve", "--all"],
    ] {
        let out = t.run(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = text(&out.stderr);
        assert!(err.contains("trust store"), "{args:?}: {err}");
        assert!(err.contains("cannot be used"), "{args:?}: {err}");
    }
}

#[test]
fn a_store_edited_into_invalid_json_approves_nothing() {
    let t = tree();
    t.approve_all();
    let text_before = fs::read_to_string(t.store()).unwrap();
    let broken = text_before.replacen('{', "{ oops", 1);
    fs::write(t.store(), &broken).unwrap();
    assert_store_unusable(&t);
    // The failed approval left the file as it was.
    assert_eq!(fs::read_to_string(t.store()).unwrap(), broken);
}

#[test]
fn a_store_that_is_a_symlink_approves_nothing() {
    let t = tree();
    t.approve_all();
    let real = t.home.parent().unwrap().join("real-store.json");
    fs::rename(t.store(), &real).unwrap();
    symlink(&real, t.store()).unwrap();
    assert_store_unusable(&t);
    // Not followed for writing either: the link and its target are intact.
    assert!(
        fs::symlink_metadata(t.store())
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(
        fs::read_to_string(&real)
            .unwrap()
            .contains("PROJECT-RULE-ONE")
    );
}

#[test]
fn a_store_that_is_a_fifo_approves_nothing_and_does_not_hang() {
    let t = tree();
    let st = Command::new("mkfifo").arg(t.store()).status().unwrap();
    assert!(st.success());
    assert_store_unusable(&t);
}

#[test]
fn a_trust_store_planted_in_the_repository_is_ignored() {
    let t = tree();
    // A real approval, made elsewhere, copied into the repository.
    let other = tree();
    other.approve_all();
    let stolen = fs::read_to_string(other.store())
        .unwrap()
        .replace(path(&other.repo), path(&t.repo));
    for place in [
        t.repo.join(STORE),
        t.repo.join(".lisa").join(STORE),
        t.repo.join(".git").join(STORE),
    ] {
        fs::write(place, &stolen).unwrap();
    }
    let json = t.json();
    assert_eq!(unapproved(&json).len(), 2);
    assert!(
        !json["prompt"]
            .as_str()
            .unwrap()
            .contains("PROJECT-RULE-ONE")
    );
    assert!(t.ok(&["trust", "status"]).contains("0 approved, 2 pending"));
}

#[test]
fn the_fingerprint_changes_on_approval() {
    let t = tree();
    let loader = lisa_context::Loader::builder()
        .home(t.home.clone())
        .build()
        .unwrap();
    let before = loader.snapshot(&t.repo).unwrap();
    assert_eq!(before.unapproved.len(), 2);
    t.approve_all();
    let after = loader.refresh(&t.repo, &before.fingerprint).unwrap();
    let after = after.expect("an approval changes the snapshot");
    assert_ne!(after.fingerprint, before.fingerprint);
    assert!(after.unapproved.is_empty());
    assert!(after.prompt.contains("PROJECT-RULE-ONE"));
    // And the command line agrees.
    let fp = t.ok(&["fingerprint"]);
    assert_eq!(fp.trim(), after.fingerprint);
    t.ok(&["trust", "revoke", "--repo"]);
    let again = loader.refresh(&t.repo, &after.fingerprint).unwrap();
    let again = again.expect("a revocation changes it");
    assert_ne!(again.fingerprint, after.fingerprint);
    assert_eq!(again.unapproved.len(), 2);
    assert_eq!(again.prompt, before.prompt);
}

#[test]
fn the_library_approves_exactly_the_hash_shown() {
    let t = tree();
    let loader = lisa_context::Loader::builder()
        .home(t.home.clone())
        .build()
        .unwrap();
    let status = loader.trust_status(&t.repo, None).unwrap();
    let item = status
        .items
        .iter()
        .find(|i| i.path.ends_with("AGENTS.md"))
        .unwrap();
    assert!(item.diff().contains("+PROJECT-RULE-ONE"));
    let shown = item.current_hash.clone().unwrap();
    fs::write(t.repo.join("AGENTS.md"), "other\n").unwrap();
    let pick = lisa_context::trust::Selection::Paths(vec![(item.path.clone(), Some(shown))]);
    let err = loader.trust_approve(&t.repo, None, &pick).unwrap_err();
    assert!(matches!(
        err,
        lisa_context::TrustError::ChangedSinceShown { .. }
    ));
}

#[test]
fn serve_shows_trust_but_cannot_approve() {
    let t = tree();
    let mut child = Command::new(env!("CARGO_BIN_EXE_lisa-context"))
        .arg("--home")
        .arg(&t.home)
        .args(["serve", "--jobs", "1"])
        .env_remove("LISA_HOME")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let cwd = path(&t.repo);
    let mut input = child.stdin.take().unwrap();
    for (id, op) in [
        (1, "trust-status"),
        (2, "trust-diff"),
        (3, "trust-approve"),
        (4, "approve"),
    ] {
        writeln!(input, r#"{{"id":{id},"op":"{op}","cwd":"{cwd}"}}"#).unwrap();
    }
    drop(input);
    let out = child.wait_with_output().unwrap();
    let lines: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    lines.iter().for_each(validate::response);
    assert_eq!(lines.len(), 4);
    let items = lines[0]["trust"]["items"].as_array().unwrap();
    assert_eq!(items.len(), 2);
    assert!(items.iter().all(|i| i["state"] == "new"));
    let diffs = lines[1]["trustDiff"]["items"].as_array().unwrap();
    assert!(
        diffs
            .iter()
            .any(|d| d["diff"].as_str().unwrap().contains("+PROJECT-RULE-ONE"))
    );
    assert_eq!(lines[2]["error"]["code"], "unknown-op");
    assert_eq!(lines[3]["error"]["code"], "unknown-op");
    assert!(!t.store().exists());
}

#[test]
fn the_policy_keys_are_checked_and_explain_names_the_reason() {
    let t = tree();
    let bad = t.home.parent().unwrap().join("bad.toml");
    fs::write(
        &bad,
        "version = 1\n[trust]\nproject = \"sealed\"\nstore-file = \"../x.json\"\n[templates]\nunapproved-note = \"{count} {nope}\"\n",
    )
    .unwrap();
    let out = t.run(&["policy", "check", path(&bad)]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    for needle in ["sealed", "store-file", "nope"] {
        assert!(err.contains(needle), "{needle}: {err}");
    }
    let table = t.ok(&["explain"]);
    assert!(table.contains("unapproved"), "{table}");
    // An unapproved project skill cannot be read through `skill show` either.
    let out = t.run(&["skill", "show", "deploy"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(!text(&out.stdout).contains("SKILL-DESC-ONE"));
}
