//! Stage 3 — discovery: which paths are candidates, root-relative.

pub mod chain;
pub mod skills;
