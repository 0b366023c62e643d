//! `mcp`: an MCP server (the Skills extension, the project context) on
//! stdin/stdout.

use std::path::Path;

use crate::cli::args::Cli;
use crate::cli::context::{OK, absolute, builder};
use crate::cli::mcp;

/// Serves until stdin ends. An invalid policy does not stop the server:
/// each request that needs it fails until the file is fixed.
pub(in crate::cli) fn run(
    cli: &Cli,
    cwd: Option<&Path>,
    root: Option<&Path>,
    instructions: bool,
) -> miette::Result<u8> {
    let loader = builder(cli).build_lenient()?.watched();
    let options = mcp::Options {
        cwd: cwd.map(absolute),
        root: root.map(absolute),
        instructions,
    };
    let server = mcp::Server::new(loader, options, std::io::stdout());
    server
        .serve(std::io::stdin().lock())
        .map_err(|e| miette::miette!("mcp: {e}"))?;
    Ok(OK)
}
