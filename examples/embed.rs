//! Embedding lisa-context: one loader, many sessions, a cheap check per turn.
//!
//! Run it with `cargo run --example embed -- <cwd>`.

use std::path::PathBuf;

use lisa_context::Loader;

fn main() -> miette::Result<()> {
    let cwd = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("examples/demo/repo/packages/api"));
    let cwd = std::path::absolute(&cwd).map_err(|e| miette::miette!("{e}"))?;
    let home = std::path::absolute("examples/demo/home").map_err(|e| miette::miette!("{e}"))?;

    // The home root, and the built-in policy layered with the home's
    // context-policy.toml if any.
    let loader = Loader::builder().home(home).build()?;

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
