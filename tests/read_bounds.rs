//! Reads are bounded by what the budget can still use. Alone in its own test
//! binary, so the process's read counter (`rchar` in /proc/self/io) measures
//! this snapshot and nothing else.
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "tests build their fixture trees on the real disk"
)]

use std::fs;

use lisa_context::policy::{Layer, Policy, PolicySource};

fn bytes_read_so_far() -> Option<u64> {
    let io = fs::read_to_string("/proc/self/io").ok()?;
    io.lines()
        .find_map(|l| l.strip_prefix("rchar: "))
        .and_then(|v| v.trim().parse().ok())
}

#[test]
fn files_past_the_budget_cost_a_few_kib_not_the_cap() {
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
