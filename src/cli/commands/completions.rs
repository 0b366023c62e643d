//! `completions`: a shell's completion script.

use clap::CommandFactory as _;

use crate::cli::args::Cli;
use crate::cli::context::write_out;

/// Prints the completion script for `shell`.
pub(in crate::cli) fn run(shell: clap_complete::Shell) -> miette::Result<u8> {
    let mut text = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "lisa-context", &mut text);
    write_out(&text)
}
