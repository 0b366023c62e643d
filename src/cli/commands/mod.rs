//! One file per command: each takes the parsed arguments of its command,
//! runs it through the shared preamble in [`super::context`], and returns
//! the exit status (errors go back to [`super::run`], rendered once there).

pub(super) mod access;
pub(super) mod completions;
pub(super) mod explain;
pub(super) mod fingerprint;
pub(super) mod man;
pub(super) mod mcp;
pub(super) mod policy;
pub(super) mod rule;
pub(super) mod serve;
pub(super) mod skill;
pub(super) mod snapshot;
pub(super) mod survey;
pub(super) mod trust;
pub(super) mod version;
