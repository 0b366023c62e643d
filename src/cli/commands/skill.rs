//! `skill list` and `skill show`.

use crate::cli::args::{Cli, Format, SkillCommand};
use crate::cli::context::{encode, open, write_out};
use crate::cli::explain;

/// Runs a `skill` subcommand.
pub(in crate::cli) fn run(cli: &Cli, command: &SkillCommand) -> miette::Result<u8> {
    match command {
        SkillCommand::List { place, format } => {
            let (loader, at) = open(cli, place)?;
            let snap = loader.snapshot_in(&at.cwd, at.root())?;
            let list = lisa_context::protocol::SkillList::of(&snap);
            let text = match format {
                Format::Text => explain::skill_table(&snap, &list),
                Format::Json => encode(&list, "the skill list")?,
            };
            write_out(text.as_bytes())
        }
        SkillCommand::Show { name, place } => {
            let (loader, at) = open(cli, place)?;
            let skill = loader.skill_in(&at.cwd, at.root(), name)?;
            write_out(skill.content.as_bytes())
        }
    }
}
