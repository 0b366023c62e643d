//! `snapshot`: the project-context section for a cwd, as text or JSON.

use crate::cli::args::{Cli, Format, Place};
use crate::cli::context::{encode, leave, narrate, open, write_out};

/// Prints the snapshot's prompt (text) or the whole snapshot (JSON).
pub(in crate::cli) fn run(cli: &Cli, place: &Place, format: Format) -> miette::Result<u8> {
    let (loader, at) = open(cli, place)?;
    let snap = loader.snapshot_in(&at.cwd, at.root())?;
    narrate(cli, &loader, &snap);
    let written = match format {
        Format::Text => write_out(snap.prompt.as_bytes()),
        Format::Json => write_out(encode(&*snap, "the snapshot")?.as_bytes()),
    };
    leave(loader);
    written
}
