//! The README's demo commands print what the README says they print, and
//! every documented way of running the demo gives the same answer; the
//! pages under `docs/` name every snapshot field, op, error code, shipped
//! policy and policy key this build has; every relative link in the
//! Markdown files resolves; and the README stays a README.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::validate;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The two commands at the top of the README.
fn readme_commands() -> (String, String) {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let block = readme
        .split("```sh\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("the README opens with a sh block");
    let mut lines = block.lines().filter(|l| !l.trim().is_empty());
    (
        lines.next().unwrap().to_string(),
        lines.next().unwrap().to_string(),
    )
}

/// Runs the binary with `args`, from the checkout, and parses its JSON.
fn run_json(args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_lisa-context"))
        .args(args)
        .current_dir(root())
        .env_remove("LISA_HOME")
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?}: {out:?}");
    let json = serde_json::from_slice(&out.stdout).unwrap();
    validate::snapshot(&json);
    json
}

fn names(list: &Value, field: &str) -> Vec<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|v| v[field].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn the_readme_commands_are_the_documented_ones() {
    let (main, test) = readme_commands();
    assert!(main.starts_with("cargo run "), "{main}");
    assert!(
        main.contains(" -- --home examples/demo/home snapshot"),
        "{main}"
    );
    assert_eq!(test, "cargo test --locked");
}

#[test]
fn the_demo_prints_what_the_readme_says() {
    let (main, _) = readme_commands();
    let args: Vec<&str> = main
        .split(" -- ")
        .nth(1)
        .unwrap()
        .split_whitespace()
        .collect();
    let snap = run_json(&args);
    // "the repository's CLAUDE.md is a copy of its AGENTS.md and is folded away"
    let deduped = names(&snap["deduped"], "path");
    assert!(
        deduped.iter().any(|p| p.ends_with("repo/CLAUDE.md")),
        "{deduped:?}"
    );
    // "the project skill changelog carries its project label in prompt"
    let prompt = snap["prompt"].as_str().unwrap();
    assert!(
        prompt.contains("- changelog (from this project: its convention, not your principle):"),
        "{prompt}"
    );
    // "the project's release skill ... is reported in shadowedProjectSkills"
    let shadowed = names(&snap["shadowedProjectSkills"], "name");
    assert_eq!(shadowed, ["release"]);
}

/// With or without `--root`, and through the embed example, the demo finds
/// the same repository root, files and skills.
#[test]
fn every_way_of_running_the_demo_agrees() {
    let base = [
        "--home",
        "examples/demo/home",
        "snapshot",
        "--cwd",
        "examples/demo/repo/packages/api",
        "--format",
        "json",
    ];
    let with_root = run_json(&[&base[..], &["--root", "examples/demo/repo"]].concat());
    let without = run_json(&base);
    for field in [
        "repoRoot",
        "instructionFiles",
        "skills",
        "shadowedProjectSkills",
        "prompt",
    ] {
        assert_eq!(with_root[field], without[field], "{field}");
    }

    // The embed example, built by `cargo test` beside this test.
    let exe = std::env::current_exe().unwrap();
    let examples: PathBuf = exe.parent().unwrap().parent().unwrap().join("examples");
    let embed = examples.join("embed");
    if !embed.exists() {
        eprintln!(
            "SKIPPED the embed example: not built at {}",
            embed.display()
        );
        return;
    }
    let out = Command::new(&embed).current_dir(root()).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let skills_line = format!("# Skills ({})", without["skills"].as_array().unwrap().len());
    assert!(text.contains(&skills_line), "{text}");
    assert!(text.contains(without["prompt"].as_str().unwrap().lines().nth(2).unwrap()));
}

/// The longest the README may grow: past this, reference material belongs
/// in `docs/`.
const README_MAX_LINES: usize = 450;

/// A file of the checkout, as text.
fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The Markdown files whose links are checked, relative to the checkout:
/// the README, every page under `docs/`, and the files that link into them.
fn markdown_files() -> Vec<String> {
    let mut files: Vec<String> = [
        "README.md",
        "SECURITY.md",
        "CONTRIBUTING.md",
        "CHANGELOG.md",
        "bindings/node/README.md",
        "bindings/python/README.md",
        "bindings/python/ADAPTERS.md",
    ]
    .map(String::from)
    .to_vec();
    let mut docs: Vec<String> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|name| name.ends_with(".md"))
        .map(|name| format!("docs/{name}"))
        .collect();
    docs.sort();
    assert!(!docs.is_empty(), "docs/ holds the reference pages");
    files.extend(docs);
    files
}

/// The lines of `text` outside fenced code blocks.
fn outside_fences(text: &str) -> Vec<&str> {
    let mut fenced = false;
    text.lines()
        .filter(|line| {
            if line.trim_start().starts_with("```") {
                fenced = !fenced;
                return false;
            }
            !fenced
        })
        .collect()
}

/// `line` with the text of its inline code spans removed (the backticks
/// stay), so that a link written as code is not taken for a link.
fn without_code_spans(line: &str) -> String {
    let mut out = String::new();
    let mut in_code = false;
    for c in line.chars() {
        if c == '`' {
            in_code = !in_code;
            out.push(c);
        } else if !in_code {
            out.push(c);
        }
    }
    out
}

/// The targets of the inline links (`[text](target)`) of a Markdown text.
fn link_targets(text: &str) -> Vec<String> {
    let mut targets = Vec::new();
    for line in outside_fences(text) {
        let line = without_code_spans(line);
        let mut rest = line.as_str();
        while let Some(at) = rest.find("](") {
            rest = &rest[at + 2..];
            let end = rest.find(')').unwrap_or(rest.len());
            let target = rest[..end].split_whitespace().next().unwrap_or_default();
            targets.push(target.trim_matches(['<', '>']).to_string());
            rest = &rest[end..];
        }
    }
    targets
}

/// The anchors GitHub gives the headings of a Markdown text: lowercased,
/// punctuation dropped, spaces as hyphens, a repeated one numbered.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut anchors = BTreeSet::new();
    for line in outside_fences(text) {
        let Some(heading) = line.strip_prefix('#') else {
            continue;
        };
        let heading = heading.trim_start_matches('#');
        if !heading.starts_with(' ') {
            continue;
        }
        let mut slug = String::new();
        for c in heading.trim().to_lowercase().chars() {
            if c.is_alphanumeric() || c == '-' || c == '_' {
                slug.push(c);
            } else if c == ' ' {
                slug.push('-');
            }
        }
        let count = seen.entry(slug.clone()).or_default();
        anchors.insert(if *count == 0 {
            slug.clone()
        } else {
            format!("{slug}-{count}")
        });
        *count += 1;
    }
    anchors
}

#[test]
fn the_readme_stays_a_readme() {
    let readme = read("README.md");
    let lines = readme.lines().count();
    assert!(
        lines <= README_MAX_LINES,
        "README.md has {lines} lines; reference material belongs in docs/ (at most {README_MAX_LINES})"
    );
}

/// Every relative link in the README, the docs pages and the files that
/// link into them names a file or folder of the checkout, and every anchor
/// a heading of the page it points into.
#[test]
fn every_relative_link_resolves() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for file in markdown_files() {
        let text = read(&file);
        let dir = Path::new(&file).parent().unwrap();
        for target in link_targets(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (path, anchor) = target.split_once('#').unwrap_or((&target, ""));
            let linked = if path.is_empty() {
                PathBuf::from(&file)
            } else {
                dir.join(path)
            };
            let on_disk = root().join(&linked);
            if !on_disk.exists() {
                broken.push(format!("{file}: {target} (no {})", linked.display()));
                continue;
            }
            if anchor.is_empty() {
                continue;
            }
            let page = std::fs::read_to_string(&on_disk).unwrap_or_default();
            if !anchors(&page).contains(anchor) {
                broken.push(format!("{file}: {target} (no heading #{anchor})"));
            }
        }
    }
    assert!(checked > 20, "only {checked} relative links found");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// Runs the binary with `args` and `stdin`, from the checkout, in an empty
/// home of its own (no peer's home either), and returns its stdout.
fn run_isolated(args: &[&str], stdin: &str) -> String {
    let home = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_lisa-context"))
        .args(args)
        .current_dir(root())
        .env("HOME", home.path())
        .env_remove("LISA_HOME")
        .env_remove("CODEX_HOME")
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("GEMINI_CLI_HOME")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// The words in backticks in `text` between `start` and the next `end`.
fn backticked_between(text: &str, start: &str, end: &str) -> BTreeSet<String> {
    let from = text
        .find(start)
        .unwrap_or_else(|| panic!("no {start:?} in the text"));
    let span = &text[from + start.len()..];
    let span = &span[..span.find(end).unwrap_or_else(|| panic!("no {end:?}"))];
    span.split('`')
        .skip(1)
        .step_by(2)
        .map(String::from)
        .collect()
}

/// The first cells (in backticks) of the rows of the first table after
/// `heading` in `text`.
fn table_keys(text: &str, heading: &str) -> BTreeSet<String> {
    let from = text
        .find(heading)
        .unwrap_or_else(|| panic!("no {heading:?}"));
    text[from..]
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .filter_map(|row| row.split('|').nth(1))
        .map(|cell| cell.trim().trim_matches('`').to_string())
        .collect()
}

/// The snapshot table of `docs/protocol.md` lists exactly the fields the
/// demo snapshot has.
#[test]
fn the_protocol_page_lists_every_snapshot_field() {
    let (main, _) = readme_commands();
    let args: Vec<&str> = main
        .split(" -- ")
        .nth(1)
        .unwrap()
        .split_whitespace()
        .collect();
    let snap = run_json(&args);
    let fields: BTreeSet<String> = snap.as_object().unwrap().keys().cloned().collect();
    let documented = table_keys(&read("docs/protocol.md"), "## The snapshot object");
    assert_eq!(documented, fields);
}

/// `hello` names the ops, error codes and shipped policies of this build;
/// the docs name every one of them, and the lists of shipped policies in
/// the README and the docs are the build's.
#[test]
fn the_docs_name_every_op_error_code_and_shipped_policy() {
    let line = run_isolated(&["serve"], "{\"id\":1,\"op\":\"hello\"}\n");
    let response: Value = serde_json::from_str(line.lines().next().unwrap()).unwrap();
    validate::response(&response);
    let hello = &response["hello"];
    let words = |field: &str| -> BTreeSet<String> {
        hello[field]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect()
    };

    let protocol = read("docs/protocol.md");
    let ops = table_keys(&protocol, "## The server (`serve`)");
    assert_eq!(ops, words("ops"), "the op table of docs/protocol.md");
    for code in words("errorCodes") {
        assert!(
            protocol.contains(&format!("`{code}`")),
            "docs/protocol.md does not name the error code {code}"
        );
    }

    let shipped = words("policies");
    let lists = [
        (
            "README.md",
            backticked_between(&read("README.md"), "a policy, not a fork: ", "\n\n"),
        ),
        (
            "docs/compat.md",
            backticked_between(&read("docs/compat.md"), "beside Lisa's (", ";"),
        ),
        (
            "docs/policy.md",
            backticked_between(&read("docs/policy.md"), "names a shipped policy (", ";"),
        ),
        (
            "docs/cli.md",
            backticked_between(&read("docs/cli.md"), "(a bare word: ", ")"),
        ),
    ];
    for (file, list) in lists {
        assert_eq!(list, shipped, "the shipped policies {file} lists");
    }
}

/// The policy reference's table has a row for every key of the effective
/// built-in policy and no other, and each default written as a TOML value
/// is the built-in one.
#[test]
fn the_policy_reference_lists_every_key_with_its_default() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path().to_str().unwrap();
    let shown = run_isolated(&["--home", home, "--no-home-policy", "policy", "show"], "");
    let effective: toml::Table = shown.parse().unwrap();
    let mut keys = BTreeMap::new();
    for (name, value) in &effective {
        match value.as_table() {
            Some(table) => {
                for (key, value) in table {
                    // A section's compat part is a table of its own.
                    match value.as_table().filter(|_| key == "compat") {
                        Some(part) => {
                            for (key, value) in part {
                                keys.insert(format!("{name}.compat.{key}"), value.clone());
                            }
                        }
                        None => {
                            keys.insert(format!("{name}.{key}"), value.clone());
                        }
                    }
                }
            }
            None => {
                keys.insert(name.clone(), value.clone());
            }
        }
    }

    let reference = read("docs/policy.md");
    let core = table_keys(&reference, "| key |");
    let compat = table_keys(&reference, "| compat key |");
    let documented: BTreeSet<String> = core.union(&compat).cloned().collect();
    let known: BTreeSet<String> = keys.keys().cloned().collect();
    assert_eq!(documented, known, "the keys of docs/policy.md's tables");
    // The core table comes first, the compat part apart after it.
    assert!(reference.find("| key |") < reference.find("| compat key |"));

    let mut compared = 0;
    for row in reference.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = row.split(" | ").collect();
        let key = cells[0].trim_start_matches("| ").trim_matches('`');
        let default = cells[1].trim();
        let Some(default) = default
            .strip_prefix('`')
            .and_then(|d| d.strip_suffix('`'))
            .filter(|d| !d.contains('`'))
        else {
            continue;
        };
        let Ok(parsed) = format!("v = {default}").parse::<toml::Table>() else {
            continue;
        };
        assert_eq!(
            Some(&parsed["v"]),
            keys.get(key),
            "the default docs/policy.md gives {key}"
        );
        compared += 1;
    }
    assert!(compared > 40, "only {compared} defaults compared");
}

/// The compat page's commands run, and the README's is one of them.
#[test]
fn the_compat_commands_run() {
    let compat = read("docs/compat.md");
    let block = compat
        .split("```sh\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("docs/compat.md has a sh block");
    let commands: Vec<&str> = block.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(commands.len(), 3, "{commands:?}");
    for command in &commands {
        let args: Vec<&str> = command
            .split(" -- ")
            .nth(1)
            .unwrap()
            .split_whitespace()
            .collect();
        run_isolated(&args, "");
    }
    let readme = read("README.md");
    let readme_block = readme
        .split("```sh\n")
        .find(|b| b.contains("--policy codex"))
        .and_then(|b| b.split("```").next())
        .expect("the README shows a compat policy");
    assert!(commands.contains(&readme_block.trim()), "{readme_block}");
}
