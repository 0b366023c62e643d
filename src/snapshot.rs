//! Stage 7 — the snapshot: everything the agent needs for one cwd, and the
//! fingerprint that says when it must be rebuilt.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

use crate::discovery::skills::Rejected;
use crate::discovery::{chain, skills as skill_discovery};
use crate::error::SnapshotError;
use crate::fingerprint::{Trace, TraceRoot};
use crate::hidden;
use crate::policy::Policy;
use crate::render;
use crate::roots::{self, Roots};
use crate::select::instructions::{
    self, Block, Budget, Considered, Deduped, HiddenFinding, Skipped,
};
use crate::select::skills::{self as skill_select, Shadowed, Skill};
use crate::skill::cache::ParseCache;

/// The project-context section for one cwd, and how it was made. Serialized
/// (camelCase) it is the `snapshot --format json` object; its schema is
/// documented in the README and kept stable.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Snapshot {
    /// The fingerprint, 32 hex digits.
    pub fingerprint: String,
    /// The home root, when it exists.
    #[serde(serialize_with = "crate::paths::lossy_opt")]
    pub home: Option<PathBuf>,
    /// The repository root.
    #[serde(serialize_with = "crate::paths::lossy")]
    pub repo_root: PathBuf,
    /// The working directory.
    #[serde(serialize_with = "crate::paths::lossy")]
    pub cwd: PathBuf,
    /// Kept instruction files, in read order (outermost first).
    pub instruction_files: Vec<Block>,
    /// Files folded into an identical kept one.
    pub deduped: Vec<Deduped>,
    /// Files not used, with the reason.
    pub skipped: Vec<Skipped>,
    /// The instruction budget.
    pub budget: Budget,
    /// Skills that won their name, in name order.
    pub skills: Vec<Skill>,
    /// Skills that lost their name to a lower rank.
    pub shadowed_project_skills: Vec<Shadowed>,
    /// Skill folders and files refused.
    pub rejected_skills: Vec<Rejected>,
    /// Project skills not listed in the prompt because of the cap.
    pub hidden_project_skills: usize,
    /// Files (and skill files) where hidden text was found.
    pub hidden_text: Vec<HiddenFinding>,
    /// The rendered section, exactly as it goes into the prompt.
    pub prompt: String,
    /// Every instruction candidate and what happened to it (for `explain`).
    #[serde(skip)]
    pub considered: Vec<Considered>,
}

/// A snapshot together with what it examined, for caching.
#[derive(Debug)]
pub struct Built {
    /// The snapshot (shared: a cached one is handed out without copying).
    pub snapshot: Arc<Snapshot>,
    /// Every path examined.
    pub trace: Trace,
    /// The roots it was built from.
    pub roots: Roots,
}

/// Builds a snapshot with the roots already opened.
pub fn build_with_roots(policy: &Policy, roots: Roots) -> Built {
    build_with_cache(policy, roots, None)
}

/// Builds a snapshot with the roots already opened, remembering parsed skill
/// frontmatter in `cache`.
pub fn build_with_cache(policy: &Policy, roots: Roots, cache: Option<&ParseCache>) -> Built {
    let mut trace = Trace::default();
    for (path, stamp) in &roots.marker_probes {
        trace.push(TraceRoot::Ambient, path, *stamp, None);
    }
    for (path, stamp) in &roots.dir_probes {
        trace.push(TraceRoot::AmbientDir, path, *stamp, None);
    }
    let candidates = chain::candidates(policy, &roots);
    let sel = instructions::select(policy, &roots, &candidates, &mut trace);
    let (found, rejected) = skill_discovery::discover(policy, &roots, &mut trace, cache);
    let mut set = skill_select::resolve(policy, found, rejected);

    let mut hidden_text = sel.hidden;
    for s in &mut set.skills {
        let (text, report) = hidden::treat(
            &s.description,
            policy.trust.hidden_text,
            &policy.templates.hidden_marker,
        );
        if !report.is_empty() {
            hidden_text.push(HiddenFinding {
                path: s.path.clone(),
                report,
            });
        }
        s.description = text;
    }

    let mut prompt = render::render(policy, &sel.blocks, &set.skills, set.hidden_project);
    prompt.shrink_to_fit();
    let home = roots.home.as_ref().map(|h| h.path.clone());
    let home_str = home
        .as_ref()
        .map(|h| h.to_string_lossy().into_owned())
        .unwrap_or_default();
    let fingerprint = trace.fingerprint(
        policy.digest(),
        &[
            &home_str,
            &roots.repo.path.to_string_lossy(),
            &roots.cwd.to_string_lossy(),
        ],
    );
    let snapshot = Snapshot {
        fingerprint,
        home,
        repo_root: roots.repo.path.clone(),
        cwd: roots.cwd.clone(),
        instruction_files: sel.blocks,
        deduped: sel.deduped,
        skipped: sel.skipped,
        budget: sel.budget,
        skills: set.skills,
        shadowed_project_skills: set.shadowed,
        rejected_skills: set.rejected,
        hidden_project_skills: set.hidden_project,
        hidden_text,
        prompt,
        considered: sel.considered,
    };
    trace.entries.shrink_to_fit();
    Built {
        snapshot: Arc::new(snapshot),
        trace,
        roots,
    }
}

/// Builds a snapshot for `cwd` (absolute). `home` is the home root's path
/// (see [`roots::home_path`]); `root` names the repository root explicitly.
pub fn build(
    policy: &Policy,
    home: Option<&Path>,
    cwd: &Path,
    root: Option<&Path>,
) -> Result<Built, SnapshotError> {
    let roots = roots::open(policy, home, cwd, root)?;
    Ok(build_with_roots(policy, roots))
}
