//! Errors of building a snapshot (policy errors live in [`crate::policy`]),
//! of setting up a loader, and the one way an operation's error carries a
//! snapshot error inside it: each operation above (an access, a rule or a
//! skill asked for by name) has an error of its own, in its own layer, whose
//! `Snapshot` case is the build's failure, rendered as the build renders it.

use std::fmt;
use std::io;
use std::path::PathBuf;
use std::sync::Arc;

use miette::Diagnostic;

use crate::sandbox::RootsError;
use crate::skills::WholeFileError;
use crate::vocab::reason::Reason;

/// Why a snapshot could not be built at all. Problems with single files are
/// never errors: they are recorded in the snapshot with a reason.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SnapshotError {
    /// The working directory was given as a relative path.
    #[error("the working directory must be an absolute path, got {}", crate::vocab::paths::shown(.0))]
    RelativeCwd(PathBuf),
    /// The working directory does not exist or cannot be examined.
    #[error(
        "cannot use {} as the working directory",
        crate::vocab::paths::shown(path)
    )]
    Cwd {
        /// The directory.
        path: PathBuf,
        /// What stat said.
        #[source]
        source: io::Error,
    },
    /// The working directory is a file, not a directory.
    #[error("the working directory {} is not a directory", crate::vocab::paths::shown(.0))]
    CwdNotADirectory(PathBuf),
    /// `--root` names a directory that does not contain the cwd.
    #[error(
        "the repository root {} does not contain the working directory {}",
        crate::vocab::paths::shown(root),
        crate::vocab::paths::shown(cwd)
    )]
    RootDoesNotContainCwd {
        /// The root given.
        root: PathBuf,
        /// The cwd.
        cwd: PathBuf,
    },
    /// A root directory could not be opened.
    #[error("cannot open the root {}", crate::vocab::paths::shown(path))]
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
    ResourceExhausted {
        /// The root being opened or read.
        path: PathBuf,
        /// The error (EMFILE or ENFILE).
        #[source]
        source: io::Error,
    },
    /// The policy in force could not be loaded: a policy file a watching
    /// loader reads (see [`crate::LoaderBuilder::build`]) was edited into an
    /// invalid one, or was invalid when a lenient loader started. Every call
    /// fails this way until the file is fixed. The diagnostic is the one the
    /// bootstrap gave, spans and all.
    #[error(transparent)]
    PolicyInvalid(PolicyFailure),
    /// The home a server admitted ([`LoaderBuilder::home_below`](crate::LoaderBuilder::home_below))
    /// no longer holds: it is not a real directory below the directory of
    /// homes with no link on the way, another user owns it, or it is no
    /// longer the directory admitted (replaced since). Nothing of it was
    /// read or written. `serve` admits such a home afresh at its next
    /// request (or refuses it).
    #[error(
        "the home {} is not served here: {reason}",
        crate::vocab::paths::shown(path)
    )]
    HomeRefused {
        /// The home.
        path: PathBuf,
        /// Why.
        reason: String,
    },
}

/// Why the winning skill's `SKILL.md` could not be read in full
/// ([`SkillError::Unreadable`](crate::loader::SkillError::Unreadable)).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SkillReadError {
    /// Nothing is there any more.
    #[error("it no longer exists")]
    Gone,
    /// Something is there that is not read, for this reason (a link the
    /// policy refuses, not a regular file, too large, not text...).
    #[error("{}", .0.as_str())]
    Refused(Reason),
    /// Reading it failed.
    #[error("{0}")]
    Io(io::Error),
    /// The root it was found under is gone.
    #[error("its root is gone")]
    RootGone,
    /// The root it was found under cannot be opened again.
    #[error("its root cannot be opened: {0}")]
    RootUnopenable(io::Error),
    /// The path named is not a file of the skill (never was, or no longer
    /// is: see [`crate::skills::SkillManifest`]).
    #[error("{0} is not a file of the skill")]
    NotPartOfSkill(String),
    /// The skill is not served whole, and so none of its files is.
    #[error("the skill is not served: {0}")]
    NotServed(crate::skills::NotServed),
}

impl From<WholeFileError> for SkillReadError {
    fn from(e: WholeFileError) -> Self {
        match e {
            WholeFileError::Gone => Self::Gone,
            WholeFileError::Refused(reason) => Self::Refused(reason),
            WholeFileError::Io(e) => Self::Io(e),
        }
    }
}

impl SnapshotError {
    /// The one table of this error's codes: its diagnostic code (`None`:
    /// the wrapped diagnostic's own) and its wire code (`serve`, the Node
    /// binding). Exhaustive, so a new variant cannot go without both.
    fn codes(&self) -> (Option<&'static str>, ErrorCode) {
        match self {
            Self::RelativeCwd(_) => (Some("snapshot::relative-cwd"), ErrorCode::RelativeCwd),
            Self::Cwd { .. } => (Some("snapshot::bad-cwd"), ErrorCode::BadCwd),
            Self::CwdNotADirectory(_) => (Some("snapshot::cwd-not-a-directory"), ErrorCode::BadCwd),
            Self::RootDoesNotContainCwd { .. } => {
                (Some("snapshot::root-outside"), ErrorCode::RootOutside)
            }
            Self::OpenRoot { .. } => (Some("snapshot::open-root"), ErrorCode::BadCwd),
            Self::ResourceExhausted { .. } => (
                Some("snapshot::resource-exhausted"),
                ErrorCode::ResourceExhausted,
            ),
            // A served home refused while its policy was read says so.
            Self::PolicyInvalid(f) if matches!(f.error(), BootstrapError::HomeRefused { .. }) => {
                (None, ErrorCode::HomeRefused)
            }
            Self::PolicyInvalid(_) => (None, ErrorCode::PolicyInvalid),
            Self::HomeRefused { .. } => (Some("snapshot::home-refused"), ErrorCode::HomeRefused),
        }
    }

    /// The wire code of this error (`error.code` in `serve`'s responses,
    /// `code` of the Node binding's exceptions).
    pub fn wire_code(&self) -> ErrorCode {
        self.codes().1
    }
}

impl Diagnostic for SnapshotError {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        match (self, self.codes().0) {
            (Self::PolicyInvalid(inner), _) => inner.code(),
            (_, Some(code)) => Some(Box::new(code)),
            (_, None) => None,
        }
    }

    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        match self {
            Self::RootDoesNotContainCwd { .. } => Some(Box::new(
                "pass a root that is the cwd or one of its ancestors",
            )),
            Self::ResourceExhausted { .. } => Some(Box::new(
                "raise the limit on open files (ulimit -n), or lower the loader's handle budget",
            )),
            Self::PolicyInvalid(inner) => inner.help(),
            Self::HomeRefused { .. } => Some(Box::new(
                "a served home must stay the real directory below --homes-under, owned by this \
                 user, that the server admitted; a home replaced is admitted afresh, or refused",
            )),
            Self::RelativeCwd(_)
            | Self::Cwd { .. }
            | Self::CwdNotADirectory(_)
            | Self::OpenRoot { .. } => None,
        }
    }

    fn severity(&self) -> Option<miette::Severity> {
        match self {
            Self::PolicyInvalid(inner) => inner.severity(),
            _ => None,
        }
    }

    fn url<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        match self {
            Self::PolicyInvalid(inner) => inner.url(),
            _ => None,
        }
    }

    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        match self {
            Self::PolicyInvalid(inner) => inner.source_code(),
            _ => None,
        }
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = miette::LabeledSpan> + '_>> {
        match self {
            Self::PolicyInvalid(inner) => inner.labels(),
            _ => None,
        }
    }

    fn related<'a>(&'a self) -> Option<Box<dyn Iterator<Item = &'a dyn Diagnostic> + 'a>> {
        match self {
            Self::PolicyInvalid(inner) => inner.related(),
            _ => None,
        }
    }

    fn diagnostic_source(&self) -> Option<&dyn Diagnostic> {
        match self {
            Self::PolicyInvalid(inner) => inner.diagnostic_source(),
            _ => None,
        }
    }
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
            RootsError::HomeRefused { path, reason } => Self::HomeRefused { path, reason },
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
        help("{}", unknown_policy_help(name))
    )]
    UnknownPolicy {
        /// The name given.
        name: String,
    },
    /// A home named by a request (`serve`'s `home` field) that the server
    /// does not serve: no directory of homes was given (`--homes-under`),
    /// or the home is not a real directory below it, or another user owns
    /// it.
    #[error(
        "the home {} is not served here: {reason}",
        crate::vocab::paths::shown(path)
    )]
    #[diagnostic(
        code("bootstrap::home-refused"),
        help("a server serves homes named by requests only below --homes-under DIR")
    )]
    HomeRefused {
        /// The home named.
        path: PathBuf,
        /// Why it is refused.
        reason: String,
    },
    /// A numeric setting of the builder outside its range.
    #[error("the loader's {setting} must be from {min} to {max}, got {value}")]
    #[diagnostic(code("bootstrap::out-of-range"))]
    OutOfRange {
        /// The builder method (`capacity`, `handle_budget`, `parse_cache`).
        setting: &'static str,
        /// The value given.
        value: usize,
        /// The least value allowed.
        min: usize,
        /// The greatest value allowed.
        max: usize,
    },
}

impl BootstrapError {
    /// The wire code of this error (the Node binding's constructor; the
    /// command line and `serve` exit instead).
    pub fn wire_code(&self) -> ErrorCode {
        match self {
            Self::Policy(_) => ErrorCode::PolicyInvalid,
            Self::MissingHome { .. } => ErrorCode::BadHome,
            Self::UnknownPolicy { .. } => ErrorCode::UnknownPolicy,
            Self::OutOfRange { .. } => ErrorCode::BadRequest,
            Self::HomeRefused { .. } => ErrorCode::HomeRefused,
        }
    }
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

/// Why a request failed: the `error.code` of a response, and the `code` of
/// the Node binding's exceptions. The words are stable.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    serde::Serialize,
    strum::IntoStaticStr,
    strum::VariantArray,
)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
#[non_exhaustive]
pub enum ErrorCode {
    /// Not a JSON object, no `id`, a missing or mistyped field.
    BadRequest,
    /// An `op` the server does not know.
    UnknownOp,
    /// A request line over 1 MiB.
    LineTooLong,
    /// The cwd does not exist, is not a directory, or a root cannot be
    /// opened.
    BadCwd,
    /// The cwd is not an absolute path.
    RelativeCwd,
    /// The root given does not contain the cwd.
    RootOutside,
    /// A skill name that fails the policy's name rule.
    InvalidSkillName,
    /// No skill of that name wins for the cwd.
    SkillNotFound,
    /// The winning skill's file could not be read.
    SkillUnreadable,
    /// The policy in force is invalid (the message is the diagnostic).
    PolicyInvalid,
    /// The process ran out of file descriptors; the next call may succeed.
    ResourceExhausted,
    /// The trust store cannot be used.
    TrustStoreInvalid,
    /// No home root to keep the trust store in.
    TrustUnavailable,
    /// The home root given to a loader is not a directory (the Node
    /// binding's constructor; `serve` exits instead).
    BadHome,
    /// An accessed path outside the session's repository root.
    AccessOutsideRoot,
    /// A shipped policy name that no policy has (the Node binding's
    /// constructor; `serve` exits instead).
    UnknownPolicy,
    /// An approval would make the trust store larger than it can be read
    /// at; nothing was written.
    TrustStoreFull,
    /// A request named a `home` the server does not serve (no
    /// `--homes-under`, or not a real directory below it that this user
    /// owns).
    HomeRefused,
    /// No rule of that name is in the snapshot for the cwd.
    RuleNotFound,
    /// The rule's file is not served (see `RuleError::Unreadable`).
    RuleUnreadable,
}

impl ErrorCode {
    /// Every code, in declaration order.
    pub const ALL: &'static [ErrorCode] = <ErrorCode as strum::VariantArray>::VARIANTS;

    /// The kebab-case word.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// The code of a snapshot error (see [`SnapshotError::wire_code`]).
    pub fn of(e: &SnapshotError) -> Self {
        e.wire_code()
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Implements [`miette::Diagnostic`] for an operation's error whose
/// `snapshot()` gives the [`SnapshotError`] inside it, if that is the case,
/// and whose `own_code()` and `own_help()` give its own case's code and help:
/// the snapshot error is rendered exactly as a build renders it (code,
/// help, spans and all), the operation's own cases by their table.
macro_rules! operation_diagnostic {
    ($ty:ty) => {
        impl miette::Diagnostic for $ty {
            fn code<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
                match self.snapshot() {
                    Some(inner) => miette::Diagnostic::code(inner),
                    None => Some(Box::new(self.own_code())),
                }
            }

            fn help<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
                match self.snapshot() {
                    Some(inner) => miette::Diagnostic::help(inner),
                    None => self
                        .own_help()
                        .map(|h| Box::new(h) as Box<dyn std::fmt::Display + 'a>),
                }
            }

            fn severity(&self) -> Option<miette::Severity> {
                self.snapshot().and_then(miette::Diagnostic::severity)
            }

            fn url<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
                self.snapshot().and_then(miette::Diagnostic::url)
            }

            fn source_code(&self) -> Option<&dyn miette::SourceCode> {
                self.snapshot().and_then(miette::Diagnostic::source_code)
            }

            fn labels(&self) -> Option<Box<dyn Iterator<Item = miette::LabeledSpan> + '_>> {
                self.snapshot().and_then(miette::Diagnostic::labels)
            }

            fn related<'a>(
                &'a self,
            ) -> Option<Box<dyn Iterator<Item = &'a dyn miette::Diagnostic> + 'a>> {
                self.snapshot().and_then(miette::Diagnostic::related)
            }

            fn diagnostic_source(&self) -> Option<&dyn miette::Diagnostic> {
                self.snapshot()
                    .and_then(miette::Diagnostic::diagnostic_source)
            }
        }
    };
}
pub(crate) use operation_diagnostic;

/// `--policy NAME`'s help when NAME is no shipped policy: the nearest
/// shipped name, then how to name a file.
fn unknown_policy_help(name: &str) -> String {
    let file = format!(
        "give a shipped name, or a path to a policy file (write ./{} for a file of that name)",
        crate::vocab::unicode::terminal_safe(name)
    );
    match crate::vocab::suggest::closest(name, crate::policy::SHIPPED_NAMES) {
        Some(best) => format!("did you mean `{best}`? Or {file}"),
        None => file,
    }
}
