//! The skills stage of a build: discover, let names be claimed, and treat
//! the winners' descriptions.

use std::path::Path;

use super::cache::ParseCache;
use super::discover;
use super::resolve::{self, SkillSet};
use crate::hidden::{self, HiddenFinding};
use crate::policy::Policy;
use crate::sandbox::{Root, Roots};
use crate::trace::Trace;
use crate::trust::{Gate, ItemKind};
use crate::vocab::origin::Origin;

/// The home's frontmatter memo file and its largest size, when the policy
/// names one and there is a home.
fn memo_place<'a>(policy: &'a Policy, roots: &'a Roots) -> Option<(&'a Root, &'a Path, u64)> {
    let rel = &policy.skills.frontmatter_memo_file;
    let max = u64::try_from(policy.skills.frontmatter_memo_max_bytes).ok()?;
    if rel.is_empty() || max == 0 {
        return None;
    }
    Some((roots.set.home.as_ref()?, Path::new(rel), max))
}

/// Runs the skills stage: discover, resolve, and treat the hidden text of
/// every winner's description.
pub(crate) fn skills(
    policy: &Policy,
    roots: &Roots,
    trace: &mut Trace,
    cache: &ParseCache,
    gate: &mut Gate,
) -> SkillSet {
    let memo = memo_place(policy, roots);
    if let Some((home, rel, max)) = memo {
        cache.attach_memo(home, rel, max);
    }
    let (mut found, rejected, warnings) =
        discover::discover(policy, roots, trace, cache, gate.keeps_text());
    if let Some((home, rel, _)) = memo {
        cache.save_memo(home, rel);
    }
    // Under a pinned policy, a project skill whose whole `SKILL.md` is not
    // the approved one takes no part: it neither lists nor claims a name.
    if gate.pinned() {
        found.retain_mut(|f| {
            if f.origin != Origin::Project {
                return true;
            }
            let Some(pinned) = f.pinned.as_mut() else {
                // Not read whole (cannot happen under a pinned policy): out.
                return false;
            };
            let text = pinned.text.take().unwrap_or_default();
            gate.admit(
                ItemKind::Skill,
                &f.rel,
                &f.path,
                pinned.hash.clone(),
                || text,
            )
        });
    }
    let mut set = resolve::resolve(policy, found, rejected);
    set.warnings = warnings;
    for s in &mut set.skills {
        let (text, report) = hidden::treat(
            &s.description,
            policy.trust.hidden_text,
            &policy.templates.hidden_marker,
        );
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
