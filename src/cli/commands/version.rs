//! `version`: what `--version` prints, as cargo and jj answer `version`;
//! with `--verbose`, the versions of the formats this build reads.

use crate::cli::args::Cli;
use crate::cli::context::write_out;

/// The program's name and version, as `--version` prints them.
pub(in crate::cli) fn line() -> String {
    format!("{} {}\n", env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION"))
}

/// Prints the version; with `--verbose`, one `key: value` line more for
/// each format this build understands.
pub(in crate::cli) fn run(cli: &Cli) -> miette::Result<u8> {
    let mut text = line();
    if cli.verbose {
        text.push_str(&format!(
            "policy version: {}\nprotocol version: {}\nshipped policies: {}\n",
            lisa_context::policy::SUPPORTED_VERSION,
            lisa_context::protocol::PROTOCOL_VERSION,
            lisa_context::policy::SHIPPED_NAMES.join(", "),
        ));
    }
    write_out(text.as_bytes())
}
