//! Policy errors, as miette diagnostics that label the offending span.

use std::fmt;
use std::io;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;

use miette::{Diagnostic, LabeledSpan, NamedSource, SourceCode};

/// A policy file's text as its problems show it: one copy per file, shared
/// by every problem found in it (a problem holds a reference, not a copy).
pub(crate) type Source = Arc<NamedSource<String>>;

/// The text of the file `name` as its problems show it (see [`Source`]).
pub(crate) fn source(name: &str, text: &str) -> Source {
    crate::vocab::counters::add(
        crate::vocab::counters::Counter::PolicySourceBytes,
        text.len() as u64,
    );
    Arc::new(NamedSource::new(name, text.to_string()))
}

/// The most problems one report holds (the first ones in file order); the
/// rest are counted in [`InvalidPolicy::omitted`] and said in one line.
pub const MAX_REPORTED_PROBLEMS: usize = 50;

/// Every way a policy can be wrong, each with a stable kebab-case code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProblemKind {
    /// The file is not valid TOML.
    Syntax,
    /// A key the schema does not know.
    UnknownKey,
    /// A value of the wrong type.
    WrongType,
    /// A word that is not one of the values its key takes (`symlinks =
    /// "nevr"`, `extends = "claude"`).
    UnknownValue,
    /// A required key is absent.
    MissingField,
    /// `version` is not a version this build understands.
    UnsupportedVersion,
    /// A regular expression that does not compile.
    InvalidRegex,
    /// A glob that does not compile.
    InvalidGlob,
    /// A template whose braces do not parse.
    TemplateSyntax,
    /// A template placeholder its field does not provide.
    UnknownPlaceholder,
    /// A template lacks a placeholder it must carry.
    MissingPlaceholder,
    /// Two skill sources share a rank.
    DuplicateRank,
    /// A rank below zero.
    NegativeRank,
    /// A number outside its allowed range.
    OutOfRange,
    /// A value of the right type that the engine cannot use (an empty list, a
    /// file name holding a slash, a path leaving its root...).
    InvalidValue,
    /// A key written in a spelling read for one more release only (a compat
    /// key at its section's top level, `instructions.trim` for
    /// `instructions.compat.trim`). A warning: the file is taken.
    DeprecatedKey,
    /// One key set twice in one file, in its old spelling and its new one.
    DuplicateKey,
}

impl ProblemKind {
    /// The stable code, e.g. `policy::unknown-key`.
    pub fn code(self) -> &'static str {
        match self {
            Self::Syntax => "policy::syntax",
            Self::UnknownKey => "policy::unknown-key",
            Self::WrongType => "policy::wrong-type",
            Self::UnknownValue => "policy::unknown-value",
            Self::MissingField => "policy::missing-field",
            Self::UnsupportedVersion => "policy::unsupported-version",
            Self::InvalidRegex => "policy::invalid-regex",
            Self::InvalidGlob => "policy::invalid-glob",
            Self::TemplateSyntax => "policy::template-syntax",
            Self::UnknownPlaceholder => "policy::unknown-placeholder",
            Self::MissingPlaceholder => "policy::missing-placeholder",
            Self::DuplicateRank => "policy::duplicate-rank",
            Self::NegativeRank => "policy::negative-rank",
            Self::OutOfRange => "policy::out-of-range",
            Self::InvalidValue => "policy::invalid-value",
            Self::DeprecatedKey => "policy::deprecated-key",
            Self::DuplicateKey => "policy::duplicate-key",
        }
    }

    /// Whether a problem of this kind leaves the file usable: a warning,
    /// not an error.
    pub fn is_warning(self) -> bool {
        self == Self::DeprecatedKey
    }
}

/// One problem in one policy file, with the span it concerns.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Problem {
    /// What kind of problem.
    pub kind: ProblemKind,
    /// The one-line message.
    pub message: String,
    /// The text attached to the span.
    pub label: String,
    /// Byte range in the file.
    pub span: Range<usize>,
    /// How to fix it, when there is something useful to say.
    pub help: Option<String>,
    /// Further spans worth pointing at (the other half of a conflict).
    pub related_spans: Vec<(Range<usize>, String)>,
    src: Source,
}

impl Problem {
    pub(crate) fn new(
        src: &Source,
        kind: ProblemKind,
        span: Range<usize>,
        message: impl Into<String>,
        label: impl Into<String>,
    ) -> Self {
        Self {
            kind,
            message: message.into(),
            label: label.into(),
            span,
            help: None,
            related_spans: Vec::new(),
            src: Arc::clone(src),
        }
    }

    pub(crate) fn with_label(mut self, span: Range<usize>, label: impl Into<String>) -> Self {
        self.related_spans.push((span, label.into()));
        self
    }

    pub(crate) fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// The display name of the file the problem is in (its path as shown,
    /// or `<built-in policies/NAME.toml>`).
    pub fn file_name(&self) -> &str {
        self.src.name()
    }

    /// The file's text.
    fn text(&self) -> &str {
        self.src.inner()
    }

    /// Where the span starts: line and column, both from 1, the column in
    /// characters.
    pub fn line_column(&self) -> (usize, usize) {
        let text = self.text();
        let at = crate::vocab::text::floor_char_boundary(text, self.span.start.min(text.len()));
        let before = &text[..at];
        let line = before.matches('\n').count() + 1;
        let start = before.rfind('\n').map_or(0, |i| i + 1);
        (line, before[start..].chars().count() + 1)
    }

    /// The dotted key the span lies on, as far as the file's text tells
    /// it: the table header above the span's line and the key written at
    /// the start of that line (`trust.project`); the table alone when the
    /// line holds no `key =`; `None` at the top of the file on no key.
    pub fn key(&self) -> Option<String> {
        let text = self.text();
        let at = crate::vocab::text::floor_char_boundary(text, self.span.start.min(text.len()));
        let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
        let line_end = text[at..].find('\n').map_or(text.len(), |i| at + i);
        let line = text[line_start..line_end].trim();
        let table = text[..line_start]
            .lines()
            .rev()
            .map(str::trim)
            .find(|l| l.starts_with('['))
            .map(|l| l.trim_matches(|c| c == '[' || c == ']').trim().to_string());
        let own = if line.starts_with('[') {
            None
        } else {
            line.split_once('=')
                .map(|(k, _)| k.trim().trim_matches('"').to_string())
                .filter(|k| !k.is_empty())
        };
        match (table, own) {
            (Some(t), Some(k)) => Some(format!("{t}.{k}")),
            (None, Some(k)) => Some(k),
            (Some(t), None) => Some(t),
            (None, None) if line.starts_with('[') => Some(
                line.trim_matches(|c| c == '[' || c == ']')
                    .trim()
                    .to_string(),
            ),
            (None, None) => None,
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Problem {}

impl Diagnostic for Problem {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        Some(Box::new(self.kind.code()))
    }

    fn severity(&self) -> Option<miette::Severity> {
        Some(if self.kind.is_warning() {
            miette::Severity::Warning
        } else {
            miette::Severity::Error
        })
    }

    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.help
            .as_ref()
            .map(|h| Box::new(h) as Box<dyn fmt::Display>)
    }

    fn source_code(&self) -> Option<&dyn SourceCode> {
        Some(&self.src)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        let len = self.span.end.saturating_sub(self.span.start);
        let main = LabeledSpan::new(Some(self.label.clone()), self.span.start, len);
        let others = self.related_spans.iter().map(|(span, label)| {
            LabeledSpan::new(
                Some(label.clone()),
                span.start,
                span.end.saturating_sub(span.start),
            )
        });
        Some(Box::new(std::iter::once(main).chain(others)))
    }
}

/// The problems found in one policy file: the first
/// [`MAX_REPORTED_PROBLEMS`] in file order, and how many more there were.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{name}: {} problem{} in this policy file", self.count(), if self.count() == 1 { "" } else { "s" })]
#[non_exhaustive]
pub struct InvalidPolicy {
    /// The file's display name.
    pub name: String,
    /// The problems reported, in file order (at most
    /// [`MAX_REPORTED_PROBLEMS`]).
    pub problems: Vec<Problem>,
    /// How many problems were found beyond those: counted, not reported.
    pub omitted: usize,
    /// The line that says so, as a diagnostic of its own after the others.
    more: Option<More>,
}

impl InvalidPolicy {
    /// The report for `name` of `problems`, sorted by where they start and
    /// cut to the first [`MAX_REPORTED_PROBLEMS`].
    pub(crate) fn new(name: String, mut problems: Vec<Problem>) -> Self {
        problems.sort_by_key(|p| p.span.start);
        let omitted = problems.len().saturating_sub(MAX_REPORTED_PROBLEMS);
        problems.truncate(MAX_REPORTED_PROBLEMS);
        crate::vocab::counters::add(
            crate::vocab::counters::Counter::PolicyProblemsKept,
            problems.len() as u64,
        );
        let more = (omitted > 0).then_some(More { omitted });
        Self {
            name,
            problems,
            omitted,
            more,
        }
    }

    /// How many problems were found, reported or not.
    pub fn count(&self) -> usize {
        self.problems.len() + self.omitted
    }
}

impl Diagnostic for InvalidPolicy {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        Some(Box::new("policy::invalid"))
    }

    fn related<'a>(&'a self) -> Option<Box<dyn Iterator<Item = &'a dyn Diagnostic> + 'a>> {
        let more = self.more.iter().map(|m| m as &dyn Diagnostic);
        Some(Box::new(
            self.problems
                .iter()
                .map(|p| p as &dyn Diagnostic)
                .chain(more),
        ))
    }
}

/// The last line of a report cut short: how many problems it leaves out.
#[derive(Debug, Clone, thiserror::Error)]
#[error("and {omitted} more problem{} in this policy file, not shown (a report shows the first {MAX_REPORTED_PROBLEMS})", if *omitted == 1 { "" } else { "s" })]
struct More {
    omitted: usize,
}

impl Diagnostic for More {
    fn severity(&self) -> Option<miette::Severity> {
        Some(miette::Severity::Advice)
    }
}

/// Why a policy could not be loaded.
#[derive(Debug, thiserror::Error, Diagnostic)]
#[non_exhaustive]
pub enum PolicyError {
    /// The policy file could not be opened or read.
    #[error("cannot read policy file {}", crate::vocab::paths::shown(path))]
    #[diagnostic(code(policy::unreadable))]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// The policy path names something other than a regular file (a FIFO, a
    /// directory, a device).
    #[error(
        "policy file {} is not a regular file",
        crate::vocab::paths::shown(path)
    )]
    #[diagnostic(
        code("policy::not-a-file"),
        help("a policy must be a regular file (a symlink to one is fine)")
    )]
    NotAFile {
        /// The file.
        path: PathBuf,
    },
    /// The policy file is larger than any policy needs to be.
    #[error(
        "policy file {} is larger than {limit} bytes",
        crate::vocab::paths::shown(path)
    )]
    #[diagnostic(code("policy::too-large"))]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// The limit.
        limit: u64,
    },
    /// The policy file is not valid UTF-8.
    #[error("policy file {} is not valid UTF-8", crate::vocab::paths::shown(path))]
    #[diagnostic(code("policy::not-utf8"))]
    NotUtf8 {
        /// The file.
        path: PathBuf,
    },
    /// The file was read but its content is wrong.
    #[error(transparent)]
    #[diagnostic(transparent)]
    Invalid(#[from] InvalidPolicy),
}
