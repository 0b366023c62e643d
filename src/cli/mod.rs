//! The binary's command line: the arguments (`args`), the entry that runs
//! a command and renders its error (`run`), the preamble every command
//! shares (`context`), one file per command (`commands/`), and what they
//! print with (`explain`, `trust`, `json`, `man`, `report`, `complete`,
//! `serve`).

mod args;
mod commands;
mod complete;
mod context;
mod explain;
mod json;
mod man;
mod mcp;
mod report;
mod run;
mod serve;
mod trust;

pub(crate) use run::run;
