//! The roots for one working directory: the home root and the repository
//! root, each opened once as a cap-std [`Dir`](cap_std::fs::Dir).

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::error::RootsError;
use super::handles::Handles;
use super::place::Place;
use super::stamp::is_trusted_owner;
use super::{Root, Shield, Shortage, Stamp, ambient, open};
use crate::policy::{MarkerKind, Policy, UnmarkedLevels};
use crate::vocab::home::normalize;
use crate::vocab::origin::RootId;
use crate::vocab::warning::{Warning, WarningKind};

/// The roots for one working directory, as a fresh build opens them: the
/// root handles, and what was probed on the way to them.
#[derive(Debug)]
pub(crate) struct Roots {
    /// The roots themselves.
    pub(crate) set: RootSet,
    /// The paths of the folders above the repository root whose files the
    /// policy reads (`instructions.compat.ancestor-files`), root-most first, in the
    /// order of `set.ancestors`.
    pub(crate) ancestor_paths: Vec<PathBuf>,
    /// How many of the nearest of those folders are levels
    /// (`instructions.compat.unmarked-levels`: no marker was found, and
    /// they are below the user's home): the last this many of
    /// `set.ancestors`, read with the level files and the `every-level`
    /// skill sources.
    pub(crate) ancestor_levels: usize,
    /// The working directory, absolute.
    pub(crate) cwd: PathBuf,
    /// The working directory relative to the repository root.
    pub(crate) cwd_rel: PathBuf,
    /// Every marker path probed while looking for the repository root, with
    /// what was there (final links not followed): part of the fingerprint,
    /// since a new marker moves the root.
    pub(crate) marker_probes: Vec<(PathBuf, Stamp)>,
    /// The cwd and the home root's path (present or not), and the repository
    /// root, links followed: a removed cwd is an error, a home created later
    /// adds files.
    pub(crate) dir_probes: Vec<(PathBuf, Stamp)>,
    /// Every directory whose marker matched, examined for its owner: a
    /// marker in a directory another user owns is ignored.
    pub(crate) owner_probes: Vec<(PathBuf, Stamp)>,
    /// The state folder, and the state files when one of them is why it
    /// is not used, examined for who owns them and who may write them
    /// (`Place::StateFolder`, `Place::StateFile`): a change there may
    /// change whether the state is used.
    pub(crate) state_probes: Vec<(Place, PathBuf, Stamp)>,
    /// What the user should know about the roots (an ignored marker, a home
    /// and a repository that overlap, a state folder not used).
    pub(crate) warnings: Vec<Warning>,
}

/// The open roots of one build: the home root, the repository root, the
/// policy's named roots and the folders above the repository it reads.
/// A fresh build opens them ([`open_roots`]); a cached one takes them from
/// the loader's handles again ([`attach`]) to check what it examined or to
/// read a skill it listed.
#[derive(Debug)]
pub(crate) struct RootSet {
    /// The home root, when it exists.
    pub(crate) home: Option<Root>,
    /// The repository root (the cwd itself when no marker was found).
    pub(crate) repo: Root,
    /// The policy's named roots, in its order (`None`: not there).
    pub(crate) named: Vec<Option<Root>>,
    /// The folders above the repository root the policy reads, root-most
    /// first, each its own sandbox (`None`: it could not be opened).
    pub(crate) ancestors: Vec<Option<Root>>,
    /// The state root (`roots.state`): where the nonce key, the memo and
    /// the trust store are kept; the home root under Lisa's policy, a
    /// folder of the loader's own under the others (`None`: no state).
    pub(crate) state: Option<Root>,
}

impl RootSet {
    /// The root `id` names (`None`: that root is not there).
    pub(crate) fn get(&self, id: RootId) -> Option<&Root> {
        match id {
            RootId::Home => self.home.as_ref(),
            RootId::Repo => Some(&self.repo),
            RootId::Named(i) => self.named.get(i)?.as_ref(),
            RootId::Ancestor(k) => self.ancestors.get(k)?.as_ref(),
            RootId::State => self.state.as_ref(),
        }
    }

    /// The state root and the id its files are traced under: the home's
    /// when the state root is the home root.
    pub(crate) fn state(&self) -> Option<(&Root, RootId)> {
        let state = self.state.as_ref()?;
        let id = match &self.home {
            Some(h) if h.path == state.path => RootId::Home,
            _ => RootId::State,
        };
        Some((state, id))
    }

    /// Stamps a traced path again, the way it was stamped when traced.
    /// `None` when its root no longer exists in these roots.
    pub(crate) fn restamp(&self, place: Place, rel: &Path) -> Option<Stamp> {
        Some(match place {
            Place::Within(id) => self.get(id)?.stamp(rel),
            Place::Marker => ambient::marker_stamp(rel),
            Place::Directory | Place::Owner => ambient::directory_stamp(rel),
            Place::StateFolder => ambient::state_stamp(rel, true),
            Place::StateFile => ambient::state_stamp(rel, false),
        })
    }

    /// The shortage of file descriptors met through these roots, if any.
    pub(crate) fn shortage(&self) -> Option<io::Error> {
        self.repo.shortage()
    }
}

/// Takes the roots of a cached build from `handles` (reopening any that
/// were shed): the repository root, and the home and named roots the
/// build had.
pub(crate) fn attach(
    handles: &Handles,
    home: Option<&Path>,
    named: &[Option<PathBuf>],
    ancestors: &[Option<PathBuf>],
    state: Option<&Path>,
    repo: &Path,
    shield: &Arc<Shield>,
) -> io::Result<RootSet> {
    let shortage = Arc::new(Shortage::default());
    let home = match home {
        Some(h) => Some(handles.root(h, &shortage, shield)?),
        None => None,
    };
    let named = named
        .iter()
        .map(|p| {
            p.as_deref()
                .map(|p| handles.root(p, &shortage, shield))
                .transpose()
        })
        .collect::<io::Result<_>>()?;
    let ancestors = ancestors
        .iter()
        .map(|p| {
            p.as_deref()
                .map(|p| handles.root(p, &shortage, shield))
                .transpose()
        })
        .collect::<io::Result<_>>()?;
    // A state folder that is no longer this user's alone holds no state
    // for a check or a write either (checked on the handle itself).
    let state = match state {
        Some(p) => {
            Some(handles.root(p, &shortage, shield)?).filter(|r| folder_refusal(r).is_none())
        }
        None => None,
    };
    Ok(RootSet {
        home,
        repo: handles.root(repo, &shortage, shield)?,
        named,
        ancestors,
        state,
    })
}

/// Whether a probed marker counts: it must be of the kind the policy asks
/// for (a linked marker was stamped by its target).
fn marker_matches(stamp: &Stamp, kind: MarkerKind) -> bool {
    match kind {
        MarkerKind::Any => stamp.is_dir() || stamp.is_file(),
        MarkerKind::File => stamp.is_file(),
        MarkerKind::Dir => stamp.is_dir(),
    }
}

/// Opens the roots for `cwd` (absolute).
///
/// `home` is the home root's path, when there is one. `root` names the
/// repository root explicitly (it must contain `cwd`); otherwise the nearest
/// ancestor of `cwd` holding a policy marker is the root, and a cwd with none
/// above it is its own root. Root handles come from `handles`, so a loader
/// shares one handle between many cwds.
pub(crate) fn open_roots(
    policy: &Policy,
    home: Option<&Path>,
    cwd: &Path,
    root: Option<&Path>,
    handles: &Handles,
) -> Result<Roots, RootsError> {
    if !cwd.is_absolute() {
        return Err(RootsError::RelativeCwd(cwd.to_path_buf()));
    }
    let cwd = normalize(cwd);
    let cwd_stamp = match ambient::stat_directory(&cwd) {
        Ok(stamp) if stamp.is_dir() => stamp,
        Ok(_) => return Err(RootsError::CwdNotADirectory(cwd)),
        Err(e) => {
            return Err(RootsError::Cwd {
                path: cwd,
                source: e,
            });
        }
    };

    let shield = Shield::of(policy);
    let mut dir_probes = vec![(cwd.clone(), cwd_stamp)];
    if let Some(h) = home {
        dir_probes.push((h.to_path_buf(), ambient::directory_stamp(h)));
    }
    for p in policy.named_root_paths().iter().flatten() {
        dir_probes.push((p.clone(), ambient::directory_stamp(p)));
    }
    let mut marker_probes = Vec::new();
    let mut owner_probes = Vec::new();
    let mut warnings = Vec::new();
    let given = match root {
        Some(r) => {
            let r = normalize(r);
            if !cwd.starts_with(&r) {
                return Err(RootsError::RootDoesNotContainCwd { root: r, cwd });
            }
            Some(r)
        }
        None => None,
    };
    // The search runs even when the caller names the root: when it finds
    // the same root, the build is the one made without naming it (the same
    // probes, so the same fingerprint), and a caller that sometimes passes
    // the root does not rebuild for nothing. Another root named wins, and
    // what the search saw is dropped: it decided nothing.
    let (found, marked) = {
        let mut search = Search {
            policy,
            markers: &mut marker_probes,
            owners: &mut owner_probes,
            warnings: &mut warnings,
        };
        search.repo_root(&cwd)
    };
    let (repo_path, marked) = match given {
        Some(r) if r != found => {
            marker_probes.clear();
            owner_probes.clear();
            warnings.clear();
            (r, true)
        }
        _ => (found, marked),
    };
    if repo_path != cwd {
        // The search stamped the root it chose (to check its owner): the
        // same probe, not made twice.
        let stamp = owner_probes
            .iter()
            .rev()
            .find(|(dir, _)| *dir == repo_path)
            .map_or_else(|| ambient::directory_stamp(&repo_path), |(_, s)| *s);
        dir_probes.push((repo_path.clone(), stamp));
    }
    let repo_dir = handles
        .open(&repo_path)
        .map_err(|e| RootsError::open_root(repo_path.clone(), e))?;
    let cwd_rel = cwd
        .strip_prefix(&repo_path)
        .map(Path::to_path_buf)
        .unwrap_or_default();

    // One record of descriptor shortages for both roots of the build.
    let shortage = Arc::new(Shortage::default());
    let home = match home {
        Some(h) => match handles.open(h) {
            Ok(dir) => Some(Root {
                path: h.to_path_buf(),
                dir,
                shortage: shortage.clone(),
                shield: shield.clone(),
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(RootsError::open_root(h.to_path_buf(), e)),
        },
        None => None,
    };

    if let Some(h) = &home {
        warnings.extend(overlap(&h.path, &repo_path));
    }
    let mut named = Vec::new();
    for p in policy.named_root_paths() {
        named.push(match p {
            Some(p) => match handles.open(p) {
                Ok(dir) => Some(Root {
                    path: p.clone(),
                    dir,
                    shortage: shortage.clone(),
                    shield: shield.clone(),
                }),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => return Err(RootsError::open_root(p.clone(), e)),
            },
            None => None,
        });
    }
    // The folders above the root, when the policy reads files there: each
    // stamped (a folder created or replaced later moves the fingerprint)
    // and opened as its own sandbox, root-most first.
    let mut ancestors = Vec::new();
    // With no marker found and `unmarked-levels = "to-home"`, the folders
    // above the cwd up to the user's home (not included) are levels.
    let unmarked_to_home = !marked && policy.instructions.unmarked_levels == UnmarkedLevels::ToHome;
    let mut ancestor_levels = 0;
    let mut below_home = unmarked_to_home;
    if !policy.instructions.ancestor_files.is_empty() || unmarked_to_home {
        for dir in repo_path.ancestors().skip(1) {
            if policy.is_ceiling(dir) {
                break;
            }
            if below_home && policy.user_home() == Some(dir) {
                below_home = false;
            }
            if below_home {
                ancestor_levels += 1;
            } else if policy.instructions.ancestor_files.is_empty() {
                break;
            }
            let stamp = ambient::directory_stamp(dir);
            dir_probes.push((dir.to_path_buf(), stamp));
            // Git's owner rule: a folder another user owns (root excepted)
            // may hold anything that user planted, so none of it is read
            // unless the policy trusts the folder. Its owner is traced, so
            // a change of owner moves the fingerprint.
            owner_probes.push((dir.to_path_buf(), stamp));
            if let Some(owner) = stamp.owner()
                && !is_trusted_owner(owner)
                && !policy.is_safe_directory(&dir.to_string_lossy())
            {
                warnings.push(Warning::new(
                    WarningKind::UnsafeAncestor,
                    dir,
                    format!(
                        "this folder above the repository is not read: it belongs to \
                         another user (uid {owner}); list it in roots.safe-directories \
                         to trust it"
                    ),
                ));
                ancestors.push((dir.to_path_buf(), None));
                continue;
            }
            let root = match handles.open(dir) {
                Ok(handle) => Some(Root {
                    path: dir.to_path_buf(),
                    dir: handle,
                    shortage: shortage.clone(),
                    shield: shield.clone(),
                }),
                Err(e) if open::is_exhaustion(&e) => {
                    return Err(RootsError::open_root(dir.to_path_buf(), e));
                }
                Err(_) => None,
            };
            ancestors.push((dir.to_path_buf(), root));
        }
        ancestors.reverse();
    }
    let (ancestor_paths, ancestors) = ancestors.into_iter().unzip();
    // The state root: the home's own handle when it is the home, else a
    // folder of the loader's own, created private on first use. One that
    // cannot be made holds no state; nor does one that is not this user's
    // alone (see `judge_state`).
    let state = match policy.state_dir(home.as_ref().map(|h| h.path.as_path())) {
        None => None,
        Some(p) if home.as_ref().is_some_and(|h| h.path == p) => home.as_ref().map(|h| Root {
            path: h.path.clone(),
            dir: h.dir.clone(),
            shortage: shortage.clone(),
            shield: shield.clone(),
        }),
        Some(p) => match ambient::ensure_state_dir(&p).and_then(|()| handles.open(&p)) {
            Ok(dir) => Some(Root {
                path: p,
                dir,
                shortage: shortage.clone(),
                shield: shield.clone(),
            }),
            Err(e) if open::is_exhaustion(&e) => return Err(RootsError::open_root(p, e)),
            Err(_) => None,
        },
    };
    let mut state_probes = Vec::new();
    let state = state.and_then(|root| {
        let (verdict, probes) = judge_state(policy, &root);
        state_probes = probes;
        match verdict {
            None => Some(root),
            Some(warning) => {
                warnings.push(warning);
                None
            }
        }
    });
    Ok(Roots {
        set: RootSet {
            home,
            named,
            ancestors,
            state,
            repo: Root {
                path: repo_path,
                dir: repo_dir,
                shortage,
                shield: shield.clone(),
            },
        },
        ancestor_paths,
        ancestor_levels,
        cwd,
        cwd_rel,
        marker_probes,
        dir_probes,
        owner_probes,
        state_probes,
        warnings,
    })
}

/// Whether the state root may be used: git's `safe.directory` stance,
/// applied to the folder whose files key the nonce and hold the approvals.
/// The folder (judged on its own handle) must belong to this user and be
/// writable by no group or other user; each of the state files the policy
/// names that is there (the nonce key, the trust store, the frontmatter
/// memo; final links not followed) likewise. Anything else could have been
/// planted by another user (a key they know, approvals they chose), so
/// none of the folder's files is then read or written, and the warning
/// says why. Returns the warning when refused, and what was examined, to
/// be traced: the folder always, the files when one of them decided.
fn judge_state(policy: &Policy, root: &Root) -> (Option<Warning>, Vec<(Place, PathBuf, Stamp)>) {
    let folder = match root.dir.dir_metadata() {
        Ok(m) => Stamp::of(&m),
        Err(e) => Stamp::of_error(&e),
    };
    let mut probes = vec![(Place::StateFolder, root.path.clone(), folder)];
    if let Some(refusal) = refusal(&folder, "folder") {
        let message = format!(
            "{refusal}: its files (the nonce key, the trust store, the frontmatter memo) are \
             neither read nor written, so {UNUSED_STATE}; make it yours alone (chown, chmod go-w)"
        );
        return (
            Some(Warning::new(WarningKind::UnsafeState, &root.path, message)),
            probes,
        );
    }
    let files = [
        policy.trust.nonce_key_file.as_str(),
        policy.trust.store_file.as_str(),
        policy.skills.frontmatter_memo_file.as_str(),
    ];
    let mut warning = None;
    let mut stamps = Vec::new();
    for rel in files.into_iter().filter(|f| !f.is_empty()) {
        let stamp = root.stamp_nofollow(Path::new(rel));
        let path = root.path.join(rel);
        if warning.is_none()
            && let Some(refusal) = refusal(&stamp, "file")
        {
            let message = format!(
                "{refusal}: no file of its folder (the nonce key, the trust store, the \
                 frontmatter memo) is read or written, so {UNUSED_STATE}; remove it, or make it \
                 yours alone (chown, chmod go-w)"
            );
            warning = Some(Warning::new(WarningKind::UnsafeState, &path, message));
        }
        stamps.push((Place::StateFile, path, stamp));
    }
    if warning.is_some() {
        probes.extend(stamps);
    }
    (warning, probes)
}

/// What the loader does without its state, as the warnings say it.
const UNUSED_STATE: &str = "the nonce comes from this process's own key and, under \
     trust.project = \"pinned\", nothing counts as approved";

/// Why a state folder or file (`what`) as `stamp` shows it may not be
/// used: another user owns it, or the group or others may write it.
/// `None` when it may (or nothing is there).
fn refusal(stamp: &Stamp, what: &str) -> Option<String> {
    let Stamp::Present { uid, .. } = *stamp else {
        return None;
    };
    let me = rustix::process::geteuid().as_raw();
    if uid != me {
        return Some(format!(
            "this state {what} belongs to another user (uid {uid})"
        ));
    }
    if stamp.writable_by_others() {
        let mode = stamp.permissions().unwrap_or_default();
        return Some(format!(
            "this state {what} can be written by other users (mode {mode:o})"
        ));
    }
    None
}

/// Why the state root's folder may not be used now, judged on its handle
/// (see [`judge_state`]); `None` when it may.
fn folder_refusal(root: &Root) -> Option<String> {
    match root.dir.dir_metadata() {
        Ok(m) => refusal(&Stamp::of(&m), "folder"),
        Err(e) => Some(e.to_string()),
    }
}

/// A warning when the home root and the repository root overlap: the labels
/// then mean less (a file under both is read as a home file).
fn overlap(home: &Path, repo: &Path) -> Option<Warning> {
    let (kind, message) = if home == repo {
        (
            WarningKind::HomeIsRepository,
            "the home root is the repository root: its files are read as the user's own",
        )
    } else if home.starts_with(repo) {
        (
            WarningKind::HomeInsideRepository,
            "the home root lies inside the repository: the repository can see the user's files",
        )
    } else if repo.starts_with(home) {
        (
            WarningKind::RepositoryInsideHome,
            "the repository lies inside the home root: its skills source may be the user's",
        )
    } else {
        return None;
    };
    Some(Warning::new(kind, home, message))
}

/// The search for the repository root, and what it records.
struct Search<'a> {
    policy: &'a Policy,
    markers: &'a mut Vec<(PathBuf, Stamp)>,
    owners: &'a mut Vec<(PathBuf, Stamp)>,
    warnings: &'a mut Vec<Warning>,
}

impl Search<'_> {
    /// The nearest ancestor of `cwd` (itself included, ceilings excluded)
    /// holding a marker that counts, or the cwd when none does. Every marker
    /// path probed, and the owner of every directory whose marker matched,
    /// is recorded.
    fn repo_root(&mut self, cwd: &Path) -> (PathBuf, bool) {
        for dir in cwd.ancestors() {
            if dir != cwd && self.policy.is_ceiling(dir) {
                break;
            }
            for marker in &self.policy.roots.repo_markers {
                let p = crate::vocab::paths::join(dir, marker.get_ref());
                let stamp = ambient::marker_stamp(&p);
                let hit = marker_matches(&stamp, self.policy.roots.repo_marker_kind);
                self.markers.push((p, stamp));
                if hit && self.trusted_owner(dir) {
                    return (dir.to_path_buf(), true);
                }
            }
        }
        (cwd.to_path_buf(), false)
    }

    /// Whether a directory holding a marker may be the repository root: it
    /// belongs to the user running the loader or to root, or the policy's
    /// `safe-directories` trust it (git's rule against another user's
    /// repository above a shared directory).
    fn trusted_owner(&mut self, dir: &Path) -> bool {
        let stamp = ambient::directory_stamp(dir);
        self.owners.push((dir.to_path_buf(), stamp));
        let Some(owner) = stamp.owner() else {
            return false;
        };
        if is_trusted_owner(owner) || self.policy.is_safe_directory(&dir.to_string_lossy()) {
            return true;
        }
        self.warnings.push(Warning::new(
            WarningKind::UnsafeRepository,
            dir,
            format!(
                "the repository marker here is ignored: the directory belongs to another \
                 user (uid {owner}); list it in roots.safe-directories to trust it"
            ),
        ));
        false
    }
}
