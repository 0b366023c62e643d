//! Errors of building a snapshot (policy errors live in [`crate::policy`]).

use std::fmt;
use std::io;
use std::path::PathBuf;
use std::sync::Arc;

use miette::Diagnostic;

use crate::sandbox::RootsError;

/// Why a snapshot could not be built at all. Problems with single files are
/// never errors: they are recorded in the snapshot with a reason.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
#[non_exhaustive]
pub enum SnapshotError {
    /// The working directory was given as a relative path.
    #[error("the working directory must be an absolute path, got {}", crate::vocab::paths::shown(.0))]
    #[diagnostic(code("snapshot::relative-cwd"))]
    RelativeCwd(PathBuf),
    /// The working directory does not exist or cannot be examined.
    #[error(
        "cannot use {} as the working directory",
        crate::vocab::paths::shown(path)
    )]
    #[diagnostic(code("snapshot::bad-cwd"))]
    Cwd {
        /// The directory.
        path: PathBuf,
        /// What stat said.
        #[source]
        source: io::Error,
    },
    /// The working directory is a file, not a directory.
    #[error("the working directory {} is not a directory", crate::vocab::paths::shown(.0))]
    #[diagnostic(code("snapshot::cwd-not-a-directory"))]
    CwdNotADirectory(PathBuf),
    /// `--root` names a directory that does not contain the cwd.
    #[error(
        "the repository root {} does not contain the working directory {}",
        crate::vocab::paths::shown(root),
        crate::vocab::paths::shown(cwd)
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
    #[error("cannot open the root {}", crate::vocab::paths::shown(path))]
    #[diagnostic(code("snapshot::open-root"))]
    OpenRoot {
        /// The root.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// The process (or the system) ran out of file descriptors while
    /// opening a root or reading under it. Nothing read then is kept: a
    /// file that could not be opened for want of a descriptor says nothing
    /// about that file. The loader sheds its root handles and tries once
    /// more before answering this.
    #[error(
        "ran out of file descriptors while reading under {}",
        crate::vocab::paths::shown(path)
    )]
    #[diagnostic(
        code("snapshot::resource-exhausted"),
        help("raise the limit on open files (ulimit -n), or lower the loader's handle budget")
    )]
    ResourceExhausted {
        /// The root being opened or read.
        path: PathBuf,
        /// The error (EMFILE or ENFILE).
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
        crate::vocab::paths::shown(cwd)
    )]
    #[diagnostic(code("skill::not-found"))]
    SkillNotFound {
        /// The name asked for.
        name: String,
        /// The cwd it was resolved for.
        cwd: PathBuf,
        /// The skills available from that cwd, in name order.
        available: Vec<String>,
        /// The nearest names, and the list of those available.
        #[help]
        advice: Option<String>,
    },
    /// The policy in force could not be loaded: a policy file a watching
    /// loader reads (see [`crate::LoaderBuilder::build`]) was edited into an
    /// invalid one, or was invalid when a lenient loader started. Every call
    /// fails this way until the file is fixed. The diagnostic is the one the
    /// bootstrap gave, spans and all.
    #[error(transparent)]
    #[diagnostic(transparent)]
    PolicyInvalid(PolicyFailure),
    /// An on-access path outside the session's repository root.
    #[error(
        "{} is outside the repository root {}",
        crate::vocab::paths::shown(path),
        crate::vocab::paths::shown(root)
    )]
    #[diagnostic(
        code("access::outside-root"),
        help("only paths under the repository root load instruction files on access")
    )]
    AccessOutsideRoot {
        /// The path, absolute and normalized.
        path: PathBuf,
        /// The session's repository root.
        root: PathBuf,
    },
    /// The winning skill's file could not be read in full.
    #[error(
        "cannot read skill file {}: {reason}",
        crate::vocab::paths::shown(path)
    )]
    #[diagnostic(code("skill::unreadable"))]
    SkillUnreadable {
        /// The SKILL.md.
        path: PathBuf,
        /// Why.
        reason: String,
    },
}

impl From<RootsError> for SnapshotError {
    fn from(e: RootsError) -> Self {
        match e {
            RootsError::RelativeCwd(path) => Self::RelativeCwd(path),
            RootsError::Cwd { path, source } => Self::Cwd { path, source },
            RootsError::CwdNotADirectory(path) => Self::CwdNotADirectory(path),
            RootsError::RootDoesNotContainCwd { root, cwd } => {
                Self::RootDoesNotContainCwd { root, cwd }
            }
            RootsError::OpenRoot { path, source } => Self::OpenRoot { path, source },
            RootsError::ResourceExhausted { path, source } => {
                Self::ResourceExhausted { path, source }
            }
        }
    }
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
    #[error(
        "the home root {} is not a directory",
        crate::vocab::paths::shown(path)
    )]
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
    /// `--policy NAME` named no shipped policy.
    #[error("no policy named `{name}` is shipped (shipped: {})", crate::policy::SHIPPED_NAMES.join(", "))]
    #[diagnostic(
        code("bootstrap::unknown-policy"),
        help(
            "give a shipped name, or a path to a policy file (write ./{name} for a file of that name)"
        )
    )]
    UnknownPolicy {
        /// The name given.
        name: String,
    },
}

/// A [`BootstrapError`] shared by every call that meets it (a loader whose
/// policy files are invalid answers each call with the same one). It shows,
/// and renders as a diagnostic, exactly like the error it holds.
#[derive(Debug, Clone)]
pub struct PolicyFailure(Arc<BootstrapError>);

impl PolicyFailure {
    pub(crate) fn new(error: BootstrapError) -> Self {
        PolicyFailure(Arc::new(error))
    }

    /// The error itself.
    pub fn error(&self) -> &BootstrapError {
        &self.0
    }
}

impl fmt::Display for PolicyFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&*self.0, f)
    }
}

impl std::error::Error for PolicyFailure {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

impl Diagnostic for PolicyFailure {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.0.code()
    }

    fn severity(&self) -> Option<miette::Severity> {
        self.0.severity()
    }

    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.0.help()
    }

    fn url<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.0.url()
    }

    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        self.0.source_code()
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = miette::LabeledSpan> + '_>> {
        self.0.labels()
    }

    fn related<'a>(&'a self) -> Option<Box<dyn Iterator<Item = &'a dyn Diagnostic> + 'a>> {
        self.0.related()
    }

    fn diagnostic_source(&self) -> Option<&dyn Diagnostic> {
        self.0.diagnostic_source()
    }
}
