//! Bounded cost for every input (issue 28, items 11 to 14), black-box
//! through the command line and `serve`: a deep path to `access`, scoped
//! rules with thousands of globs, a full frontmatter memo and refused
//! `SKILL.md` files, a policy of thousands of mistakes.
//!
//! No test here times anything. Each counts work: the binary built for the
//! tests prints its work counters (`lisa_context::internals::counts`) as
//! one line on stderr when `LISA_CONTEXT_COUNTS` is set, and the tests
//! assert on those counts (levels looked at, glob sets compiled,
//! frontmatters parsed and scanned, memo writes, policy text copied,
//! problems reported).

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use crate::support::World;

const BIN: &str = env!("CARGO_BIN_EXE_lisa-context");

/// The line the binary prints its counters on.
const COUNTS: &str = "lisa-context counts: ";

/// The binary with `--home` the world's home and the counters asked for.
fn command(w: &World, args: &[&str]) -> Command {
    let mut c = Command::new(BIN);
    c.env_remove("LISA_HOME")
        .env("LISA_CONTEXT_COUNTS", "1")
        .arg("--home")
        .arg(&w.home)
        .args(args);
    c
}

/// The counters of a finished run, by name.
fn counts(out: &Output) -> BTreeMap<String, u64> {
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = stderr
        .lines()
        .find_map(|l| l.strip_prefix(COUNTS))
        .unwrap_or_else(|| panic!("no counts on stderr:\n{stderr}"));
    let map: BTreeMap<String, u64> = serde_json::from_str(line).unwrap();
    map
}

fn count(out: &Output, name: &str) -> u64 {
    *counts(out)
        .get(name)
        .unwrap_or_else(|| panic!("no counter {name}"))
}

/// Runs a one-shot command.
fn run(w: &World, args: &[&str]) -> Output {
    command(w, args).output().unwrap()
}

/// Runs `serve` on `requests` (one JSON object each), returning the
/// responses in order and the finished process.
fn serve(w: &World, args: &[&str], requests: &[Value]) -> (Vec<Value>, Output) {
    let mut all = args.to_vec();
    all.push("serve");
    let mut child = command(w, &all)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = Vec::new();
    for r in requests {
        input.extend_from_slice(r.to_string().as_bytes());
        input.push(b'\n');
    }
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    let mut responses: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    responses.sort_by_key(|r| r["id"].as_u64());
    for r in &responses {
        crate::validate::response(r);
    }
    (responses, out)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

// ---------------------------------------------------------------------------
// Item 11: an access costs the levels that are there, and a path has bounds.

/// A path `levels` folders of `a` below `base`.
fn deep(base: &Path, levels: usize) -> String {
    format!("{}/{}file.rs", s(base), "a/".repeat(levels))
}

/// A path far past the bounds (20,000 levels, 40 KB) and one short but too
/// deep are refused before anything is read: `access::path-too-long` on the
/// command line, `bad-request` on the wire.
#[test]
fn an_access_past_the_path_bounds_is_refused_with_a_typed_error() {
    let w = World::new();
    fs::write(w.repo.join("GEMINI.md"), "root rules").unwrap();
    let long = deep(&w.repo, 20_000);
    let too_deep = deep(&w.repo, lisa_context::Loader::MAX_ACCESS_PATH_DEPTH + 1);
    assert!(too_deep.len() < lisa_context::Loader::MAX_ACCESS_PATH_BYTES);
    for path in [&long, &too_deep] {
        let out = run(
            &w,
            &["--policy", "gemini", "access", path, "--cwd", s(&w.repo)],
        );
        assert_eq!(out.status.code(), Some(1));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("access::path-too-long"), "{stderr}");
        assert!(stderr.len() < 4096, "the error does not echo the path");
        assert_eq!(count(&out, "access-levels"), 0, "nothing was looked at");
    }
    let requests: Vec<Value> = [&long, &too_deep]
        .iter()
        .enumerate()
        .map(|(i, p)| json!({"id": i, "op": "access", "cwd": s(&w.repo), "path": p}))
        .chain([json!({"id": 2, "op": "access", "cwd": s(&w.repo), "path": deep(&w.repo, 3)})])
        .collect();
    let (responses, out) = serve(&w, &["--policy", "gemini"], &requests);
    assert_eq!(responses.len(), 3);
    for r in &responses[..2] {
        assert_eq!(r["error"]["code"], "bad-request", "{r}");
        assert!(r["error"]["message"].as_str().unwrap().len() < 4096);
    }
    assert!(responses[2]["access"].is_object(), "{}", responses[2]);
    assert!(count(&out, "access-levels") <= 3);
}

/// An access to a deep path that does not exist looks at the folders
/// that are there and one more, not at every level it names: 100
/// accesses 250 levels deep cost a few levels each, in the command line
/// and the server alike, and still load the file of the folder that is
/// there.
#[test]
fn an_access_to_a_deep_path_that_is_not_there_costs_the_levels_that_are() {
    let w = World::new();
    fs::create_dir_all(w.repo.join("pkg")).unwrap();
    fs::write(w.repo.join("pkg/GEMINI.md"), "pkg rules").unwrap();
    let path = deep(&w.repo.join("pkg"), 250);
    let out = run(
        &w,
        &[
            "--policy",
            "gemini",
            "access",
            &path,
            "--cwd",
            s(&w.repo),
            "--format",
            "json",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let access: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(access["instructionFiles"].as_array().unwrap().len(), 1);
    // `pkg`, and the first `a`, which is not there.
    assert_eq!(count(&out, "access-levels"), 2);

    let requests: Vec<Value> = (0..100)
        .map(|i| {
            json!({"id": i, "op": "access", "cwd": s(&w.repo), "session": format!("s{i}"),
                   "path": deep(&w.repo.join("pkg"), 250)})
        })
        .collect();
    let (responses, out) = serve(&w, &["--policy", "gemini"], &requests);
    assert_eq!(responses.len(), 100);
    for r in &responses {
        assert_eq!(
            r["access"]["instructionFiles"].as_array().unwrap().len(),
            1,
            "{r}"
        );
    }
    assert_eq!(count(&out, "access-levels"), 200);
}

// ---------------------------------------------------------------------------
// Item 12: scoped rules' globs are compiled once per build, and capped.

/// A rule file scoped to `globs`.
fn rule(globs: impl IntoIterator<Item = String>) -> String {
    let mut text = String::from("---\npaths:\n");
    for g in globs {
        text.push_str(&format!("  - \"{g}\"\n"));
    }
    text + "---\nA scoped rule.\n"
}

/// Six rules of 2,000 globs each, then 200 accesses: the globs are compiled
/// once per build (never per access), each rule keeps its first 64 (the
/// snapshot says so in `warnings`), and a path the kept globs match still
/// loads its rule.
#[test]
fn scoped_rule_globs_are_compiled_once_per_build_and_capped() {
    let w = World::new();
    for r in 0..6 {
        let globs = (0..2_000).map(|g| format!("src/r{r}/d{g}/**/*.ts"));
        let path = w.repo.join(format!(".claude/rules/r{r}.md"));
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, rule(globs)).unwrap();
    }
    let out = run(
        &w,
        &[
            "--policy",
            "claude-code",
            "snapshot",
            "--format",
            "json",
            "--cwd",
            s(&w.repo),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let snap: Value = serde_json::from_slice(&out.stdout).unwrap();
    crate::validate::snapshot(&snap);
    let rules = snap["scopedRules"].as_array().unwrap();
    assert_eq!(rules.len(), 6);
    for r in rules {
        assert_eq!(r["globs"].as_array().unwrap().len(), 64);
    }
    let cut: Vec<&Value> = snap["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["kind"] == "scoped-glob-limit")
        .collect();
    assert_eq!(cut.len(), 6, "one warning per rule cut: {cut:?}");
    assert!(
        cut[0]["message"]
            .as_str()
            .unwrap()
            .contains("1936 of this rule's 2000")
    );
    assert_eq!(count(&out, "scoped-glob-sets"), 1);
    assert_eq!(count(&out, "scoped-globs"), 6 * 64);

    let requests: Vec<Value> = (0..200)
        .map(|i| {
            json!({"id": i, "op": "access", "cwd": s(&w.repo), "session": format!("s{i}"),
                   "path": s(&w.repo.join(format!("src/r{}/d{}/x.ts", i % 6, i % 64)))})
        })
        .collect();
    let (responses, out) = serve(&w, &["--policy", "claude-code"], &requests);
    assert_eq!(responses.len(), 200);
    for (i, r) in responses.iter().enumerate() {
        let files = r["access"]["instructionFiles"].as_array().unwrap();
        assert_eq!(files.len(), 1, "{r}");
        let want = format!("r{}.md", i % 6);
        assert!(files[0]["path"].as_str().unwrap().ends_with(&want), "{r}");
    }
    let builds = count(&out, "builds");
    assert!(builds >= 1);
    assert!(
        count(&out, "scoped-glob-sets") <= builds,
        "at most one glob set per build, not one per rule and access: {:?}",
        counts(&out)
    );
    assert!(count(&out, "scoped-globs") <= builds * 6 * 64);
}

/// The rules of one build keep 1,024 globs in all: twenty rules of 100
/// globs, the first sixteen keep 64 each, the last four none (each is
/// still listed and warned about); a glob past a cap matches nothing.
#[test]
fn the_scoped_rules_of_one_build_keep_at_most_1024_globs() {
    let w = World::new();
    for r in 0..20 {
        let globs = (0..100).map(|g| format!("src/r{r}/d{g}/*.ts"));
        let path = w.repo.join(format!(".claude/rules/r{r:02}.md"));
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, rule(globs)).unwrap();
    }
    let out = run(
        &w,
        &[
            "--policy",
            "claude-code",
            "snapshot",
            "--format",
            "json",
            "--cwd",
            s(&w.repo),
        ],
    );
    assert!(out.status.success());
    let snap: Value = serde_json::from_slice(&out.stdout).unwrap();
    let kept: Vec<usize> = snap["scopedRules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["globs"].as_array().unwrap().len())
        .collect();
    assert_eq!(kept, [vec![64; 16], vec![0; 4]].concat());
    let warned = snap["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["kind"] == "scoped-glob-limit")
        .count();
    assert_eq!(warned, 20);
    assert_eq!(count(&out, "scoped-globs"), 1024);
    for (path, loads) in [
        ("src/r0/d63/x.ts", 1),
        ("src/r0/d64/x.ts", 0),
        ("src/r19/d0/x.ts", 0),
    ] {
        let out = run(
            &w,
            &[
                "--policy",
                "claude-code",
                "access",
                s(&w.repo.join(path)),
                "--cwd",
                s(&w.repo),
                "--format",
                "json",
            ],
        );
        assert!(out.status.success());
        let access: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            access["instructionFiles"].as_array().unwrap().len(),
            loads,
            "{path}: {access}"
        );
    }
}

// ---------------------------------------------------------------------------
// Item 13: the memo is written only when it changes, and remembers refusals.

fn home_skill(w: &World, name: &str, text: &str) {
    let dir = w.home.join("skills").join(name);
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("SKILL.md"), text).unwrap();
}

/// A memo too small for the skills (300 skills, 16 KiB): the first run
/// fills it, and later runs that change nothing write nothing (the memo
/// does not rotate its entries through the file every run), and parse
/// the same skills each time.
#[test]
fn a_full_memo_is_not_rewritten_when_nothing_changed() {
    let w = World::new();
    for i in 0..300 {
        home_skill(
            &w,
            &format!("skill-{i:03}"),
            &format!(
                "---\nname: skill-{i:03}\ndescription: Skill number {i}, which does a thing.\n---\n"
            ),
        );
    }
    let policy = w.write(
        "policy.toml",
        "version = 1\n[skills]\nfrontmatter-memo-max-bytes = 16384\n",
    );
    let args = ["--policy", s(&policy), "fingerprint", "--cwd", s(&w.repo)];
    let first = run(&w, &args);
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    assert_eq!(count(&first, "memo-writes"), 1);
    assert_eq!(count(&first, "frontmatter-parses"), 300);
    let memo = w.home.join("context-frontmatter.memo");
    let written = fs::read(&memo).unwrap();
    assert!(written.len() <= 16384);
    let mut parses = Vec::new();
    for _ in 0..3 {
        let again = run(&w, &args);
        assert!(again.status.success());
        assert_eq!(again.stdout, first.stdout, "the same fingerprint");
        assert_eq!(count(&again, "memo-writes"), 0, "{:?}", counts(&again));
        assert_eq!(count(&again, "memo-bytes-written"), 0);
        parses.push(count(&again, "frontmatter-parses"));
    }
    assert_eq!(fs::read(&memo).unwrap(), written, "the memo is as it was");
    assert!(parses[0] < 300, "the memo serves what it holds: {parses:?}");
    assert!(parses.iter().all(|p| *p == parses[0]), "{parses:?}");
}

/// Refused `SKILL.md` files are remembered by their content hash: 400
/// refusals (broken YAML, no fence, no name, no description) are parsed by
/// the first process only, and every later one rejects them for the same
/// reasons without parsing again. An edited file is parsed again.
#[test]
fn refused_frontmatter_is_remembered_by_content() {
    let w = World::new();
    // Each file distinct (the `{i}` comment), so each is its own parse.
    let broken = [
        "---\n# {i}\nname: {n}\ndescription: [unclosed\n---\n",
        "# {i}\nname: {n}\n",
        "---\n# {i}\ndescription: no name\n---\n",
        "---\n# {i}\nname: {n}\n---\n",
    ];
    for i in 0..400 {
        let name = format!("bad-{i:03}");
        let text = broken[i % 4]
            .replace("{n}", &name)
            .replace("{i}", &i.to_string());
        home_skill(&w, &name, &text);
    }
    home_skill(&w, "good", "---\nname: good\ndescription: Fine.\n---\n");
    let args = ["snapshot", "--format", "json", "--cwd", s(&w.repo)];
    let first = run(&w, &args);
    assert!(first.status.success());
    assert_eq!(count(&first, "frontmatter-parses"), 401);
    let snap: Value = serde_json::from_slice(&first.stdout).unwrap();
    assert_eq!(snap["rejectedSkills"].as_array().unwrap().len(), 400);
    let second = run(&w, &args);
    assert_eq!(
        second.stdout, first.stdout,
        "the same answer, byte for byte"
    );
    assert_eq!(
        count(&second, "frontmatter-parses"),
        0,
        "{:?}",
        counts(&second)
    );
    assert_eq!(count(&second, "memo-writes"), 0);
    // An edit is new content: parsed once, then remembered.
    home_skill(
        &w,
        "bad-000",
        "---\nname: bad-000\ndescription: [still broken\n---\n",
    );
    let third = run(&w, &args);
    assert_eq!(count(&third, "frontmatter-parses"), 1);
    assert_eq!(count(&third, "memo-writes"), 1);
}

/// A frontmatter that never closes, under a policy that reads `SKILL.md`
/// files up to 4 MiB: the search for its end looks at each byte read once,
/// not once per chunk read.
#[test]
fn a_frontmatter_that_never_closes_is_searched_once() {
    let w = World::new();
    let mut text = String::from("---\nname: open\n");
    while text.len() < 4 << 20 {
        text.push_str("key: a value that goes on\n");
    }
    home_skill(&w, "open", &text);
    let policy = w.write(
        "policy.toml",
        "version = 1\n[skills]\nmax-skill-file-bytes = 8388608\n",
    );
    let out = run(
        &w,
        &[
            "--policy",
            s(&policy),
            "snapshot",
            "--format",
            "json",
            "--cwd",
            s(&w.repo),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let snap: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(snap["rejectedSkills"][0]["reason"], "bad-frontmatter");
    let scanned = count(&out, "frontmatter-scan-bytes");
    assert!(
        scanned <= 2 * text.len() as u64,
        "{scanned} bytes searched for a {} byte file",
        text.len()
    );
}

// ---------------------------------------------------------------------------
// Item 14: a policy of thousands of mistakes is reported in bounded size.

/// 20,000 empty tables of unknown names: `policy check` reports the first
/// 50 problems and says how many more there are; the policy's text is held
/// once (not once per problem), and a server started on that policy
/// answers each request with the same bounded report.
#[test]
fn a_policy_of_twenty_thousand_mistakes_is_reported_in_bounded_size() {
    let w = World::new();
    let text: String = std::iter::once("version = 1\n".to_string())
        .chain((0..20_000).map(|i| format!("[t{i}]\n")))
        .collect();
    let policy = w.write("policy.toml", &text);
    let out = run(&w, &["--color", "never", "policy", "check", s(&policy)]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("20000 problems"),
        "the headline counts them all"
    );
    assert_eq!(
        stderr.matches("policy::unknown-key").count(),
        50,
        "{stderr}"
    );
    assert!(stderr.contains("and 19950 more problems"), "{stderr}");
    assert!(stderr.len() < 64 * 1024, "{} bytes of report", stderr.len());
    let source = count(&out, "policy-source-bytes");
    assert!(
        source <= 4 * text.len() as u64,
        "{source} bytes of policy text copied for a {} byte file",
        text.len()
    );
    assert!(count(&out, "policy-problems-kept") <= 4 * 50);

    let requests: Vec<Value> = (0..20)
        .map(|i| json!({"id": i, "op": "fingerprint", "cwd": s(&w.repo)}))
        .collect();
    let (responses, out) = serve(&w, &["--policy", s(&policy)], &requests);
    assert_eq!(responses.len(), 20);
    for r in &responses {
        assert_eq!(r["error"]["code"], "policy-invalid", "{r}");
        let message = r["error"]["message"].as_str().unwrap();
        assert!(message.contains("and 19950 more problems"), "{message}");
        assert!(message.len() < 64 * 1024);
    }
    // The server may read the policy again for a request (a file this
    // new is too recent to vouch for): a copy per reading at most, never
    // one per problem (20,000 copies).
    assert!(count(&out, "policy-source-bytes") <= 4 * 22 * text.len() as u64);
}
