//! Git's owner rule above the repository, asked through a [`View`]: the
//! first path on the way to a file that another user owns. Shared by the
//! two stages that read above the repository (instruction files and, under
//! `unmarked-levels`, skills), so both refuse the same things.

use std::path::{Path, PathBuf};

use super::View;
use crate::policy::Policy;
use crate::sandbox::Root;
use crate::vocab::origin::RootId;

/// The first path on the way to the file `rel` above the repository (each
/// folder under the ancestor folder, then the file itself, links not
/// followed, then what a link there leads to) that another user owns (root
/// excepted), with that user's uid: git's owner rule, since whoever owns
/// it may have planted it in a shared folder. `None` when every owner is
/// trusted, when nothing is there, or when `roots.safe-directories` trusts
/// the ancestor folder. Each stamp taken is traced (an owner that changes
/// moves the fingerprint).
pub(crate) fn foreign_owner(
    policy: &Policy,
    root: &Root,
    id: RootId,
    rel: &Path,
    view: &mut View<'_>,
) -> Option<(PathBuf, u32)> {
    if ancestor_trusted(policy, root) {
        return None;
    }
    let mut way = PathBuf::new();
    for c in rel.components() {
        way.push(c);
        // What has no owner (nothing there) is not recorded: the
        // candidate's own examination records it.
        let stamp = view.stamp_nofollow_if(root, id, &way, |s| s.owner().is_some());
        let owner = stamp.owner()?;
        if !crate::sandbox::is_trusted_owner(owner) {
            return Some((crate::vocab::paths::join(&root.path, &way), owner));
        }
    }
    // Not recorded: the candidate's own examination records it.
    let owner = view.glance(root, rel).owner()?;
    (!crate::sandbox::is_trusted_owner(owner))
        .then(|| (crate::vocab::paths::join(&root.path, rel), owner))
}

/// Whether `roots.safe-directories` trusts the ancestor folder `root`
/// whoever owns what is in it.
pub(crate) fn ancestor_trusted(policy: &Policy, root: &Root) -> bool {
    policy.is_safe_directory(&root.path.to_string_lossy())
}
