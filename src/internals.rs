//! Not part of the API: entry points for this crate's own fuzz targets and
//! white-box tests. Anything here may change in any release.

pub use crate::hidden::treat as treat_hidden;
pub use crate::skills::frontmatter::{frontmatter_end, parse as parse_frontmatter};
pub use crate::skills::lenient::{parse_or_fallback, parse_or_lenient};
pub use crate::vocab::paths::for_prompt;
pub use crate::vocab::unicode::as_seen;

/// Sets the number of folders from which a skill source is examined
/// on several threads (for the tests and benchmarks that compare the
/// parallel and the sequential path; the default is 256).
pub fn set_parallel_threshold(folders: usize) {
    crate::skills::set_parallel_threshold(folders);
}

/// Every path a fresh build for `cwd` examines, absolute, in the order
/// examined: the benchmarks' floor for the per-turn check is one plain
/// `stat` of each.
pub fn traced_paths(
    policy: &crate::policy::Policy,
    home: Option<&std::path::Path>,
    cwd: &std::path::Path,
    root: Option<&std::path::Path>,
) -> Result<Vec<std::path::PathBuf>, crate::error::SnapshotError> {
    crate::snapshot::traced_paths(policy, home, cwd, root)
}

/// A fresh build (see [`crate::build`]) whose stages ask the disk through
/// the view that records nothing: the snapshot a survey's summary sees,
/// with no fingerprint. The tests hold it to a recording build's answer.
pub fn build_unrecorded(
    policy: &crate::policy::Policy,
    home: Option<&std::path::Path>,
    cwd: &std::path::Path,
    root: Option<&std::path::Path>,
) -> Result<crate::snapshot::Snapshot, crate::error::SnapshotError> {
    crate::loader::build_viewed(policy, home, cwd, root, crate::snapshot::Tracing::Off)
}

/// Makes every inotify watch added on this thread fail as at the per-user
/// limit (`ENOSPC`), or stops doing so: how the tests show the watched check
/// falls back to the sweep and stays exact, without touching the machine's
/// limits.
#[cfg(target_os = "linux")]
pub fn fail_watches(fail: bool) {
    crate::sandbox::watch::FAIL_ADDS.with(|f| f.set(fail));
}

/// How many named access sessions `loader` keeps, and the bytes of names
/// and paths they hold.
pub fn sessions_held(loader: &crate::loader::Loader) -> (usize, usize) {
    loader.sessions_held()
}

/// The work counters of this process, each by its kebab-case name, in a
/// fixed order: how many times the steps whose cost grows with hostile
/// input ran (see `vocab::counters`). The command line prints them on
/// stderr at exit when `LISA_CONTEXT_COUNTS` is set (in a build with this
/// feature), which is how the black-box tests count work.
pub fn counts() -> Vec<(&'static str, u64)> {
    crate::vocab::counters::all()
}

/// The steps every trust diff computed on this thread has made so far
/// (diagonals tried plus lines compared): what the tests count, instead of
/// timing, to show the diff's work is bounded.
pub fn trust_diff_work() -> u64 {
    crate::trust::diff_work()
}
