//! Stage 5 — selection: what of the discovered material goes into the prompt.

pub mod instructions;
pub mod skills;
