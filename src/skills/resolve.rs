//! Resolving skills: a home skill claims its name before any project one
//! (under every policy), then the lowest rank; every loser is recorded with
//! its winner, and the project list is capped.

use std::path::PathBuf;
use std::sync::Arc;

use serde::Serialize;

use super::found::{Found, Rejected};
use super::frontmatter::Frontmatter;
use crate::hidden::HiddenFinding;
use crate::policy::{Conflict, Policy};
use crate::vocab::origin::{Origin, RootId};

/// A skill that won its name.
#[derive(Debug, Clone, PartialEq, Serialize)]
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
    #[serde(serialize_with = "crate::vocab::paths::lossy")]
    pub path: PathBuf,
    /// A home skill that ships the policy's executable file. Never true for a
    /// project skill.
    pub executable: bool,
    /// Whether the prompt lists it (project skills beyond the cap are not).
    pub listed: bool,
    /// The other frontmatter fields.
    // Shared: the snapshots of a survey whose policies read a `SKILL.md`
    // the same way hold one copy.
    pub frontmatter: Arc<Frontmatter>,
    /// The `SKILL.md`, relative to its root.
    #[serde(skip)]
    pub(crate) rel: PathBuf,
    /// Its root.
    #[serde(skip)]
    pub(crate) root_id: RootId,
    /// A pinned project skill: the hash of the whole `SKILL.md` approved,
    /// which the file must still have when it is read on request.
    #[serde(skip)]
    pub(crate) pinned_hash: Option<String>,
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
    #[serde(serialize_with = "crate::vocab::paths::lossy")]
    pub path: PathBuf,
    /// The winner's `SKILL.md`.
    #[serde(serialize_with = "crate::vocab::paths::lossy")]
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
    pub(crate) warnings: Vec<crate::vocab::warning::Warning>,
}

/// Resolves name conflicts: the lowest rank wins (sources are distinct ranks).
pub(crate) fn resolve(policy: &Policy, mut found: Vec<Found>, rejected: Vec<Rejected>) -> SkillSet {
    // The claims on one name side by side, names in order; within a name the
    // lowest rank first and, within one source looked for at several levels,
    // the nearest level first. The sort is stable: equal claims keep the
    // order they were found in.
    //
    // Across origins the home comes first whatever the ranks: a repository
    // cannot take a name from the user's own skills under any policy (ranks
    // order the sources within one origin).
    found.sort_by(|a, b| {
        (
            &a.name,
            a.origin != Origin::Home,
            a.rank,
            std::cmp::Reverse(a.level),
        )
            .cmp(&(
                &b.name,
                b.origin != Origin::Home,
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
        claims.push(first);
        while let Some(next) = all.next_if(|f| claims.first().is_some_and(|c| c.name == f.name)) {
            claims.push(next);
        }
        // Every claim of the group holds the name: each record takes its own.
        match policy.skills.conflict {
            Conflict::LowestRank => {
                let mut group = claims.drain(..);
                let Some(winner) = group.next() else {
                    continue;
                };
                for loser in group {
                    shadowed.push(Shadowed {
                        name: loser.name,
                        path: loser.path,
                        shadowed_by: winner.path.clone(),
                    });
                }
                winners.push(winner);
            }
            Conflict::ListAll => {
                // Every copy is listed, but for a project copy of a home
                // skill's name: that one is shadowed by the home skill.
                claims.sort_by(|a, b| (a.rank, &a.path).cmp(&(b.rank, &b.path)));
                claims.dedup_by(|a, b| a.path == b.path);
                let home = claims
                    .iter()
                    .find(|c| c.origin == Origin::Home)
                    .map(|c| c.path.clone());
                for claim in claims.drain(..) {
                    match &home {
                        Some(home_path) if claim.origin != Origin::Home => {
                            shadowed.push(Shadowed {
                                name: claim.name,
                                path: claim.path,
                                shadowed_by: home_path.clone(),
                            });
                        }
                        _ => winners.push(claim),
                    }
                }
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
                name: winner.name,
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
                pinned_hash: winner.pinned_hash,
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

#[cfg(test)]
mod properties {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::*;
    use crate::policy::{Layer, PolicySource};

    /// Winners (name, path, listed) and losers (name, path, winner's path).
    type Outcome = (
        Vec<(String, PathBuf, bool)>,
        Vec<(String, PathBuf, PathBuf)>,
    );

    /// The grouping as first written: a map from each name to its claims,
    /// each group sorted on its own, home claims before project ones.
    /// `resolve` must give exactly this.
    fn reference(policy: &Policy, found: Vec<Found>) -> Outcome {
        let mut by_name: BTreeMap<String, Vec<Found>> = BTreeMap::new();
        for f in found {
            by_name.entry(f.name.clone()).or_default().push(f);
        }
        let max_project = usize::try_from(policy.skills.max_project_skills).unwrap_or(usize::MAX);
        let (mut skills, mut shadowed, mut listed_project) = (Vec::new(), Vec::new(), 0usize);
        for (name, mut claims) in by_name {
            claims.sort_by_key(|f| (f.origin != Origin::Home, f.rank, std::cmp::Reverse(f.level)));
            let winners = match policy.skills.conflict {
                Conflict::LowestRank => {
                    let mut claims = claims.into_iter();
                    let Some(winner) = claims.next() else {
                        continue;
                    };
                    for loser in claims {
                        shadowed.push((name.clone(), loser.path, winner.path.clone()));
                    }
                    vec![winner]
                }
                Conflict::ListAll => {
                    claims.sort_by(|a, b| (a.rank, &a.path).cmp(&(b.rank, &b.path)));
                    claims.dedup_by(|a, b| a.path == b.path);
                    let (home, project): (Vec<Found>, Vec<Found>) =
                        claims.into_iter().partition(|c| c.origin == Origin::Home);
                    match home.first() {
                        Some(first) => {
                            for p in project {
                                shadowed.push((name.clone(), p.path, first.path.clone()));
                            }
                            home
                        }
                        None => project,
                    }
                }
            };
            for w in winners {
                let listed = w.origin == Origin::Home || {
                    listed_project += 1;
                    listed_project <= max_project
                };
                skills.push((name.clone(), w.path, listed));
            }
        }
        (skills, shadowed)
    }

    fn policy(conflict: &str) -> Policy {
        let text =
            format!("version = 1\n[skills]\nconflict = \"{conflict}\"\nmax-project-skills = 3\n");
        Policy::from_sources(&[
            PolicySource::builtin(),
            PolicySource::from_text(Layer::CommandLine, "test.toml", text),
        ])
        .expect("test policy")
    }

    /// A claim: name, rank, level, path and whether it is a home skill,
    /// each from a small set so that claims collide.
    fn claim() -> impl Strategy<Value = (u8, i64, usize, u8, bool)> {
        (0u8..5, 0i64..4, 0usize..3, 0u8..6, any::<bool>())
    }

    fn found((name, rank, level, path, home): (u8, i64, usize, u8, bool)) -> Found {
        let name = format!("skill-{name}");
        Found {
            frontmatter: Arc::new(Frontmatter {
                name: name.clone(),
                description: format!("{name} at {path}"),
                ..Frontmatter::default()
            }),
            name,
            root: if home { RootId::Home } else { RootId::Repo },
            origin: if home { Origin::Home } else { Origin::Project },
            source: format!("source-{rank}"),
            rank,
            rel: PathBuf::from(format!("s{path}/SKILL.md")),
            path: PathBuf::from(format!("/r/s{path}/SKILL.md")),
            executable: false,
            level,
            pinned_hash: None,
        }
    }

    proptest! {
        #[test]
        fn resolve_groups_as_the_map_did(claims in prop::collection::vec(claim(), 0..24), list_all in any::<bool>()) {
            let policy = policy(if list_all { "list-all" } else { "lowest-rank" });
            let found: Vec<Found> = claims.into_iter().map(found).collect();
            let set = resolve(&policy, found.clone(), Vec::new());
            let ours: Outcome = (
                set.skills.iter().map(|s| (s.name.clone(), s.path.clone(), s.listed)).collect::<Vec<_>>(),
                set.shadowed.iter().map(|s| (s.name.clone(), s.path.clone(), s.shadowed_by.clone())).collect::<Vec<_>>(),
            );
            prop_assert_eq!(ours, reference(&policy, found));
        }
    }
}
