//! What the loader's caches are keyed by.

use std::path::PathBuf;

/// A cache key: the loader's number in its group (see `group`), the cwd and
/// the explicit root, both normalized.
pub(super) type Key = (u64, PathBuf, Option<PathBuf>);

/// A session kept by [`Loader::access_named`](super::Loader::access_named): its name, cwd and root.
pub(super) type SessionKey = (String, PathBuf, Option<PathBuf>);
