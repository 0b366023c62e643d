//! Layer 3 — the trace: the record of what a build examined ([`Trace`],
//! the fingerprint over it, the per-turn check), and the views through
//! which the stages ask the door and every answer is recorded ([`View`]).

mod owner;
mod record;
mod view;

pub(crate) use owner::{ancestor_trusted, foreign_owner};

pub(crate) use record::{Trace, TraceEntry};
pub(crate) use view::{Open, View};
