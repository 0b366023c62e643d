//! The loader's default sizes and bounds.

/// How many parsed `SKILL.md` frontmatters a loader remembers.
pub(super) const PARSE_CACHE_ENTRIES: usize = 16 * 1024;

/// The default number of (cwd, root) pairs a loader keeps.
pub const DEFAULT_CACHE_ENTRIES: usize = 256;

/// The default number of root handles (open directories) a loader keeps:
/// well under the common soft limits on open files (1024; 256 on macOS).
pub const DEFAULT_HANDLE_BUDGET: usize = crate::sandbox::DEFAULT_HANDLE_BUDGET;

/// How many sessions [`Loader::access_in`] keeps.
pub const MAX_SESSIONS: usize = 1024;
