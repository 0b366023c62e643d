//! The skills stage of a build: discover, let names be claimed, and treat
//! the winners' descriptions.

use std::path::Path;

use super::cache::ParseCache;
use super::discover;
use super::resolve::{self, SkillSet};
use crate::hidden::{self, HiddenFinding};
use crate::policy::Policy;
use crate::sandbox::{Root, Roots};
use crate::trace::View;
use crate::trust::{self, Gate};
use crate::vocab::origin::Origin;

/// The frontmatter memo file in the state root and its largest size, when
/// the policy names one and there is a state root.
fn memo_place<'a>(policy: &'a Policy, roots: &'a Roots) -> Option<(&'a Root, &'a Path, u64)> {
    let rel = &policy.skills.frontmatter_memo_file;
    let max = u64::try_from(policy.skills.frontmatter_memo_max_bytes).ok()?;
    if rel.is_empty() || max == 0 {
        return None;
    }
    Some((roots.set.state()?.0, Path::new(rel), max))
}

/// The most bytes of project skill text one review build keeps (for
/// `trust diff`): a repository of thousands of large skills costs a review
/// this much, not all of them. A skill past it is shown by its hash alone.
const REVIEW_TEXT_BUDGET: usize = 32 * 1024 * 1024;

/// A project skill's whole text for a review build: read again, in listing
/// order, while the budget lasts, and kept only when the bytes are still the
/// ones hashed (a file changed in between has no text: its hash says what
/// the build saw).
fn review_text(
    policy: &Policy,
    roots: &Roots,
    f: &super::found::Found,
    hash: &str,
    budget: &mut usize,
) -> Option<String> {
    let root = roots.set.get(f.root)?;
    let bytes = super::read::whole_bytes(policy, root, &f.rel).ok()?;
    if bytes.len() > *budget || trust::content_hash(&bytes) != hash {
        return None;
    }
    *budget -= bytes.len();
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// Runs the skills stage: discover, resolve, and treat the hidden text of
/// every winner's description.
pub(crate) fn skills(
    policy: &Policy,
    roots: &Roots,
    view: &mut View<'_>,
    cache: &ParseCache,
    gate: &mut Gate,
) -> SkillSet {
    let memo = memo_place(policy, roots);
    if let Some((home, rel, max)) = memo {
        cache.attach_memo(home, rel, max);
    }
    let (mut found, rejected, warnings) = discover::discover(policy, roots, view, cache);
    if let Some((home, rel, _)) = memo {
        cache.save_memo(home, rel);
    }
    // Under a pinned policy, a project skill whose folder is not the
    // approved one, every file of it (its whole `SKILL.md` and each
    // supporting file, digest for digest), takes no part: it neither lists
    // nor claims a name.
    if gate.pinned() {
        let mut budget = REVIEW_TEXT_BUDGET;
        found.retain_mut(|f| {
            if f.origin != Origin::Project {
                return true;
            }
            let (Some(hash), Some(md), Some(root)) = (
                f.pinned_hash.clone(),
                f.pinned_digest.clone(),
                roots.set.get(f.root),
            ) else {
                // Not read whole (cannot happen under a pinned policy): out.
                return false;
            };
            let files = super::manifest::pinned_files(root, f.root, &f.rel, md, view)
                .map_err(|why| why.to_string());
            let text = || review_text(policy, roots, f, &hash, &mut budget);
            let admitted = gate.admit_skill(&f.rel, &f.path, hash.clone(), files, text);
            f.pinned_files = admitted;
            f.pinned_files.is_some()
        });
    }
    let mut set = resolve::resolve(policy, found, rejected);
    set.warnings = warnings;
    for s in &mut set.skills {
        // The usual description has nothing to find: kept as it is.
        if hidden::is_plain(&s.description) {
            continue;
        }
        let (text, mut report) = hidden::treat(
            &s.description,
            policy.trust.hidden_text,
            &policy.templates.hidden_marker,
        );
        // Places in the description, not in the file: none given.
        report.clear_positions();
        if !report.is_empty() {
            set.hidden.push(HiddenFinding {
                path: s.path.clone(),
                report,
            });
        }
        s.description = text;
    }
    set
}
