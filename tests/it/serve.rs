//! `lisa-context serve`: JSON lines in, JSON lines out, many sessions in one
//! process, and errors that never stop the server.
//!
//! Every run passes `--home <tempdir>`; answers are checked against the
//! one-shot commands (`snapshot --format json`, `fingerprint`, `skill show`)
//! for the same cwd and home.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};

use serde_json::{Value, json};

use crate::support::World;
use crate::validate;

const BIN: &str = env!("CARGO_BIN_EXE_lisa-context");

/// The server's line limit (1 MiB).
const MAX_LINE: usize = 1 << 20;

// ---------------------------------------------------------------------------
// Helpers

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn add_skill(dir: &Path, name: &str, description: &str) {
    write(
        &dir.join(name).join("SKILL.md"),
        &format!(
            "---\nname: {name}\ndescription: {description}\n---\n\n# {name}\n\nSteps for {name}.\n"
        ),
    );
}

fn make_repo(path: &Path) {
    std::fs::create_dir_all(path.join(".git")).unwrap();
}

/// A home and two repositories:
/// - `home/`: AGENTS.md, skills/release;
/// - `app/` (marked): AGENTS.md, packages/api/AGENTS.md, .agents/skills/deploy;
/// - `lib/` (marked): CLAUDE.md, .lisa/skills/publish.
const APP: &str = "app";
const API: &str = "app/packages/api";
const LIB: &str = "lib";

fn world() -> World {
    let w = World::empty();
    let home = &w.home;
    write(&home.join("AGENTS.md"), "home: answer briefly");
    add_skill(&home.join("skills"), "release", "cut a release");
    let app = w.path(APP);
    make_repo(&app);
    write(&app.join("AGENTS.md"), "app: use tabs");
    write(&app.join("packages/api/AGENTS.md"), "api: JSON errors");
    add_skill(&app.join(".agents/skills"), "deploy", "deploy the app");
    let lib = w.path(LIB);
    make_repo(&lib);
    write(&lib.join("CLAUDE.md"), "lib: no unsafe");
    add_skill(&lib.join(".lisa/skills"), "publish", "publish the crate");
    w
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// One request line.
fn req(id: impl Into<Value>, op: &str, cwd: &Path, extra: Value) -> String {
    let mut v = json!({ "id": id.into(), "op": op, "cwd": s(cwd) });
    if let Value::Object(extra) = extra {
        v.as_object_mut().unwrap().extend(extra);
    }
    v.to_string()
}

fn server(home: &Path) -> Command {
    server_with(home, &[])
}

/// The server with extra `serve` arguments (`--jobs N`).
fn server_with(home: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(BIN);
    c.arg("--home")
        .arg(home)
        .arg("serve")
        .args(args)
        .env_remove("LISA_HOME")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

struct Run {
    responses: Vec<Value>,
    /// The response lines as written.
    stdout: String,
    status: ExitStatus,
    stderr: String,
}

impl Run {
    /// The one response carrying `id`.
    fn by_id(&self, id: impl Into<Value>) -> &Value {
        let id = id.into();
        let found: Vec<&Value> = self.responses.iter().filter(|r| r["id"] == id).collect();
        assert_eq!(
            found.len(),
            1,
            "exactly one response with id {id}: {found:?}"
        );
        found[0]
    }

    fn error_code(&self, id: impl Into<Value>) -> String {
        let r = self.by_id(id);
        assert!(
            r["error"]["message"].is_string(),
            "an error has a message: {r}"
        );
        r["error"]["code"].as_str().unwrap_or_default().to_string()
    }
}

/// Runs the server on `input` (written by a separate thread, then closed)
/// and collects every response line.
fn run_server(home: &Path, input: Vec<u8>) -> Run {
    run_server_with(home, &[], input)
}

/// [`run_server`] with extra `serve` arguments.
fn run_server_with(home: &Path, args: &[&str], input: Vec<u8>) -> Run {
    let mut child = server_with(home, args).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        // The server may stop reading only by exiting; a broken pipe would
        // itself be a failure the responses will show.
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let responses: Vec<Value> = stdout
        .lines()
        .map(|l| {
            serde_json::from_str(l).unwrap_or_else(|e| {
                // Valid JSON holding a number no f64 holds (an echoed id
                // like 1e400) is kept as its text.
                match serde_json::from_str::<&serde_json::value::RawValue>(l) {
                    Ok(_) => Value::String(l.to_string()),
                    Err(_) => panic!("not JSON ({e}): {l:?}"),
                }
            })
        })
        .collect();
    // Every response this suite sees must match the committed schema.
    for r in &responses {
        if r.is_object() {
            validate::response(r);
        }
    }
    Run {
        responses,
        stdout,
        status: out.status,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn lines(requests: &[String]) -> Vec<u8> {
    let mut v = Vec::new();
    for r in requests {
        v.extend_from_slice(r.as_bytes());
        v.push(b'\n');
    }
    v
}

/// Runs a one-shot command and returns its stdout (it must succeed).
fn cli(home: &Path, args: &[&str]) -> String {
    let out = Command::new(BIN)
        .arg("--home")
        .arg(home)
        .args(args)
        .env_remove("LISA_HOME")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn cli_snapshot(home: &Path, cwd: &Path, root: Option<&Path>) -> Value {
    let mut args = vec!["snapshot", "--format", "json", "--cwd", s(cwd)];
    if let Some(r) = root {
        args.extend(["--root", s(r)]);
    }
    let snapshot = serde_json::from_str(&cli(home, &args)).unwrap();
    validate::snapshot(&snapshot);
    snapshot
}

fn cli_fingerprint(home: &Path, cwd: &Path) -> String {
    cli(home, &["fingerprint", "--cwd", s(cwd)])
        .trim()
        .to_string()
}

fn file_paths(snapshot: &Value) -> Vec<String> {
    snapshot["instructionFiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_string())
        .collect()
}

// ---------------------------------------------------------------------------
// The operations

#[test]
fn snapshot_and_fingerprint_match_the_one_shot_commands() {
    let w = world();
    let cwds = [&w.path(APP), &w.path(API), &w.path(LIB)];
    let mut requests = Vec::new();
    for (i, cwd) in cwds.iter().enumerate() {
        requests.push(req(i as u64, "snapshot", cwd, json!({})));
        requests.push(req(format!("fp-{i}"), "fingerprint", cwd, json!({})));
    }
    let run = run_server(&w.home, lines(&requests));
    assert!(run.status.success(), "stderr: {}", run.stderr);
    assert_eq!(run.responses.len(), requests.len());

    for (i, cwd) in cwds.iter().enumerate() {
        let r = run.by_id(i as u64);
        assert!(r.get("error").is_none(), "{r}");
        let expected = cli_snapshot(&w.home, cwd, None);
        assert_eq!(r["snapshot"], expected, "snapshot for {}", cwd.display());
        assert_eq!(r.as_object().unwrap().len(), 2, "only id and snapshot: {r}");

        let f = run.by_id(format!("fp-{i}"));
        let fp = f["fingerprint"].as_str().unwrap();
        assert_eq!(fp, cli_fingerprint(&w.home, cwd));
        assert_eq!(fp, expected["fingerprint"].as_str().unwrap());
    }

    // Sessions in different cwds of one process get their own answers.
    let app = &run.by_id(0)["snapshot"];
    let api = &run.by_id(1)["snapshot"];
    let lib = &run.by_id(2)["snapshot"];
    assert_eq!(
        file_paths(app),
        vec![
            s(&w.home.join("AGENTS.md")),
            s(&w.path(APP).join("AGENTS.md"))
        ]
    );
    assert_eq!(
        file_paths(api),
        vec![
            s(&w.home.join("AGENTS.md")),
            s(&w.path(APP).join("AGENTS.md")),
            s(&w.path(API).join("AGENTS.md"))
        ]
    );
    assert_eq!(
        file_paths(lib),
        vec![
            s(&w.home.join("AGENTS.md")),
            s(&w.path(LIB).join("CLAUDE.md"))
        ]
    );
    assert!(app["prompt"].as_str().unwrap().contains("deploy the app"));
    assert!(!lib["prompt"].as_str().unwrap().contains("deploy the app"));
    assert!(
        lib["prompt"]
            .as_str()
            .unwrap()
            .contains("publish the crate")
    );
    assert_ne!(app["fingerprint"], api["fingerprint"]);
    assert_ne!(app["fingerprint"], lib["fingerprint"]);
}

#[test]
fn refresh_says_unchanged_or_sends_the_new_snapshot() {
    let w = world();
    let current = cli_fingerprint(&w.home, &w.path(API));
    let requests = [
        req(
            1,
            "refresh",
            &w.path(API),
            json!({ "fingerprint": current }),
        ),
        req(
            2,
            "refresh",
            &w.path(API),
            json!({ "fingerprint": "0".repeat(32) }),
        ),
        req(3, "refresh", &w.path(API), json!({ "fingerprint": "" })),
        // Another session's fingerprint is stale for this one.
        req(
            4,
            "refresh",
            &w.path(APP),
            json!({ "fingerprint": current.clone() }),
        ),
    ];
    let run = run_server(&w.home, lines(&requests));
    assert!(run.status.success());
    assert_eq!(*run.by_id(1), json!({ "id": 1, "changed": false }));

    let expected = cli_snapshot(&w.home, &w.path(API), None);
    for id in [2, 3] {
        let r = run.by_id(id);
        assert_eq!(r["changed"], json!(true), "{r}");
        assert_eq!(r["snapshot"], expected);
    }
    let r = run.by_id(4);
    assert_eq!(r["changed"], json!(true));
    assert_eq!(r["snapshot"], cli_snapshot(&w.home, &w.path(APP), None));
}

#[test]
fn skill_matches_skill_show() {
    let w = world();
    let requests = [
        req(1, "skill", &w.path(APP), json!({ "name": "deploy" })),
        req(2, "skill", &w.path(API), json!({ "name": "deploy" })),
        req(3, "skill", &w.path(API), json!({ "name": "release" })),
        req(4, "skill", &w.path(LIB), json!({ "name": "publish" })),
        // Not visible from the other repository.
        req(5, "skill", &w.path(LIB), json!({ "name": "deploy" })),
        req(6, "skill", &w.path(APP), json!({ "name": "no-such-skill" })),
        req(7, "skill", &w.path(APP), json!({})),
    ];
    let run = run_server(&w.home, lines(&requests));
    assert!(run.status.success());

    let cases = [
        (
            1,
            &w.path(APP),
            "deploy",
            w.path(APP).join(".agents/skills/deploy/SKILL.md"),
            "project",
        ),
        (
            2,
            &w.path(API),
            "deploy",
            w.path(APP).join(".agents/skills/deploy/SKILL.md"),
            "project",
        ),
        (
            3,
            &w.path(API),
            "release",
            w.home.join("skills/release/SKILL.md"),
            "home",
        ),
        (
            4,
            &w.path(LIB),
            "publish",
            w.path(LIB).join(".lisa/skills/publish/SKILL.md"),
            "project",
        ),
    ];
    for (id, cwd, name, path, origin) in cases {
        let skill = &run.by_id(id)["skill"];
        let shown = cli(&w.home, &["skill", "show", name, "--cwd", s(cwd)]);
        assert_eq!(skill["content"].as_str().unwrap(), shown, "id {id}");
        assert_eq!(
            skill["content"].as_str().unwrap(),
            std::fs::read_to_string(&path).unwrap()
        );
        assert_eq!(skill["name"], json!(name));
        assert_eq!(skill["path"], json!(s(&path)));
        assert_eq!(skill["origin"], json!(origin));
        // The path is the one the snapshot lists for that name.
        let snap = cli_snapshot(&w.home, cwd, None);
        let listed = snap["skills"]
            .as_array()
            .unwrap()
            .iter()
            .find(|k| k["name"] == json!(name))
            .unwrap();
        assert_eq!(listed["path"], skill["path"]);
    }
    assert_eq!(run.error_code(5), "skill-not-found");
    assert_eq!(run.error_code(6), "skill-not-found");
    assert_eq!(run.error_code(7), "bad-request");
    // A miss names what is there, as the command line does.
    let miss = &run.by_id(5)["error"];
    assert_eq!(miss["available"], json!(["publish", "release"]));
    assert!(
        miss["help"]
            .as_str()
            .unwrap()
            .contains("available here: publish, release"),
        "{miss}"
    );
}

/// A `skill` request a letter off gets the nearest name in `help`; a
/// `policy-invalid` answer lists each problem with its file, line, column,
/// key and code beside the drawn diagnostic.
#[test]
fn errors_carry_what_a_program_can_use() {
    let w = world();
    let run = run_server(
        &w.home,
        lines(&[req(1, "skill", &w.path(APP), json!({ "name": "deplo" }))]),
    );
    let error = &run.by_id(1)["error"];
    assert!(
        error["help"]
            .as_str()
            .unwrap()
            .starts_with("did you mean `deploy`?"),
        "{error}"
    );
    write(
        &w.home.join("context-policy.toml"),
        "version = 1\n[trust]\nproject = \"pin\"\n[instructions]\nbudget-bytes = -4\n",
    );
    let run = run_server(
        &w.home,
        lines(&[req(1, "snapshot", &w.path(APP), json!({}))]),
    );
    assert_eq!(run.error_code(1), "policy-invalid");
    let error = &run.by_id(1)["error"];
    assert!(
        error["message"].as_str().unwrap().contains("did you mean"),
        "{error}"
    );
    let problems = error["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 2, "{error}");
    assert_eq!(problems[0]["key"], "trust.project");
    assert_eq!(problems[0]["line"], 3);
    assert_eq!(problems[0]["column"], 11);
    assert_eq!(problems[0]["code"], "policy::unknown-value");
    assert_eq!(problems[0]["help"], "did you mean \"pinned\"?");
    assert_eq!(problems[1]["key"], "instructions.budget-bytes");
    assert_eq!(problems[1]["code"], "policy::out-of-range");
    assert!(
        problems[1]["file"]
            .as_str()
            .unwrap()
            .ends_with("context-policy.toml")
    );
}

/// `hello` needs no cwd and says what the server speaks; fields a request
/// does not use, in `hello` as in every op, are ignored.
#[test]
fn hello_reports_the_protocol_and_capabilities() {
    let w = world();
    let requests = [
        r#"{"id": 1, "op": "hello"}"#.to_string(),
        r#"{"id": 2, "op": "hello", "cwd": "relative", "client": {"name": "lisa"}}"#.to_string(),
        req(
            3,
            "fingerprint",
            &w.path(APP),
            json!({ "priority": 5, "name": 7 }),
        ),
    ];
    let run = run_server(&w.home, lines(&requests));
    assert!(run.status.success(), "stderr: {}", run.stderr);
    let hello = &run.by_id(1)["hello"];
    assert_eq!(hello["protocol"], json!(1));
    assert_eq!(hello["version"], json!(env!("CARGO_PKG_VERSION")));
    let ops: Vec<&str> = hello["ops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o.as_str().unwrap())
        .collect();
    assert_eq!(
        ops,
        [
            "hello",
            "snapshot",
            "fingerprint",
            "refresh",
            "skill",
            "trust-status",
            "trust-diff",
            "access",
            "rule",
            "skill-manifests",
            "skill-resource"
        ]
    );
    // The shipped list, declared once.
    assert_eq!(
        hello["policies"],
        json!(lisa_context::policy::SHIPPED_NAMES)
    );
    let names: Vec<&str> = hello["policies"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    assert_eq!(names[..4], ["lisa", "codex", "gemini", "claude-code"]);
    let codes = hello["errorCodes"].as_array().unwrap();
    for code in [
        "bad-request",
        "unknown-op",
        "skill-not-found",
        "policy-invalid",
    ] {
        assert!(codes.contains(&json!(code)), "{code}");
    }
    assert_eq!(run.by_id(2)["hello"], *hello);
    assert_eq!(
        run.by_id(3)["fingerprint"].as_str().unwrap(),
        cli_fingerprint(&w.home, &w.path(APP))
    );
}

#[test]
fn the_root_field_names_the_repository_root() {
    let w = world();
    // No `.git` anywhere in this tree.
    let plain = w.base.join("plain");
    write(&plain.join("AGENTS.md"), "plain: root level");
    write(&plain.join("a/b/AGENTS.md"), "plain: cwd level");
    let cwd = plain.join("a/b");
    let requests = [
        req(1, "snapshot", &cwd, json!({ "root": s(&plain) })),
        req(2, "snapshot", &cwd, json!({})),
        req(3, "fingerprint", &cwd, json!({ "root": s(&plain) })),
        req(4, "fingerprint", &cwd, json!({})),
        req(5, "snapshot", &cwd, json!({ "root": s(&w.path(APP)) })),
        req(6, "snapshot", &plain, json!({ "root": s(&cwd) })),
    ];
    let run = run_server(&w.home, lines(&requests));
    assert!(run.status.success());

    let rooted = &run.by_id(1)["snapshot"];
    assert_eq!(rooted["repoRoot"], json!(s(&plain)));
    assert_eq!(
        file_paths(rooted),
        vec![
            s(&w.home.join("AGENTS.md")),
            s(&plain.join("AGENTS.md")),
            s(&cwd.join("AGENTS.md"))
        ]
    );
    assert_eq!(*rooted, cli_snapshot(&w.home, &cwd, Some(&plain)));

    let alone = &run.by_id(2)["snapshot"];
    assert_eq!(alone["repoRoot"], json!(s(&cwd)));
    assert_eq!(
        file_paths(alone),
        vec![s(&w.home.join("AGENTS.md")), s(&cwd.join("AGENTS.md"))]
    );
    assert!(
        !alone["prompt"]
            .as_str()
            .unwrap()
            .contains("plain: root level")
    );
    assert_eq!(*alone, cli_snapshot(&w.home, &cwd, None));

    assert_eq!(run.by_id(3)["fingerprint"], rooted["fingerprint"]);
    assert_eq!(run.by_id(4)["fingerprint"], alone["fingerprint"]);
    assert_eq!(run.error_code(5), "root-outside");
    assert_eq!(run.error_code(6), "root-outside");
}

#[test]
fn many_pipelined_requests_are_all_answered_in_order() {
    let w = world();
    let cwds = [&w.path(APP), &w.path(API), &w.path(LIB)];
    let requests: Vec<String> = (0..300u64)
        .map(|i| {
            let op = if i % 3 == 0 {
                "snapshot"
            } else {
                "fingerprint"
            };
            req(i, op, cwds[(i % 3) as usize], json!({}))
        })
        .collect();
    let run = run_server_with(&w.home, &["--jobs", "1"], lines(&requests));
    assert!(run.status.success(), "stderr: {}", run.stderr);
    let ids: Vec<Value> = run.responses.iter().map(|r| r["id"].clone()).collect();
    let want: Vec<Value> = (0..300u64).map(Value::from).collect();
    assert_eq!(ids, want, "one answer per request, in order");
    let fps: Vec<String> = cwds.iter().map(|c| cli_fingerprint(&w.home, c)).collect();
    for (i, r) in run.responses.iter().enumerate() {
        let fp = if i % 3 == 0 {
            &r["snapshot"]["fingerprint"]
        } else {
            &r["fingerprint"]
        };
        assert_eq!(fp.as_str().unwrap(), fps[i % 3], "response {i}");
    }
}

/// With several workers, answers about different cwds may overtake one
/// another, but the answers about one cwd come in the order asked, and
/// every request is answered once.
#[test]
fn requests_about_one_cwd_keep_their_order_across_workers() {
    let w = world();
    let spelled = w.path(APP).join(".").join("packages//api");
    let cwds = [&w.path(APP), &w.path(API), &w.path(LIB), &spelled];
    let requests: Vec<String> = (0..800u64)
        .map(|i| {
            let cwd = cwds[(i % 4) as usize];
            match i % 5 {
                0 => req(i, "snapshot", cwd, json!({})),
                1 => req(i, "refresh", cwd, json!({ "fingerprint": "" })),
                2 => req(i, "skill", cwd, json!({ "name": "release" })),
                _ => req(i, "fingerprint", cwd, json!({})),
            }
        })
        .collect();
    for jobs in ["2", "4"] {
        let run = run_server_with(&w.home, &["--jobs", jobs], lines(&requests));
        assert!(run.status.success(), "stderr: {}", run.stderr);
        assert_eq!(run.responses.len(), requests.len());
        let mut ids: Vec<u64> = run
            .responses
            .iter()
            .map(|r| r["id"].as_u64().unwrap())
            .collect();
        // Per cwd as written (`.` and `//` aside: the api spellings are
        // one cwd), in the order asked.
        for lane in [vec![0u64], vec![1, 3], vec![2]] {
            let seen: Vec<u64> = ids
                .iter()
                .copied()
                .filter(|i| lane.contains(&(i % 4)))
                .collect();
            let mut sorted = seen.clone();
            sorted.sort_unstable();
            assert_eq!(seen, sorted, "jobs {jobs}: cwd lane {lane:?} in order");
        }
        ids.sort_unstable();
        assert_eq!(ids, (0..800).collect::<Vec<u64>>(), "each answered once");
        for r in &run.responses {
            assert!(r.get("error").is_none(), "{r}");
        }
    }
}

// ---------------------------------------------------------------------------
// Errors

#[test]
fn bad_requests_get_errors_and_the_server_keeps_answering() {
    let w = world();
    let missing = w.base.join("missing");
    let a_file = w.path(APP).join("AGENTS.md");
    let input = [
        "{not json".to_string(),
        req(1, "snapshot", &w.path(APP), json!({})),
        req(2, "frobnicate", &w.path(APP), json!({})),
        r#"{"id": 3, "op": "snapshot"}"#.to_string(),
        req(4, "refresh", &w.path(APP), json!({})),
        req(5, "skill", &w.path(APP), json!({ "name": "../x" })),
        req(6, "skill", &missing, json!({ "name": "Bad Name" })),
        req(7, "snapshot", &missing, json!({})),
        req(8, "fingerprint", &a_file, json!({})),
        r#"{"id": 9, "op": "snapshot", "cwd": "relative/dir"}"#.to_string(),
        req(10, "snapshot", &w.path(APP), json!({ "unexpected": true })),
        "[1, 2, 3]".to_string(),
        r#"{"id": 11, "op": 5, "cwd": "/"}"#.to_string(),
        String::new(),
        "   \t ".to_string(),
        "\r".to_string(),
        req("last", "fingerprint", &w.path(LIB), json!({})),
    ];
    let mut bytes = lines(&input);
    // A request with CRLF ending, as a Windows client would send it.
    bytes.extend_from_slice(req(12, "fingerprint", &w.path(APP), json!({})).as_bytes());
    bytes.extend_from_slice(b"\r\n");
    // One job: every response in request order.
    let run = run_server_with(&w.home, &["--jobs", "1"], bytes);
    assert!(run.status.success(), "stderr: {}", run.stderr);

    // One response per non-blank line, in order: blank lines are ignored.
    let ids: Vec<Value> = run.responses.iter().map(|r| r["id"].clone()).collect();
    assert_eq!(
        ids,
        vec![
            Value::Null,
            json!(1),
            json!(2),
            json!(3),
            json!(4),
            json!(5),
            json!(6),
            json!(7),
            json!(8),
            json!(9),
            json!(10),
            Value::Null,
            json!(11),
            json!("last"),
            json!(12),
        ]
    );

    let first = &run.responses[0];
    assert_eq!(first["id"], Value::Null);
    assert_eq!(first["error"]["code"], json!("bad-request"));
    assert!(first["error"]["message"].is_string());

    assert_eq!(
        run.by_id(1)["snapshot"],
        cli_snapshot(&w.home, &w.path(APP), None)
    );
    assert_eq!(run.error_code(2), "unknown-op");
    assert!(
        run.by_id(2)["error"]["message"]
            .as_str()
            .unwrap()
            .contains("frobnicate")
    );
    assert_eq!(run.error_code(3), "bad-request");
    assert_eq!(run.error_code(4), "bad-request");
    assert_eq!(run.error_code(5), "invalid-skill-name");
    // The name is checked before the (missing) cwd is looked at.
    assert_eq!(run.error_code(6), "invalid-skill-name");
    assert_eq!(run.error_code(7), "bad-cwd");
    assert!(
        run.by_id(7)["error"]["message"]
            .as_str()
            .unwrap()
            .contains(s(&missing))
    );
    assert_eq!(run.error_code(8), "bad-cwd");
    assert_eq!(run.error_code(9), "relative-cwd");
    // Unknown fields are ignored, so clients and servers evolve apart.
    assert_eq!(
        run.by_id(10)["snapshot"],
        cli_snapshot(&w.home, &w.path(APP), None)
    );
    assert_eq!(run.responses[11]["error"]["code"], json!("bad-request"));
    assert_eq!(run.error_code(11), "bad-request");
    assert_eq!(
        run.by_id("last")["fingerprint"].as_str().unwrap(),
        cli_fingerprint(&w.home, &w.path(LIB))
    );
    assert_eq!(
        run.by_id(12)["fingerprint"].as_str().unwrap(),
        cli_fingerprint(&w.home, &w.path(APP))
    );
}

#[test]
fn an_oversized_line_is_refused_and_later_requests_are_answered() {
    let w = world();
    let mut input = lines(&[req(1, "fingerprint", &w.path(APP), json!({}))]);
    input.extend(std::iter::repeat_n(b'a', 2 * MAX_LINE));
    input.push(b'\n');
    input.extend(lines(&[req(2, "fingerprint", &w.path(API), json!({}))]));

    // Exactly at the limit (padded with spaces): still a request.
    let mut at_limit = req(3, "fingerprint", &w.path(LIB), json!({})).into_bytes();
    at_limit.resize(MAX_LINE, b' ');
    input.extend(&at_limit);
    input.push(b'\n');
    // One byte over: refused, and the next line is still read whole.
    let mut over = req(4, "fingerprint", &w.path(LIB), json!({})).into_bytes();
    over.resize(MAX_LINE + 1, b' ');
    input.extend(&over);
    input.push(b'\n');
    input.extend(lines(&[req(5, "snapshot", &w.path(LIB), json!({}))]));

    let run = run_server_with(&w.home, &["--jobs", "1"], input);
    assert!(run.status.success(), "stderr: {}", run.stderr);
    assert_eq!(run.responses.len(), 6, "{:?}", run.responses);
    let codes: Vec<Value> = run
        .responses
        .iter()
        .map(|r| r["error"]["code"].clone())
        .collect();
    assert_eq!(
        codes,
        vec![
            Value::Null,
            json!("line-too-long"),
            Value::Null,
            Value::Null,
            json!("line-too-long"),
            Value::Null
        ]
    );
    for i in [1, 4] {
        assert_eq!(run.responses[i]["id"], Value::Null);
        assert!(run.responses[i]["error"]["message"].is_string());
    }
    assert_eq!(
        run.by_id(1)["fingerprint"].as_str().unwrap(),
        cli_fingerprint(&w.home, &w.path(APP))
    );
    assert_eq!(
        run.by_id(2)["fingerprint"].as_str().unwrap(),
        cli_fingerprint(&w.home, &w.path(API))
    );
    assert_eq!(
        run.by_id(3)["fingerprint"].as_str().unwrap(),
        cli_fingerprint(&w.home, &w.path(LIB))
    );
    assert_eq!(
        run.by_id(5)["snapshot"],
        cli_snapshot(&w.home, &w.path(LIB), None)
    );
}

#[test]
fn end_of_input_ends_the_server_with_status_zero() {
    let w = world();
    // Nothing at all.
    let run = run_server(&w.home, Vec::new());
    assert_eq!(run.status.code(), Some(0));
    assert!(run.responses.is_empty());

    // Only blank lines.
    let run = run_server(&w.home, b"\n\n  \n".to_vec());
    assert_eq!(run.status.code(), Some(0));
    assert!(run.responses.is_empty());

    // A last request without a newline is still answered.
    let run = run_server(
        &w.home,
        req(1, "fingerprint", &w.path(APP), json!({})).into_bytes(),
    );
    assert_eq!(run.status.code(), Some(0));
    assert_eq!(run.responses.len(), 1);
    assert_eq!(
        run.by_id(1)["fingerprint"].as_str().unwrap(),
        cli_fingerprint(&w.home, &w.path(APP))
    );

    // An oversized line cut short by the end of input.
    let run = run_server(&w.home, vec![b'a'; MAX_LINE + 10]);
    assert_eq!(run.status.code(), Some(0));
    assert_eq!(run.responses.len(), 1);
    assert_eq!(run.responses[0]["error"]["code"], json!("line-too-long"));
}

/// The `id` comes back exactly as it was written: integers beyond 64 bits
/// (which a JSON number parser would turn into a float), negative and
/// fractional numbers, strings with escapes, null, and structured ids; in
/// answers and in error responses alike.
#[test]
fn ids_are_echoed_byte_for_byte() {
    let w = world();
    let app = w.path(APP);
    let cwd = s(&app);
    let ids = [
        "123456789012345678901234567890",
        "-98765432109876543210",
        "-7",
        "0.1000000000000000055511151231257827",
        "1e400",
        "12.50",
        r#""caf\u00e9 \"quoted\"""#,
        "null",
        "[1, {\"a\": 2}]",
        "true",
    ];
    let mut input = Vec::new();
    for id in ids {
        // A good request, then three kinds of error with the same id.
        input.push(format!(
            r#"{{"id": {id}, "op": "fingerprint", "cwd": "{cwd}"}}"#
        ));
        input.push(format!(
            r#"{{"op": "frobnicate", "id": {id}, "cwd": "{cwd}"}}"#
        ));
        input.push(format!(r#"{{"id": {id}, "op": "snapshot"}}"#));
        input.push(format!(
            r#"{{"id":{id},"op":"skill","cwd":"{cwd}","name":"no-such"}}"#
        ));
    }
    let run = run_server_with(&w.home, &["--jobs", "1"], lines(&input));
    assert!(run.status.success(), "stderr: {}", run.stderr);
    let out: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(out.len(), input.len(), "{out:?}");
    let fp = cli_fingerprint(&w.home, &w.path(APP));
    for (i, id) in ids.iter().enumerate() {
        let prefix = format!("{{\"id\":{id},");
        for (j, line) in out[4 * i..4 * i + 4].iter().enumerate() {
            assert!(
                line.starts_with(&prefix),
                "response {j} for id {id} echoes it verbatim: {line}"
            );
        }
        if *id == "1e400" {
            // Valid JSON, but beyond f64: checked as text.
            assert!(out[4 * i].contains(&format!("\"fingerprint\":\"{fp}\"")));
            assert!(out[4 * i + 1].contains("\"unknown-op\""));
            assert!(out[4 * i + 2].contains("\"bad-request\""));
            assert!(out[4 * i + 3].contains("\"skill-not-found\""));
            continue;
        }
        let parsed: Vec<&Value> = (0..4).map(|j| &run.responses[4 * i + j]).collect();
        assert_eq!(parsed[0]["fingerprint"].as_str(), Some(fp.as_str()), "{id}");
        assert_eq!(parsed[1]["error"]["code"], json!("unknown-op"), "{id}");
        assert_eq!(parsed[2]["error"]["code"], json!("bad-request"), "{id}");
        assert_eq!(parsed[3]["error"]["code"], json!("skill-not-found"), "{id}");
    }
    // Still one well-formed JSON value per line.
    for line in &out {
        serde_json::from_str::<&serde_json::value::RawValue>(line).unwrap();
    }
}

// ---------------------------------------------------------------------------
// One process, files changing between requests

/// Sends one request and reads one response line.
fn ask(stdin: &mut impl Write, stdout: &mut impl BufRead, line: &str) -> Value {
    stdin.write_all(line.as_bytes()).unwrap();
    stdin.write_all(b"\n").unwrap();
    stdin.flush().unwrap();
    let mut answer = String::new();
    let n = stdout.read_line(&mut answer).unwrap();
    assert!(n > 0, "the server closed its output after {line}");
    let answer = serde_json::from_str(&answer).unwrap();
    validate::response(&answer);
    answer
}

#[test]
fn an_edit_between_requests_changes_the_answer() {
    let w = world();
    let mut child = server(&w.home).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());

    let r1 = ask(
        &mut stdin,
        &mut stdout,
        &req(1, "fingerprint", &w.path(API), json!({})),
    );
    let fp1 = r1["fingerprint"].as_str().unwrap().to_string();
    let lib1 = ask(
        &mut stdin,
        &mut stdout,
        &req(2, "fingerprint", &w.path(LIB), json!({})),
    );

    // Edit a file of the api session's chain (a different size).
    write(
        &w.path(APP).join("AGENTS.md"),
        "app: use tabs, and spaces in YAML",
    );
    let r3 = ask(
        &mut stdin,
        &mut stdout,
        &req(3, "fingerprint", &w.path(API), json!({})),
    );
    let fp3 = r3["fingerprint"].as_str().unwrap().to_string();
    assert_ne!(fp3, fp1, "the edit changes the fingerprint");
    assert_eq!(fp3, cli_fingerprint(&w.home, &w.path(API)));

    // The other repository's session is unaffected.
    let lib2 = ask(
        &mut stdin,
        &mut stdout,
        &req(4, "fingerprint", &w.path(LIB), json!({})),
    );
    assert_eq!(lib2["fingerprint"], lib1["fingerprint"]);

    // refresh with the old fingerprint hands over the new text; with the
    // new one, nothing.
    let r5 = ask(
        &mut stdin,
        &mut stdout,
        &req(5, "refresh", &w.path(API), json!({ "fingerprint": fp1 })),
    );
    assert_eq!(r5["changed"], json!(true));
    assert!(
        r5["snapshot"]["prompt"]
            .as_str()
            .unwrap()
            .contains("app: use tabs, and spaces in YAML")
    );
    let r6 = ask(
        &mut stdin,
        &mut stdout,
        &req(6, "refresh", &w.path(API), json!({ "fingerprint": fp3 })),
    );
    assert_eq!(r6, json!({ "id": 6, "changed": false }));

    // A new project skill shows up in the next snapshot and can be read.
    add_skill(
        &w.path(APP).join(".agents/skills"),
        "rollback",
        "undo a deploy",
    );
    let r7 = ask(
        &mut stdin,
        &mut stdout,
        &req(7, "snapshot", &w.path(API), json!({})),
    );
    let names: Vec<&str> = r7["snapshot"]["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["deploy", "release", "rollback"]);
    let r8 = ask(
        &mut stdin,
        &mut stdout,
        &req(8, "skill", &w.path(API), json!({ "name": "rollback" })),
    );
    assert!(
        r8["skill"]["content"]
            .as_str()
            .unwrap()
            .contains("undo a deploy")
    );

    // Undo the edit: the first fingerprint comes back (the skill is removed too).
    write(&w.path(APP).join("AGENTS.md"), "app: use tabs");
    std::fs::remove_dir_all(w.path(APP).join(".agents/skills/rollback")).unwrap();
    let r9 = ask(
        &mut stdin,
        &mut stdout,
        &req(9, "fingerprint", &w.path(API), json!({})),
    );
    assert_eq!(r9["fingerprint"].as_str().unwrap(), fp1);

    drop(stdin);
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    assert_eq!(rest, "", "no output beyond the answers");
    assert!(child.wait().unwrap().success());
}

/// A repository marker that is a symlink counts for what it points at: when
/// its target vanishes the root moves up, and when a dangling marker's target
/// appears the root moves down. The server must notice both, as a fresh run
/// does.
#[test]
fn a_marker_links_target_appearing_or_vanishing_moves_the_root() {
    let w = world();
    let outer = w.base.join("outer");
    make_repo(&outer);
    write(&outer.join("AGENTS.md"), "outer rules");
    let sub = outer.join("sub");
    let cwd = sub.join("x");
    std::fs::create_dir_all(&cwd).unwrap();
    write(&sub.join("AGENTS.md"), "sub rules");
    let target = w.base.join("elsewhere-git");
    std::fs::create_dir_all(&target).unwrap();
    std::os::unix::fs::symlink(&target, sub.join(".git")).unwrap();

    let mut child = server(&w.home).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut ask_root = |id: u64| {
        let r = ask(
            &mut stdin,
            &mut stdout,
            &req(id, "snapshot", &cwd, json!({})),
        );
        let snap = r["snapshot"].clone();
        assert_eq!(
            snap["fingerprint"].as_str().unwrap(),
            cli_fingerprint(&w.home, &cwd),
            "request {id}: the server agrees with a fresh run"
        );
        snap["repoRoot"].as_str().unwrap().to_string()
    };

    assert_eq!(ask_root(1), s(&sub), "the linked marker makes sub the root");
    std::fs::remove_dir(&target).unwrap();
    assert_eq!(
        ask_root(2),
        s(&outer),
        "a dangling marker counts for nothing"
    );
    std::fs::create_dir(&target).unwrap();
    assert_eq!(ask_root(3), s(&sub), "the target is back");
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

// ---------------------------------------------------------------------------
// The policy files, edited while the server runs

/// A running server with its pipes, asked one line at a time.
struct Live {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: BufReader<std::process::ChildStdout>,
}

impl Live {
    fn start(mut command: Command) -> Live {
        let mut child = command.spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Live {
            child,
            stdin,
            stdout,
        }
    }

    fn ask(&mut self, line: &str) -> Value {
        ask(&mut self.stdin, &mut self.stdout, line)
    }

    fn finish(self) {
        let Live {
            mut child, stdin, ..
        } = self;
        drop(stdin);
        assert!(child.wait().unwrap().success());
    }
}

/// The `policy-invalid` error of a response, checked for plain text.
fn policy_invalid(r: &Value) -> String {
    assert_eq!(r["error"]["code"], json!("policy-invalid"), "{r}");
    let message = r["error"]["message"].as_str().unwrap().to_string();
    assert!(
        !message.contains('\u{1b}'),
        "no terminal sequences: {message:?}"
    );
    message
}

/// Runs a one-shot command that must fail with exit 1.
fn cli_fails(home: &Path, args: &[&str]) -> String {
    let out = Command::new(BIN)
        .arg("--home")
        .arg(home)
        .args(args)
        .env_remove("LISA_HOME")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{args:?}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn an_edited_home_policy_is_used_from_the_next_request() {
    let w = world();
    let policy = w.home.join("context-policy.toml");
    let mut live = Live::start(server(&w.home));
    let fp = |live: &mut Live, id: u64| {
        let r = live.ask(&req(id, "fingerprint", &w.path(API), json!({})));
        r["fingerprint"].as_str().unwrap_or_default().to_string()
    };

    let original = fp(&mut live, 1);
    assert_eq!(original, cli_fingerprint(&w.home, &w.path(API)));

    // A new home policy: the next answer is built under it.
    write(&policy, "version = 1\n[instructions]\nbudget-bytes = 20\n");
    let r = live.ask(&req(2, "snapshot", &w.path(API), json!({})));
    assert_eq!(r["snapshot"]["budget"]["limit"], json!(20), "{r}");
    assert_eq!(r["snapshot"], cli_snapshot(&w.home, &w.path(API), None));
    let small = r["snapshot"]["fingerprint"].as_str().unwrap().to_string();
    assert_ne!(small, original);

    // An edit of the same size: still noticed.
    write(&policy, "version = 1\n[instructions]\nbudget-bytes = 30\n");
    let r = live.ask(&req(3, "snapshot", &w.path(API), json!({})));
    assert_eq!(r["snapshot"]["budget"]["limit"], json!(30), "{r}");
    assert_eq!(r["snapshot"], cli_snapshot(&w.home, &w.path(API), None));

    // An invalid edit: every request says so, the server keeps running,
    // and the one-shot commands still fail.
    write(
        &policy,
        "version = 1\n[instructions]\nbudget-bytes = \"lots\"\n",
    );
    for (id, op, extra) in [
        (4, "fingerprint", json!({})),
        (5, "snapshot", json!({})),
        (6, "refresh", json!({ "fingerprint": small })),
        (7, "skill", json!({ "name": "deploy" })),
    ] {
        let r = live.ask(&req(id, op, &w.path(API), extra));
        let message = policy_invalid(&r);
        assert!(message.contains("budget-bytes"), "{message}");
        assert!(message.contains(s(&policy)), "{message}");
        assert!(message.contains("policy::"), "{message}");
    }
    cli_fails(&w.home, &["fingerprint", "--cwd", s(&w.path(API))]);

    // Fixed: answers again, equal to a fresh run.
    write(&policy, "version = 1\n[instructions]\nbudget-bytes = 20\n");
    assert_eq!(fp(&mut live, 8), small);
    assert_eq!(small, cli_fingerprint(&w.home, &w.path(API)));

    // Removed: back to the built-in policy and the first answer.
    std::fs::remove_file(&policy).unwrap();
    assert_eq!(fp(&mut live, 9), original);
    let r = live.ask(&req(10, "skill", &w.path(API), json!({ "name": "deploy" })));
    assert!(r["skill"]["content"].is_string(), "{r}");
    live.finish();
}

#[test]
fn an_invalid_policy_at_startup_does_not_stop_the_server() {
    let w = world();
    let policy = w.home.join("context-policy.toml");
    write(&policy, "version = 1\n[trust]\nsymlinks = \"sometimes\"\n");
    cli_fails(&w.home, &["snapshot", "--cwd", s(&w.path(APP))]);

    let mut live = Live::start(server(&w.home));
    let message = policy_invalid(&live.ask(&req(1, "snapshot", &w.path(APP), json!({}))));
    assert!(message.contains("sometimes"), "{message}");
    // Other errors that need no policy still come first where they did.
    let r = live.ask(r#"{"id": 2, "op": "frobnicate", "cwd": "/"}"#);
    assert_eq!(r["error"]["code"], json!("unknown-op"));

    write(&policy, "version = 1\n[trust]\nsymlinks = \"never\"\n");
    let r = live.ask(&req(3, "snapshot", &w.path(APP), json!({})));
    assert_eq!(
        r["snapshot"],
        cli_snapshot(&w.home, &w.path(APP), None),
        "{r}"
    );
    live.finish();
}

#[test]
fn the_command_line_policy_file_is_watched_too() {
    let w = world();
    let file = w.base.join("team.toml");
    let serve = |file: &Path| {
        let mut c = server(&w.home);
        c.arg("--policy").arg(file);
        c
    };
    let cli_fp = |file: &Path| {
        cli(
            &w.home,
            &["--policy", s(file), "fingerprint", "--cwd", s(&w.path(LIB))],
        )
        .trim()
        .to_string()
    };
    // Missing at startup: the server runs and says why it cannot answer.
    let mut live = Live::start(serve(&file));
    let message = policy_invalid(&live.ask(&req(1, "fingerprint", &w.path(LIB), json!({}))));
    assert!(message.contains(s(&file)), "{message}");

    write(
        &file,
        "version = 1\n[instructions]\nlevel-files = [\"AGENTS.md\"]\n",
    );
    let r = live.ask(&req(2, "snapshot", &w.path(LIB), json!({})));
    // lib holds only a CLAUDE.md, which this policy does not read.
    assert_eq!(
        r["snapshot"]["instructionFiles"].as_array().unwrap().len(),
        1,
        "{r}"
    );
    assert_eq!(
        r["snapshot"]["fingerprint"].as_str().unwrap(),
        cli_fp(&file)
    );

    write(
        &file,
        "version = 1\n[instructions]\nlevel-files = [\"CLAUDE.md\"]\n",
    );
    let r = live.ask(&req(3, "snapshot", &w.path(LIB), json!({})));
    assert_eq!(
        r["snapshot"]["instructionFiles"].as_array().unwrap().len(),
        2,
        "{r}"
    );
    assert_eq!(
        r["snapshot"]["fingerprint"].as_str().unwrap(),
        cli_fp(&file)
    );

    // The policy file moves the home root: the home's policy then comes
    // from the new home.
    let other = w.base.join("other-home");
    write(&other.join("AGENTS.md"), "other home");
    write(
        &other.join("context-policy.toml"),
        "version = 1\n[instructions]\nbudget-bytes = 77\n",
    );
    live.finish();
    let mut c = Command::new(BIN);
    c.arg("--policy")
        .arg(&file)
        .arg("serve")
        .env_remove("LISA_HOME")
        .env("HOME", &w.base)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut live = Live::start(c);
    write(
        &file,
        &format!("version = 1\n[roots]\nhome = [{:?}]\n", s(&other)),
    );
    let r = live.ask(&req(4, "snapshot", &w.path(LIB), json!({})));
    assert_eq!(r["snapshot"]["home"], json!(s(&other)), "{r}");
    assert_eq!(r["snapshot"]["budget"]["limit"], json!(77), "{r}");
    live.finish();
}

#[test]
fn access_loads_each_file_once_per_named_session() {
    let w = world();
    write(&w.path(API).join("src/AGENTS.md"), "src: small modules");
    let policy = w.base.join("on-access.toml");
    write(&policy, "version = 1\n[instructions]\non-access = true\n");
    let input = lines(&[
        req(
            1,
            "access",
            &w.path(API),
            json!({ "path": "src/main.rs", "session": "a" }),
        ),
        req(
            2,
            "access",
            &w.path(API),
            json!({ "path": "src", "session": "a" }),
        ),
        req(
            3,
            "access",
            &w.path(API),
            json!({ "path": s(&w.path(API).join("src")), "session": "b" }),
        ),
        req(4, "access", &w.path(API), json!({ "path": "/etc/passwd" })),
        req(5, "hello", &w.path(API), json!({})),
    ]);
    let run = run_server_with(&w.home, &["--jobs", "1", "--policy", s(&policy)], input);
    let files = |id: i64| -> Vec<String> {
        run.by_id(id)["access"]["instructionFiles"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|f| f["path"].as_str().unwrap_or_default().to_string())
                    .collect()
            })
            .unwrap_or_default()
    };
    let src = w
        .path(API)
        .join("src/AGENTS.md")
        .to_string_lossy()
        .into_owned();
    assert_eq!(files(1), std::slice::from_ref(&src));
    assert!(
        run.by_id(1)["access"]["prompt"]
            .as_str()
            .is_some_and(|p| p.contains("src: small modules"))
    );
    assert!(files(2).is_empty());
    assert_eq!(files(3), [src]);
    assert_eq!(run.error_code(4), "access-outside-root");
    let ops = &run.by_id(5)["hello"]["ops"];
    assert!(
        ops.as_array()
            .is_some_and(|o| o.iter().any(|op| op == "access"))
    );
    let policies = &run.by_id(5)["hello"]["policies"];
    assert!(
        policies
            .as_array()
            .is_some_and(|p| p.iter().any(|n| n == "gemini"))
    );
}
