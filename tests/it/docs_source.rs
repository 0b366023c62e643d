//! Docs from one source (issue 53, item 6): each list a page shows is held
//! to the code it describes. docs/cli.md's synopsis to clap's command tree
//! (as `--help` prints it: every command, every option, none made up),
//! docs/library.md's export list to src/lib.rs's `pub use` items, `serve
//! --help`'s op list to the protocol's ops, `policy show`'s labels to the
//! layers' names, and docs/protocol.md's account of `policy-invalid` to what
//! the server answers.

use std::collections::BTreeSet;
use std::fs;
use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

fn read(rel: &str) -> String {
    fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)).unwrap()
}

/// `-h` (one line per option), or with `long` `--help` (the long about).
fn help_of(path: &[&str], long: bool) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_lisa-context"))
        .args(path)
        .args(["--color", "never", if long { "--help" } else { "-h" }])
        .env("COLUMNS", "1000")
        .output()
        .unwrap();
    assert!(out.status.success(), "{path:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

fn help(path: &[&str]) -> String {
    help_of(path, false)
}

/// The lines of `help`'s section `title` (`Commands:`, `Options:`).
fn section<'h>(help: &'h str, title: &str) -> Vec<&'h str> {
    help.lines()
        .skip_while(|l| *l != title)
        .skip(1)
        .take_while(|l| !l.is_empty())
        .collect()
}

/// The subcommands `help` lists (not `help`).
fn subcommands(help: &str) -> Vec<String> {
    section(help, "Commands:")
        .iter()
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(String::from)
        .collect()
}

/// The options `help` lists, each as `--long` and, if it has one, `-s`.
fn options(help: &str) -> Vec<(Option<String>, String)> {
    let re = regex::Regex::new(r"^\s+(?:(-[a-zA-Z]), )?(--[a-z][a-z-]*)").unwrap();
    section(help, "Options:")
        .iter()
        .filter_map(|l| re.captures(l))
        .map(|c| (c.get(1).map(|m| m.as_str().to_string()), c[2].to_string()))
        .collect()
}

/// Every command with no subcommands, as its words, and its `--help`.
fn leaves(path: Vec<String>, out: &mut Vec<(Vec<String>, String)>) {
    let words: Vec<&str> = path.iter().map(String::as_str).collect();
    let text = help(&words);
    let subs = subcommands(&text);
    if subs.is_empty() {
        out.push((path, text));
        return;
    }
    for sub in subs {
        let mut next = path.clone();
        next.push(sub);
        leaves(next, out);
    }
}

/// docs/cli.md's synopsis block: the first `text` block.
fn synopsis() -> Vec<String> {
    let doc = read("docs/cli.md");
    let block = doc.split("```text\n").nth(1).unwrap();
    let block = block.split("```").next().unwrap();
    block.lines().map(String::from).collect()
}

/// The `--options` of a synopsis fragment.
fn long_options(text: &str) -> BTreeSet<String> {
    let re = regex::Regex::new(r"--[a-z][a-z-]*").unwrap();
    re.find_iter(text).map(|m| m.as_str().to_string()).collect()
}

#[test]
fn the_synopsis_names_every_command_and_option_clap_has() {
    let lines = synopsis();
    let top = help(&[]);
    let global: Vec<(Option<String>, String)> = options(&top)
        .into_iter()
        .filter(|(_, long)| long != "--help" && long != "--version")
        .collect();
    // The first line: the program and every global option.
    assert!(lines[0].starts_with("lisa-context "), "{}", lines[0]);
    for (short, long) in &global {
        let named = lines[0].contains(long.as_str())
            || short.as_ref().is_some_and(|s| {
                lines[0].contains(&format!("[{s} ")) || lines[0].contains(&format!(" {s}]"))
            });
        assert!(
            named,
            "the synopsis's first line lacks {long}: {}",
            lines[0]
        );
    }
    let global_longs: BTreeSet<String> = global.iter().map(|(_, l)| l.clone()).collect();
    // Each command's own line, with its continuation lines (those that
    // start with `[`), up to the gap before its description.
    let mut all = Vec::new();
    leaves(Vec::new(), &mut all);
    assert!(all.len() >= 15, "{}", all.len());
    for (path, text) in &all {
        let name = path.join(" ");
        let at = lines
            .iter()
            .position(|l| {
                l.starts_with("  ")
                    && !l.starts_with("   ")
                    && (l.trim() == name || l.trim_start().starts_with(&format!("{name} ")))
            })
            .unwrap_or_else(|| panic!("docs/cli.md's synopsis lacks `{name}`"));
        let mut written = String::new();
        let own_line = lines[at].trim_start();
        written.push_str(own_line.split("   ").next().unwrap());
        for more in &lines[at + 1..] {
            let more = more.trim_start();
            if !more.starts_with('[') {
                break;
            }
            written.push(' ');
            written.push_str(more.split("   ").next().unwrap());
        }
        let own: BTreeSet<String> = options(text)
            .into_iter()
            .map(|(_, long)| long)
            .filter(|l| l != "--help" && !global_longs.contains(l))
            .collect();
        assert_eq!(
            long_options(&written),
            own,
            "`{name}` in docs/cli.md's synopsis ({written}) and its --help"
        );
    }
}

/// The names of src/lib.rs's `pub use` items, and its public modules.
fn crate_root() -> (BTreeSet<String>, BTreeSet<String>) {
    let lib = read("src/lib.rs");
    let uses = regex::Regex::new(r"(?s)\npub use [a-z_]+::(\{[^}]*\}|[A-Za-z_]+);").unwrap();
    let mut items = BTreeSet::new();
    for c in uses.captures_iter(&lib) {
        for name in c[1].trim_matches(['{', '}']).split(',') {
            let name = name.trim();
            if !name.is_empty() {
                items.insert(name.to_string());
            }
        }
    }
    let mods = regex::Regex::new(r"\npub mod ([a-z_]+);").unwrap();
    let modules = mods
        .captures_iter(&lib)
        .map(|c| c[1].to_string())
        .filter(|m| m != "internals")
        .collect();
    (items, modules)
}

#[test]
fn the_library_page_lists_every_export() {
    let (items, modules) = crate_root();
    for expected in ["survey", "Surveyed", "SurveyError", "RuleText", "RuleReach"] {
        assert!(items.contains(expected), "src/lib.rs: {items:?}");
    }
    let page = read("docs/library.md");
    let row = page
        .lines()
        .find(|l| l.starts_with("| `lisa_context::` |"))
        .unwrap();
    let named: BTreeSet<String> = regex::Regex::new(r"`([A-Za-z_]+)`")
        .unwrap()
        .captures_iter(row)
        .map(|c| c[1].to_string())
        .collect();
    let missing: Vec<&String> = items.difference(&named).collect();
    assert!(
        missing.is_empty(),
        "docs/library.md's crate row lacks {missing:?}"
    );
    let stale: Vec<&String> = named.difference(&items).collect();
    assert!(
        stale.is_empty(),
        "docs/library.md's crate row names {stale:?}, not exported"
    );
    for m in modules {
        assert!(
            page.contains(&format!("| `lisa_context::{m}` |")),
            "docs/library.md has no row for lisa_context::{m}"
        );
    }
}

#[test]
fn serve_help_lists_every_op_of_the_protocol() {
    let text = help_of(&["serve"], true);
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let ops = lisa_context::protocol::Request::OPS;
    assert!(ops.contains(&"rule") && ops.contains(&"skill-resource"));
    assert!(
        flat.contains(&format!("an `op`: {}.", ops.join(", "))),
        "{flat}"
    );
}

#[test]
fn policy_show_labels_each_shipped_layer_by_its_name() {
    let out = Command::new(env!("CARGO_BIN_EXE_lisa-context"))
        .args(["--policy", "gemini", "--no-home-policy", "policy", "show"])
        .env_remove("LISA_HOME")
        .env_remove("LISA_CONTEXT_POLICY")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let shown = String::from_utf8(out.stdout).unwrap();
    let header: Vec<&str> = shown
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with("#   "))
        .collect();
    assert_eq!(header.len(), 2, "{shown}");
    assert!(header[0].starts_with("#   built-in lisa "), "{shown}");
    assert!(header[1].starts_with("#   built-in gemini "), "{shown}");
    // Values carry the label of the file that set them: both appear.
    assert!(shown.contains("  # built-in gemini\n"), "{shown}");
    assert!(shown.contains("  # built-in lisa\n"), "{shown}");
    // Alone, the built-in policy keeps its one word.
    let alone = Command::new(env!("CARGO_BIN_EXE_lisa-context"))
        .args(["--no-home-policy", "policy", "show"])
        .env_remove("LISA_HOME")
        .env_remove("LISA_CONTEXT_POLICY")
        .output()
        .unwrap();
    let alone = String::from_utf8(alone.stdout).unwrap();
    assert!(alone.contains("  # built-in\n"), "{alone}");
    assert!(!alone.contains("built-in lisa"), "{alone}");
}

#[test]
fn protocol_page_tells_policy_invalid_as_the_server_answers_it() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    fs::create_dir_all(&home).unwrap();
    fs::write(
        home.join("context-policy.toml"),
        "version = 1\n[trust]\nsymlinks = \"nevr\"\n",
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_lisa-context"))
        .args(["--home"])
        .arg(&home)
        .args(["serve", "--jobs", "1"])
        .env_remove("LISA_CONTEXT_POLICY")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let request = serde_json::json!({"id": 1, "op": "fingerprint", "cwd": tmp.path()});
    writeln!(child.stdin.take().unwrap(), "{request}").unwrap();
    let out = child.wait_with_output().unwrap();
    let line = String::from_utf8(out.stdout).unwrap();
    let answer: serde_json::Value = serde_json::from_str(line.trim()).unwrap();
    let error = &answer["error"];
    assert_eq!(error["code"], "policy-invalid", "{answer}");
    let message = error["message"].as_str().unwrap();
    // As docs/protocol.md says: miette's report in plain ASCII, the code
    // on its own line, then `x` and the message, each problem as `Error:
    // CODE`, the label drawn with `^`, and help.
    assert!(!message.contains('\u{1b}'), "{message:?}");
    let lines: Vec<&str> = message.lines().collect();
    assert_eq!(lines[0], "policy::invalid", "{message}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("  x ") && l.ends_with("1 problem in this policy file")),
        "{message}"
    );
    assert!(lines.contains(&"Error: policy::unknown-value"), "{message}");
    assert!(lines.iter().any(|l| l.contains('^')), "{message}");
    assert!(
        message.contains("help: did you mean \"never\"?"),
        "{message}"
    );
    assert!(lines.iter().all(|l| l.chars().count() <= 100), "{message}");
    let page = read("docs/protocol.md");
    let flat = page.split_whitespace().collect::<Vec<_>>().join(" ");
    for said in [
        "the code on a line of its own (`policy::invalid`)",
        "then each problem as `Error: CODE`",
        "not the `error[code]: message` lines `policy check` prints",
    ] {
        assert!(flat.contains(said), "docs/protocol.md: {said}");
    }
}

/// README.md's table of commands names every command clap has, and its
/// sentence on the global options every global option.
#[test]
fn the_readme_names_every_command_and_global_option() {
    let readme = read("README.md");
    let table: Vec<&str> = readme
        .split("## Commands")
        .nth(1)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("| `"))
        .collect();
    let first_cells: String = table
        .iter()
        .map(|l| l.split(" | ").next().unwrap_or_default())
        .collect::<Vec<_>>()
        .join(" ");
    let top = help(&[]);
    for command in subcommands(&top) {
        let named = first_cells.contains(&format!("`{command}`"))
            || first_cells.contains(&format!("`{command} "))
            || first_cells.contains(&format!("`{command}\\|"));
        assert!(named, "README.md's table of commands lacks `{command}`");
    }
    let sentence = readme
        .split("the global options are ")
        .nth(1)
        .and_then(|s| s.split(". ").next())
        .unwrap()
        .replace('\n', " ");
    for (short, long) in options(&top) {
        if long == "--help" || long == "--version" {
            continue;
        }
        let named = sentence.contains(&format!("`{long}"))
            || short.is_some_and(|s| sentence.contains(&format!("`{s}`")));
        assert!(named, "README.md's global options lack {long}: {sentence}");
    }
}
