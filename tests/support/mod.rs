//! Helpers shared by the integration tests.

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

/// Returns once the file system stamps a change later than every change
/// made so far under `dir`: a scratch file is rewritten until its ctime moves
/// past the one it got first. Bounded by a deadline, not a sleep.
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

