//! A skill's whole folder through a [`Loader`]: the manifests of the
//! winners (every file with its digest and size) and one listed file, read
//! through the sandbox under the roots of the up-to-date build.

use std::path::Path;

use super::Loader;
use crate::error::{SkillReadError, SnapshotError};
use crate::loader::SkillError;
use crate::policy::Policy;
use crate::sandbox::{self, Root};
use crate::skills::{self, ResourceError, Skill, SkillManifest, SkillResource};
use crate::snapshot::Snapshot;

impl Loader {
    /// The manifests of the skills named `names` that win their name for
    /// `cwd` (every winner when `names` is `None`), in the order asked (name
    /// order for all; a policy that keeps several skills of one name gives
    /// each, told apart by [`SkillManifest::location`]): each winner's files with their SHA-256 digests and
    /// sizes, read now through the sandbox (see
    /// [`SkillManifest`]). A name that wins nothing is
    /// [`SkillError::NotFound`]; a skill over the limits, or not
    /// served for another reason, comes back with `not_served` set and no
    /// files.
    pub fn skill_manifests_in(
        &self,
        cwd: &Path,
        root: Option<&Path>,
        names: Option<&[String]>,
    ) -> Result<Vec<SkillManifest>, SkillError> {
        self.with_skill_roots(cwd, root, names, None, |policy, root, skill| {
            Ok(skills::manifest(policy, root, skill))
        })
    }

    /// The file at `path` (`/`-separated, below the skill's folder) of the
    /// skill that wins `name` for `cwd`, when it is a file of the skill
    /// now, as [`skill_manifests_in`](Self::skill_manifests_in) would list
    /// it: its bytes (as text when they are UTF-8, else in base64), digest
    /// and size. Anything else (a path with `..`, a link, a file outside the
    /// skill, a skill not served) is [`SkillError::Unreadable`].
    /// Where the policy keeps several skills of the name, `location` (see
    /// [`SkillManifest::location`]) says which; without it, the first.
    pub fn skill_resource_in(
        &self,
        cwd: &Path,
        root: Option<&Path>,
        name: &str,
        location: Option<&str>,
        path: &str,
    ) -> Result<SkillResource, SkillError> {
        let names = [name.to_string()];
        let mut read =
            self.with_skill_roots(cwd, root, Some(&names), location, |policy, root, skill| {
                skills::resource(policy, root, skill, path).map_err(|e| SkillError::Unreadable {
                    path: skill.path.parent().unwrap_or(Path::new("")).join(path),
                    reason: match e {
                        ResourceError::NotListed => SkillReadError::NotPartOfSkill(path.into()),
                        ResourceError::NotServed(why) => SkillReadError::NotServed(why),
                    },
                })
            })?;
        read.truncate(1);
        read.pop().ok_or_else(|| SkillError::NotFound {
            name: name.to_string(),
            cwd: cwd.to_path_buf(),
            available: Vec::new(),
        })
    }

    /// Runs `f` for each winner named (all of them for `None`) with the
    /// policy and the skill's root as attached now for the up-to-date build
    /// of `cwd`; out of descriptors, the handles are shed and it is tried
    /// once more.
    fn with_skill_roots<T>(
        &self,
        cwd: &Path,
        root: Option<&Path>,
        names: Option<&[String]>,
        location: Option<&str>,
        f: impl Fn(&Policy, &Root, &Skill) -> Result<T, SkillError>,
    ) -> Result<Vec<T>, SkillError> {
        let force = self.in_force()?;
        let built = self.current_under(&force, cwd, root)?;
        let snap: &Snapshot = &built.snapshot;
        let chosen: Vec<&Skill> = match names {
            None => snap.skills.iter().map(|s| &**s).collect(),
            Some(names) => {
                let mut chosen = Vec::with_capacity(names.len());
                for name in names {
                    if !force.policy.is_valid_skill_name(name) {
                        return Err(SkillError::InvalidName(name.clone()));
                    }
                    let before = chosen.len();
                    chosen.extend(
                        snap.skills
                            .iter()
                            .filter(|s| &s.name == name)
                            .filter(|s| location.is_none_or(|l| skills::location(s) == l))
                            .map(|s| &**s),
                    );
                    if chosen.len() == before {
                        return Err(SkillError::NotFound {
                            name: name.clone(),
                            cwd: snap.cwd.clone(),
                            available: snap.skills.iter().map(|s| s.name.clone()).collect(),
                        });
                    }
                }
                chosen
            }
        };
        let mut tries = 0;
        loop {
            tries += 1;
            let roots = sandbox::attach(
                &self.handles,
                snap.home.as_deref(),
                &snap.named_paths(),
                &snap.ancestor_paths,
                snap.state_root.as_deref(),
                &snap.repo_root,
                &built.shield,
            )
            .map_err(|e| match e {
                e if sandbox::is_exhaustion(&e) => {
                    SkillError::Snapshot(SnapshotError::ResourceExhausted {
                        path: snap.repo_root.clone(),
                        source: e,
                    })
                }
                e => match sandbox::NotAdmitted::of(&e) {
                    Some(refused) => SkillError::Snapshot(SnapshotError::HomeRefused {
                        path: snap.home.clone().unwrap_or_default(),
                        reason: refused.reason.clone(),
                    }),
                    None => SkillError::Unreadable {
                        path: snap.repo_root.clone(),
                        reason: SkillReadError::RootUnopenable(e),
                    },
                },
            })?;
            let mut out = Vec::with_capacity(chosen.len());
            let mut failed = None;
            for skill in &chosen {
                let Some(skill_root) = roots.get(skill.root_id) else {
                    failed = Some(SkillError::Unreadable {
                        path: skill.path.clone(),
                        reason: SkillReadError::RootGone,
                    });
                    break;
                };
                match f(&force.policy, skill_root, skill) {
                    Ok(v) => out.push(v),
                    Err(e) => {
                        failed = Some(e);
                        break;
                    }
                }
            }
            match (failed, roots.shortage()) {
                (None, None) => return Ok(out),
                (_, Some(e)) if tries > 1 => {
                    return Err(SkillError::Snapshot(SnapshotError::ResourceExhausted {
                        path: snap.repo_root.clone(),
                        source: e,
                    }));
                }
                (_, Some(_)) => self.handles.shed(),
                (Some(e), None) => return Err(e),
            }
        }
    }
}
