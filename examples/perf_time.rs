//! Times `lisa_context::build` in process on a tree written by
//! `benches/peers/fixture.py`: prints the median of N cold builds, in
//! milliseconds (used by `benches/peers/run.sh`, beside the whole process
//! and the peers).
//!
//! usage: perf_time HOME CWD [N]
use std::path::PathBuf;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args_os().skip(1);
    let (Some(home), Some(cwd)) = (args.next(), args.next()) else {
        return Err("usage: perf_time HOME CWD [N]".into());
    };
    let n: usize = args
        .next()
        .and_then(|a| a.to_str().and_then(|s| s.parse().ok()))
        .unwrap_or(20);
    let (home, cwd) = (PathBuf::from(home), PathBuf::from(cwd));
    let policy = lisa_context::policy::Policy::builtin()?;
    // The first build writes the home's nonce key.
    lisa_context::build(&policy, Some(&home), &cwd, None)?;
    let mut times = Vec::with_capacity(n);
    for _ in 0..n.max(1) {
        let t = Instant::now();
        let snap = lisa_context::build(&policy, Some(&home), &cwd, None)?;
        times.push(t.elapsed().as_secs_f64() * 1e3);
        std::hint::black_box(snap.prompt.len());
    }
    times.sort_by(f64::total_cmp);
    println!("{:.3}", times[times.len() / 2]);
    Ok(())
}
