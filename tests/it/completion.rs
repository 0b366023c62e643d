//! `completions SHELL` in real shells (issue 53, item 5): the script each
//! shell sources completes every command, every option and every value
//! clap knows, at every depth (`survey --for<TAB>`, `skill <TAB>`), read
//! from the program's own `-h` rather than from a list of ours. bash is
//! driven through its completion function with `COMP_WORDS`, fish through
//! `complete -C`, zsh through its completion system in a pseudo-terminal
//! (`zsh/zpty`), with `compadd` recording what it is given. A shell that is
//! not installed is skipped, and the test says so on stderr.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

/// What completing `words` (the last one being typed) must offer.
#[derive(Debug)]
struct Case {
    words: Vec<String>,
    expect: BTreeSet<String>,
}

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_lisa-context")
}

fn short_help(path: &[String]) -> String {
    let out = Command::new(bin())
        .args(path)
        .arg("-h")
        .env("COLUMNS", "1000")
        .output()
        .unwrap();
    assert!(out.status.success(), "{path:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// `help`'s section `title`, each entry with its continuation lines joined.
fn entries(help: &str, title: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in help
        .lines()
        .skip_while(|l| *l != title)
        .skip(1)
        .take_while(|l| !l.is_empty())
    {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let starts_entry = indent <= 6 && !trimmed.is_empty() && {
            let first = trimmed.chars().next().unwrap();
            first == '-' || first.is_ascii_alphanumeric() || first == '<' || first == '['
        };
        match out.last_mut() {
            Some(last) if !starts_entry => {
                last.push(' ');
                last.push_str(trimmed);
            }
            _ => out.push(trimmed.to_string()),
        }
    }
    out
}

/// The cases for the command at `path` and below it: its subcommands, its
/// options (typing `--`), and each option's values.
fn cases(path: Vec<String>, global: &BTreeSet<String>, out: &mut Vec<Case>) {
    let help = short_help(&path);
    let subs: Vec<String> = entries(&help, "Commands:")
        .iter()
        .filter_map(|e| e.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(String::from)
        .collect();
    let mut words = vec!["lisa-context".to_string()];
    words.extend(path.iter().cloned());
    if !subs.is_empty() {
        let mut typing = words.clone();
        typing.push(String::new());
        out.push(Case {
            words: typing,
            expect: subs.iter().cloned().collect(),
        });
    }
    let opt = regex::Regex::new(r"^(?:-[a-zA-Z], )?(--[a-z][a-z-]*)").unwrap();
    let values = regex::Regex::new(r"\[possible values: ([^\]]*)\]").unwrap();
    let mut longs = BTreeSet::new();
    for entry in entries(&help, "Options:") {
        let Some(c) = opt.captures(&entry) else {
            continue;
        };
        let long = c[1].to_string();
        if path.is_empty() || !global.contains(&long) {
            longs.insert(long.clone());
        }
        if let Some(v) = values.captures(&entry) {
            let mut typing = words.clone();
            typing.push(long.clone());
            typing.push(String::new());
            out.push(Case {
                words: typing,
                expect: v[1].split(", ").map(String::from).collect(),
            });
        }
    }
    // Completing `--` offers every option of the command.
    let mut typing = words.clone();
    typing.push("--".into());
    out.push(Case {
        words: typing,
        expect: longs,
    });
    // A positional with possible values (`completions SHELL`).
    for entry in entries(&help, "Arguments:") {
        if let Some(v) = values.captures(&entry) {
            let mut typing = words.clone();
            typing.push(String::new());
            out.push(Case {
                words: typing,
                expect: v[1].split(", ").map(String::from).collect(),
            });
        }
    }
    for sub in subs {
        let mut next = path.clone();
        next.push(sub);
        cases(next, global, out);
    }
}

fn all_cases() -> Vec<Case> {
    let top = short_help(&[]);
    let opt = regex::Regex::new(r"^(?:-[a-zA-Z], )?(--[a-z][a-z-]*)").unwrap();
    let global: BTreeSet<String> = entries(&top, "Options:")
        .iter()
        .filter_map(|e| opt.captures(e).map(|c| c[1].to_string()))
        .collect();
    let mut out = Vec::new();
    cases(Vec::new(), &global, &mut out);
    // The ones the issue names, and a global option after a command.
    let named = [
        (&["survey", "--for"][..], &["--format"][..]),
        (&["skill", ""], &["list", "show"]),
        (&["--policy", ""], &["codex", "gemini", "claude-code"]),
        (&["--color", "never", "survey", "--sc"], &["--scope"]),
        (&["snapshot", "--pol"], &["--policy"]),
        (&["survey", "--deny", ""], &["warnings", "hidden-text"]),
        (
            &["trust", "approve", "--"],
            &["--cwd", "--root", "--all", "--expect"],
        ),
    ];
    for (words, expect) in named {
        let mut w = vec!["lisa-context".to_string()];
        w.extend(words.iter().map(|s| s.to_string()));
        out.push(Case {
            words: w,
            expect: expect.iter().map(|s| s.to_string()).collect(),
        });
    }
    assert!(out.len() > 40, "{}", out.len());
    out
}

/// The completion script for `shell`, written to `dir`.
fn script(shell: &str, dir: &Path) -> std::path::PathBuf {
    let out = Command::new(bin())
        .args(["completions", shell])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let file = dir.join(format!("lisa-context.{shell}"));
    std::fs::write(&file, out.stdout).unwrap();
    file
}

fn installed(shell: &str) -> bool {
    let found = Command::new(shell)
        .args(["-c", "exit 0"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        // Straight to stderr, past the test harness's capture: a skip is
        // said even when the test passes.
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: {shell} completion not tested: {shell} is not installed here \
             (.ci/shells installs it from Debian's packages)"
        );
    }
    found
}

/// Single-quoted for a POSIX shell.
fn quoted(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// The candidates each case got, from output where each case's answers
/// follow a line `=== N`.
fn answers(output: &str, n: usize) -> Vec<BTreeSet<String>> {
    let mut got = vec![BTreeSet::new(); n];
    let mut at: Option<usize> = None;
    for line in output.lines() {
        if let Some(i) = line.strip_prefix("=== ") {
            at = i.trim().parse().ok();
            continue;
        }
        if let Some(i) = at {
            let word = line.split('\t').next().unwrap_or_default().trim();
            // zsh may give `--format=` forms, or a trailing space.
            if !word.is_empty() {
                got[i].insert(word.trim_end_matches('=').to_string());
            }
        }
    }
    got
}

fn check(shell: &str, cases: &[Case], got: &[BTreeSet<String>]) {
    let mut failures = Vec::new();
    for (case, got) in cases.iter().zip(got) {
        let missing: Vec<&String> = case.expect.difference(got).collect();
        if !missing.is_empty() {
            failures.push(format!("{:?} lacks {missing:?} (got {got:?})", case.words));
        }
    }
    assert!(
        failures.is_empty(),
        "{shell}: {} of {} cases fail:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn bash_completes_every_command_option_and_value() {
    if !installed("bash") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let file = script("bash", tmp.path());
    let cases = all_cases();
    let mut text = format!(
        "source {}\nfn=$(complete -p lisa-context | sed -n 's/.*-F \\([^ ]*\\).*/\\1/p')\n\
         [ -n \"$fn\" ] || {{ echo 'no completion registered' >&2; exit 3; }}\n",
        quoted(file.to_str().unwrap())
    );
    text.push_str(
        "run() {\n  COMP_WORDS=(\"$@\"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))\n  \
         COMP_LINE=\"$*\"; COMP_POINT=${#COMP_LINE}; COMPREPLY=()\n  \
         \"$fn\" lisa-context \"${COMP_WORDS[COMP_CWORD]}\" \"${COMP_WORDS[COMP_CWORD-1]}\"\n  \
         printf '%s\\n' \"${COMPREPLY[@]}\"\n}\n",
    );
    for (i, case) in cases.iter().enumerate() {
        let words: Vec<String> = case.words.iter().map(|w| quoted(w)).collect();
        text.push_str(&format!("echo '=== {i}'\nrun {}\n", words.join(" ")));
    }
    let out = Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &text])
        .current_dir(tmp.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let got = answers(&String::from_utf8_lossy(&out.stdout), cases.len());
    check("bash", &cases, &got);
}

#[test]
fn fish_completes_every_command_option_and_value() {
    if !installed("fish") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let file = script("fish", tmp.path());
    let cases = all_cases();
    let mut text = format!("source {}\n", quoted(file.to_str().unwrap()));
    for (i, case) in cases.iter().enumerate() {
        text.push_str(&format!(
            "echo '=== {i}'\ncomplete -C {}\n",
            quoted(&case.words.join(" "))
        ));
    }
    let out = Command::new("fish")
        .args(["--no-config", "-c", &text])
        .current_dir(tmp.path())
        .env("HOME", tmp.path())
        .env("XDG_CONFIG_HOME", tmp.path())
        .env("XDG_DATA_HOME", tmp.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let got = answers(&String::from_utf8_lossy(&out.stdout), cases.len());
    check("fish", &cases, &got);
}

/// zsh's completion system, run in a pseudo-terminal (one interactive
/// zsh for every case): each case's line is typed, then a TAB bound to a
/// widget that completes and says when it is done; `compadd`, wrapped,
/// prints `CAND:` and each match it is given; `^U` clears the line for the
/// next case. Every read waits for a marker (no sleep); the whole run is
/// bounded by `timeout`.
const ZSH_DRIVER: &str = r#"
zmodload zsh/zpty || exit 4
script=$1; shift
zpty z zsh -f -i
zpty -w z "PROMPT=''; RPROMPT=''"
zpty -w z "autoload -Uz compinit; compinit -u -D"
zpty -w z "source ${(q)script}"
zpty -w z 'compadd() { local -a __hits; builtin compadd -O __hits "$@"; local h; for h in $__hits; do print -r -- "CAND:$h"; done; builtin compadd "$@" }'
zpty -w z 'completed() { zle complete-word; print -r -- COMPLETION-END }; zle -N completed'
zpty -w z "bindkey '^I' completed; bindkey '^U' kill-whole-line; zstyle ':completion:*' menu no; LISTMAX=100000"
zpty -w z 'print -r -- READY'
zpty -r z out '*READY*READY*'
for line in "$@"; do
  print -r -- "=== ${line%%:*}"
  zpty -w -n z $'\x15'"${line#*:}"$'\t'
  zpty -r z out '*COMPLETION-END*'
  print -r -- "${out//$'\r'/}"
done
zpty -d z
"#;

#[test]
fn zsh_completes_every_command_option_and_value() {
    if !installed("zsh") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let file = script("zsh", tmp.path());
    let cases = all_cases();
    let mut args = vec![
        "-f".to_string(),
        "-c".to_string(),
        ZSH_DRIVER.to_string(),
        "driver".to_string(),
        file.to_str().unwrap().to_string(),
    ];
    for (i, case) in cases.iter().enumerate() {
        args.push(format!("{i}:{}", case.words.join(" ")));
    }
    let out = Command::new("timeout")
        .arg("300")
        .arg("zsh")
        .args(&args)
        .current_dir(tmp.path())
        .env("HOME", tmp.path())
        .env("TERM", "dumb")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    // Keep each case's marker and what follows a `CAND:` (the echo of the
    // typed line may precede it on its line).
    let text: String = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            if l.starts_with("=== ") {
                Some(l.to_string())
            } else {
                l.split_once("CAND:").map(|(_, c)| c.to_string())
            }
        })
        .map(|l| l + "\n")
        .collect();
    let got = answers(&text, cases.len());
    check("zsh", &cases, &got);
}
