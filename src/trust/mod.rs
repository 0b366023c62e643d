//! Trust pinned to content (the records are public: the approvals a
//! [`Loader`](crate::Loader) lists and takes): under `trust.project = "pinned"`, a project
//! instruction file or project skill enters the prompt only when the user
//! approved exactly its current content.
//!
//! The approvals live in the trust store, a JSON file in the home root
//! (`trust.store-file`), read and written only through the home root's
//! handle (`sandbox::read_store`, `sandbox::update_store`). For each
//! repository root it records, per project item (keyed by its path relative
//! to the root), the xxh3-128 hash of the approved content, the approved
//! text (up to a bound), when and under which policy. An instruction file's
//! content is the bytes read from it (up to `instructions.max-file-bytes`);
//! a skill's is every file of its folder (its manifest: each file's SHA-256
//! digest, `SKILL.md` included), hashed as one.
//!
//! During a build a gate (`gate::Gate`) answers, item by item, whether the content is
//! the approved one, and collects what is not ([`Unapproved`]); the store
//! is traced like any file read, so an approval changes the fingerprint.

mod diff;
mod gate;
mod records;
mod store;

pub(crate) use diff::work as diff_work;
pub(crate) use gate::Gate;
pub use records::{
    Change, FileChange, ItemKind, Selection, TrustItem, TrustState, TrustStatus, Unapproved,
};
pub(crate) use records::{content_hash, files_hash, hex, key, sha256_digest};
pub use store::StoreProblem;
pub(crate) use store::{Approval, StoreFile, fits, repo_key};
