//! The approval check of one build: a [`Gate`] answers, item by item,
//! whether the content is the approved one, and collects what is not.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::records::{
    Change, ItemKind, TrustItem, TrustState, Unapproved, file_changes, files_hash, key,
};
use super::store::{Approval, Covers, StoreProblem, load_repo};
use crate::policy::{Policy, ProjectTrust};
use crate::sandbox::{Place, Roots};
use crate::trace::View;
use crate::vocab::warning::{Warning, WarningKind};

/// One project item seen during a build.
#[derive(Debug, Clone)]
pub(crate) struct Seen {
    pub(crate) path: PathBuf,
    pub(crate) rel: String,
    pub(crate) kind: ItemKind,
    pub(crate) hash: Option<String>,
    /// The current text, kept only for a review build.
    pub(crate) text: Option<String>,
    /// A skill: the content hash of its `SKILL.md`, and its manifest (path
    /// below the folder → SHA-256 digest), or why it cannot be approved.
    pub(crate) skill: Option<SeenSkill>,
}

/// What the gate saw of a skill's folder.
#[derive(Debug, Clone)]
pub(crate) struct SeenSkill {
    /// The content hash of its `SKILL.md`.
    pub(crate) skill_md: String,
    /// Every file with its digest, or why the skill cannot be approved.
    pub(crate) files: Result<BTreeMap<String, String>, String>,
}

/// The approval check of one build.
#[derive(Debug, Default)]
pub(crate) struct Gate {
    pinned: bool,
    /// Keep each item's text (for `trust diff`).
    keep_text: bool,
    approvals: BTreeMap<String, Approval>,
    /// The store could not be used: nothing counts as approved.
    pub(crate) store_error: Option<StoreProblem>,
    seen: Vec<Seen>,
    seen_rel: BTreeSet<String>,
    /// Instruction candidates looked at and found missing or refused.
    missing: Vec<(String, PathBuf)>,
    repo_root: PathBuf,
    /// The store's absolute path (for the warning).
    store_path: PathBuf,
}

impl Gate {
    /// The gate for one build: open (everything passes) unless the policy
    /// pins project content, in which case the store is read through the
    /// home root and traced.
    pub(crate) fn load(
        policy: &Policy,
        roots: &Roots,
        view: &mut View<'_>,
        keep_text: bool,
    ) -> Gate {
        let mut gate = Gate {
            pinned: policy.trust.project == ProjectTrust::Pinned,
            keep_text,
            repo_root: roots.set.repo.path.clone(),
            ..Gate::default()
        };
        if !gate.pinned {
            return gate;
        }
        let Some((home, id)) = roots.set.state() else {
            return gate;
        };
        let rel = Path::new(&policy.trust.store_file);
        gate.store_path = home.path.join(rel);
        let place = Place::Within(id);
        match load_repo(home, rel, &roots.set.repo.path) {
            Ok((approvals, stamp)) => {
                // Derived: the store is recorded by the approvals it holds
                // for this repository, not by its bytes.
                let content = serde_json::to_vec(&approvals).unwrap_or_default();
                view.note(place, rel, stamp, Some(&content));
                gate.approvals = approvals;
            }
            Err(e) => {
                // Derived: a store that cannot be used is recorded by why.
                let stamp = view.glance(home, rel);
                view.note(place, rel, stamp, Some(e.to_string().as_bytes()));
                gate.store_error = Some(e);
            }
        }
        gate
    }

    /// Whether the policy pins project content.
    pub(crate) fn pinned(&self) -> bool {
        self.pinned
    }

    /// Whether a project item with this content may enter the prompt;
    /// records it either way. `text` is asked for only when kept.
    pub(crate) fn admit(
        &mut self,
        kind: ItemKind,
        rel: &Path,
        path: &Path,
        hash: String,
        text: impl FnOnce() -> String,
    ) -> bool {
        self.admit_maybe(kind, rel, path, hash, || Some(text()))
    }

    /// [`admit`](Self::admit) for an item whose text a review build may not
    /// keep (`None`: shown by its hash alone).
    pub(crate) fn admit_maybe(
        &mut self,
        kind: ItemKind,
        rel: &Path,
        path: &Path,
        hash: String,
        text: impl FnOnce() -> Option<String>,
    ) -> bool {
        if !self.pinned {
            return true;
        }
        let rel = key(rel);
        let ok = self
            .approvals
            .get(&rel)
            .is_some_and(|a| a.approves(kind, &hash));
        self.seen_rel.insert(rel.clone());
        self.seen.push(Seen {
            path: path.to_path_buf(),
            rel,
            kind,
            hash: Some(hash),
            text: if self.keep_text { text() } else { None },
            skill: None,
        });
        ok
    }

    /// Whether a project skill may take part: every file of its folder
    /// (`files`: path below the folder → SHA-256 digest, or why the skill
    /// cannot be approved) must be the approved one. `skill_md` is the
    /// content hash of its `SKILL.md`. Records it either way; returns the
    /// skill's hash (see [`files_hash`]) when it is approved.
    pub(crate) fn admit_skill(
        &mut self,
        rel: &Path,
        path: &Path,
        skill_md: String,
        files: Result<BTreeMap<String, String>, String>,
        text: impl FnOnce() -> Option<String>,
    ) -> Option<String> {
        let hash = files
            .as_ref()
            .ok()
            .map(|f| files_hash(f.iter().map(|(p, d)| (p.as_str(), d.as_str()))));
        if !self.pinned {
            return hash;
        }
        let rel = key(rel);
        let ok = match (&hash, &files) {
            (Some(hash), Ok(files)) => self
                .approvals
                .get(&rel)
                .is_some_and(|a| a.approves_skill(hash, files, &skill_md)),
            _ => false,
        };
        self.seen_rel.insert(rel.clone());
        self.seen.push(Seen {
            path: path.to_path_buf(),
            rel,
            kind: ItemKind::Skill,
            hash: hash.clone(),
            text: if self.keep_text { text() } else { None },
            skill: Some(SeenSkill { skill_md, files }),
        });
        hash.filter(|_| ok)
    }

    /// An instruction candidate that is missing or not readable as a file:
    /// if it was approved, the approval is stale.
    pub(crate) fn missing(&mut self, rel: &Path, path: &Path) {
        if self.pinned {
            self.missing.push((key(rel), path.to_path_buf()));
        }
    }

    /// The items the build saw, with the approvals whose items are gone;
    /// and the warning when the store could not be used.
    pub(crate) fn finish(self) -> (Vec<Unapproved>, Vec<TrustItem>, Option<Warning>) {
        let mut items = Vec::new();
        for s in self.seen {
            let approval = self.approvals.get(&s.rel).filter(|a| a.kind == s.kind);
            let state = match (approval, &s.hash, &s.skill) {
                (None, _, _) => TrustState::New,
                (
                    Some(a),
                    Some(hash),
                    Some(SeenSkill {
                        skill_md,
                        files: Ok(files),
                    }),
                ) if a.approves_skill(hash, files, skill_md) => TrustState::Approved,
                (Some(a), Some(hash), None) if a.approves(s.kind, hash) => TrustState::Approved,
                (Some(_), _, _) => TrustState::Changed,
            };
            items.push(TrustItem::new(s, approval, state, self.keep_text));
        }
        let mut gone: Vec<(String, PathBuf, ItemKind)> = self
            .missing
            .into_iter()
            .filter(|(rel, _)| !self.seen_rel.contains(rel))
            .filter(|(rel, _)| {
                self.approvals
                    .get(rel)
                    .is_some_and(|a| a.kind == ItemKind::Instruction)
            })
            .map(|(rel, path)| (rel, path, ItemKind::Instruction))
            .collect();
        for (rel, a) in &self.approvals {
            if a.kind == ItemKind::Skill && !self.seen_rel.contains(rel) {
                gone.push((rel.clone(), self.repo_root.join(rel), ItemKind::Skill));
            }
        }
        gone.sort();
        gone.dedup();
        for (rel, path, kind) in gone {
            let seen = Seen {
                path,
                rel: rel.clone(),
                kind,
                hash: None,
                text: None,
                skill: None,
            };
            items.push(TrustItem::new(
                seen,
                self.approvals.get(&rel),
                TrustState::Removed,
                self.keep_text,
            ));
        }
        items.sort_by(|a, b| a.path.cmp(&b.path));
        let unapproved = items
            .iter()
            .filter_map(|i| {
                let kind = match i.state {
                    TrustState::Approved => return None,
                    TrustState::New => Change::New,
                    TrustState::Changed => Change::Changed,
                    TrustState::Removed => Change::Removed,
                };
                Some(Unapproved {
                    path: i.path.clone(),
                    kind,
                    item: i.kind,
                    approved_hash: i.approved_hash.clone(),
                    current_hash: i.current_hash.clone(),
                })
            })
            .collect();
        let warning = self.store_error.map(|e| {
            Warning::new(
                WarningKind::TrustStore,
                self.store_path,
                format!(
                    "the trust store cannot be used, so no project item counts as approved: {e}"
                ),
            )
        });
        (unapproved, items, warning)
    }
}

impl TrustItem {
    pub(crate) fn new(
        seen: Seen,
        approval: Option<&Approval>,
        state: TrustState,
        keep_text: bool,
    ) -> Self {
        let (manifest, unapprovable) = match seen.skill.as_ref().map(|s| &s.files) {
            Some(Ok(files)) => (Some(files.clone()), None),
            Some(Err(why)) => (None, Some(why.clone())),
            None => (None, None),
        };
        // A changed skill names the files that changed; a new one, every
        // file (all of them would be approved).
        let files = match (&seen.skill, approval, &manifest) {
            (Some(_), None, Some(current)) if state == TrustState::New => {
                file_changes(Some(&BTreeMap::new()), current, false)
            }
            (Some(skill), Some(a), Some(current)) if state == TrustState::Changed => {
                let skill_md_same = a.covers == Some(Covers::SkillFile) && a.hash == skill.skill_md;
                let approved = if a.covers.is_some() {
                    None
                } else {
                    a.files.as_ref()
                };
                if a.covers == Some(Covers::ListedFields) {
                    Vec::new()
                } else {
                    file_changes(approved, current, skill_md_same)
                }
            }
            _ => Vec::new(),
        };
        let note = approval
            .and_then(|a| a.covers)
            .map(|c| c.note().to_string());
        TrustItem {
            path: seen.path,
            kind: seen.kind,
            state,
            approved_hash: approval.map(|a| a.hash.clone()),
            current_hash: seen.hash,
            approved_at: approval.map(|a| a.approved_at),
            approved_text: approval.filter(|_| keep_text).and_then(|a| a.text.clone()),
            current_text: seen.text,
            note: unapprovable
                .as_ref()
                .map(|why| format!("it cannot be approved: {why}"))
                .or(note),
            files,
            unapprovable,
            rel: seen.rel,
            manifest,
        }
    }
}
