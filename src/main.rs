//! The `lisa-context` command: snapshots, explanations, fingerprints, skills,
//! policy checks, and a JSON-lines server. Errors are rendered with miette.

mod cli;

use std::process::ExitCode;

fn main() -> ExitCode {
    cli::run()
}
