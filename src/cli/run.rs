//! The command's entry: parse the arguments, run the command, render an
//! error the one way every command's errors are rendered.

use std::process::ExitCode;

use clap::{CommandFactory as _, FromArgMatches as _};

use super::args::{Cli, Command};
use super::context::{FAILED, SURVEY_ERROR};
use super::{commands, report};

/// Parses the arguments and runs the command.
pub(crate) fn run() -> ExitCode {
    // `COMPLETE=SHELL lisa-context ...`: a completion request, answered and
    // exited here (see `complete`).
    clap_complete::CompleteEnv::with_factory(Cli::command).complete();
    let cli = parse();
    let color = cli.color;
    // `survey` is a gate: its findings exit 1, its own failures 2.
    let failed = if matches!(cli.command, Command::Survey { .. }) {
        SURVEY_ERROR
    } else {
        FAILED
    };
    let code = match dispatch(&cli) {
        Ok(code) => ExitCode::from(code),
        Err(report) => {
            report::emit(report.as_ref(), color, bypass_note(&report));
            ExitCode::from(failed)
        }
    };
    emit_counts();
    code
}

/// The arguments, parsed by a command whose help and usage errors follow
/// `--color` as the diagnostics do (clap reads it only after parsing).
fn parse() -> Cli {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let choice = match color_asked(&args) {
        Some(report::Color::Always) => clap::ColorChoice::Always,
        Some(report::Color::Never) => clap::ColorChoice::Never,
        _ => clap::ColorChoice::Auto,
    };
    let matches = Cli::command().color(choice).get_matches_from(&args);
    Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
}

/// The last `--color WHEN` (or `--color=WHEN`) before `--`, if any.
fn color_asked(args: &[std::ffi::OsString]) -> Option<report::Color> {
    use clap::ValueEnum as _;
    let mut asked = None;
    let mut words = args.iter().skip(1).map(|a| a.to_str());
    while let Some(word) = words.next() {
        let value = match word {
            Some("--") => break,
            Some("--color") => words.next().flatten(),
            Some(w) => w.strip_prefix("--color="),
            None => None,
        };
        if let Some(c) = value.and_then(|v| report::Color::from_str(v, false).ok()) {
            asked = Some(c);
        }
    }
    asked
}

/// Prints the work counters as one line of JSON on stderr when
/// `LISA_CONTEXT_COUNTS` is set: how the black-box tests count parses,
/// compilations and writes (and how a user can see what a run cost).
fn emit_counts() {
    use std::io::Write as _;
    if std::env::var_os("LISA_CONTEXT_COUNTS").is_none() {
        return;
    }
    let counts: serde_json::Map<String, serde_json::Value> = lisa_context::internals::counts()
        .into_iter()
        .map(|(name, n)| (name.to_string(), n.into()))
        .collect();
    let _ = writeln!(
        std::io::stderr(),
        "lisa-context counts: {}",
        serde_json::Value::Object(counts)
    );
}

/// For a broken home policy, how to run once without it.
fn bypass_note(report: &miette::Report) -> Option<&'static str> {
    let invalid = match report.downcast_ref::<lisa_context::BootstrapError>() {
        Some(lisa_context::BootstrapError::Policy(lisa_context::policy::PolicyError::Invalid(
            i,
        ))) => i,
        _ => match report.downcast_ref::<lisa_context::policy::PolicyError>() {
            Some(lisa_context::policy::PolicyError::Invalid(i)) => i,
            _ => return None,
        },
    };
    invalid
        .name
        .ends_with(lisa_context::policy::HOME_POLICY_FILE)
        .then_some("this is the home's policy; to run once without it, add --no-home-policy")
}

/// Runs the command the arguments name.
fn dispatch(cli: &Cli) -> miette::Result<u8> {
    match &cli.command {
        Command::Snapshot { place, format } => commands::snapshot::run(cli, place, *format),
        Command::Access {
            path,
            place,
            format,
        } => commands::access::run(cli, path, place, *format),
        Command::Explain { place, format } => commands::explain::run(cli, place, *format),
        Command::Fingerprint { place } => commands::fingerprint::run(cli, place),
        Command::Policy { command } => commands::policy::run(cli, command),
        Command::Skill { command } => commands::skill::run(cli, command),
        Command::Rule { command } => commands::rule::run(cli, command),
        Command::Trust { command } => commands::trust::run(cli, command),
        Command::Survey {
            place,
            policies,
            with_home_policy,
            format,
            scope,
            with_home,
            max_folders,
            deny,
            allow,
            baseline,
            write_baseline,
        } => commands::survey::run(
            cli,
            place,
            policies,
            *with_home_policy,
            *format,
            &commands::survey::Gate {
                scope: *scope,
                with_home: *with_home,
                max_folders: *max_folders,
                deny,
                allow,
                baseline: baseline.as_deref(),
                write_baseline: write_baseline.as_deref(),
            },
        ),
        Command::Completions { shell } => commands::completions::run(*shell),
        Command::Man => commands::man::run(),
        Command::Version => commands::version::run(cli),
        Command::Mcp {
            cwd,
            root,
            instructions,
        } => commands::mcp::run(cli, cwd.as_deref(), root.as_deref(), *instructions),
        Command::Serve {
            jobs,
            homes_under,
            homes_max,
            cache_bytes,
            cache_entries,
            handle_budget,
        } => commands::serve::run(
            cli,
            *jobs,
            homes_under.as_deref(),
            *homes_max,
            *cache_bytes,
            *cache_entries,
            *handle_budget,
        ),
    }
}
