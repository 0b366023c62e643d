//! The vocabulary of `lisa-context serve` and of the Node binding: the
//! requests, the protocol version, what `hello` answers, and the error
//! codes. With the `schema` feature, [`schemas`] gives the JSON Schemas of
//! the snapshot object, of every request and of every response, generated
//! from these types and the snapshot's records (the repository commits them
//! under `schema/`, and a test keeps them equal).
//!
//! Compatibility: within one [`PROTOCOL_VERSION`], requests and responses
//! only gain fields and ops; a field is never renamed, removed or given
//! another type, and an error code is never renamed. A server ignores
//! request fields it does not know, and a client must ignore response
//! fields it does not know.

mod answer;
mod baseline;
pub mod jsonrpc;
mod outputs;
mod sarif;
#[cfg(feature = "schema")]
mod schema;
mod wire;

pub use crate::error::ErrorCode;
pub use crate::skills::{
    MAX_SKILL_BYTES, MAX_SKILL_FILES, ManifestFile, NotServed, SkillManifest, SkillResource,
};
pub use answer::{Answer, ErrorReport, answer};
pub use baseline::{BASELINE_VERSION, Baseline, BaselineError, BaselineFinding};
pub use outputs::{
    ExplainRow, Explanation, SURVEY_PROBLEM_KINDS, SURVEY_PROBLEM_KINDS_ANCHOR, SkillList, Survey,
    SurveyProblem, SurveyProblemKind, SurveyedPolicy, SurveyedRule, survey_problem_kinds_table,
};
#[cfg(feature = "schema")]
pub use schema::schemas;
pub use wire::{
    Hello, POLICIES, PROTOCOL_VERSION, PendingItem, PolicyProblem, Request, TrustDiff, error_chain,
    plain_report, policy_problems,
};
