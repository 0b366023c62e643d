//! Instructions: which files of the chain go into the prompt, and how much
//! of each.
//!
//! Every candidate of the [`chain`] is opened through the sandbox (bounded,
//! regular files only), decoded to text, hidden text treated, and then goes
//! through the steps below in the budget's grant order:
//!
//! 1. the same file twice (device and inode) is folded into the first;
//! 2. a blank file is skipped (per policy);
//! 3. a file whose text repeats a kept one is folded into it (per policy);
//! 4. the budget grants what it can still give; a file it cannot give a
//!    single byte is skipped.
//!
//! Blocks are reported in read order (outermost first) whatever the grant
//! order was.

pub(crate) mod chain;
mod imports;
mod records;
pub(crate) mod rules;
mod select;

pub use imports::Import;
pub use records::{Block, Budget, Considered, Deduped, Skipped, Status};
pub use rules::{Activation, RuleFile, ScopedRule};
pub(crate) use select::{select, select_within};
