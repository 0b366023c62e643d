//! # lisa-context
//!
//! Builds the "project context" section of an AI agent's system prompt: the
//! chain of instruction files (`AGENTS.md`, `CLAUDE.md`) from the user's home
//! and from the repository root down to the working directory, and the list of
//! skills, all under a declared TOML [`policy`].
//!
//! The pipeline, one wing per stage, each depending only on those above it:
//!
//! 1. `policy` — every decision, declared in TOML and layered
//!    (built-in < home < command line), each value remembering its layer;
//! 2. `sandbox` — the roots (cap-std handles on the home and repository
//!    roots) and the one door to the disk: opens, stats, listings and
//!    bounded reads;
//! 3. `instructions` — the chain of candidates, their text, dedup, and the
//!    byte budget; `skills` — discovery, frontmatter, name resolution and
//!    caps (hidden text is treated in both);
//! 4. `render` — the framed prompt text, every word from the policy;
//! 5. `snapshot` and `fingerprint` — the result, and when to rebuild it;
//! 6. [`Loader`] — many sessions, each check a `stat` per examined path.
//!
//! The public surface is that last step and what it hands out: [`Loader`]
//! and [`LoaderBuilder`], [`Policy`](policy::Policy), the [`Snapshot`] and its
//! records, [`SkillFile`], and the errors; [`protocol`] holds the
//! vocabulary `serve` and the Node binding share (requests, error codes,
//! `hello`) and, with the `schema` feature, the JSON Schemas.
//!
//! ```
//! use lisa_context::Loader;
//!
//! let repo = tempfile::tempdir().unwrap();
//! std::fs::write(repo.path().join("AGENTS.md"), "Use tabs.").unwrap();
//! // No home root, the built-in policy and the process environment.
//! let loader = Loader::builder().policy(lisa_context::policy::Policy::builtin().unwrap()).build().unwrap();
//! let snapshot = loader.snapshot(repo.path()).unwrap();
//! assert!(snapshot.prompt.contains("Use tabs."));
//! ```

#![warn(missing_docs)]
#[cfg(not(unix))]
compile_error!("lisa-context supports Unix-like systems (Linux, macOS, the BSDs) only");

mod access;
mod error;

mod hidden;
mod instructions;
mod loader;

pub mod policy;
pub mod protocol;

mod render;
mod review;
mod sandbox;
mod skills;
mod snapshot;
mod trace;
mod trust;
mod vocab;

pub use access::{Access, Session};
pub use error::{BootstrapError, PolicyFailure, SkillReadError, SnapshotError};
pub use hidden::{HiddenFinding, HiddenReport};
pub use instructions::{Block, Budget, Considered, Deduped, Import, ScopedRule, Skipped, Status};
pub use loader::{
    DEFAULT_CACHE_ENTRIES, DEFAULT_HANDLE_BUDGET, Loader, LoaderBuilder, MAX_SESSIONS, SkillFile,
    build,
};
pub use review::{Selection, TrustError};
pub use sandbox::RACY_WINDOW;
pub use skills::{Frontmatter, FrontmatterError, Rejected, Shadowed, Skill};
pub use snapshot::{NamedRootPlace, Snapshot};
pub use trust::{Change, ItemKind, TrustItem, TrustState, TrustStatus, Unapproved};
pub use vocab::origin::Origin;
pub use vocab::reason::Reason;
pub use vocab::unicode::terminal_safe;
pub use vocab::warning::{Warning, WarningKind};

/// Not part of the API: entry points for this crate's own fuzz targets and
/// white-box tests. Anything here may change in any release.
#[doc(hidden)]
pub mod internals;
