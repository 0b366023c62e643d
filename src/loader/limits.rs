//! The loader's default sizes and bounds.

/// How many parsed `SKILL.md` frontmatters a loader remembers.
pub(super) const PARSE_CACHE_ENTRIES: usize = 16 * 1024;

/// The default number of (cwd, root) pairs a loader keeps.
pub(super) const DEFAULT_CACHE_ENTRIES: usize = 256;

/// The default number of root handles (open directories) a loader keeps:
/// well under the common soft limits on open files (1024; 256 on macOS).
pub(super) const DEFAULT_HANDLE_BUDGET: usize = crate::sandbox::DEFAULT_HANDLE_BUDGET;

/// How many sessions [`Loader::access_named`](super::Loader::access_named) keeps.
pub(super) const MAX_SESSIONS: usize = 1024;

/// The most (cwd, root) pairs a loader may keep: the cache's table is sized
/// for its capacity up front.
pub(super) const MAX_CACHE_ENTRIES: usize = 1 << 20;

/// The default bound on the bytes the snapshot cache holds (as
/// `Loader::cached_bytes` counts them): 256 MiB.
pub(super) const DEFAULT_CACHE_BYTES: usize = 256 << 20;

/// The least and the most a loader's cache may be bounded to, in bytes.
pub(super) const MIN_CACHE_BYTES: usize = 1 << 16;
pub(super) const MAX_CACHE_BYTES: usize = 1 << 40;

/// The most root handles (open directories) a loader may keep.
pub(super) const MAX_HANDLE_BUDGET: usize = 1 << 16;

/// The longest `access` session name, in bytes.
pub(super) const MAX_SESSION_NAME_BYTES: usize = 256;
