//! Resolving skills: the lowest rank claims a name, every loser is recorded
//! with its winner, and the project list is capped.

use std::path::PathBuf;

use serde::Serialize;

use super::discover::{Found, Rejected};
use super::frontmatter::Frontmatter;
use crate::hidden::HiddenFinding;
use crate::origin::{Origin, RootId};
use crate::policy::{Conflict, Policy};

/// A skill that won its name.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Skill {
    /// The name.
    pub name: String,
    /// The description from the frontmatter (hidden text treated).
    pub description: String,
    /// Home or project.
    pub origin: Origin,
    /// The root of its source: `home`, `repo`, or a named root's name.
    pub root: String,
    /// The source path, as the policy writes it.
    pub source: String,
    /// The source's rank.
    pub rank: i64,
    /// The absolute path of its `SKILL.md`.
    #[serde(serialize_with = "crate::paths::lossy")]
    pub path: PathBuf,
    /// A home skill that ships the policy's executable file. Never true for a
    /// project skill.
    pub executable: bool,
    /// Whether the prompt lists it (project skills beyond the cap are not).
    pub listed: bool,
    /// The other frontmatter fields.
    pub frontmatter: Frontmatter,
    /// The `SKILL.md`, relative to its root.
    #[serde(skip)]
    pub(crate) rel: PathBuf,
    /// Its root.
    #[serde(skip)]
    pub(crate) root_id: RootId,
}

/// A skill that lost its name to a lower rank.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Shadowed {
    /// The name.
    pub name: String,
    /// The loser's `SKILL.md`.
    #[serde(serialize_with = "crate::paths::lossy")]
    pub path: PathBuf,
    /// The winner's `SKILL.md`.
    #[serde(serialize_with = "crate::paths::lossy")]
    pub shadowed_by: PathBuf,
}

/// The resolved skills.
#[derive(Debug, Clone, Default)]
pub(crate) struct SkillSet {
    /// Winners, in name order.
    pub(crate) skills: Vec<Skill>,
    /// Losers.
    pub(crate) shadowed: Vec<Shadowed>,
    /// Refused folders and files.
    pub(crate) rejected: Vec<Rejected>,
    /// Project skills won but not listed for the cap.
    pub(crate) hidden_project: usize,
    /// Winners whose description held hidden text.
    pub(crate) hidden: Vec<HiddenFinding>,
    /// Hard-linked project `SKILL.md` files.
    pub(crate) warnings: Vec<crate::warning::Warning>,
}

/// Resolves name conflicts: the lowest rank wins (sources are distinct ranks).
pub(crate) fn resolve(policy: &Policy, mut found: Vec<Found>, rejected: Vec<Rejected>) -> SkillSet {
    // The claims on one name side by side, names in order; within a name the
    // lowest rank first and, within one source looked for at several levels,
    // the nearest level first. The sort is stable: equal claims keep the
    // order they were found in.
    found.sort_by(|a, b| {
        (&a.name, a.rank, std::cmp::Reverse(a.level)).cmp(&(
            &b.name,
            b.rank,
            std::cmp::Reverse(b.level),
        ))
    });
    let max_project = usize::try_from(policy.skills.max_project_skills).unwrap_or(usize::MAX);
    let mut skills = Vec::with_capacity(found.len());
    let mut shadowed = Vec::new();
    let mut project_listed = 0usize;
    let mut hidden_project = 0usize;
    // One name's claims, then its winners; both reused from name to name.
    let mut claims: Vec<Found> = Vec::new();
    let mut winners: Vec<Found> = Vec::new();
    let mut all = found.into_iter().peekable();
    while let Some(first) = all.next() {
        let name = first.name.clone();
        claims.push(first);
        while let Some(next) = all.next_if(|f| f.name == name) {
            claims.push(next);
        }
        match policy.skills.conflict {
            Conflict::LowestRank => {
                let mut group = claims.drain(..);
                let Some(winner) = group.next() else {
                    continue;
                };
                for loser in group {
                    shadowed.push(Shadowed {
                        name: name.clone(),
                        path: loser.path,
                        shadowed_by: winner.path.clone(),
                    });
                }
                winners.push(winner);
            }
            Conflict::ListAll => {
                claims.sort_by(|a, b| (a.rank, &a.path).cmp(&(b.rank, &b.path)));
                claims.dedup_by(|a, b| a.path == b.path);
                winners.append(&mut claims);
            }
        }
        for winner in winners.drain(..) {
            let listed = match winner.origin {
                Origin::Home => true,
                Origin::Project | Origin::Ancestor if project_listed < max_project => {
                    project_listed += 1;
                    true
                }
                Origin::Project | Origin::Ancestor => {
                    hidden_project += 1;
                    false
                }
            };
            skills.push(Skill {
                name: name.clone(),
                description: winner.frontmatter.description.clone(),
                origin: winner.origin,
                root: policy.root_name(winner.root).to_string(),
                source: winner.source,
                rank: winner.rank,
                path: winner.path,
                executable: winner.executable && winner.origin == Origin::Home,
                listed,
                frontmatter: winner.frontmatter,
                rel: winner.rel,
                root_id: winner.root,
            });
        }
    }
    SkillSet {
        skills,
        shadowed,
        rejected,
        hidden_project,
        hidden: Vec::new(),
        warnings: Vec::new(),
    }
}
