//! `explain`: every candidate considered, what happened to it, and why.

use crate::cli::args::{Cli, Format, Place};
use crate::cli::context::{encode, open, write_out};
use crate::cli::explain;

/// Prints the table (text) or the `Explanation` (JSON).
pub(in crate::cli) fn run(cli: &Cli, place: &Place, format: Format) -> miette::Result<u8> {
    let (loader, at) = open(cli, place)?;
    let snap = loader.snapshot_in(&at.cwd, at.root())?;
    let policy = loader.policy().ok();
    let text = match format {
        Format::Text => explain::table(&snap, policy.as_deref()),
        Format::Json => encode(
            &explain::explanation(&snap, policy.as_deref()),
            "the explanation",
        )?,
    };
    write_out(text.as_bytes())
}
