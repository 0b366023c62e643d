//! Completion that knows the values: `COMPLETE=bash lisa-context` (zsh,
//! fish, elvish, powershell alike) prints a registration script whose
//! completions come from the program itself at each TAB, through
//! clap_complete's env-based engine (its `unstable-dynamic` feature, pinned
//! to one version): `--policy` offers the shipped policy names and files,
//! `skill show` the skills available from the current directory, `rule
//! show` its rules.

use std::ffi::OsStr;

use clap_complete::engine::{CompletionCandidate, PathCompleter, ValueCompleter};

/// `--policy`: the shipped names, then files.
pub fn policy(current: &OsStr) -> Vec<CompletionCandidate> {
    let typed = current.to_string_lossy();
    let mut out: Vec<CompletionCandidate> = lisa_context::policy::SHIPPED_NAMES
        .iter()
        .filter(|n| n.starts_with(typed.as_ref()))
        .map(|n| CompletionCandidate::new(*n).help(Some("shipped policy".into())))
        .collect();
    out.extend(PathCompleter::file().complete(current));
    out
}

/// The snapshot of the current directory, with the home and policy the
/// environment gives (the values typed for `--home` or `--cwd` are not
/// known while completing).
fn snapshot_here() -> Option<std::sync::Arc<lisa_context::Snapshot>> {
    let cwd = std::env::current_dir().ok()?;
    let loader = lisa_context::Loader::builder().capacity(1).build().ok()?;
    loader.snapshot(&cwd).ok()
}

/// One completion: `name`, with `description` on one line, cut, as help.
fn candidate(name: &str, description: &str) -> CompletionCandidate {
    let help = description.split_whitespace().collect::<Vec<_>>().join(" ");
    let help: String = help.chars().take(60).collect();
    CompletionCandidate::new(name.to_string()).help(Some(help.into()))
}

/// `skill show NAME`: the skills that win their names from the current
/// directory.
pub fn skill(current: &OsStr) -> Vec<CompletionCandidate> {
    let typed = current.to_string_lossy();
    let Some(snap) = snapshot_here() else {
        return Vec::new();
    };
    snap.skills
        .iter()
        .filter(|s| s.name.starts_with(typed.as_ref()))
        .map(|s| candidate(&s.name, &s.description))
        .collect()
}

/// `rule show NAME`: the rules of the current directory whose name starts
/// with what was typed, each name once.
pub fn rule(current: &OsStr) -> Vec<CompletionCandidate> {
    let typed = current.to_string_lossy();
    let Some(snap) = snapshot_here() else {
        return Vec::new();
    };
    let mut seen = std::collections::BTreeSet::new();
    snap.rules
        .iter()
        .filter(|r| r.name.starts_with(typed.as_ref()) && seen.insert(r.name.clone()))
        .map(|r| candidate(&r.name, r.description.as_deref().unwrap_or_default()))
        .collect()
}
