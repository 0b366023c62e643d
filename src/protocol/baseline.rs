//! A survey's baseline (`survey --write-baseline FILE`, `--baseline
//! FILE`): the problems a repository already knows of, by their stable
//! fingerprint, so that a CI gate fails only on new ones.
//!
//! The file is JSON:
//!
//! ```json
//! {"version": 1, "tool": "lisa-context", "findings": [
//!   {"fingerprint": "…", "kind": "hidden-text", "path": "packages/web/AGENTS.md"}]}
//! ```
//!
//! Only `version` and each finding's `fingerprint` are read back; `kind`
//! and `path` (relative to the repository root) are for the people who
//! review the file.

use std::collections::BTreeSet;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::outputs::Survey;

/// The version of the baseline format this build writes and reads.
pub const BASELINE_VERSION: u64 = 1;

/// The most bytes of a baseline file read.
const MAX_BASELINE_BYTES: u64 = 16 << 20;

/// A survey's known problems.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[non_exhaustive]
pub struct Baseline {
    /// The format's version: [`BASELINE_VERSION`].
    pub version: u64,
    /// The tool that wrote it.
    #[serde(default)]
    pub tool: String,
    /// The known problems.
    pub findings: Vec<BaselineFinding>,
}

/// One known problem.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[non_exhaustive]
pub struct BaselineFinding {
    /// Its fingerprint ([`SurveyProblem::fingerprint`](super::outputs::SurveyProblem::fingerprint)).
    pub fingerprint: String,
    /// Its kind, for a reader.
    #[serde(default)]
    pub kind: String,
    /// Its file relative to the repository root, for a reader.
    #[serde(default)]
    pub path: String,
}

/// Why a baseline could not be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BaselineError {
    /// The file could not be read (missing, not a regular file, too large,
    /// an I/O error).
    #[error("cannot read the baseline {path}: {why}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        why: String,
    },
    /// The file is not a baseline (not JSON of the shape above, or a
    /// version this build does not read).
    #[error("the baseline {path} is malformed: {why}")]
    Malformed {
        /// The file.
        path: String,
        /// Why.
        why: String,
    },
    /// The file could not be written.
    #[error("cannot write the baseline {path}: {source}")]
    Write {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
}

impl Baseline {
    /// The baseline of every problem of `survey`.
    pub fn of(survey: &Survey) -> Self {
        let root = survey
            .policies
            .first()
            .map(|p| p.repo_root.as_str())
            .unwrap_or_default();
        let findings = survey
            .problems
            .iter()
            .map(|p| BaselineFinding {
                fingerprint: p.fingerprint.clone(),
                kind: p.kind.clone(),
                path: Path::new(&p.path)
                    .strip_prefix(root)
                    .ok()
                    .filter(|_| !root.is_empty())
                    .map_or_else(|| p.path.clone(), |r| r.to_string_lossy().into_owned()),
            })
            .collect();
        Self {
            version: BASELINE_VERSION,
            tool: "lisa-context".into(),
            findings,
        }
    }

    /// Parses a baseline from its JSON text (`path` names it in errors).
    pub fn parse(text: &[u8], path: &str) -> Result<Self, BaselineError> {
        let malformed = |why: String| BaselineError::Malformed {
            path: path.to_string(),
            why,
        };
        let b: Baseline = serde_json::from_slice(text).map_err(|e| malformed(e.to_string()))?;
        if b.version != BASELINE_VERSION {
            return Err(malformed(format!(
                "version {} (this build reads version {BASELINE_VERSION})",
                b.version
            )));
        }
        Ok(b)
    }

    /// Reads the baseline file the user named.
    pub fn read(path: &Path) -> Result<Self, BaselineError> {
        let shown = path.display().to_string();
        let bytes = crate::sandbox::read_user_file(path, MAX_BASELINE_BYTES).map_err(|e| {
            let why = match e {
                crate::sandbox::UserFileError::NotFound(_) => "no such file".to_string(),
                crate::sandbox::UserFileError::Io(e) => e.to_string(),
                crate::sandbox::UserFileError::NotAFile => "not a regular file".to_string(),
                crate::sandbox::UserFileError::TooLarge => {
                    format!("larger than {MAX_BASELINE_BYTES} bytes")
                }
            };
            BaselineError::Read {
                path: shown.clone(),
                why,
            }
        })?;
        Self::parse(&bytes, &shown)
    }

    /// Writes this baseline to the file the user named (pretty JSON, a
    /// final newline).
    pub fn write(&self, path: &Path) -> Result<(), BaselineError> {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        crate::sandbox::write_user_file(path, text.as_bytes()).map_err(|source| {
            BaselineError::Write {
                path: path.display().to_string(),
                source,
            }
        })
    }

    /// The fingerprints it knows.
    pub fn fingerprints(&self) -> BTreeSet<&str> {
        self.findings
            .iter()
            .map(|f| f.fingerprint.as_str())
            .collect()
    }
}
