//! The JSON Schemas under `schema/` are generated from the Rust types and
//! committed; these tests keep the files equal to what the types generate,
//! and validate real outputs against them: every kind of record a snapshot
//! holds, every op's answer and every error code `serve` can be driven to
//! here (the serve tests validate all their responses too).
//!
//! After changing a serialized type: `LISA_UPDATE_SCHEMA=1 cargo test
//! --test it schema::`, then `npm run build:types` in `bindings/node`.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::support::World;
use crate::validate;

const BIN: &str = env!("CARGO_BIN_EXE_lisa-context");

#[test]
fn committed_schemas_are_the_generated_ones() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("schema");
    let update = std::env::var_os("LISA_UPDATE_SCHEMA").is_some();
    for (name, schema) in lisa_context::protocol::schemas() {
        let text = serde_json::to_string_pretty(&schema).unwrap() + "\n";
        let path = dir.join(name);
        if update {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &text).unwrap();
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == text,
            "schema/{name} differs from what the Rust types generate: \
             run `LISA_UPDATE_SCHEMA=1 cargo test --test it schema::` and commit it"
        );
    }
}

#[test]
fn the_schemas_list_every_error_code_and_op() {
    let hello = lisa_context::protocol::Hello::new();
    let response: Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/response.schema.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let text = response.to_string();
    for code in &hello.error_codes {
        assert!(text.contains(&format!("\"{code}\"")), "{code}");
    }
    let request = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/request.schema.json"),
    )
    .unwrap();
    for op in &hello.ops {
        assert!(request.contains(&format!("\"{op}\"")), "{op}");
    }
    // A request with unknown fields is still a valid request.
    assert!(validate::is_valid_request(
        &json!({ "id": 1, "op": "snapshot", "cwd": "/", "future": [1] })
    ));
    assert!(validate::is_valid_request(
        &json!({ "id": "x", "op": "hello" })
    ));
    assert!(!validate::is_valid_request(
        &json!({ "id": 1, "op": "snapshot" })
    ));
    assert!(!validate::is_valid_request(&json!({ "op": "hello" })));
}

// ---------------------------------------------------------------------------
// A tree that makes every kind of record

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn skill(dir: &Path, folder: &str, frontmatter: &str) {
    write(
        &dir.join(folder).join("SKILL.md"),
        &format!("---\n{frontmatter}\n---\n\n# {folder}\n"),
    );
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A repository, and a level in it.
const APP: &str = "app";
const API: &str = "app/packages/api";

fn world() -> World {
    let w = World::empty();
    let base = &w.base;
    let home = &w.home;
    write(&home.join("AGENTS.md"), "home: answer briefly");
    skill(
        &home.join("skills"),
        "release",
        "name: release\ndescription: cut a release",
    );
    write(&home.join("skills/release/tool.js"), "// tool");

    let app = w.path(APP);
    std::fs::create_dir_all(app.join(".git")).unwrap();
    write(&app.join("AGENTS.md"), "app: use tabs");
    // The same text under the other name: folded.
    write(&app.join("CLAUDE.md"), "app: use tabs\n");
    let api = w.path(API);
    // Hidden text: a zero-width space and an HTML comment.
    write(
        &api.join("AGENTS.md"),
        "api: JSON errors\u{200b} <!-- hidden -->",
    );
    // Blank: skipped.
    write(&api.join("CLAUDE.md"), "   \n");
    // Too long for the budget and for one file's read limit.
    write(&app.join("packages/AGENTS.md"), &"x".repeat(40_000));
    // A hard-linked project file (a warning).
    write(&base.join("outside.md"), "linked text");
    std::fs::hard_link(base.join("outside.md"), app.join("packages/CLAUDE.md")).unwrap();

    let skills = app.join(".agents/skills");
    // Hidden text in a description: a zero-width space.
    skill(
        &skills,
        "deploy",
        "name: deploy\ndescription: deploy the app\u{200b}",
    );
    // Loses its name to the home skill.
    skill(
        &skills,
        "release",
        "name: release\ndescription: a project release",
    );
    skill(&skills, "Bad_Name", "name: Bad_Name\ndescription: refused");
    skill(
        &skills,
        "impostor",
        "name: deploy-two\ndescription: wrong folder",
    );
    skill(&skills, "no-description", "name: no-description");
    // Not YAML (a second `: `): read by the lenient fallback, with a warning.
    skill(
        &skills,
        "lenient",
        "name: lenient\ndescription: Use when: the user asks",
    );
    skill(
        &skills,
        "rich",
        "name: rich\ndescription: every field\nlicense: MIT\ncompatibility: node 20\n\
         metadata:\n  owner: team\nallowed-tools: [Bash, Read]\nversion: 1.10\n\
         tags: [a, b]\nextra-key: {nested: true}",
    );
    write(&skills.join("a-file"), "not a folder");
    w
}

/// Runs a server with `args` before `serve` on `requests`, and returns the
/// responses, each checked against the schema.
fn serve(args: &[&str], env: &[(&str, &Path)], requests: &[Value]) -> Vec<Value> {
    let mut c = Command::new(BIN);
    c.args(args)
        .arg("serve")
        .args(["--jobs", "1"])
        .env_remove("LISA_HOME")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        c.env(k, v);
    }
    let mut child = c.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut input = String::new();
    for r in requests {
        match r {
            Value::String(raw) => input.push_str(raw),
            other => input.push_str(&other.to_string()),
        }
        input.push('\n');
    }
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(out.status.success());
    let responses: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(responses.len(), requests.len());
    for r in &responses {
        validate::response(r);
        if let Some(snapshot) = r.get("snapshot") {
            validate::snapshot(snapshot);
        }
    }
    responses
}

fn req(id: u64, op: &str, cwd: &Path, extra: Value) -> Value {
    let mut v = json!({ "id": id, "op": op, "cwd": s(cwd) });
    if let (Some(v), Value::Object(extra)) = (v.as_object_mut(), extra) {
        v.extend(extra);
    }
    v
}

/// What a response is: its answer's member, or `error:<code>`.
fn kind(r: &Value) -> String {
    if let Some(code) = r["error"]["code"].as_str() {
        return format!("error:{code}");
    }
    if let Some(changed) = r["changed"].as_bool() {
        return format!("changed:{changed}");
    }
    let mut keys: Vec<&String> = r.as_object().unwrap().keys().collect();
    keys.retain(|k| *k != "id");
    keys.iter()
        .map(|k| k.as_str())
        .collect::<Vec<_>>()
        .join(",")
}

#[test]
fn real_outputs_of_every_op_and_error_match_the_schema() {
    let w = world();
    let home = ["--home", s(&w.home)];
    let missing = w.base.join("missing");
    let pinned = w.base.join("pinned.toml");
    write(&pinned, "version = 1\n[trust]\nproject = \"pinned\"\n");

    let mut seen = BTreeSet::new();
    let mut records = BTreeSet::new();
    // Open trust: the records, every op, the request errors.
    let requests = vec![
        json!({ "id": 0, "op": "hello" }),
        req(1, "snapshot", &w.path(APP), json!({})),
        req(
            2,
            "snapshot",
            &w.path(API),
            json!({ "root": s(&w.path(APP)) }),
        ),
        req(3, "fingerprint", &w.path(API), json!({})),
        req(4, "refresh", &w.path(API), json!({ "fingerprint": "" })),
        req(5, "skill", &w.path(API), json!({ "name": "deploy" })),
        req(6, "skill", &w.path(API), json!({ "name": "release" })),
        req(7, "trust-status", &w.path(API), json!({})),
        req(8, "trust-diff", &w.path(API), json!({})),
        req(
            9,
            "snapshot",
            &w.path(API),
            json!({ "unknown-field": {"ignored": true} }),
        ),
        Value::String("{not json".into()),
        Value::String("[1]".into()),
        req(10, "frobnicate", &w.path(API), json!({})),
        json!({ "id": 11, "op": "snapshot" }),
        req(12, "snapshot", &missing, json!({})),
        json!({ "id": 13, "op": "snapshot", "cwd": "relative" }),
        req(
            14,
            "snapshot",
            &w.path(APP),
            json!({ "root": s(&w.path(API)) }),
        ),
        req(15, "skill", &w.path(API), json!({ "name": "../x" })),
        req(16, "skill", &w.path(API), json!({ "name": "nothing-here" })),
        Value::String("x".repeat((1 << 20) + 1)),
    ];
    let responses = serve(&home, &[], &requests);
    let fp = responses[3]["fingerprint"].as_str().unwrap().to_string();
    for r in &responses {
        seen.insert(kind(r));
        if let Some(snap) = r.get("snapshot").and_then(Value::as_object) {
            for (key, value) in snap {
                if value.as_array().is_some_and(|a| !a.is_empty()) {
                    records.insert(key.clone());
                }
            }
        }
    }
    let unchanged = serve(
        &home,
        &[],
        &[req(
            1,
            "refresh",
            &w.path(API),
            json!({ "fingerprint": fp }),
        )],
    );
    seen.insert(kind(&unchanged[0]));

    // Pinned trust: unapproved items, and a broken trust store.
    let pinned_args = ["--home", s(&w.home), "--policy", s(&pinned)];
    let responses = serve(
        &pinned_args,
        &[],
        &[
            req(1, "snapshot", &w.path(API), json!({})),
            req(2, "trust-diff", &w.path(API), json!({})),
        ],
    );
    assert!(
        !responses[0]["snapshot"]["unapproved"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    records.insert("unapproved".to_string());
    write(&w.home.join("context-trust.json"), "{ not json");
    let responses = serve(
        &pinned_args,
        &[],
        &[
            req(1, "trust-status", &w.path(API), json!({})),
            req(2, "snapshot", &w.path(API), json!({})),
        ],
    );
    seen.insert(kind(&responses[0]));

    // No home at all: the read-only trust ops still answer, with no store.
    // (`trust-unavailable` comes only from approving or revoking, which
    // are not ops.)
    let empty = w.base.join("empty-home");
    std::fs::create_dir_all(&empty).unwrap();
    let responses = serve(
        &[],
        &[("HOME", &empty)],
        &[req(1, "trust-status", &w.path(API), json!({}))],
    );
    assert_eq!(responses[0]["trust"]["store"], Value::Null);

    // An invalid policy.
    let bad = w.base.join("bad.toml");
    write(&bad, "version = 1\n[trust]\nsymlinks = \"sometimes\"\n");
    let responses = serve(
        &["--home", s(&w.home), "--policy", s(&bad)],
        &[],
        &[req(1, "snapshot", &w.path(API), json!({}))],
    );
    seen.insert(kind(&responses[0]));

    let want = [
        "hello",
        "snapshot",
        "fingerprint",
        "changed:true",
        "changed:false",
        "skill",
        "trust",
        "trustDiff",
        "error:bad-request",
        "error:unknown-op",
        "error:line-too-long",
        "error:bad-cwd",
        "error:relative-cwd",
        "error:root-outside",
        "error:invalid-skill-name",
        "error:skill-not-found",
        "error:policy-invalid",
        "error:trust-store-invalid",
    ];
    for k in want {
        assert!(seen.contains(k), "no {k} response was produced: {seen:?}");
    }
    for k in [
        "instructionFiles",
        "deduped",
        "skipped",
        "skills",
        "shadowedProjectSkills",
        "rejectedSkills",
        "hiddenText",
        "warnings",
        "unapproved",
    ] {
        assert!(
            records.contains(k),
            "no {k} record was produced: {records:?}"
        );
    }
}

#[test]
fn the_demo_snapshot_matches_the_schema() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/demo");
    let out = Command::new(BIN)
        .arg("--home")
        .arg(root.join("home"))
        .args(["snapshot", "--format", "json", "--root"])
        .arg(root.join("repo"))
        .arg("--cwd")
        .arg(root.join("repo/packages/api"))
        .env_remove("LISA_HOME")
        .output()
        .unwrap();
    assert!(out.status.success());
    validate::snapshot(&serde_json::from_slice(&out.stdout).unwrap());
}
