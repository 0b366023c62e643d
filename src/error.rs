//! Errors of building a snapshot (policy errors live in [`crate::policy`]).

use std::io;
use std::path::PathBuf;

/// Why a snapshot could not be built at all. Problems with single files are
/// never errors: they are recorded in the snapshot with a reason.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
#[non_exhaustive]
pub enum SnapshotError {
    /// The working directory was given as a relative path.
    #[error("the working directory must be an absolute path, got {}", crate::paths::shown(.0))]
    #[diagnostic(code("snapshot::relative-cwd"))]
    RelativeCwd(PathBuf),
    /// The working directory does not exist or cannot be examined.
    #[error("cannot use {} as the working directory", crate::paths::shown(path))]
    #[diagnostic(code("snapshot::bad-cwd"))]
    Cwd {
        /// The directory.
        path: PathBuf,
        /// What stat said.
        #[source]
        source: io::Error,
    },
    /// The working directory is a file, not a directory.
    #[error("the working directory {} is not a directory", crate::paths::shown(.0))]
    #[diagnostic(code("snapshot::cwd-not-a-directory"))]
    CwdNotADirectory(PathBuf),
    /// `--root` names a directory that does not contain the cwd.
    #[error(
        "the repository root {} does not contain the working directory {}",
        crate::paths::shown(root),
        crate::paths::shown(cwd)
    )]
    #[diagnostic(
        code("snapshot::root-outside"),
        help("pass a root that is the cwd or one of its ancestors")
    )]
    RootDoesNotContainCwd {
        /// The root given.
        root: PathBuf,
        /// The cwd.
        cwd: PathBuf,
    },
    /// A root directory could not be opened.
    #[error("cannot open the root {}", crate::paths::shown(path))]
    #[diagnostic(code("snapshot::open-root"))]
    OpenRoot {
        /// The root.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// A skill name that fails the policy's name rule (checked before any
    /// file is touched).
    #[error("{0:?} is not a valid skill name under the policy's name rule")]
    #[diagnostic(code("skill::invalid-name"))]
    InvalidSkillName(String),
    /// No skill of that name wins for this cwd.
    #[error(
        "no skill named {name:?} is available from {}",
        crate::paths::shown(cwd)
    )]
    #[diagnostic(code("skill::not-found"))]
    SkillNotFound {
        /// The name asked for.
        name: String,
        /// The cwd it was resolved for.
        cwd: PathBuf,
    },
    /// The winning skill's file could not be read in full.
    #[error("cannot read skill file {}: {reason}", crate::paths::shown(path))]
    #[diagnostic(code("skill::unreadable"))]
    SkillUnreadable {
        /// The SKILL.md.
        path: PathBuf,
        /// Why.
        reason: String,
    },
}

/// Why a loader could not be set up ([`crate::LoaderBuilder::build`]).
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
#[non_exhaustive]
pub enum BootstrapError {
    /// A policy layer could not be read or is invalid.
    #[error(transparent)]
    #[diagnostic(transparent)]
    Policy(#[from] crate::policy::PolicyError),
    /// The home root given explicitly does not exist or is not a directory.
    /// (A home found through the policy's candidates may be missing: it then
    /// holds nothing.)
    #[error("the home root {} is not a directory", crate::paths::shown(path))]
    #[diagnostic(
        code("bootstrap::missing-home"),
        help("create it, or leave out --home to use the policy's candidates")
    )]
    MissingHome {
        /// The directory given.
        path: PathBuf,
        /// What stat said, when it failed.
        #[source]
        source: Option<io::Error>,
    },
}
