//! Reads are bounded by what the budget can still use. The test runs alone
//! in a process of its own (the test binary run again for it alone), so the
//! process's read counter (`rchar` in /proc/self/io) measures this snapshot
//! and nothing else.

use std::fs;
use std::process::Command;

use lisa_context::policy::{Layer, Policy, PolicySource};

fn bytes_read_so_far() -> Option<u64> {
    let io = fs::read_to_string("/proc/self/io").ok()?;
    io.lines()
        .find_map(|l| l.strip_prefix("rchar: "))
        .and_then(|v| v.trim().parse().ok())
}

/// Set in the process that runs the measurement: the one that `cargo test`
/// started runs its other tests on other threads, and they read too.
const ALONE: &str = "LISA_TEST_READ_BOUNDS_ALONE";

#[test]
fn files_past_the_budget_cost_a_few_kib_not_the_cap() {
    if std::env::var_os(ALONE).is_none() {
        let module = module_path!().split_once("::").unwrap().1;
        let name = format!("{module}::files_past_the_budget_cost_a_few_kib_not_the_cap");
        let out = Command::new(std::env::current_exe().unwrap())
            .args([&name, "--exact", "--test-threads=1", "--nocapture"])
            .env(ALONE, "1")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && stdout.contains("1 passed"),
            "{name} alone: {}\n{stdout}\n{stderr}",
            out.status
        );
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let repo = tempfile::tempdir().unwrap();
    fs::create_dir(repo.path().join(".git")).unwrap();
    let deep = repo.path().join("a/b/c");
    fs::create_dir_all(&deep).unwrap();
    // The root file fills the budget; the three below it are 1 MiB each.
    fs::write(repo.path().join("AGENTS.md"), "r".repeat(40_000)).unwrap();
    for (i, dir) in ["a", "a/b", "a/b/c"].iter().enumerate() {
        let text = format!("level {i} ").repeat(200_000);
        fs::write(repo.path().join(dir).join("AGENTS.md"), &text[..1 << 20]).unwrap();
    }
    let policy = Policy::from_sources(&[
        PolicySource::builtin(),
        PolicySource::from_text(
            Layer::Home,
            "context-policy.toml",
            "version = 1\n[instructions]\nbudget-bytes = 32768\nmax-file-bytes = 16777216\n",
        ),
    ])
    .unwrap();

    let Some(before) = bytes_read_so_far() else {
        eprintln!("no /proc/self/io here: nothing to measure");
        return;
    };
    let built = lisa_context::build(&policy, Some(home.path()), &deep, None).unwrap();
    let after = bytes_read_so_far().unwrap_or(before);

    let s = &built;
    assert_eq!(s.budget.used, 32_768);
    assert_eq!(
        s.skipped.len(),
        3,
        "the three big files are dropped for budget"
    );
    // 32 KiB of budget, plus a few KiB of slack per file: far below the
    // 3 MiB the per-file cap (16 MiB) would allow.
    assert!(
        after - before < 128 * 1024,
        "read {} bytes for a 32 KiB budget",
        after - before
    );
}
