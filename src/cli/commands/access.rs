//! `access`: what touching a path adds to a session in the cwd.

use std::io::Write as _;
use std::path::Path;

use lisa_context::policy::{Policy, PolicySource};

use crate::cli::args::{Cli, Format, Place};
use crate::cli::context::{encode, open, write_out};

/// Prints what touching `path` loads (text, or the `Access` as JSON), with
/// a note on stderr when the policy loads nothing on access or a file was
/// left out for want of room.
pub(in crate::cli) fn run(
    cli: &Cli,
    path: &Path,
    place: &Place,
    format: Format,
) -> miette::Result<u8> {
    let (loader, at) = open(cli, place)?;
    let mut session = lisa_context::Session::new(at.cwd, at.root);
    let path = if path.is_absolute() {
        path.to_path_buf()
    } else {
        session.cwd().join(path)
    };
    let access = loader.access(&mut session, &path)?;
    // Nothing printed and exit 0 would read as "nothing below here":
    // say that the policy loads nothing on access at all.
    if !cli.quiet && loader.policy().is_ok_and(|p| !p.instructions.on_access) {
        // The shipped policies that do, from their own declarations.
        let loading: Vec<&str> = lisa_context::policy::SHIPPED_NAMES
            .iter()
            .copied()
            .filter(|name| {
                PolicySource::shipped(name)
                    .and_then(|s| Policy::from_sources(&[s]).ok())
                    .is_some_and(|p| p.instructions.on_access)
            })
            .collect();
        let _ = writeln!(
            std::io::stderr(),
            "note: this policy loads nothing on access (instructions.on-access is \
             false); a policy that sets it does (shipped: {})",
            loading.join(", ")
        );
    }
    // Files left out for want of room: say why, as the JSON's
    // `skipped` does (a budget of 0 lets no project file in).
    let short = |reason: lisa_context::snapshot::Reason| {
        access.skipped.iter().filter(|s| s.reason == reason).count()
    };
    let (budget, share) = (
        short(lisa_context::snapshot::Reason::BudgetExhausted),
        short(lisa_context::snapshot::Reason::PromptShare),
    );
    if budget > 0 && !cli.quiet {
        let _ = writeln!(
            std::io::stderr(),
            "note: {budget} file(s) not loaded: the instruction budget has no room \
             left (instructions.budget-bytes, less what the session's context used, \
             within instructions.access-budget-bytes; 0 lets no project file in)"
        );
    }
    if share > 0 && !cli.quiet {
        let _ = writeln!(
            std::io::stderr(),
            "note: {share} file(s) not loaded: the repository's share of the prompt \
             is full (instructions.project-prompt-bytes)"
        );
    }
    match format {
        Format::Text => write_out(access.prompt.as_bytes()),
        Format::Json => write_out(encode(&access, "the access")?.as_bytes()),
    }
}
