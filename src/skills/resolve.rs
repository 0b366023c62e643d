//! Resolving skills: a home skill claims its name before any project one
//! (under every policy), then the lowest rank; names that look alike are one
//! name; every loser is recorded with its winner, and the project list is
//! capped.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

use super::found::{Found, Rejected};
use super::frontmatter::Frontmatter;
use crate::hidden::HiddenFinding;
use crate::policy::{Conflict, Policy};
use crate::vocab::alike;
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
    /// A pinned project skill: the hash of its whole folder's manifest as
    /// approved (every file's SHA-256 digest; see `trust::files_hash`),
    /// which the folder must still match when it is served.
    #[serde(skip)]
    pub(crate) pinned_files: Option<String>,
}

/// A skill that lost its name (or a name that looks like it) to a home
/// skill or a lower rank.
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
    /// The winner's name, when it is written otherwise than this one's:
    /// the two names look alike (one confusable skeleton, Unicode
    /// Technical Standard #39, after NFC: a Cyrillic or Greek look-alike,
    /// full-width letters, a decomposed accent), so they are one name.
    /// `null` when the names are equal.
    pub looks_like: Option<String>,
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
///
/// Names that look alike are one name here (see [`alike`]): a project skill
/// named with a Cyrillic or Greek look-alike, full-width letters or a
/// decomposed accent of a home skill's name is shadowed by the home skill
/// as a copy of its very name would be, and of two project skills whose
/// names look alike the policy's precedence keeps one.
pub(crate) fn resolve(policy: &Policy, found: Vec<Found>, rejected: Vec<Rejected>) -> SkillSet {
    // The claims on one name side by side, names (their skeletons) in
    // order; within a name the lowest rank first and, within one source
    // looked for at several levels, the nearest level first, then the
    // names as written. The sort is stable: equal claims keep the order
    // they were found in.
    //
    // Across origins the home comes first whatever the ranks: a repository
    // cannot take a name from the user's own skills under any policy (ranks
    // order the sources within one origin).
    let mut found: Vec<(String, Found)> = found
        .into_iter()
        .map(|f| (alike::skeleton(&f.name), f))
        .collect();
    found.sort_by(|(ka, a), (kb, b)| {
        (
            ka,
            a.origin != Origin::Home,
            a.rank,
            std::cmp::Reverse(a.level),
            &a.name,
        )
            .cmp(&(
                kb,
                b.origin != Origin::Home,
                b.rank,
                std::cmp::Reverse(b.level),
                &b.name,
            ))
    });
    let max_project = usize::try_from(policy.skills.max_project_skills).unwrap_or(usize::MAX);
    let mut shadowed = Vec::new();
    // A loser's record: the winner's name too when the two are written
    // differently (they look alike).
    let lost = |loser: Found, winner_name: &str, winner_path: &Path| Shadowed {
        looks_like: (loser.name != winner_name).then(|| winner_name.to_string()),
        name: loser.name,
        path: loser.path,
        shadowed_by: winner_path.to_path_buf(),
    };
    // One name's claims, reused from name to name; every winner.
    let mut claims: Vec<Found> = Vec::new();
    let mut winners: Vec<Found> = Vec::with_capacity(found.len());
    let mut all = found.into_iter().peekable();
    while let Some((key, first)) = all.next() {
        claims.push(first);
        while let Some((_, next)) = all.next_if(|(k, _)| *k == key) {
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
                    shadowed.push(lost(loser, &winner.name, &winner.path));
                }
                winners.push(winner);
            }
            Conflict::ListAll => {
                // Every copy of the name is listed, but for a project copy
                // of a home skill's name: that one is shadowed by the home
                // skill. A name that only looks like the one listed (the
                // home's, else the lowest rank's) is shadowed by it.
                claims.sort_by(|a, b| (a.rank, &a.path).cmp(&(b.rank, &b.path)));
                claims.dedup_by(|a, b| a.path == b.path);
                let home = claims.iter().find(|c| c.origin == Origin::Home);
                let Some(holder) = home.or(claims.first()) else {
                    continue;
                };
                let (name, path) = (holder.name.clone(), holder.path.clone());
                let home = home.is_some();
                for claim in claims.drain(..) {
                    if (home && claim.origin != Origin::Home) || claim.name != name {
                        shadowed.push(lost(claim, &name, &path));
                    } else {
                        winners.push(claim);
                    }
                }
            }
        }
    }
    // Winners in name order (the copies of one name as they were listed),
    // and the project list capped in that order.
    winners.sort_by(|a, b| a.name.cmp(&b.name));
    let mut project_listed = 0usize;
    let mut hidden_project = 0usize;
    let skills = winners
        .into_iter()
        .map(|winner| {
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
            Skill {
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
                pinned_files: winner.pinned_files,
            }
        })
        .collect();
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

    /// Winners (name, path, listed) and losers (name, path, winner's path,
    /// the winner's name when it differs).
    type Outcome = (
        Vec<(String, PathBuf, bool)>,
        Vec<(String, PathBuf, PathBuf, Option<String>)>,
    );

    /// The grouping as first written: a map from each name's skeleton to
    /// its claims, each group sorted on its own, home claims before project
    /// ones. `resolve` must give exactly this.
    fn reference(policy: &Policy, found: Vec<Found>) -> Outcome {
        let mut by_name: BTreeMap<String, Vec<Found>> = BTreeMap::new();
        for f in found {
            by_name
                .entry(crate::vocab::alike::skeleton(&f.name))
                .or_default()
                .push(f);
        }
        let max_project = usize::try_from(policy.skills.max_project_skills).unwrap_or(usize::MAX);
        let (mut winners, mut shadowed) = (Vec::new(), Vec::new());
        let mut lose = |loser: Found, winner: &Found| {
            let alike = (loser.name != winner.name).then(|| winner.name.clone());
            shadowed.push((loser.name, loser.path, winner.path.clone(), alike));
        };
        for (_, mut claims) in by_name {
            claims.sort_by(|a, b| {
                (
                    a.origin != Origin::Home,
                    a.rank,
                    std::cmp::Reverse(a.level),
                    &a.name,
                )
                    .cmp(&(
                        b.origin != Origin::Home,
                        b.rank,
                        std::cmp::Reverse(b.level),
                        &b.name,
                    ))
            });
            match policy.skills.conflict {
                Conflict::LowestRank => {
                    let mut claims = claims.into_iter();
                    let Some(winner) = claims.next() else {
                        continue;
                    };
                    for loser in claims {
                        lose(loser, &winner);
                    }
                    winners.push(winner);
                }
                Conflict::ListAll => {
                    claims.sort_by(|a, b| (a.rank, &a.path).cmp(&(b.rank, &b.path)));
                    claims.dedup_by(|a, b| a.path == b.path);
                    let has_home = claims.iter().any(|c| c.origin == Origin::Home);
                    let Some(kept) = claims
                        .iter()
                        .find(|c| c.origin == Origin::Home || !has_home)
                        .cloned()
                    else {
                        continue;
                    };
                    for c in claims {
                        let copy = c.name == kept.name;
                        if copy && (c.origin == Origin::Home || !has_home) {
                            winners.push(c);
                        } else {
                            lose(c, &kept);
                        }
                    }
                }
            }
        }
        winners.sort_by(|a, b| a.name.cmp(&b.name));
        let mut listed_project = 0usize;
        let skills = winners
            .into_iter()
            .map(|w| {
                let listed = w.origin == Origin::Home || {
                    listed_project += 1;
                    listed_project <= max_project
                };
                (w.name, w.path, listed)
            })
            .collect();
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
        (0u8..7, 0i64..4, 0usize..3, 0u8..6, any::<bool>())
    }

    /// Names, some of which look alike: a Cyrillic `е`, full-width
    /// letters, a decomposed accent, a Greek omicron, a capital.
    const NAMES: [&str; 7] = [
        "deploy",
        "d\u{435}ploy",
        "\u{ff44}\u{ff45}\u{ff50}\u{ff4c}\u{ff4f}\u{ff59}",
        "caf\u{e9}",
        "cafe\u{301}",
        "depl\u{3bf}y",
        "Deploy",
    ];

    fn found((name, rank, level, path, home): (u8, i64, usize, u8, bool)) -> Found {
        let name = NAMES[usize::from(name) % NAMES.len()].to_string();
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
            pinned_digest: None,
            pinned_files: None,
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
                set.shadowed.iter().map(|s| (s.name.clone(), s.path.clone(), s.shadowed_by.clone(), s.looks_like.clone())).collect::<Vec<_>>(),
            );
            prop_assert_eq!(ours, reference(&policy, found));
        }
    }
}
