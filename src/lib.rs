//! # lisa-context
//!
//! Builds the "project context" section of an AI agent's system prompt: the
//! chain of instruction files (`AGENTS.md`, `CLAUDE.md`) from the user's home
//! and from the repository root down to the working directory, and the list of
//! skills, all under a declared TOML [`policy`].
//!
//! The surface, in the manner of ripgrep's `ignore`: at the root, the
//! [`Loader`] (built with [`LoaderBuilder`]) and what its calls take and
//! give ([`Snapshot`], [`SkillFile`], [`Access`], [`Session`]), a cacheless
//! [`build`], and the errors. The records a snapshot holds are under
//! [`snapshot`], the trust records under [`trust`], the policy and its
//! diagnostics under [`policy`]; [`protocol`] holds the vocabulary `serve`
//! and the Node binding share (requests, error codes, `hello`) and, with the
//! `schema` feature, the JSON Schemas.
//!
//! How the crate is built inside (its layers, each importing only the ones
//! below it, checked by `.ci/layers`) is in `ARCHITECTURE.md`.
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
mod on_request;
mod render;
mod review;
mod sandbox;
mod skills;
mod trace;
mod vocab;

pub mod policy;
pub mod protocol;
pub mod snapshot;
pub mod trust;

/// Not part of the API: entry points for this crate's own fuzz targets,
/// benches and white-box tests (hidden from the docs, always compiled, so
/// the tests' build of the library is the user's). Anything here may change
/// in any release.
#[doc(hidden)]
pub mod internals;

pub use access::{Access, AccessError, RuleReach, Session};
pub use error::{BootstrapError, PolicyFailure, SkillReadError, SnapshotError};
pub use loader::{
    Loader, LoaderBuilder, MAX_SURVEY_FOLDERS, Scope, SkillError, SkillFile, SurveyError, Surveyed,
    build, survey,
};
pub use on_request::{RuleError, RuleHolder, RuleText};
pub use review::TrustError;
pub use snapshot::Snapshot;
