//! `policy check` and `policy show`.

use std::path::Path;

use lisa_context::policy::{Layer, Policy, PolicySource};

use crate::cli::args::{Cli, PolicyCommand};
use crate::cli::context::{absolute, builder, load_policy, write_out};
use crate::cli::report;

/// Runs a `policy` subcommand.
pub(in crate::cli) fn run(cli: &Cli, command: &PolicyCommand) -> miette::Result<u8> {
    match command {
        PolicyCommand::Check { file: Some(file) } => check_file(cli, file),
        PolicyCommand::Check { file: None } => {
            let policy = load_policy(cli)?;
            report::warn_policy(&policy, cli.color, cli.quiet);
            if cli.quiet {
                return Ok(crate::cli::context::OK);
            }
            let names: Vec<String> = policy
                .layers()
                .iter()
                .map(|(_, n)| lisa_context::snapshot::terminal_safe(n).into_owned())
                .collect();
            write_out(
                format!(
                    "ok: the effective policy is valid ({})\n",
                    names.join(" + ")
                )
                .as_bytes(),
            )
        }
        PolicyCommand::Show => {
            let policy = load_policy(cli)?;
            report::warn_policy(&policy, cli.color, cli.quiet);
            write_out(policy.to_annotated_toml().as_bytes())
        }
    }
}

/// `policy check FILE`: the file laid over the built-in policy, as the
/// layer it would be read as.
fn check_file(cli: &Cli, file: &Path) -> miette::Result<u8> {
    if file == Path::new("-") {
        return check_stdin(cli);
    }
    let file = absolute(file);
    let shown = lisa_context::snapshot::terminal_safe(&file.to_string_lossy()).into_owned();
    // A home's policy file (by its name, or because it sits in the
    // home) is checked as the home layer, with that layer's own
    // rule; any other file as a --policy file.
    let home = builder(cli).resolve().ok().and_then(|(_, home)| home);
    let named_as_home = file
        .file_name()
        .is_some_and(|n| n == lisa_context::policy::HOME_POLICY_FILE);
    let in_home = home.as_deref().is_some_and(|h| file.parent() == Some(h));
    let (layer, role) = if named_as_home || in_home {
        (Layer::Home, "the home's policy (over the built-in one)")
    } else {
        (
            Layer::CommandLine,
            "a --policy file (over the built-in and home policies)",
        )
    };
    let source = PolicySource::read(layer, &file, true)?
        .ok_or_else(|| miette::miette!("{shown} does not exist"))?;
    let policy = Policy::from_sources(&[PolicySource::builtin(), source])?;
    report::warn_policy(&policy, cli.color, cli.quiet);
    let home_key = lisa_context::policy::keys::ROOTS.home;
    if layer == Layer::Home
        && policy
            .definition(home_key)
            .is_some_and(|d| d.layer == Layer::Home)
    {
        let invalid = policy.invalid_value(
            home_key,
            "the home's own policy cannot set `roots.home`: it was read from the home \
             those candidates would replace (set it in a --policy file instead)",
        );
        return Err(lisa_context::policy::PolicyError::Invalid(invalid).into());
    }
    if cli.quiet {
        return Ok(crate::cli::context::OK);
    }
    write_out(format!("ok: {shown} is a valid policy, checked as {role}\n").as_bytes())
}

/// `policy check -`: the policy on stdin, laid over the built-in policy as
/// a --policy file is (it has no place, so it is not the home's).
fn check_stdin(cli: &Cli) -> miette::Result<u8> {
    use std::io::Read as _;
    // At most one byte past the largest policy file read from disk: past
    // it the text is refused as the file would be.
    let cap = lisa_context::policy::MAX_POLICY_BYTES;
    let mut bytes = Vec::new();
    std::io::stdin()
        .take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| miette::miette!("cannot read the policy from stdin: {e}"))?;
    if bytes.len() as u64 > cap {
        return Err(miette::miette!(
            "the policy on stdin is larger than {cap} bytes, the most a policy file may hold"
        ));
    }
    let text = String::from_utf8(bytes)
        .map_err(|_| miette::miette!("the policy on stdin is not UTF-8"))?;
    let source = PolicySource::from_text(Layer::CommandLine, "<stdin>", text);
    let policy = Policy::from_sources(&[PolicySource::builtin(), source])?;
    report::warn_policy(&policy, cli.color, cli.quiet);
    if cli.quiet {
        return Ok(crate::cli::context::OK);
    }
    write_out(
        b"ok: <stdin> is a valid policy, checked as a --policy file (over the built-in and home policies)\n",
    )
}
