//! `man`: the manual page.

use clap::CommandFactory as _;

use crate::cli::args::Cli;
use crate::cli::context::write_out;
use crate::cli::man;

/// Prints the manual page (roff).
pub(in crate::cli) fn run() -> miette::Result<u8> {
    let text = man::page(Cli::command())
        .map_err(|e| miette::miette!("cannot render the manual page: {e}"))?;
    write_out(text.as_bytes())
}
