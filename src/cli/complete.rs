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

/// `skill show NAME`: the skills that win their names from the current
/// directory, with the home and policy the environment gives (the values
/// typed for `--home` or `--cwd` are not known here).
pub fn skill(current: &OsStr) -> Vec<CompletionCandidate> {
    let typed = current.to_string_lossy();
    let Ok(cwd) = std::env::current_dir() else {
        return Vec::new();
    };
    let Ok(loader) = lisa_context::Loader::builder().capacity(1).build() else {
        return Vec::new();
    };
    let Ok(snap) = loader.snapshot(&cwd) else {
        return Vec::new();
    };
    snap.skills
        .iter()
        .filter(|s| s.name.starts_with(typed.as_ref()))
        .map(|s| {
            let help = s
                .description
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            let help: String = help.chars().take(60).collect();
            CompletionCandidate::new(s.name.clone()).help(Some(help.into()))
        })
        .collect()
}

/// Completes a rule name: the rules of the snapshot for the current
/// directory whose name starts with what was typed, with the description
/// (cut) as help.
pub fn rule(current: &OsStr) -> Vec<CompletionCandidate> {
    let typed = current.to_string_lossy();
    let Ok(cwd) = std::env::current_dir() else {
        return Vec::new();
    };
    let Ok(loader) = lisa_context::Loader::builder().capacity(1).build() else {
        return Vec::new();
    };
    let Ok(snap) = loader.snapshot(&cwd) else {
        return Vec::new();
    };
    let mut names: Vec<CompletionCandidate> = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for r in snap
        .rules
        .iter()
        .filter(|r| r.name.starts_with(typed.as_ref()))
    {
        if !seen.insert(r.name.clone()) {
            continue;
        }
        let help = r
            .description
            .as_deref()
            .unwrap_or_default()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        let help: String = help.chars().take(60).collect();
        names.push(CompletionCandidate::new(r.name.clone()).help(Some(help.into())));
    }
    names
}
