//! Where a traced path was examined: under which root, or as which kind of
//! path outside the roots. The sandbox examines a path again by its place
//! (`RootSet::restamp`); the trace records it with each path.

use crate::vocab::origin::RootId;

/// Where a traced path was examined, and so how it is examined again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Place {
    /// Under a root, relative to it.
    Within(RootId),
    /// A repository marker: an absolute path outside every root, final link
    /// not followed.
    Marker,
    /// A directory the caller named (the cwd, the home root, the repository
    /// root): an absolute path, links followed.
    Directory,
    /// A directory holding a repository marker, examined for its owner: an
    /// absolute path, links followed.
    Owner,
    /// The state folder, examined for who owns it and who may write it
    /// (whether it is used): an absolute path, links followed.
    StateFolder,
    /// A file of the state folder (the nonce key, the trust store, the
    /// memo), examined the same way: an absolute path, final link not
    /// followed.
    StateFile,
}

impl Place {
    /// The number that stands for the place in the fingerprint.
    pub(crate) fn code(self) -> u64 {
        match self {
            Place::Within(RootId::Home) => 0,
            Place::Within(RootId::Repo) => 1,
            Place::Marker => 2,
            Place::Directory => 3,
            Place::Owner => 4,
            Place::Within(RootId::Named(i)) => 5 + i as u64,
            Place::Within(RootId::Ancestor(k)) => (1 << 32) + k as u64,
            Place::Within(RootId::State) => 1 << 33,
            Place::StateFolder => 1 << 34,
            Place::StateFile => (1 << 34) + 1,
        }
    }
}
