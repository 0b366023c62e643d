//! Skills: folders holding a `SKILL.md`, found in the policy's sources.
//!
//! The stage runs in three steps: [`discover`] lists every source (lowest
//! rank first) and reads each `SKILL.md` only as far as its frontmatter,
//! [`resolve`] lets the lowest rank claim each name and caps the project
//! list, and the winners' descriptions get the policy's hidden-text
//! treatment. [`read`] reads a whole `SKILL.md` when the agent asks for one,
//! under the same rules.

mod cache;
mod discover;
mod found;
pub(crate) mod frontmatter;
pub(crate) mod lenient;
mod manifest;
mod memo;
pub(crate) mod parallel;
mod read;
mod resolve;
mod stage;

pub(crate) use cache::ParseCache;
pub(crate) use discover::SKILL_FILE;
pub use found::Rejected;
pub use frontmatter::{Frontmatter, FrontmatterError};
pub use manifest::{
    MAX_SKILL_BYTES, MAX_SKILL_FILES, ManifestFile, NotServed, SkillManifest, SkillResource,
};
pub(crate) use manifest::{ResourceError, location, manifest, resource};
pub(crate) use parallel::set_threshold as set_parallel_threshold;
pub(crate) use read::{WholeFileError, whole_file};
pub use resolve::{Shadowed, Skill};
pub(crate) use stage::skills;
