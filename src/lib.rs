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
//! 2. `roots` — the sandbox: cap-std handles on the home and repository roots;
//! 3. `discovery` — the candidate paths, root-relative;
//! 4. `read` — bounded, non-blocking reads of regular files only;
//! 5. `select` — dedup, ranks, caps and the byte budget;
//! 6. `render` — the framed prompt text;
//! 7. `snapshot` — the result, with its fingerprint.

#![warn(missing_docs)]

pub mod policy;
