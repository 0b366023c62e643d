//! A command line that keeps its word (issue 53, item 5), each tried as a
//! new user would, through the real binary: an error's header once in
//! colour, `--color never` reaching clap's own help and usage errors, an
//! unknown word in a policy told as such with the words it takes, a
//! suggestion for `--policy codexx`, help for a bad glob, `policy check -`
//! reading stdin, and `version` and `-q` as cargo and jj users expect.

use std::io::Write as _;
use std::process::{Command, Output, Stdio};

fn lisa() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_lisa-context"));
    cmd.current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("LISA_HOME")
        .env_remove("LISA_CONTEXT_POLICY")
        .env_remove("NO_COLOR")
        .env("HOME", "/nonexistent/lisa-context-cli-word");
    cmd
}

fn run(args: &[&str]) -> Output {
    lisa().args(args).output().unwrap()
}

/// `args` with `stdin` as standard input.
fn run_with_stdin(args: &[&str], stdin: &str) -> Output {
    let mut child = lisa()
        .args(args)
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
    child.wait_with_output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `text` without its ANSI escape sequences.
fn plain(text: &str) -> String {
    regex::Regex::new("\u{1b}\\[[0-9;]*[A-Za-z]")
        .unwrap()
        .replace_all(text, "")
        .into_owned()
}

#[test]
fn an_error_header_is_printed_once_in_colour_too() {
    let args = ["fingerprint", "--cwd", "/nonexistent/lisa-context-cli-word"];
    for color in ["always", "never"] {
        let out = run(&[&["--color", color][..], &args[..]].concat());
        assert_eq!(out.status.code(), Some(1));
        let stderr = text(&out.stderr);
        assert_eq!(stderr.contains('\u{1b}'), color == "always", "{stderr:?}");
        let seen = plain(&stderr);
        assert!(
            seen.starts_with("error[snapshot::bad-cwd]: cannot use"),
            "{seen}"
        );
        // The headline once: no miette `×` line repeating it, no second code.
        assert!(!seen.contains('×'), "{color}: {seen}");
        assert_eq!(seen.matches("snapshot::bad-cwd").count(), 1, "{seen}");
        assert_eq!(seen.matches("cannot use").count(), 1, "{seen}");
    }
}

#[test]
fn color_never_reaches_clap_help_and_usage_errors() {
    for args in [
        &["--color", "never", "--help"][..],
        &["--color=never", "survey", "--help"],
        &["--color", "never", "survey", "--formt", "json"],
        &["--color", "never", "snapshot", "--format", "yaml"],
        &["--color", "never", "nosuchcommand"],
    ] {
        let out = run(args);
        let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert!(!all.is_empty(), "{args:?}");
        assert!(!all.contains('\u{1b}'), "{args:?}: {all:?}");
    }
    // And `always` colours them, so the test above tests something.
    let out = run(&["--color", "always", "survey", "--formt", "json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains('\u{1b}'), "{out:?}");
}

/// `policy check -` on `policy`: exit code and stderr, without colour.
fn check(policy: &str) -> (Option<i32>, String, String) {
    let out = run_with_stdin(&["--color", "never", "policy", "check", "-"], policy);
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

#[test]
fn policy_check_reads_stdin() {
    let (code, stdout, stderr) = check("version = 1\n[instructions]\nbudget-bytes = 4096\n");
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stdout.starts_with("ok: <stdin> is a valid policy"),
        "{stdout}"
    );
    let (code, _, stderr) = check("version = 1\n[instructions]\nbudget-bytes = \"big\"\n");
    assert_eq!(code, Some(1));
    assert!(stderr.contains("error[policy::wrong-type]"), "{stderr}");
    assert!(stderr.contains("<stdin>"), "{stderr}");
}

#[test]
fn an_unknown_word_has_its_own_code_the_words_and_a_suggestion() {
    for (text, value, best, listed) in [
        (
            "version = 1\nextends = \"claude\"\n",
            "\"claude\"",
            "claude-code",
            "`codex`",
        ),
        (
            "version = 1\n[trust]\nsymlinks = \"nevr\"\n",
            "\"nevr\"",
            "never",
            "`within-root`",
        ),
    ] {
        let (code, _, stderr) = check(text);
        assert_eq!(code, Some(1), "{stderr}");
        assert!(
            stderr.contains("error[policy::unknown-value]: "),
            "{stderr}"
        );
        assert!(!stderr.contains("unknown variant"), "{stderr}");
        assert!(!stderr.contains("wrong-type"), "{stderr}");
        assert!(stderr.contains(listed), "the accepted words: {stderr}");
        assert!(
            stderr.contains(&format!("help: did you mean \"{best}\"?")),
            "{stderr}"
        );
        // The label sits under the value itself: the line holding it, then
        // a marker line whose first mark is at the value's column.
        let line = text.lines().find(|l| l.contains(value)).unwrap();
        let column = line.find(value).unwrap();
        let lines: Vec<&str> = stderr.lines().collect();
        let at = lines.iter().position(|l| l.ends_with(line)).unwrap();
        let marks = lines[at + 1];
        let shown = lines[at].chars().count() - line.chars().count();
        assert_eq!(
            marks
                .chars()
                .position(|c| c == '─' || c == '┬')
                .map(|m| m - shown),
            Some(column),
            "{stderr}"
        );
    }
    // Through the library: the kind, and the span of the value.
    let text = "version = 1\n[trust]\nsymlinks = \"nevr\"\n";
    let source = lisa_context::policy::PolicySource::from_text(
        lisa_context::policy::Layer::CommandLine,
        "p.toml",
        text,
    );
    let err = source.check().unwrap_err();
    let p = &err.problems[0];
    assert_eq!(p.kind.code(), "policy::unknown-value");
    assert_eq!(&text[p.span.clone()], "\"nevr\"");
}

#[test]
fn a_bad_glob_gets_help() {
    let (code, _, stderr) = check("version = 1\n[instructions]\nexclude-levels = [\"a/[b\"]\n");
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("error[policy::invalid-glob]"), "{stderr}");
    assert!(stderr.contains("help: close the `[` with `]`"), "{stderr}");
}

#[test]
fn a_mistyped_shipped_policy_gets_a_suggestion() {
    let out = run(&["--color", "never", "--policy", "codexx", "policy", "show"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with("error[bootstrap::unknown-policy]"),
        "{stderr}"
    );
    assert!(stderr.contains("help: did you mean `codex`?"), "{stderr}");
}

#[test]
fn version_is_a_command_too() {
    let flag = run(&["--version"]);
    let command = run(&["version"]);
    assert!(command.status.success(), "{command:?}");
    assert_eq!(text(&command.stdout), text(&flag.stdout));
    assert_eq!(
        text(&command.stdout),
        format!("lisa-context {}\n", env!("CARGO_PKG_VERSION"))
    );
    let verbose = text(&run(&["version", "-v"]).stdout);
    assert!(verbose.starts_with(&text(&flag.stdout)), "{verbose}");
    for key in [
        "policy version: 1",
        "protocol version: 1",
        "shipped policies: lisa, ",
    ] {
        assert!(verbose.contains(key), "{verbose}");
    }
}

#[test]
fn quiet_keeps_stdout_and_errors_only() {
    // A deprecated key: a warning without -q, nothing with it.
    let old = "version = 1\n[instructions]\ntrim = \"white-space\"\n";
    let loud = run_with_stdin(&["--color", "never", "policy", "check", "-"], old);
    assert!(loud.status.success(), "{loud:?}");
    assert!(text(&loud.stderr).contains("warning[policy::deprecated-key]"));
    assert!(text(&loud.stdout).starts_with("ok: "));
    let quiet = run_with_stdin(&["-q", "policy", "check", "-"], old);
    assert!(quiet.status.success(), "{quiet:?}");
    assert_eq!(text(&quiet.stderr), "");
    assert_eq!(text(&quiet.stdout), "");
    // An error is still printed, and the exit status still says it.
    let bad = run_with_stdin(&["--quiet", "policy", "check", "-"], "version = 2\n");
    assert_eq!(bad.status.code(), Some(1));
    assert!(text(&bad.stderr).contains("error[policy::"), "{bad:?}");
    // What was asked for is still printed.
    let shown = run(&["-q", "policy", "show"]);
    assert!(shown.status.success());
    assert!(text(&shown.stdout).contains("[instructions]"));
    // -q and -v contradict each other: a usage error.
    assert_eq!(run(&["-q", "-v", "version"]).status.code(), Some(2));
}

/// In a terminal (a pseudo-terminal from util-linux's `script`), `auto`
/// colours the error, and its header is still printed once.
#[test]
fn an_error_header_is_printed_once_in_a_terminal() {
    let has_script = Command::new("script")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_script {
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: the terminal case: util-linux's `script` is not installed here"
        );
        return;
    }
    let line = format!(
        "{} fingerprint --cwd /nonexistent/lisa-context-cli-word",
        env!("CARGO_BIN_EXE_lisa-context")
    );
    let out = Command::new("script")
        .args(["-q", "-e", "-c", &line, "/dev/null"])
        .env_remove("NO_COLOR")
        .env("TERM", "xterm")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let shown = text(&out.stdout);
    assert!(
        shown.contains('\u{1b}'),
        "a terminal gets colour: {shown:?}"
    );
    let seen = plain(&shown);
    assert!(
        seen.trim_start()
            .starts_with("error[snapshot::bad-cwd]: cannot use"),
        "{seen}"
    );
    assert!(!seen.contains('×'), "{seen}");
    assert_eq!(seen.matches("cannot use").count(), 1, "{seen}");
}
