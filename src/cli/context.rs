//! What every command starts from, written once: the loader the command
//! line asks for (`--home`, `--policy`, `--no-home-policy`), the place a
//! command is about (its cwd and root), the `--verbose` narration, and the
//! answer written to stdout. Errors go back to [`super::run`], which renders
//! each one the same way.

use std::io::Write;
use std::path::{Path, PathBuf};

use lisa_context::policy::Policy;
use lisa_context::{Loader, LoaderBuilder};

use super::args::{Cli, Place, shipped_name};
use super::{explain, json};

/// Exit status: success.
pub(super) const OK: u8 = 0;
/// Exit status: the command failed (invalid policy, unusable cwd, no such skill...).
pub(super) const FAILED: u8 = 1;
/// Exit status of `survey` when it could not survey (a tool error, told
/// apart from findings that fail the gate, which exit [`FAILED`]).
pub(super) const SURVEY_ERROR: u8 = 2;

/// `p`, absolute: relative to the current directory.
pub(super) fn absolute(p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|d| d.join(p))
            .unwrap_or_else(|_| p.to_path_buf())
    }
}

/// The library's bootstrap, fed from the command line: `--home` (else the
/// policy's candidates, `$LISA_HOME` first), the home policy, `--policy`.
pub(super) fn builder(cli: &Cli) -> LoaderBuilder {
    layers(
        cli.home.as_deref(),
        cli.policy.as_deref(),
        cli.no_home_policy,
    )
}

/// The builder for a home (`None`: the policy's candidates), `--policy`
/// and `--no-home-policy`.
pub(super) fn layers(
    home: Option<&Path>,
    policy: Option<&Path>,
    no_home_policy: bool,
) -> LoaderBuilder {
    let mut builder = Loader::builder();
    if let Some(home) = home {
        builder = builder.home(absolute(home));
    }
    match policy.and_then(shipped_name) {
        Some(name) => builder = builder.shipped_policy(name),
        None => {
            if let Some(file) = policy {
                builder = builder.policy_file(absolute(file));
            }
        }
    }
    if no_home_policy {
        builder = builder.home_policy(false);
    }
    builder
}

/// The effective policy: built-in, then the home layer, then `--policy`.
pub(super) fn load_policy(cli: &Cli) -> miette::Result<Policy> {
    Ok(builder(cli).resolve()?.0)
}

/// A one-shot command's loader: it builds once, so it keeps no parsed
/// frontmatter in memory (the home's memo file serves the next run) and
/// one snapshot.
pub(super) fn loader(cli: &Cli) -> miette::Result<Loader> {
    Ok(builder(cli).parse_cache(0).capacity(1).build()?)
}

/// The place a command is about: `--cwd` (default: the current directory)
/// and `--root`, both absolute.
pub(super) struct At {
    /// The session's working directory.
    pub(super) cwd: PathBuf,
    /// The repository root, when `--root` names it.
    pub(super) root: Option<PathBuf>,
}

impl At {
    /// The place `place` names.
    pub(super) fn of(place: &Place) -> miette::Result<At> {
        let cwd = match &place.cwd {
            Some(c) => absolute(c),
            None => std::env::current_dir()
                .map_err(|e| miette::miette!("cannot determine the current directory: {e}"))?,
        };
        Ok(At {
            cwd,
            root: place.root.as_deref().map(absolute),
        })
    }

    /// The root, borrowed.
    pub(super) fn root(&self) -> Option<&Path> {
        self.root.as_deref()
    }
}

/// The preamble of a command about a place: its loader, then the place (an
/// invalid policy is reported before an unusable cwd).
pub(super) fn open(cli: &Cli, place: &Place) -> miette::Result<(Loader, At)> {
    let loader = loader(cli)?;
    let at = At::of(place)?;
    Ok((loader, at))
}

/// Lets a one-shot command's loader go without freeing it: the process ends
/// right after, and taking its caches apart piece by piece would cost more
/// than a tenth of a snapshot's own work. (Nothing in a loader's drop has an
/// effect outside the process; its descriptors close at exit.)
pub(super) fn leave(loader: Loader) {
    std::mem::forget(loader);
}

/// With `--verbose`, what the loader decided, on stderr: the policy layers,
/// the roots, and every candidate with what happened to it (the `explain`
/// table).
pub(super) fn narrate(cli: &Cli, loader: &Loader, snap: &lisa_context::Snapshot) {
    if !cli.verbose {
        return;
    }
    let mut text = String::from("lisa-context: policy layers, lowest first:\n");
    let layers = loader
        .policy()
        .map(|p| p.layers().to_vec())
        .unwrap_or_default();
    for (layer, name) in &layers {
        text.push_str(&format!(
            "  {}: {}\n",
            layer.as_str(),
            lisa_context::snapshot::terminal_safe(name)
        ));
    }
    let home = loader.home().map_or_else(
        || "none".to_string(),
        |h| lisa_context::snapshot::terminal_safe(&h.to_string_lossy()).into_owned(),
    );
    text.push_str(&format!("lisa-context: home root: {home}\n"));
    text.push_str(&explain::table(snap, loader.policy().ok().as_deref()));
    let _ = std::io::stderr().write_all(text.as_bytes());
}

/// `value` as the command line prints JSON; `what` names it in the error.
pub(super) fn encode(value: &impl serde::Serialize, what: &str) -> miette::Result<String> {
    json::pretty(value).map_err(|e| miette::miette!("cannot encode {what}: {e}"))
}

/// Writes the answer to stdout: [`OK`], or an error when it cannot be
/// written (a closed pipe, `| head`, is not one).
pub(super) fn write_out(bytes: &[u8]) -> miette::Result<u8> {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Ok(()) => Ok(OK),
        // A closed pipe (`| head`) is not an error worth a report.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(OK),
        Err(e) => Err(miette::miette!("cannot write the output: {e}")),
    }
}
