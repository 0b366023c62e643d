//! Helpers shared by the integration tests.

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

/// Returns once the file system stamps a change later than every change
/// made so far under `dir`: a scratch file is rewritten until its ctime moves
/// past the one it got first. Bounded by a deadline, not a sleep.
#[allow(
    dead_code,
    reason = "not every test file that includes support uses it"
)]
pub fn next_timestamp_tick(dir: &Path) {
    use std::os::unix::fs::MetadataExt as _;
    let probe = dir.join(".tick");
    let ctime = |p: &Path| {
        let m = fs::metadata(p).unwrap();
        (m.ctime(), m.ctime_nsec())
    };
    fs::write(&probe, "0").unwrap();
    let first = ctime(&probe);
    let deadline = Instant::now() + Duration::from_secs(10);
    while ctime(&probe) <= first {
        assert!(
            Instant::now() < deadline,
            "the file system clock did not tick"
        );
        std::thread::yield_now();
        fs::write(&probe, "1").unwrap();
    }
    fs::remove_file(&probe).unwrap();
}

/// Whether the tests run as root, for whom mode bits deny nothing.
#[allow(
    dead_code,
    reason = "not every test file that includes support uses it"
)]
pub fn running_as_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// Runs the `lisa-context` binary with `args` as the unprivileged user
/// `nobody` (uid and gid 65534), for checks that mean nothing to root (a
/// mode-000 file does not stop root). `world` is made traversable first (a
/// temporary directory starts as mode 0700). `Err` says why it could not be
/// done here, for the test to print as its visible reason to skip.
#[allow(
    dead_code,
    reason = "not every test file that includes support uses it"
)]
pub fn run_unprivileged(
    world: &Path,
    args: &[&std::ffi::OsStr],
) -> Result<std::process::Output, String> {
    use std::os::unix::fs::PermissionsExt as _;
    use std::os::unix::process::CommandExt as _;
    const NOBODY: u32 = 65534;
    fs::set_permissions(world, fs::Permissions::from_mode(0o755))
        .map_err(|e| format!("cannot open up {}: {e}", world.display()))?;
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_lisa-context"))
        .args(args)
        .env_remove("LISA_HOME")
        .uid(NOBODY)
        .gid(NOBODY)
        .output()
        .map_err(|e| format!("cannot run the binary as uid {NOBODY}: {e}"))?;
    if out.status.code() == Some(126) || out.status.code() == Some(127) {
        return Err(format!("the binary is not executable as uid {NOBODY}"));
    }
    Ok(out)
}
