//! Embedding lisa-context: one loader, many sessions, a cheap check per turn.
//!
//! Run it with `cargo run --example embed -- <cwd>`.
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "examples and benches build their demo trees on the real disk"
)]

use std::path::PathBuf;

use lisa_context::Loader;
use lisa_context::policy::Policy;

fn main() -> miette::Result<()> {
    let cwd = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("examples/demo/repo/packages/api"));
    let cwd = std::path::absolute(&cwd).map_err(|e| miette::miette!("{e}"))?;
    let home = PathBuf::from("examples/demo/home");
    let home = std::path::absolute(&home).map_err(|e| miette::miette!("{e}"))?;

    // The built-in policy, layered with the home's context-policy.toml if any.
    let policy = Policy::load(Some(&home), None)?;
    let loader = Loader::new(policy, Some(home));

    // First turn: build the section.
    let snapshot = loader.snapshot(&cwd)?;
    println!("{}", snapshot.prompt);

    // Every later turn: a stat per examined path, a rebuild only on change.
    match loader.refresh(&cwd, &snapshot.fingerprint)? {
        None => println!("(unchanged: fingerprint {})", snapshot.fingerprint),
        Some(newer) => println!("(changed: fingerprint {})", newer.fingerprint),
    }
    Ok(())
}
