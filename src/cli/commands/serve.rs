//! `serve`: JSON-lines requests on stdin, answers on stdout.

use std::path::Path;

use crate::cli::args::Cli;
use crate::cli::context::{OK, absolute, builder, layers};
use crate::cli::serve;

/// Serves until stdin ends. An invalid policy does not stop the server:
/// each request gets a `policy-invalid` error until the file is fixed.
/// The options are `serve`'s, as parsed.
pub(in crate::cli) fn run(
    cli: &Cli,
    jobs: Option<u16>,
    homes_under: Option<&Path>,
    homes_max: Option<u32>,
    cache_bytes: Option<u64>,
    cache_entries: Option<u64>,
    handle_budget: Option<u64>,
) -> miette::Result<u8> {
    let jobs = jobs.map_or_else(
        || {
            std::thread::available_parallelism()
                .map_or(1, std::num::NonZeroUsize::get)
                .min(serve::MAX_JOBS)
        },
        usize::from,
    );
    // One cache for every home (`LoaderBuilder::share`): the own
    // loader's bounds are the server's.
    let mut own = builder(cli).capacity(cache_entries.map_or(serve::DEFAULT_CACHE_ENTRIES, |n| {
        usize::try_from(n).unwrap_or(usize::MAX)
    }));
    if let Some(n) = cache_bytes {
        own = own.cache_bytes(usize::try_from(n).unwrap_or(usize::MAX));
    }
    if let Some(n) = handle_budget {
        own = own.handle_budget(usize::try_from(n).unwrap_or(usize::MAX));
    }
    let loader = own.build_lenient()?.watched();
    let policy = cli.policy.clone();
    let no_home_policy = cli.no_home_policy;
    let homes = serve::Homes::new(
        loader,
        homes_under.map(absolute),
        homes_max.map_or(serve::DEFAULT_HOMES, |n| n as usize),
        move |own, under, home| {
            Ok(layers(None, policy.as_deref(), no_home_policy)
                .home_below(under, home)?
                .share(own)
                .build_lenient()?
                .watched())
        },
    );
    // The workers write to stdout themselves.
    let out = std::sync::Mutex::new(std::io::stdout());
    serve::serve(&homes, std::io::stdin().lock(), &out, jobs)
        .map_err(|e| miette::miette!("serve: {e}"))?;
    Ok(OK)
}
