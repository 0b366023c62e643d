//! `lisa-context mcp` driven as a host drives it: the real binary, JSON-RPC
//! lines on its stdin and stdout, real trees in temp dirs. What is served is
//! what the policy lets the session use (checked against `skill list` under
//! every shipped policy), every digest is computed here from the files on
//! disk, and nothing but a listed file of a served skill can be read.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::support::World;

/// How long any one line may take to come (generous: a loaded CI machine).
const BOUND: Duration = Duration::from_secs(300);

/// A running server and the lines it wrote.
pub struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    next: u64,
    /// Notifications and server requests seen while waiting for responses.
    pub seen: Vec<Value>,
}

impl Client {
    /// Starts `lisa-context [global] mcp [args]` in `w`.
    pub fn start(w: &World, global: &[&str], args: &[&str]) -> Client {
        let mut child = w
            .command()
            .env("HOME", w.base.join("userhome"))
            .args(global)
            .arg("mcp")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Client {
            stdin: child.stdin.take(),
            child,
            lines: rx,
            next: 0,
            seen: Vec::new(),
        }
    }

    /// Writes one message.
    pub fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// The next line, as JSON.
    pub fn recv(&mut self) -> Value {
        let line = self
            .lines
            .recv_timeout(BOUND)
            .expect("the server wrote no line in time");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"))
    }

    /// Sends a request and returns its response (notifications and server
    /// requests met on the way are kept in `seen`).
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.response(&json!(id))
    }

    /// Waits for the response to `id`.
    pub fn response(&mut self, id: &Value) -> Value {
        loop {
            let m = self.recv();
            if m.get("method").is_none() && m.get("id") == Some(id) {
                return m;
            }
            self.seen.push(m);
        }
    }

    /// A result, or a panic with the error.
    pub fn ok(&mut self, method: &str, params: Value) -> Value {
        let r = self.call(method, params);
        assert!(r.get("error").is_none(), "{method}: {r}");
        r["result"].clone()
    }

    /// The error code of a call that must fail.
    pub fn error_code(&mut self, method: &str, params: Value) -> i64 {
        let r = self.call(method, params.clone());
        r["error"]["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("{method} {params} did not fail: {r}"))
    }

    /// `initialize` with `capabilities`, then `notifications/initialized`.
    pub fn initialize(&mut self, capabilities: Value) -> Value {
        let result = self.ok(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": capabilities,
                   "clientInfo": {"name": "test", "version": "0"}}),
        );
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        result
    }

    /// Every skill entry, page after page.
    pub fn all_skills(&mut self) -> Vec<Value> {
        let mut out = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let params = match &cursor {
                Some(c) => json!({"cursor": c}),
                None => json!({}),
            };
            let r = self.ok("skills/list", params);
            assert_eq!(r["resultType"], "complete");
            assert!(r["ttlMs"].is_u64(), "{r}");
            assert!(matches!(
                r["cacheScope"].as_str(),
                Some("public" | "private")
            ));
            out.extend(r["skills"].as_array().unwrap().iter().cloned());
            match r.get("nextCursor").and_then(Value::as_str) {
                Some(next) => cursor = Some(next.to_string()),
                None => return out,
            }
        }
    }

    /// The server's peak memory (`VmHWM`), in KiB.
    pub fn peak_kib(&self) -> u64 {
        let status = fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap()
    }

    /// Writes raw bytes to the server.
    pub fn write_raw(&mut self, bytes: &[u8]) {
        self.stdin.as_mut().unwrap().write_all(bytes).unwrap();
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}

/// `sha256:<hex>` of `bytes`, computed here.
fn digest(bytes: &[u8]) -> String {
    let sum = Sha256::digest(bytes);
    format!(
        "sha256:{}",
        sum.iter().map(|b| format!("{b:02x}")).collect::<String>()
    )
}

/// The skill sources of the shipped policies: (root word, path).
fn shipped_sources() -> BTreeSet<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("policies");
    let mut out = BTreeSet::new();
    for entry in fs::read_dir(dir).unwrap() {
        let text = fs::read_to_string(entry.unwrap().path()).unwrap();
        let doc: toml::Value = toml::from_str(&text).unwrap();
        let Some(sources) = doc
            .get("skills")
            .and_then(|s| s.get("sources"))
            .and_then(|s| s.as_array())
        else {
            continue;
        };
        for s in sources {
            out.insert((
                s["root"].as_str().unwrap().to_string(),
                s["path"].as_str().unwrap().to_string(),
            ));
        }
    }
    out
}

fn skill_md(name: &str, description: &str, body: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\nlicense: MIT\n---\n{body}\n")
}

/// The folder of every file of a skill as the test sees it: regular files
/// reached without a link, `/`-separated.
fn files_on_disk(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(dir: &Path, prefix: &str, out: &mut BTreeMap<String, Vec<u8>>) {
        for e in fs::read_dir(dir).unwrap() {
            let e = e.unwrap();
            let name = e.file_name().into_string().unwrap();
            let kind = e.file_type().unwrap();
            let path = format!("{prefix}{name}");
            if kind.is_dir() {
                walk(&e.path(), &format!("{path}/"), out);
            } else if kind.is_file() {
                out.insert(path, fs::read(e.path()).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, "", &mut out);
    out
}

/// The hostile tree: a home skill `tool`; in every project source a `tool`
/// (shadowed by the home's), a `pdf` with supporting files, a link out of
/// its folder, a link inside it and a FIFO, an impostor folder `imp`
/// naming itself `other`, and a `broken` one without frontmatter.
fn hostile(w: &World) {
    let sources = shipped_sources();
    for (root, path) in &sources {
        let base = match root.as_str() {
            "home" => w.home.join(path),
            "repo" => w.repo.join(path),
            _ => continue,
        };
        if root == "home" {
            let dir = base.join("tool");
            fs::create_dir_all(&dir).unwrap();
            fs::write(
                dir.join("SKILL.md"),
                skill_md("tool", "The user's tool.", path),
            )
            .unwrap();
            continue;
        }
        let tool = base.join("tool");
        fs::create_dir_all(&tool).unwrap();
        fs::write(
            tool.join("SKILL.md"),
            skill_md("tool", "A repo's tool.", path),
        )
        .unwrap();
        let pdf = base.join("pdf");
        fs::create_dir_all(pdf.join("scripts/deep")).unwrap();
        fs::write(pdf.join("SKILL.md"), skill_md("pdf", "Merge PDFs.", path)).unwrap();
        fs::write(pdf.join("scripts/run.py"), format!("print({path:?})\n")).unwrap();
        fs::write(pdf.join("scripts/deep/data.bin"), [0u8, 159, 146, 150, 255]).unwrap();
        fs::write(pdf.join("notes.md"), "notes\n").unwrap();
        symlink(w.repo.join("AGENTS.md"), pdf.join("out.md")).unwrap();
        symlink("/etc/passwd", pdf.join("passwd")).unwrap();
        symlink("notes.md", pdf.join("inside.md")).unwrap();
        symlink(w.home.clone(), pdf.join("home-dir")).unwrap();
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            pdf.join("pipe"),
            rustix::fs::Mode::from_raw_mode(0o644),
        )
        .unwrap();
        let imp = base.join("imp");
        fs::create_dir_all(&imp).unwrap();
        fs::write(
            imp.join("SKILL.md"),
            skill_md("other", "An impostor.", path),
        )
        .unwrap();
        let broken = base.join("broken");
        fs::create_dir_all(&broken).unwrap();
        fs::write(broken.join("SKILL.md"), "no frontmatter\n").unwrap();
    }
    fs::write(w.repo.join("AGENTS.md"), "Use tabs.\n").unwrap();
}

/// Under every shipped policy, `skills/list` serves exactly the skills that
/// win their names (as `skill list` reports them): never a shadowed, refused
/// or impostor one. Each entry lists every regular file of the winner's
/// folder exactly once (no link, in or out, no FIFO) with the digest and
/// size computed here from the file on disk, and `resources/read` gives
/// those very bytes; links, FIFOs and unlisted files are -32602.
#[test]
fn every_policy_serves_its_winners_whole_and_nothing_else() {
    let w = World::new();
    hostile(&w);
    for &policy in lisa_context::policy::SHIPPED_NAMES {
        let out = w
            .command()
            .env("HOME", w.base.join("userhome"))
            .args([
                "--policy", policy, "skill", "list", "--format", "json", "--cwd",
            ])
            .arg(&w.repo)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{policy}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let oracle: Value = serde_json::from_slice(&out.stdout).unwrap();
        // (name, origin, SKILL.md path) of every winner; a policy may keep
        // several of one name (Codex's), told apart by their content here.
        let winners: Vec<(String, String, PathBuf)> = oracle["skills"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                (
                    s["name"].as_str().unwrap().to_string(),
                    s["origin"].as_str().unwrap().to_string(),
                    PathBuf::from(s["path"].as_str().unwrap()),
                )
            })
            .collect();
        let repo = w.repo.to_str().unwrap();
        let mut c = Client::start(&w, &["--policy", policy], &["--cwd", repo]);
        let init = c.initialize(json!({}));
        assert_eq!(
            init["capabilities"]["extensions"]["io.modelcontextprotocol/skills"],
            json!({"directoryRead": true})
        );
        assert!(init["capabilities"]["resources"].is_object());
        let skills = c.all_skills();
        // A winner whose frontmatter names it otherwise (a policy naming
        // skills by folder) cannot be served: the extension makes the URI's
        // last segment the frontmatter's name.
        let (winners, renamed): (Vec<_>, Vec<_>) = winners.into_iter().partition(|(n, _, p)| {
            fs::read_to_string(p)
                .unwrap()
                .contains(&format!("\nname: {n}\n"))
        });
        for (name, _, _) in &renamed {
            assert_eq!(name, "imp", "{policy}");
            let r = c.ok("skills/list", json!({}));
            let why = r["_meta"]["dev.lisa-context/notServed"].to_string();
            assert!(
                why.contains("/imp/SKILL.md") && why.contains("other"),
                "{policy}: {why}"
            );
        }
        assert_eq!(skills.len(), winners.len(), "{policy}: {skills:?}");
        let uris: BTreeSet<&str> = skills.iter().map(|s| s["uri"].as_str().unwrap()).collect();
        assert_eq!(
            uris.len(),
            skills.len(),
            "{policy}: two entries share a URI"
        );
        let mut matched = BTreeSet::new();
        for s in &skills {
            let uri = s["uri"].as_str().unwrap();
            let name = s["frontmatter"]["name"].as_str().unwrap();
            // The origin is the authority; the name is the last segment.
            let origin = uri
                .strip_prefix("skill://")
                .unwrap()
                .split('/')
                .next()
                .unwrap();
            let root_uri = uri.strip_suffix("/SKILL.md").unwrap();
            assert!(root_uri.ends_with(&format!("/{name}")), "{uri}");
            assert!(!["imp", "broken"].contains(&name), "{policy}: {name}");
            let skill_md_digest = s["resources"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["uri"] == uri)
                .unwrap()["digest"]
                .clone();
            let (i, (_, _, path)) = winners
                .iter()
                .enumerate()
                .find(|(_, (n, o, p))| {
                    n == name
                        && o == origin
                        && json!(digest(&fs::read(p).unwrap())) == skill_md_digest
                })
                .unwrap_or_else(|| panic!("{policy}: {uri} is no winner of `skill list`"));
            assert!(matched.insert(i), "{policy}: {uri} twice");
            assert_eq!(
                s["_meta"]["dev.lisa-context/origin"], origin,
                "{policy}: {s}"
            );
            let folder = path.parent().unwrap();
            let on_disk = files_on_disk(folder);
            let listed: BTreeMap<String, (String, u64)> = s["resources"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| {
                    let uri = r["uri"].as_str().unwrap();
                    let file = uri
                        .strip_prefix(&format!("{root_uri}/"))
                        .unwrap()
                        .to_string();
                    (
                        file,
                        (
                            r["digest"].as_str().unwrap().to_string(),
                            r["size"].as_u64().unwrap(),
                        ),
                    )
                })
                .collect();
            let expected: BTreeMap<String, (String, u64)> = on_disk
                .iter()
                .map(|(p, bytes)| (p.clone(), (digest(bytes), bytes.len() as u64)))
                .collect();
            assert_eq!(listed, expected, "{policy}: {name}");
            // Each listed file reads back as the bytes hashed here.
            for (file, bytes) in &on_disk {
                let uri = format!("{root_uri}/{file}");
                let r = c.ok("resources/read", json!({"uri": uri}));
                let content = &r["contents"][0];
                assert_eq!(content["uri"], uri.as_str());
                let got: Vec<u8> = match content.get("text") {
                    Some(t) => t.as_str().unwrap().as_bytes().to_vec(),
                    None => base64_decode(content["blob"].as_str().unwrap()),
                };
                assert_eq!(digest(&got), digest(bytes), "{policy}: {uri}");
            }
            // skills/get answers the same entry.
            let got = c.ok("skills/get", json!({"uri": s["uri"]}));
            assert_eq!(got["skill"], *s, "{policy}");
            if name == "pdf" {
                for file in [
                    "out.md",
                    "passwd",
                    "inside.md",
                    "pipe",
                    "home-dir/skills/tool/SKILL.md",
                ] {
                    let uri = format!("{root_uri}/{file}");
                    assert_eq!(
                        c.error_code("resources/read", json!({"uri": uri})),
                        -32602,
                        "{uri}"
                    );
                }
                let dir = c.ok("resources/directory/read", json!({"uri": root_uri}));
                let names: BTreeSet<&str> = dir["resources"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|r| r["name"].as_str().unwrap())
                    .collect();
                assert_eq!(names, BTreeSet::from(["SKILL.md", "notes.md", "scripts"]));
                let sub = c.ok(
                    "resources/directory/read",
                    json!({"uri": format!("{root_uri}/scripts")}),
                );
                assert!(
                    sub["resources"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|r| r["mimeType"] == "inode/directory")
                );
                assert_eq!(
                    c.error_code("resources/directory/read", json!({"uri": uri})),
                    -32602
                );
            }
        }
        // A shadowed skill is not reachable under the other origin either.
        let tools: Vec<&str> = winners
            .iter()
            .filter(|(n, _, _)| n == "tool")
            .map(|(_, o, _)| o.as_str())
            .collect();
        if tools == ["home"] {
            assert_eq!(
                c.error_code(
                    "skills/get",
                    json!({"uri": "skill://project/tool/SKILL.md"})
                ),
                -32602
            );
            assert_eq!(
                c.error_code(
                    "resources/read",
                    json!({"uri": "skill://project/tool/SKILL.md"})
                ),
                -32602
            );
        }
        // An impostor the policy refuses is not reachable by URI either.
        if !winners.iter().any(|(n, _, _)| n == "other") {
            assert_eq!(
                c.error_code(
                    "skills/get",
                    json!({"uri": "skill://project/other/SKILL.md"})
                ),
                -32602
            );
        }
    }
}

/// Decodes base64 (RFC 4648, padded).
fn base64_decode(s: &str) -> Vec<u8> {
    let value = |c: u8| -> u32 {
        match c {
            b'A'..=b'Z' => u32::from(c - b'A'),
            b'a'..=b'z' => u32::from(c - b'a') + 26,
            b'0'..=b'9' => u32::from(c - b'0') + 52,
            b'+' => 62,
            b'/' => 63,
            _ => panic!("not base64: {c}"),
        }
    };
    let mut out = Vec::new();
    for chunk in s.as_bytes().chunks(4) {
        let pad = chunk.iter().filter(|&&c| c == b'=').count();
        let n = chunk
            .iter()
            .map(|&c| if c == b'=' { 0 } else { value(c) })
            .fold(0u32, |acc, v| (acc << 6) | v);
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&bytes[..3 - pad]);
    }
    out
}

/// Every other spelling of a path than the one the server writes is
/// refused with -32602: `..` plain or percent-encoded (either case), `.`,
/// an empty segment, an encoded slash or letter, a query, a fragment,
/// another scheme, a file that is not the skill's, a skill that is not
/// served.
#[test]
fn traversal_and_unlisted_uris_are_invalid_params() {
    let w = World::new();
    w.write(
        "home/skills/tool/SKILL.md",
        &skill_md("tool", "The user's tool.", "body"),
    );
    w.write("home/skills/tool/ref.md", "ref\n");
    w.write("home/secret.txt", "secret\n");
    w.write(
        "home/skills/other/SKILL.md",
        &skill_md("other", "Other.", "body"),
    );
    let mut c = Client::start(&w, &[], &["--cwd", w.repo.to_str().unwrap()]);
    c.initialize(json!({}));
    assert!(
        c.call("resources/read", json!({"uri": "skill://home/tool/ref.md"}))["result"].is_object()
    );
    let home = w.home.to_str().unwrap();
    for uri in [
        "skill://home/tool/../other/SKILL.md",
        "skill://home/tool/../../secret.txt",
        "skill://home/tool/%2e%2e/%2e%2e/secret.txt",
        "skill://home/tool/%2E%2E/other/SKILL.md",
        "skill://home/tool/./ref.md",
        "skill://home/tool//ref.md",
        "skill://home/tool/%72ef.md",
        "skill://home/tool%2fref.md",
        "skill://home/tool/ref.md?x=1",
        "skill://home/tool/ref.md#top",
        "skill://home/tool/missing.md",
        "skill://project/tool/ref.md",
        "skill://home/nope/SKILL.md",
        "skill://home/tool",
        "skill:///etc/passwd",
        "file:///etc/passwd",
        &format!("file://{home}/secret.txt"),
        "https://example.com/SKILL.md",
        "",
    ] {
        assert_eq!(
            c.error_code("resources/read", json!({"uri": uri})),
            -32602,
            "{uri:?}"
        );
    }
    for uri in [
        "skill://home/tool/ref.md",
        "skill://home/tool/%2e%2e/other/SKILL.md",
        "skill://home/tool",
        "skill://project/tool/SKILL.md",
    ] {
        assert_eq!(
            c.error_code("skills/get", json!({"uri": uri})),
            -32602,
            "{uri:?}"
        );
    }
    assert_eq!(c.error_code("resources/read", json!({})), -32602);
    assert_eq!(c.error_code("no/such/method", json!({})), -32601);
}

/// Under `trust.project = "pinned"`, an unapproved project skill is never
/// served; once approved it is, and an edit of its SKILL.md takes it out
/// again.
#[test]
fn unapproved_skills_are_not_served_under_pinned() {
    let w = World::new();
    fs::write(
        w.home.join("context-policy.toml"),
        "version = 1\n[trust]\nproject = \"pinned\"\n",
    )
    .unwrap();
    w.write(
        "repo/.agents/skills/pdf/SKILL.md",
        &skill_md("pdf", "Merge PDFs.", "APPROVED"),
    );
    let repo = w.repo.to_str().unwrap();
    let names = |w: &World| {
        let mut c = Client::start(w, &[], &["--cwd", repo]);
        c.initialize(json!({}));
        c.all_skills()
            .iter()
            .map(|s| s["frontmatter"]["name"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    assert!(names(&w).is_empty());
    let approve = w
        .command()
        .args(["trust", "approve", "--all", "--cwd", repo])
        .output()
        .unwrap();
    assert!(
        approve.status.success(),
        "{}",
        String::from_utf8_lossy(&approve.stderr)
    );
    assert_eq!(names(&w), ["pdf"]);
    w.write(
        "repo/.agents/skills/pdf/SKILL.md",
        &skill_md("pdf", "Merge PDFs.", "EDITED"),
    );
    assert!(names(&w).is_empty());
}

/// 10,000 skills come page by page, each exactly once, with a cursor.
#[test]
fn ten_thousand_skills_are_paginated() {
    let w = World::new();
    // A source is examined up to 4,096 entries: three sources.
    for i in 0..10_000 {
        let name = format!("s{i:05}");
        let source = match i % 3 {
            0 => "home/skills",
            1 => "repo/.lisa/skills",
            _ => "repo/.agents/skills",
        };
        w.write(
            &format!("{source}/{name}/SKILL.md"),
            &skill_md(&name, "A skill.", "body"),
        );
    }
    let mut c = Client::start(&w, &[], &["--cwd", w.repo.to_str().unwrap()]);
    c.initialize(json!({}));
    let first = c.ok("skills/list", json!({}));
    assert!(first["nextCursor"].is_string());
    let all = c.all_skills();
    let uris: BTreeSet<&str> = all.iter().map(|s| s["uri"].as_str().unwrap()).collect();
    assert_eq!(all.len(), 10_000);
    assert_eq!(uris.len(), 10_000);
    assert_eq!(
        c.error_code("skills/list", json!({"cursor": "bogus"})),
        -32602
    );
}

/// A skill over the extension's limits (more than 512 files, more than
/// 16 MiB) is not served, and the listing says why.
#[test]
fn skills_over_the_limits_are_not_served_and_say_why() {
    let w = World::new();
    w.write(
        "home/skills/many/SKILL.md",
        &skill_md("many", "Many files.", "body"),
    );
    for i in 0..512 {
        w.write(&format!("home/skills/many/f/{i}.txt"), "x");
    }
    w.write("home/skills/big/SKILL.md", &skill_md("big", "Big.", "body"));
    let big = vec![b'a'; 16 * 1024 * 1024];
    fs::write(w.home.join("skills/big/big.txt"), big).unwrap();
    w.write(
        "home/skills/fine/SKILL.md",
        &skill_md("fine", "Fine.", "body"),
    );
    for i in 0..511 {
        w.write(&format!("home/skills/fine/f/{i}.txt"), "x");
    }
    let mut c = Client::start(&w, &[], &["--cwd", w.repo.to_str().unwrap()]);
    c.initialize(json!({}));
    let r = c.ok("skills/list", json!({}));
    let names: Vec<&str> = r["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["frontmatter"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["fine"]);
    assert_eq!(r["skills"][0]["resources"].as_array().unwrap().len(), 512);
    let why = r["_meta"]["dev.lisa-context/notServed"].to_string();
    assert!(
        why.contains("skill://home/many/SKILL.md") && why.contains("512"),
        "{why}"
    );
    assert!(
        why.contains("skill://home/big/SKILL.md") && why.contains("16777216"),
        "{why}"
    );
    let e = c.call("skills/get", json!({"uri": "skill://home/big/SKILL.md"}));
    assert_eq!(e["error"]["code"], -32602);
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not served"),
        "{e}"
    );
}

/// A 100 MB request line is refused (-32600) without being held in memory,
/// and the server goes on answering.
#[test]
fn a_huge_request_line_is_refused_in_bounded_memory() {
    let w = World::new();
    let mut c = Client::start(&w, &[], &["--cwd", w.repo.to_str().unwrap()]);
    c.initialize(json!({}));
    let chunk = vec![b'x'; 1 << 20];
    c.write_raw(b"{\"jsonrpc\":\"2.0\",\"id\":99,\"method\":\"ping\",\"params\":{\"pad\":\"");
    for _ in 0..100 {
        c.write_raw(&chunk);
    }
    c.write_raw(b"\"}}\n");
    let refused = c.recv();
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert_eq!(refused["id"], Value::Null);
    assert_eq!(c.ok("ping", json!({}))["resultType"], "complete");
    let peak = c.peak_kib();
    assert!(peak < 64 * 1024, "peak memory {peak} KiB");
}

/// Without `--cwd`, the session's cwd is the client's first root
/// (`roots/list`); requests wait for it, and a changed list is asked for
/// again.
#[test]
fn the_cwd_is_the_clients_first_root() {
    let w = World::new();
    let a = w.repo_at("a");
    let b = w.repo_at("b");
    w.write(
        "a/.agents/skills/alpha/SKILL.md",
        &skill_md("alpha", "A.", "a"),
    );
    w.write(
        "b/.agents/skills/beta/SKILL.md",
        &skill_md("beta", "B.", "b"),
    );
    let mut c = Client::start(&w, &[], &[]);
    c.initialize(json!({"roots": {"listChanged": true}}));
    c.send(&json!({"jsonrpc": "2.0", "id": "list", "method": "skills/list", "params": {}}));
    let ask = c.recv();
    assert_eq!(ask["method"], "roots/list", "{ask}");
    c.send(&json!({"jsonrpc": "2.0", "id": ask["id"],
                   "result": {"roots": [{"uri": format!("file://{}", a.display()), "name": "a"}]}}));
    let listed = c.response(&json!("list"));
    assert_eq!(
        listed["result"]["skills"][0]["frontmatter"]["name"], "alpha",
        "{listed}"
    );
    c.send(&json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}));
    let ask = c.recv();
    assert_eq!(ask["method"], "roots/list", "{ask}");
    c.send(&json!({"jsonrpc": "2.0", "id": ask["id"],
                   "result": {"roots": [{"uri": format!("file://{}", b.display())}]}}));
    let r = c.ok("skills/list", json!({}));
    assert_eq!(r["skills"][0]["frontmatter"]["name"], "beta", "{r}");
}

/// The project context is the prompt `project-context`, the resource
/// `lisa-context://project-context` and, with `--instructions`, the
/// server's instructions; an edit to an instruction file is announced with
/// `notifications/resources/list_changed` and
/// `notifications/prompts/list_changed` (the kernel's watch, no polling:
/// the test waits on the line).
#[test]
fn the_project_context_is_a_prompt_and_a_resource_and_changes_are_announced() {
    let w = World::new();
    w.write("repo/AGENTS.md", "Use tabs.\n");
    let repo = w.repo.to_str().unwrap();
    let mut c = Client::start(&w, &[], &["--cwd", repo, "--instructions"]);
    let init = c.initialize(json!({}));
    let instructions = init["instructions"].as_str().unwrap().to_string();
    assert!(instructions.contains("Use tabs."), "{instructions}");
    let prompts = c.ok("prompts/list", json!({}));
    assert_eq!(prompts["prompts"][0]["name"], "project-context");
    let prompt = c.ok("prompts/get", json!({"name": "project-context"}));
    assert_eq!(
        prompt["messages"][0]["content"]["text"],
        instructions.as_str()
    );
    let listed = c.ok("resources/list", json!({}));
    assert!(
        listed["resources"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["uri"] == "lisa-context://project-context"),
        "{listed}"
    );
    let read = c.ok(
        "resources/read",
        json!({"uri": "lisa-context://project-context"}),
    );
    assert_eq!(read["contents"][0]["text"], instructions.as_str());
    // The watch is in place once a request after `initialized` is answered.
    c.ok("ping", json!({}));
    fs::write(w.repo.join("AGENTS.md"), "Use spaces.\n").unwrap();
    let mut methods = BTreeSet::new();
    while methods.len() < 2 {
        let m = c.recv();
        if let Some(method) = m["method"].as_str() {
            methods.insert(method.to_string());
        }
    }
    assert_eq!(
        methods,
        BTreeSet::from([
            "notifications/prompts/list_changed".to_string(),
            "notifications/resources/list_changed".to_string()
        ])
    );
    let prompt = c.ok("prompts/get", json!({"name": "project-context"}));
    assert!(
        prompt["messages"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("Use spaces.")
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    /// The framing keeps its invariants (`harness::check_jsonrpc`, the fuzz
    /// target's) on lines built from JSON-RPC's pieces and on raw bytes.
    #[test]
    fn jsonrpc_framing_keeps_its_invariants(
        pieces in proptest::collection::vec(
            proptest::prop_oneof![
                proptest::strategy::Just("{\"jsonrpc\":\"2.0\",".to_string()),
                proptest::strategy::Just("\"id\":1,".to_string()),
                proptest::strategy::Just("\"id\":\"x\",".to_string()),
                proptest::strategy::Just("\"id\":1e999,".to_string()),
                proptest::strategy::Just("\"method\":\"ping\"".to_string()),
                proptest::strategy::Just("\"result\":{}".to_string()),
                proptest::strategy::Just("}".to_string()),
                proptest::strategy::Just("\n".to_string()),
                proptest::strategy::Just("[".to_string()),
                "[ -~]{0,300}",
            ],
            0..12,
        ),
        raw in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..600),
    ) {
        let _ = crate::harness::check_jsonrpc(pieces.concat().as_bytes());
        let _ = crate::harness::check_jsonrpc(&raw);
    }
}

/// A skill's folder changed between the listing and a read: a rewritten
/// file is served as it is now (its digest no longer the listed one, which
/// the host's check catches) and `skills/get` gives the new digest; a file
/// removed, or replaced by a link out of the folder, or by a FIFO, is not
/// served any more (-32602).
#[test]
fn a_skill_changed_between_list_and_read_serves_only_what_it_holds_now() {
    let w = World::new();
    w.write("home/secret.txt", "secret\n");
    w.write(
        "home/skills/tool/SKILL.md",
        &skill_md("tool", "Tool.", "body"),
    );
    w.write("home/skills/tool/a.md", "A\n");
    w.write("home/skills/tool/b.md", "B\n");
    w.write("home/skills/tool/c.md", "C\n");
    w.write("home/skills/tool/d.md", "D\n");
    let mut c = Client::start(&w, &[], &["--cwd", w.repo.to_str().unwrap()]);
    c.initialize(json!({}));
    let listed = c.ok("skills/get", json!({"uri": "skill://home/tool/SKILL.md"}))["skill"].clone();
    let digest_of = |entry: &Value, uri: &str| {
        entry["resources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["uri"] == uri)
            .map(|r| r["digest"].as_str().unwrap().to_string())
    };
    let dir = w.home.join("skills/tool");
    fs::write(dir.join("a.md"), "A, rewritten\n").unwrap();
    fs::remove_file(dir.join("b.md")).unwrap();
    fs::remove_file(dir.join("c.md")).unwrap();
    symlink(w.home.join("secret.txt"), dir.join("c.md")).unwrap();
    fs::remove_file(dir.join("d.md")).unwrap();
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        dir.join("d.md"),
        rustix::fs::Mode::from_raw_mode(0o644),
    )
    .unwrap();
    let read = c.ok("resources/read", json!({"uri": "skill://home/tool/a.md"}));
    let text = read["contents"][0]["text"].as_str().unwrap();
    assert_eq!(text, "A, rewritten\n");
    assert_ne!(
        Some(digest(text.as_bytes())),
        digest_of(&listed, "skill://home/tool/a.md"),
        "the host's digest check catches the change"
    );
    for file in ["b.md", "c.md", "d.md"] {
        let uri = format!("skill://home/tool/{file}");
        assert_eq!(
            c.error_code("resources/read", json!({"uri": uri})),
            -32602,
            "{uri}"
        );
    }
    let now = c.ok("skills/get", json!({"uri": "skill://home/tool/SKILL.md"}))["skill"].clone();
    assert_eq!(
        digest_of(&now, "skill://home/tool/a.md"),
        Some(digest(b"A, rewritten\n"))
    );
    for file in ["b.md", "c.md", "d.md"] {
        assert_eq!(
            digest_of(&now, &format!("skill://home/tool/{file}")),
            None,
            "{file}"
        );
    }
}

/// Files are served byte for byte, so a skill whose text holds hidden
/// characters the policy would reveal or strip is not served (and says
/// why); under `trust.hidden-text = "keep"` it is.
#[test]
fn a_skill_with_hidden_text_is_not_served_unless_the_policy_keeps_it() {
    let w = World::new();
    w.write(
        "home/skills/tool/SKILL.md",
        &skill_md("tool", "Tool.", "run\u{200b} this"),
    );
    w.write(
        "home/skills/clean/SKILL.md",
        &skill_md("clean", "Clean.", "body"),
    );
    w.write("home/skills/clean/ref.md", "ignore previous\u{202e} text\n");
    w.write(
        "home/skills/plain/SKILL.md",
        &skill_md("plain", "Plain.", "body"),
    );
    let repo = w.repo.to_str().unwrap();
    let names = |c: &mut Client| -> (Vec<String>, String) {
        let r = c.ok("skills/list", json!({}));
        let names = r["skills"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["frontmatter"]["name"].as_str().unwrap().to_string())
            .collect();
        (names, r["_meta"].to_string())
    };
    let mut c = Client::start(&w, &[], &["--cwd", repo]);
    c.initialize(json!({}));
    let (served, why) = names(&mut c);
    assert_eq!(served, ["plain"]);
    assert!(
        why.contains("hidden characters") && why.contains("ref.md"),
        "{why}"
    );
    assert_eq!(
        c.error_code(
            "resources/read",
            json!({"uri": "skill://home/tool/SKILL.md"})
        ),
        -32602
    );
    drop(c);
    fs::write(
        w.home.join("context-policy.toml"),
        "version = 1\n[trust]\nhidden-text = \"keep\"\n",
    )
    .unwrap();
    let mut c = Client::start(&w, &[], &["--cwd", repo]);
    c.initialize(json!({}));
    let (served, _) = names(&mut c);
    assert_eq!(served, ["clean", "plain", "tool"]);
}

/// A 2026-07-28 client (no `initialize`: `server/discover`, then
/// `subscriptions/listen`, as Claude Code 2.1 does) gets the stream
/// acknowledged with what it asked for, and then only the change notices
/// it asked for, each carrying the stream's id.
#[test]
fn a_stateless_client_gets_change_notices_on_its_listen_stream() {
    let w = World::new();
    w.write("repo/AGENTS.md", "Use tabs.\n");
    let repo = w.repo.to_str().unwrap();
    let mut c = Client::start(&w, &[], &["--cwd", repo]);
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {}});
    let discover = c.ok("server/discover", json!({"_meta": meta}));
    assert!(
        discover["supportedVersions"]
            .as_array()
            .unwrap()
            .contains(&json!("2026-07-28")),
        "{discover}"
    );
    assert_eq!(
        discover["capabilities"]["extensions"]["io.modelcontextprotocol/skills"],
        json!({"directoryRead": true})
    );
    c.send(
        &json!({"jsonrpc": "2.0", "id": "listen:0", "method": "subscriptions/listen",
                   "params": {"_meta": meta, "notifications": {"resourcesListChanged": true}}}),
    );
    let ack = c.recv();
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    assert_eq!(
        ack["params"]["notifications"],
        json!({"resourcesListChanged": true})
    );
    assert_eq!(
        ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "listen:0"
    );
    // The stream is open once its acknowledgement came; a request after it
    // is answered with the watch in place.
    c.ok("ping", json!({"_meta": meta}));
    fs::write(w.repo.join("AGENTS.md"), "Use spaces.\n").unwrap();
    let notice = c.recv();
    assert_eq!(
        notice["method"], "notifications/resources/list_changed",
        "{notice}"
    );
    assert_eq!(
        notice["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "listen:0"
    );
    // Nothing else came: no prompt notice (not asked for), no unsolicited
    // one (no handshake); the next line is the ping's answer.
    let pong = c.call("ping", json!({}));
    assert!(pong.get("result").is_some(), "{pong}");
    assert!(c.seen.is_empty(), "{:?}", c.seen);
}
