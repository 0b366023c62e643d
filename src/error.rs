//! Errors of building a snapshot (policy errors live in [`crate::policy`]).

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
    /// A skill name that fails the policy's name rule, or holds a character
    /// a reader does not see (checked before any file is touched).
    #[error(
        "{0:?} is not a valid skill name: it fails the policy's name rule or holds a character a reader does not see"
    )]
    InvalidSkillName(String),
    /// No skill of that name wins for this cwd.
    #[error(
        "no skill named {name:?} is available from {}",
        crate::vocab::paths::shown(cwd)
    )]
    SkillNotFound {
        /// The name asked for.
        name: String,
        /// The cwd it was resolved for.
        cwd: PathBuf,
        /// The skills available from that cwd, in name order (the help
        /// names the nearest and lists them).
        available: Vec<String>,
    },
    /// The policy in force could not be loaded: a policy file a watching
    /// loader reads (see [`crate::LoaderBuilder::build`]) was edited into an
    /// invalid one, or was invalid when a lenient loader started. Every call
    /// fails this way until the file is fixed. The diagnostic is the one the
    /// bootstrap gave, spans and all.
    #[error(transparent)]
    PolicyInvalid(PolicyFailure),
    /// An on-access path outside the session's repository root.
    #[error(
        "{} is outside the repository root {}",
        crate::vocab::paths::shown(path),
        crate::vocab::paths::shown(root)
    )]
    AccessOutsideRoot {
        /// The path, absolute and normalized.
        path: PathBuf,
        /// The session's repository root.
        root: PathBuf,
    },
    /// An `access` session name longer than
    /// [`Loader::MAX_SESSION_NAME_BYTES`](crate::Loader::MAX_SESSION_NAME_BYTES)
    /// (the loader keeps each session by its name: a name is bounded so no
    /// request can make it hold more).
    #[error("the session name is {length} bytes long; at most {max} are allowed")]
    SessionNameTooLong {
        /// The name's length in bytes.
        length: usize,
        /// The most allowed.
        max: usize,
    },
    /// An on-access path longer than
    /// [`Loader::MAX_ACCESS_PATH_BYTES`](crate::Loader::MAX_ACCESS_PATH_BYTES)
    /// as given, or deeper below the repository root than
    /// [`Loader::MAX_ACCESS_PATH_DEPTH`](crate::Loader::MAX_ACCESS_PATH_DEPTH)
    /// levels once normalized: refused before anything is read, so that no
    /// path can make an access cost more than those bounds allow.
    #[error("{}", path_too_long(*length, *depth, *max_bytes, *max_depth))]
    AccessPathTooLong {
        /// The path's length in bytes, as given.
        length: usize,
        /// Its depth below the repository root (0 when the length alone
        /// refused it, before it was normalized).
        depth: usize,
        /// The longest path allowed, in bytes.
        max_bytes: usize,
        /// The deepest path allowed, in levels below the repository root.
        max_depth: usize,
    },
    /// The winning skill's file could not be read in full.
    #[error(
        "cannot read skill file {}: {reason}",
        crate::vocab::paths::shown(path)
    )]
    SkillUnreadable {
        /// The SKILL.md.
        path: PathBuf,
        /// Why.
        reason: SkillReadError,
    },
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
    /// No rule (`[rules]`) of that name is in the snapshot for this cwd.
    #[error(
        "no rule named {name:?} is available from {}",
        crate::vocab::paths::shown(cwd)
    )]
    RuleNotFound {
        /// The name asked for (cut to a bounded length for display).
        name: String,
        /// The cwd it was resolved for.
        cwd: PathBuf,
        /// The rules' names served from that cwd, in name order, each
        /// once.
        available: Vec<String>,
        /// When a rule of that very name exists but is not served: the
        /// rule that holds its name in its place (the user's own rule
        /// before a project's, then the deepest folder's; names that look
        /// alike are one name, and so are names equal without regard to
        /// case under `rules.one-per-name`).
        held_by: Option<Box<RuleHolder>>,
    },
    /// The rule's file is not served: it went through the same steps as
    /// a chain file and one refused it (not approved under
    /// `trust.project = "pinned"`, a link the policy refuses, gone, blank,
    /// not text...).
    #[error(
        "cannot serve rule file {}: {}",
        crate::vocab::paths::shown(path),
        reason.as_str()
    )]
    RuleUnreadable {
        /// The rule's file.
        path: PathBuf,
        /// Why, as a snapshot's `skipped[].reason` says it.
        reason: Reason,
    },
}

/// The rule that holds a name asked for in place of a rule of that very
/// name ([`SnapshotError::RuleNotFound`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RuleHolder {
    /// Its name, as written.
    pub name: String,
    /// Home or project.
    pub origin: crate::vocab::origin::Origin,
    /// Its file.
    pub path: PathBuf,
}

/// Why the winning skill's `SKILL.md` could not be read in full
/// ([`SnapshotError::SkillUnreadable`]).
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

/// The message of [`SnapshotError::AccessPathTooLong`]: the bound the path
/// broke.
fn path_too_long(length: usize, depth: usize, max_bytes: usize, max_depth: usize) -> String {
    if length > max_bytes {
        format!("the accessed path is {length} bytes long; at most {max_bytes} are allowed")
    } else {
        format!(
            "the accessed path lies {depth} levels below the repository root; at most {max_depth} are allowed"
        )
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
            Self::InvalidSkillName(_) => (Some("skill::invalid-name"), ErrorCode::InvalidSkillName),
            Self::SkillNotFound { .. } => (Some("skill::not-found"), ErrorCode::SkillNotFound),
            // A served home refused while its policy was read says so.
            Self::PolicyInvalid(f) if matches!(f.error(), BootstrapError::HomeRefused { .. }) => {
                (None, ErrorCode::HomeRefused)
            }
            Self::PolicyInvalid(_) => (None, ErrorCode::PolicyInvalid),
            Self::HomeRefused { .. } => (Some("snapshot::home-refused"), ErrorCode::HomeRefused),
            Self::AccessOutsideRoot { .. } => {
                (Some("access::outside-root"), ErrorCode::AccessOutsideRoot)
            }
            Self::SkillUnreadable { .. } => (Some("skill::unreadable"), ErrorCode::SkillUnreadable),
            Self::RuleNotFound { .. } => (Some("rule::not-found"), ErrorCode::RuleNotFound),
            Self::RuleUnreadable { .. } => (Some("rule::unreadable"), ErrorCode::RuleUnreadable),
            Self::SessionNameTooLong { .. } => {
                (Some("access::session-name-too-long"), ErrorCode::BadRequest)
            }
            Self::AccessPathTooLong { .. } => {
                (Some("access::path-too-long"), ErrorCode::BadRequest)
            }
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
            Self::SkillNotFound {
                name, available, ..
            } => Some(Box::new(skill_advice(name, available))),
            Self::RuleNotFound {
                name,
                available,
                held_by,
                ..
            } => Some(Box::new(rule_advice(name, available, held_by.as_deref()))),
            Self::AccessOutsideRoot { .. } => Some(Box::new(
                "only paths under the repository root load instruction files on access",
            )),
            Self::PolicyInvalid(inner) => inner.help(),
            Self::HomeRefused { .. } => Some(Box::new(
                "a served home must stay the real directory below --homes-under, owned by this \
                 user, that the server admitted; a home replaced is admitted afresh, or refused",
            )),
            Self::RelativeCwd(_)
            | Self::Cwd { .. }
            | Self::CwdNotADirectory(_)
            | Self::OpenRoot { .. }
            | Self::InvalidSkillName(_)
            | Self::SkillUnreadable { .. }
            | Self::RuleUnreadable { .. }
            | Self::SessionNameTooLong { .. }
            | Self::AccessPathTooLong { .. } => None,
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

/// "did you mean" for a skill name, and the names available.
fn skill_advice(name: &str, available: &[String]) -> String {
    name_advice("skill", name, available)
}

/// The help of [`SnapshotError::RuleNotFound`]: why a rule of that name
/// is not served, when one exists; else the nearest name.
fn rule_advice(name: &str, available: &[String], held_by: Option<&RuleHolder>) -> String {
    let Some(holder) = held_by else {
        return name_advice("rule", name, available);
    };
    let safe = |n: &str| crate::vocab::unicode::terminal_safe(n).into_owned();
    let listed = available
        .iter()
        .map(|n| safe(n))
        .collect::<Vec<_>>()
        .join(", ");
    // Why the two are one name: the one-per-name rule compares without
    // case; any other pair looks alike.
    let why = if holder.name.trim().to_lowercase() == name.trim().to_lowercase() {
        "rules whose names differ only in case are one rule under `rules.one-per-name`"
    } else {
        "names that look alike are one name"
    };
    format!(
        "`{}` is not served: the {} rule `{}` ({}) holds its name ({why}; the user's own rule \
         comes first, then the deepest folder's). Available here: {listed}",
        safe(name),
        holder.origin.as_str(),
        safe(&holder.name),
        crate::vocab::paths::shown(&holder.path),
    )
}

/// The nearest of `available` names of a `kind` to `name`, and the list.
fn name_advice(kind: &str, name: &str, available: &[String]) -> String {
    if available.is_empty() {
        return format!("no {kind} is available from this directory");
    }
    let names: Vec<&str> = available.iter().map(String::as_str).collect();
    let best = crate::vocab::suggest::closest(name, &names);
    // The names come from folders and frontmatter a repository controls:
    // shown terminal-safe, so none can move the cursor or set a title.
    let safe = |n: &str| crate::vocab::unicode::terminal_safe(n).into_owned();
    let listed = available
        .iter()
        .map(|n| safe(n))
        .collect::<Vec<_>>()
        .join(", ");
    match best {
        Some(best) => format!("did you mean `{}`? Available here: {listed}", safe(best)),
        None => format!("available here: {listed}"),
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
        help(
            "give a shipped name, or a path to a policy file (write ./{name} for a file of that name)"
        )
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
    /// The rule's file is not served (see `SnapshotError::RuleUnreadable`).
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skill_advice_suggests_the_nearest_name() {
        let names = vec!["changelog".to_string(), "release".to_string()];
        let advice = skill_advice("releas", &names);
        assert!(advice.starts_with("did you mean `release`?"), "{advice}");
        assert!(advice.ends_with("changelog, release"), "{advice}");
        let none = skill_advice("zzzzzzzz", &names);
        assert_eq!(none, "available here: changelog, release");
    }
}
