//! `completions`: a shell's completion script.

use clap::CommandFactory as _;

use crate::cli::args::Cli;
use crate::cli::context::write_out;

/// The program's name, as the scripts register it.
const BIN: &str = "lisa-context";

/// Prints the completion script for `shell`.
pub(in crate::cli) fn run(shell: clap_complete::Shell) -> miette::Result<u8> {
    let mut text = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), BIN, &mut text);
    let text = match shell {
        clap_complete::Shell::Bash => bash_fixed(&String::from_utf8_lossy(&text)).into_bytes(),
        clap_complete::Shell::Fish => fish_fixed(&String::from_utf8_lossy(&text)).into_bytes(),
        _ => text,
    };
    write_out(&text)
}

/// clap_complete's bash script, with its subcommands reachable: it names
/// the states of a subcommand `lisa__context__subcmd__survey` where it
/// enters them but `lisa__subcmd__context__subcmd__survey` where it
/// completes them (the `-` of a hyphenated program name replaced by its
/// subcommand separator there), so that nothing past the first word
/// completed. The second spelling is put back to the first.
fn bash_fixed(script: &str) -> String {
    let entered = BIN.replace('-', "__");
    let completed = BIN.replace('-', "__subcmd__");
    script.replace(&format!("{completed}__"), &format!("{entered}__"))
}

/// clap_complete's fish script, completing what it leaves out: the value
/// of a global option typed before any command (`--policy <TAB>`: its
/// test of "no command yet" failed, the option's value being missing), and
/// the values of positional arguments (`completions <TAB>`).
fn fish_fixed(script: &str) -> String {
    let prefix = BIN.replace('-', "_");
    let mut out = script.replace(
        &format!(
            "argparse -s (__fish_{prefix}_global_optspecs) -- $cmd 2>/dev/null\n    or return\n"
        ),
        &format!(
            "argparse -s (__fish_{prefix}_global_optspecs) -- $cmd 2>/dev/null\n    \
             # An option still waiting for its value: no command yet.\n    or return 0\n"
        ),
    );
    let mut lines = Vec::new();
    positional_values(&Cli::command(), &mut Vec::new(), &mut lines);
    for (path, values) in lines {
        let (first, rest) = path.split_first().expect("a subcommand");
        let mut condition = format!("__fish_{prefix}_using_subcommand {first}");
        for word in rest {
            condition.push_str(&format!("; and __fish_seen_subcommand_from {word}"));
        }
        out.push_str(&format!(
            "complete -c {BIN} -n \"{condition}\" -f -a \"{}\"\n",
            values.join(" ")
        ));
    }
    out
}

/// Each subcommand's path (below the program) whose positional arguments
/// have possible values, with those values.
fn positional_values(
    cmd: &clap::Command,
    path: &mut Vec<String>,
    out: &mut Vec<(Vec<String>, Vec<String>)>,
) {
    if !path.is_empty() {
        let values: Vec<String> = cmd
            .get_positionals()
            .flat_map(|a| a.get_possible_values())
            .filter(|v| !v.is_hide_set())
            .map(|v| v.get_name().to_string())
            .collect();
        if !values.is_empty() {
            out.push((path.clone(), values));
        }
    }
    for sub in cmd.get_subcommands() {
        path.push(sub.get_name().to_string());
        positional_values(sub, path, out);
        path.pop();
    }
}
