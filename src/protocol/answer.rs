//! The one operation core: a typed request answered with a [`Loader`].
//!
//! `serve`, the Node binding and the Python binding each call [`answer`]
//! and only translate its types (a JSON line, a JavaScript value, a Python
//! object). What an op does, which loader call it makes, and what its error
//! carries are decided here, once, so a front end added later (an MCP
//! server) inherits all of it.

use std::sync::Arc;

use serde::Serialize;

use super::wire::{Hello, PolicyProblem, Request, TrustDiff, error_chain, plain_report};
use crate::access::{Access, AccessError};
use crate::error::{BootstrapError, ErrorCode, SnapshotError};
use crate::loader::{Loader, SkillError, SkillFile};
use crate::on_request::{RuleError, RuleText};
use crate::review::TrustError;
use crate::skills::{SkillManifest, SkillResource};
use crate::snapshot::Snapshot;
use crate::trust::TrustStatus;

/// What an op answers: the body of a response line (the server writes the
/// request's `id` before it). Serialized, each variant is one JSON object
/// whose field names are the protocol's (`snapshot`, `fingerprint`,
/// `changed`, `skill`, `rule`, `trust`, `trustDiff`, `access`, `hello`).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(untagged)]
#[non_exhaustive]
pub enum Answer {
    /// The answer to `hello`.
    Hello {
        /// What this build speaks.
        hello: Hello,
    },
    /// The answer to `snapshot`.
    Snapshot {
        /// The snapshot object.
        snapshot: Arc<Snapshot>,
    },
    /// The answer to `fingerprint`.
    Fingerprint {
        /// 32 hex digits.
        fingerprint: String,
    },
    /// The answer to `refresh` when the fingerprint still holds.
    Unchanged {
        /// Always `false`.
        #[cfg_attr(feature = "schema", schemars(extend("const" = false)))]
        changed: bool,
    },
    /// The answer to `refresh` when the fingerprint moved.
    Changed {
        /// Always `true`.
        #[cfg_attr(feature = "schema", schemars(extend("const" = true)))]
        changed: bool,
        /// The new snapshot.
        snapshot: Arc<Snapshot>,
    },
    /// The answer to `skill`.
    Skill {
        /// The skill's `SKILL.md` and where it came from.
        skill: SkillFile,
    },
    /// The answer to `rule`.
    Rule {
        /// The rule's text and where it came from.
        rule: RuleText,
    },
    /// The answer to `trust-status`.
    Trust {
        /// Where the cwd's project items stand with the user.
        trust: TrustStatus,
    },
    /// The answer to `trust-diff`.
    TrustDiff {
        /// The pending items, each with its diff.
        #[serde(rename = "trustDiff")]
        #[cfg_attr(feature = "schema", schemars(rename = "trustDiff"))]
        trust_diff: TrustDiff,
    },
    /// The answer to `access`.
    Access {
        /// What touching the path added to the session.
        access: Access,
    },
    /// The answer to `skill-manifests`.
    SkillManifests {
        /// One manifest per skill asked for.
        manifests: Vec<SkillManifest>,
    },
    /// The answer to `skill-resource`.
    SkillResource {
        /// The file, its digest and size.
        resource: SkillResource,
    },
}

/// Why a request failed, as every front end reports it: the same fields
/// through `serve` (`error`), the Node binding (`LisaContextError`) and the
/// Python binding (`LisaContextError`), rendered once here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "ErrorBody"))]
#[non_exhaustive]
pub struct ErrorReport {
    /// The stable code (`error.code` on the wire, the bindings' exception
    /// code).
    pub code: ErrorCode,
    /// For a person (for `policy-invalid`, the diagnostic as `policy
    /// check` prints it; otherwise the error and its causes on one line).
    pub message: String,
    /// What to do about it, when the command line would say something
    /// (for `skill-not-found`: the nearest name and those available).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub help: Option<String>,
    /// For `skill-not-found`: the skills available from the cwd, in name
    /// order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub available: Option<Vec<String>>,
    /// For `policy-invalid`: each problem, for a program.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problems: Option<Vec<PolicyProblem>>,
}

impl ErrorReport {
    /// A report with a code and a message alone (a request the server
    /// could not read, a line too long).
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ErrorReport {
            code,
            message: message.into(),
            help: None,
            available: None,
            problems: None,
        }
    }

    /// The report of a snapshot error.
    pub fn of_snapshot(e: &SnapshotError) -> Self {
        if let SnapshotError::PolicyInvalid(failure) = e {
            return ErrorReport {
                problems: Some(super::wire::policy_problems(e)),
                ..Self::new(ErrorCode::of(e), plain_report(failure))
            };
        }
        Self::of_diagnostic(e, ErrorCode::of(e))
    }

    /// The report of an error whose code is `code`: its message and causes
    /// on one line, and its help.
    fn of_diagnostic(e: &dyn miette::Diagnostic, code: ErrorCode) -> Self {
        ErrorReport {
            help: e.help().map(|h| h.to_string()),
            ..Self::new(code, error_chain(e))
        }
    }

    /// The report of an on-access load's error.
    pub fn of_access(e: &AccessError) -> Self {
        match e.snapshot() {
            Some(inner) => Self::of_snapshot(inner),
            None => Self::of_diagnostic(e, e.wire_code()),
        }
    }

    /// The report of a rule's error.
    pub fn of_rule(e: &RuleError) -> Self {
        match e.snapshot() {
            Some(inner) => Self::of_snapshot(inner),
            None => Self::of_diagnostic(e, e.wire_code()),
        }
    }

    /// The report of a skill's error (for `skill-not-found`, the skills
    /// available as well).
    pub fn of_skill(e: &SkillError) -> Self {
        match e {
            SkillError::NotFound { available, .. } => ErrorReport {
                available: Some(available.clone()),
                ..Self::of_diagnostic(e, e.wire_code())
            },
            _ => match e.snapshot() {
                Some(inner) => Self::of_snapshot(inner),
                None => Self::of_diagnostic(e, e.wire_code()),
            },
        }
    }

    /// The report of a trust error (a snapshot error inside it as
    /// [`of_snapshot`](Self::of_snapshot) gives it).
    pub fn of_trust(e: &TrustError) -> Self {
        match e {
            TrustError::Snapshot(inner) => Self::of_snapshot(inner),
            other => Self::of_diagnostic(other, ErrorCode::of_trust(other)),
        }
    }

    /// The report of an error setting up a loader (a binding's
    /// constructor, a home a server was asked for).
    pub fn of_bootstrap(e: &BootstrapError) -> Self {
        match e {
            BootstrapError::Policy(_) => ErrorReport {
                help: miette::Diagnostic::help(e).map(|h| h.to_string()),
                ..Self::new(e.wire_code(), plain_report(e))
            },
            _ => Self::of_diagnostic(e, e.wire_code()),
        }
    }
}

impl From<&SnapshotError> for ErrorReport {
    fn from(e: &SnapshotError) -> Self {
        Self::of_snapshot(e)
    }
}

impl From<&AccessError> for ErrorReport {
    fn from(e: &AccessError) -> Self {
        Self::of_access(e)
    }
}

impl From<&RuleError> for ErrorReport {
    fn from(e: &RuleError) -> Self {
        Self::of_rule(e)
    }
}

impl From<&SkillError> for ErrorReport {
    fn from(e: &SkillError) -> Self {
        Self::of_skill(e)
    }
}

impl From<&TrustError> for ErrorReport {
    fn from(e: &TrustError) -> Self {
        Self::of_trust(e)
    }
}

impl From<&BootstrapError> for ErrorReport {
    fn from(e: &BootstrapError) -> Self {
        Self::of_bootstrap(e)
    }
}

/// Answers `request` with `loader`: the one place an op is carried out.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// # std::fs::create_dir_all(dir.path().join("repo/.git")).unwrap();
/// # std::fs::write(dir.path().join("repo/AGENTS.md"), "Use tabs.").unwrap();
/// # std::fs::create_dir_all(dir.path().join("home")).unwrap();
/// use lisa_context::Loader;
/// use lisa_context::protocol::{Answer, Request, answer};
///
/// let loader = Loader::builder().home(dir.path().join("home")).build_lenient().unwrap();
/// let request: Request = serde_json::from_value(serde_json::json!({
///     "op": "snapshot",
///     "cwd": dir.path().join("repo"),
/// })).unwrap();
/// let Ok(Answer::Snapshot { snapshot }) = answer(&loader, request) else { panic!() };
/// assert!(snapshot.prompt.contains("Use tabs."));
/// ```
pub fn answer(loader: &Loader, request: Request) -> Result<Answer, ErrorReport> {
    let snapshot_error = |e: SnapshotError| ErrorReport::of_snapshot(&e);
    let trust_error = |e: TrustError| ErrorReport::of_trust(&e);
    match request {
        Request::Hello {} => Ok(Answer::Hello {
            hello: Hello::new(),
        }),
        Request::Snapshot { cwd, root } => loader
            .snapshot_in(&cwd, root.as_deref())
            .map(|snapshot| Answer::Snapshot { snapshot })
            .map_err(snapshot_error),
        Request::Fingerprint { cwd, root } => loader
            .fingerprint_in(&cwd, root.as_deref())
            .map(|fingerprint| Answer::Fingerprint { fingerprint })
            .map_err(snapshot_error),
        Request::Refresh {
            cwd,
            root,
            fingerprint,
        } => loader
            .refresh_in(&cwd, root.as_deref(), &fingerprint)
            .map(|fresh| match fresh {
                None => Answer::Unchanged { changed: false },
                Some(snapshot) => Answer::Changed {
                    changed: true,
                    snapshot,
                },
            })
            .map_err(snapshot_error),
        Request::Skill { cwd, root, name } => loader
            .skill_in(&cwd, root.as_deref(), &name)
            .map(|skill| Answer::Skill { skill })
            .map_err(|e| ErrorReport::of_skill(&e)),
        Request::Rule { cwd, root, name } => loader
            .rule_in(&cwd, root.as_deref(), &name)
            .map(|rule| Answer::Rule { rule })
            .map_err(|e| ErrorReport::of_rule(&e)),
        Request::TrustStatus { cwd, root } => loader
            .trust_status(&cwd, root.as_deref())
            .map(|trust| Answer::Trust { trust })
            .map_err(trust_error),
        Request::TrustDiff { cwd, root } => loader
            .trust_status(&cwd, root.as_deref())
            .map(|status| Answer::TrustDiff {
                trust_diff: TrustDiff::of(&status),
            })
            .map_err(trust_error),
        Request::Access {
            cwd,
            root,
            path,
            session,
        } => loader
            .access_named(
                session.as_deref().unwrap_or(""),
                &cwd,
                root.as_deref(),
                &path,
            )
            .map(|access| Answer::Access { access })
            .map_err(|e| ErrorReport::of_access(&e)),
        Request::SkillManifests { cwd, root, names } => loader
            .skill_manifests_in(&cwd, root.as_deref(), names.as_deref())
            .map(|manifests| Answer::SkillManifests { manifests })
            .map_err(|e| ErrorReport::of_skill(&e)),
        Request::SkillResource {
            cwd,
            root,
            name,
            location,
            path,
        } => loader
            .skill_resource_in(&cwd, root.as_deref(), &name, location.as_deref(), &path)
            .map(|resource| Answer::SkillResource { resource })
            .map_err(|e| ErrorReport::of_skill(&e)),
    }
}
