//! # lisa-context
//!
//! Builds the "project context" section of an AI agent's system prompt: the
//! chain of instruction files (`AGENTS.md`, `CLAUDE.md`) from the user's home and
//! from the repository root down to the working directory, and the list of
//! skills, all under a declared TOML [`policy`].
//!
//! The pipeline, one module per stage:
//!
//! 1. [`policy`] — every decision, declared in TOML and layered;
//! 2. [`roots`] — the sandbox: cap-std handles on the home and repository roots;
//! 3. [`discovery`] — the candidate paths, root-relative, and skill folders;
//! 4. [`read`] — bounded, non-blocking reads of regular files only;
//! 5. [`select`] — dedup, ranks, caps and the byte budget ([`hidden`] text
//!    treated on the way);
//! 6. [`render`] — the framed prompt text;
//! 7. [`snapshot`] and [`fingerprint`] — the result, and when to rebuild it.
//!
//! [`Loader`] ties them together for many concurrent sessions.
//!
//! ```
//! use lisa_context::{Loader, policy::Policy};
//!
//! let repo = tempfile::tempdir().unwrap();
//! std::fs::write(repo.path().join("AGENTS.md"), "Use tabs.").unwrap();
//! let loader = Loader::new(Policy::builtin().unwrap(), None);
//! let snapshot = loader.snapshot(repo.path()).unwrap();
//! assert!(snapshot.prompt.contains("Use tabs."));
//! ```

#![warn(missing_docs)]

pub mod discovery;
pub mod error;
pub mod fingerprint;
pub mod hidden;
pub mod loader;
pub mod paths;
pub mod policy;
pub mod read;
pub mod render;
pub mod roots;
pub mod select;
pub mod skill;
pub mod snapshot;

pub use error::SnapshotError;
pub use loader::{Loader, SkillFile};
pub use snapshot::Snapshot;
