//! `trust status`, `trust diff`, `trust approve` and `trust revoke`.

use crate::cli::args::{Cli, Format, TrustCommand};
use crate::cli::context::{encode, open, write_out};
use crate::cli::trust;

/// Runs a `trust` subcommand.
pub(in crate::cli) fn run(cli: &Cli, command: &TrustCommand) -> miette::Result<u8> {
    let place = match command {
        TrustCommand::Status { place, .. }
        | TrustCommand::Diff { place, .. }
        | TrustCommand::Approve { place, .. }
        | TrustCommand::Revoke { place, .. } => place,
    };
    let (loader, at) = open(cli, place)?;
    let (cwd, root) = (&at.cwd, at.root());
    let text = match command {
        TrustCommand::Status {
            format: Format::Json,
            ..
        } => encode(&loader.trust_status(cwd, root)?, "the trust status")?,
        TrustCommand::Status { .. } => {
            let open = loader
                .policy()
                .is_ok_and(|p| p.trust.project == lisa_context::policy::ProjectTrust::Open);
            trust::status_text(&loader.trust_status(cwd, root)?, open)
        }
        TrustCommand::Diff {
            format: Format::Json,
            ..
        } => encode(
            &lisa_context::protocol::TrustDiff::of(&loader.trust_status(cwd, root)?),
            "the trust diff",
        )?,
        TrustCommand::Diff { .. } => trust::diff_text(&loader.trust_status(cwd, root)?),
        TrustCommand::Approve {
            all, expect, paths, ..
        } => trust::approve(&loader, cwd, root, *all, expect, paths)?,
        TrustCommand::Revoke { repo, paths, .. } => {
            trust::revoke(&loader, cwd, root, *repo, paths)?
        }
    };
    write_out(text.as_bytes())
}
