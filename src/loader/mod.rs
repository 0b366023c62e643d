//! The library's entry point: a [`Loader`] serves snapshots for many cwds,
//! caching each until something it examined changes. [`LoaderBuilder`] finds
//! the home root and loads the layered policy from it, the way every
//! embedder needs.

mod bootstrap;
mod builder;
mod cache;
mod fresh;
mod group;
mod key;
mod limits;
mod policies;
mod size;
mod skill_file;
mod survey;
mod walk;
#[cfg(target_os = "linux")]
mod watch;

pub use builder::LoaderBuilder;
pub use cache::Loader;
pub use fresh::build;
pub(crate) use fresh::build_viewed;
pub use skill_file::{SkillError, SkillFile};
pub use survey::{MAX_SURVEY_FOLDERS, Scope, SurveyError, Surveyed, survey};
pub(crate) use survey::{survey_each, survey_scope_each};
