//! `fingerprint`: the snapshot's fingerprint alone.

use crate::cli::args::{Cli, Place};
use crate::cli::context::{narrate, open, write_out};

/// Prints the fingerprint (with `--verbose`, narrates the snapshot it
/// stands for).
pub(in crate::cli) fn run(cli: &Cli, place: &Place) -> miette::Result<u8> {
    let (loader, at) = open(cli, place)?;
    let fp = loader.fingerprint_in(&at.cwd, at.root())?;
    if cli.verbose {
        narrate(cli, &loader, &*loader.snapshot_in(&at.cwd, at.root())?);
    }
    write_out(format!("{fp}\n").as_bytes())
}
