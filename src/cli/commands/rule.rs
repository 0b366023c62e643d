//! `rule show`: a rule's body, read as a chain file is read.

use crate::cli::args::{Cli, Format, RuleCommand};
use crate::cli::context::{encode, open, write_out};

/// Runs a `rule` subcommand.
pub(in crate::cli) fn run(cli: &Cli, command: &RuleCommand) -> miette::Result<u8> {
    match command {
        RuleCommand::Show {
            name,
            place,
            format,
        } => {
            let (loader, at) = open(cli, place)?;
            let rule = loader.rule_in(&at.cwd, at.root(), name)?;
            let text = match format {
                Format::Text => {
                    let mut body = rule.content;
                    body.push('\n');
                    body
                }
                Format::Json => encode(&rule, "the rule")?,
            };
            write_out(text.as_bytes())
        }
    }
}
