//! A skill's whole folder: every file of it with its SHA-256 digest and
//! size (the manifest the MCP Skills extension serves and a host's approval
//! binds to), and one listed file read on request. Everything is read
//! through the skill's root handle.
//!
//! What is part of a skill: every regular file below the folder of its
//! `SKILL.md`, reached through folders that are not links. A link (to a file
//! or a folder, inside the folder or out of it) is never part of the skill,
//! except the `SKILL.md` itself where the policy's symlink rule let it win;
//! a FIFO, socket or device never is (each file is opened non-blocking and
//! checked on its handle); nothing inside version-control metadata is. A
//! skill over the extension's limits (512 files, 16 MiB in all) has no
//! manifest: [`NotServed`] says why.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use serde::Serialize;

use super::frontmatter;
use super::resolve::Skill;
use crate::policy::{HiddenText, Policy, SymlinkRule};
use crate::sandbox::{Opened, Root};
use crate::trace::{Open, View};
use crate::vocab::origin::{Origin, RootId};

/// The most files a skill served whole may have (the extension's limit,
/// `SKILL.md` included).
pub const MAX_SKILL_FILES: usize = 512;

/// The most bytes all the files of a skill served whole may hold together
/// (the extension's limit: 16 MiB).
pub const MAX_SKILL_BYTES: u64 = 16 * 1024 * 1024;

/// The deepest folder below a skill's folder that is looked into.
const MAX_DEPTH: usize = 32;

/// The most folders of one skill looked into.
const MAX_FOLDERS: usize = 4096;

/// The most entries one folder of a skill may hold (more: not served).
const MAX_ENTRIES: usize = 4096;

/// One file of a skill.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct ManifestFile {
    /// The path below the skill's folder, `/`-separated (`SKILL.md`,
    /// `scripts/run.py`).
    pub path: String,
    /// `sha256:` and 64 lowercase hex digits: the digest of the raw bytes.
    pub digest: String,
    /// The length of the raw bytes.
    pub size: u64,
}

/// Why a skill that won its name is not served whole (in JSON, the
/// sentence its `Display` writes).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum NotServed {
    /// More files than [`MAX_SKILL_FILES`] (or more entries in a folder,
    /// or more folders, than are looked at).
    TooManyFiles {
        /// The limit.
        limit: usize,
    },
    /// More bytes than [`MAX_SKILL_BYTES`].
    TooLarge {
        /// The limit.
        limit: u64,
    },
    /// A file whose name is not UTF-8 (it has no URI).
    NameNotText {
        /// The file, below the skill's folder, lossily.
        path: String,
    },
    /// A text file with hidden characters the policy would reveal or strip:
    /// the extension serves files byte for byte, so the treatment cannot
    /// be applied and the skill is left out.
    HiddenText {
        /// The file, below the skill's folder.
        path: String,
    },
    /// Under `trust.project = "pinned"`, a file of the folder is no longer
    /// the approved one (or a file was added or removed since).
    Unapproved,
    /// The frontmatter's `name` is not the name the skill won under (a
    /// policy that names skills by their folder): the extension requires
    /// the two to be one, and a host checking the entry would refuse it.
    NameMismatch {
        /// The frontmatter's `name`.
        frontmatter_name: String,
    },
    /// The `SKILL.md` is gone or cannot be read now.
    Unreadable {
        /// What happened.
        detail: String,
    },
}

impl std::fmt::Display for NotServed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotServed::TooManyFiles { limit } => {
                write!(f, "it has more than {limit} files (the extension's limit)")
            }
            NotServed::TooLarge { limit } => write!(
                f,
                "its files hold more than {limit} bytes together (the extension's limit)"
            ),
            NotServed::NameNotText { path } => {
                write!(f, "the file name {path:?} is not UTF-8, so it has no URI")
            }
            NotServed::HiddenText { path } => write!(
                f,
                "{path} holds hidden characters the policy would reveal or strip, and files \
                 are served byte for byte"
            ),
            NotServed::Unapproved => {
                f.write_str("its files are not the approved ones (trust.project is pinned)")
            }
            NotServed::NameMismatch { frontmatter_name } => write!(
                f,
                "its frontmatter names it {frontmatter_name:?}, not the name it won under"
            ),
            NotServed::Unreadable { detail } => write!(f, "its SKILL.md cannot be read: {detail}"),
        }
    }
}

/// A skill's folder as served: its frontmatter as JSON, and every file.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SkillManifest {
    /// The skill's name.
    pub name: String,
    /// Home or project.
    pub origin: Origin,
    /// The absolute path of its `SKILL.md`.
    #[serde(serialize_with = "crate::vocab::paths::lossy")]
    pub path: PathBuf,
    /// Its `SKILL.md` relative to its root, `/`-separated: what tells two
    /// winners of one name apart under a policy that keeps both.
    pub location: String,
    /// The `SKILL.md`'s frontmatter, every field as written (YAML as JSON).
    #[cfg_attr(
        feature = "schema",
        schemars(with = "serde_json::Map<String, serde_json::Value>")
    )]
    pub frontmatter: serde_json::Value,
    /// Every file, in path order, `SKILL.md` among them; empty when the
    /// skill is not served.
    pub files: Vec<ManifestFile>,
    /// Why the skill is not served, as a sentence (`null` when it is).
    #[serde(serialize_with = "not_served_text")]
    #[cfg_attr(feature = "schema", schemars(with = "Option<String>"))]
    pub not_served: Option<NotServed>,
}

/// `not_served` in JSON: the sentence.
fn not_served_text<S: serde::Serializer>(why: &Option<NotServed>, s: S) -> Result<S::Ok, S::Error> {
    match why {
        Some(why) => s.serialize_some(&why.to_string()),
        None => s.serialize_none(),
    }
}

/// One file of a skill, read whole.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SkillResource {
    /// The skill's name.
    pub name: String,
    /// Home or project.
    pub origin: Origin,
    /// The path below the skill's folder, `/`-separated.
    pub path: String,
    /// `sha256:` and 64 lowercase hex digits.
    pub digest: String,
    /// The length of the bytes.
    pub size: u64,
    /// The bytes, when they are UTF-8 text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The bytes in base64, when they are not UTF-8 text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blob: Option<String>,
}

/// Why one file of a skill was not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ResourceError {
    /// Not a file of the skill (never was, or no longer is).
    NotListed,
    /// The skill is not served whole.
    NotServed(NotServed),
}

/// `sha256:<hex>` of `bytes`.
pub(crate) fn digest(bytes: &[u8]) -> String {
    crate::trust::sha256_digest(bytes)
}

/// A file found in the walk: its path below the skill's folder (as
/// written in the URI) and below the root.
struct Found {
    path: String,
    rel: PathBuf,
}

/// Every file of the skill whose `SKILL.md` is `skill_md` (relative to
/// `root`), in path order, without reading any: the walk.
fn walk(root: &Root, skill_md: &Path) -> Result<Vec<Found>, NotServed> {
    // Each folder opened once and listed through its handle (the way
    // there checked on the handle, as discovery lists a source).
    walk_with(skill_md, |dir| root.look(dir, MAX_ENTRIES + 1).listing)
}

/// [`walk`], each folder listed by `list` (the trust gate's walk records
/// each folder it lists).
fn walk_with(
    skill_md: &Path,
    mut list: impl FnMut(
        &Path,
    )
        -> Result<Option<Vec<crate::sandbox::Listed>>, crate::vocab::reason::Reason>,
) -> Result<Vec<Found>, NotServed> {
    let folder = skill_md.parent().unwrap_or(Path::new(""));
    let mut files = vec![Found {
        path: super::SKILL_FILE.to_string(),
        rel: skill_md.to_path_buf(),
    }];
    // (folder below the root, its path below the skill's folder, depth)
    let mut todo: Vec<(PathBuf, String, usize)> = vec![(folder.to_path_buf(), String::new(), 0)];
    let mut folders = 0;
    while let Some((dir, prefix, depth)) = todo.pop() {
        folders += 1;
        if folders > MAX_FOLDERS {
            return Err(NotServed::TooManyFiles {
                limit: MAX_SKILL_FILES,
            });
        }
        // A folder that cannot be listed (gone, or inside version-control
        // metadata) holds nothing of the skill.
        let Ok(Some(entries)) = list(&dir) else {
            continue;
        };
        if entries.len() > MAX_ENTRIES {
            return Err(NotServed::TooManyFiles {
                limit: MAX_SKILL_FILES,
            });
        }
        for entry in entries {
            if entry.is_link {
                continue;
            }
            let Some(name) = entry.name.to_str() else {
                return Err(NotServed::NameNotText {
                    path: format!("{prefix}{}", entry.name.to_string_lossy()),
                });
            };
            let path = format!("{prefix}{name}");
            if entry.is_dir {
                if depth < MAX_DEPTH {
                    todo.push((dir.join(name), format!("{path}/"), depth + 1));
                }
            } else if path != super::SKILL_FILE {
                // Kinds the file system did not tell are opened and
                // checked on the handle like the others.
                files.push(Found {
                    path,
                    rel: dir.join(name),
                });
            }
            if files.len() > MAX_SKILL_FILES {
                return Err(NotServed::TooManyFiles {
                    limit: MAX_SKILL_FILES,
                });
            }
        }
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}

/// The manifest of a project skill as the trust gate sees it during a
/// build: every file of its folder (the same files [`manifest`] lists,
/// under the same limits) with its SHA-256 digest, path below the folder →
/// digest. Each folder listed and each file read is recorded through
/// `view`, so a file changed, added or removed later moves the build's
/// fingerprint. The `SKILL.md` is not read again: `skill_md` is the digest
/// and size of the bytes the build read of it.
pub(crate) fn pinned_files(
    root: &Root,
    id: RootId,
    skill_md_rel: &Path,
    skill_md: (String, u64),
    view: &mut View<'_>,
) -> Result<BTreeMap<String, String>, NotServed> {
    // Each folder is recorded with the stamp of the handle it is listed
    // through (taken before the listing): an entry added after it shows as
    // a changed folder.
    let found = walk_with(skill_md_rel, |dir| {
        view.list(root, id, dir, MAX_ENTRIES + 1).listing
    })?;
    let mut total: u64 = 0;
    let mut files = BTreeMap::new();
    for f in &found {
        if f.path == super::SKILL_FILE {
            let (digest, size) = skill_md.clone();
            if size > MAX_SKILL_BYTES - total {
                return Err(NotServed::TooLarge {
                    limit: MAX_SKILL_BYTES,
                });
            }
            total += size;
            files.insert(f.path.clone(), digest);
            continue;
        }
        let Open::File(file) = view.open(root, id, &f.rel, SymlinkRule::Never) else {
            continue;
        };
        let room = MAX_SKILL_BYTES - total;
        if file.len() > room {
            file.leave();
            return Err(NotServed::TooLarge {
                limit: MAX_SKILL_BYTES,
            });
        }
        let Ok(bytes) = file.read_at_most(room + 1) else {
            continue;
        };
        let size = bytes.len() as u64;
        if size > room {
            return Err(NotServed::TooLarge {
                limit: MAX_SKILL_BYTES,
            });
        }
        total += size;
        files.insert(f.path.clone(), digest(&bytes));
    }
    Ok(files)
}

/// Opens one file of the walk: `SKILL.md` under the policy's symlink rule
/// (the rule it won under), every other file with no link followed. `None`
/// for anything that is not a regular file now.
fn open(policy: &Policy, root: &Root, found: &Found) -> Option<crate::sandbox::OpenFile> {
    let rule = if found.path == super::SKILL_FILE {
        policy.trust.symlinks
    } else {
        SymlinkRule::Never
    };
    match root.open_file(&found.rel, rule) {
        Opened::File(file) => Some(file),
        Opened::Absent | Opened::Refused(_) => None,
    }
}

/// Whether `bytes`, as text, hold hidden characters the policy would
/// change (never under `keep`; binary files are not text).
fn hides(policy: &Policy, bytes: &[u8]) -> bool {
    if policy.trust.hidden_text == HiddenText::Keep {
        return false;
    }
    let Ok(text) = std::str::from_utf8(bytes) else {
        return false;
    };
    if crate::hidden::is_plain(text) {
        return false;
    }
    let (treated, _) = crate::hidden::treat(
        text,
        policy.trust.hidden_text,
        &policy.templates.hidden_marker,
    );
    treated != text
}

/// The frontmatter of `skill_md_text` as written (YAML as JSON), or the
/// parsed fields when the YAML is not strict (a lenient reading).
fn frontmatter_json(
    policy: &Policy,
    text: &str,
    skill: &Skill,
) -> Result<serde_json::Value, NotServed> {
    let reading = frontmatter::Reading::of(policy);
    let strict = frontmatter::locate(text.as_bytes(), true, reading.fences)
        .ok()
        .and_then(|block| text.get(block.yaml))
        .and_then(|yaml| serde_saphyr::from_str::<serde_json::Value>(yaml).ok())
        .filter(|v| {
            v.get("description")
                .is_some_and(serde_json::Value::is_string)
        });
    if let Some(value) = strict {
        return match value.get("name").and_then(|n| n.as_str()) {
            Some(name) if name == skill.name => Ok(value),
            other => Err(NotServed::NameMismatch {
                frontmatter_name: other.unwrap_or_default().to_string(),
            }),
        };
    }
    let mut map = match serde_json::to_value(&*skill.frontmatter) {
        Ok(serde_json::Value::Object(map)) => map,
        _ => serde_json::Map::new(),
    };
    if let Some(serde_json::Value::Object(extra)) = map.remove("extra") {
        map.extend(extra);
    }
    map.insert("name".into(), skill.name.clone().into());
    map.insert(
        "description".into(),
        skill.frontmatter.description.clone().into(),
    );
    Ok(serde_json::Value::Object(map))
}

/// `skill`'s `SKILL.md` relative to its root, `/`-separated.
pub(crate) fn location(skill: &Skill) -> String {
    skill
        .rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// The manifest of `skill` (a winner of the build whose roots `root`
/// belongs to), read now through `root`.
pub(crate) fn manifest(policy: &Policy, root: &Root, skill: &Skill) -> SkillManifest {
    let mut out = SkillManifest {
        name: skill.name.clone(),
        origin: skill.origin,
        path: skill.path.clone(),
        location: location(skill),
        frontmatter: serde_json::Value::Object(serde_json::Map::new()),
        files: Vec::new(),
        not_served: None,
    };
    match files(policy, root, skill) {
        Ok((files, fm)) => {
            out.files = files;
            out.frontmatter = fm;
        }
        Err(why) => {
            let mut map = serde_json::Map::new();
            map.insert("name".into(), skill.name.clone().into());
            map.insert(
                "description".into(),
                skill.frontmatter.description.clone().into(),
            );
            out.frontmatter = serde_json::Value::Object(map);
            out.not_served = Some(why);
        }
    }
    out
}

/// Every file of `skill` read and digested, and its frontmatter.
fn files(
    policy: &Policy,
    root: &Root,
    skill: &Skill,
) -> Result<(Vec<ManifestFile>, serde_json::Value), NotServed> {
    let found = walk(root, &skill.rel)?;
    let mut total: u64 = 0;
    let mut files = Vec::with_capacity(found.len());
    let mut frontmatter = None;
    for f in &found {
        let is_skill_md = f.path == super::SKILL_FILE;
        let Some(file) = open(policy, root, f) else {
            if is_skill_md {
                return Err(NotServed::Unreadable {
                    detail: "it is no longer a readable regular file".into(),
                });
            }
            continue;
        };
        let room = MAX_SKILL_BYTES - total;
        if file.len() > room {
            return Err(NotServed::TooLarge {
                limit: MAX_SKILL_BYTES,
            });
        }
        let bytes = file
            .read_at_most(room + 1)
            .map_err(|e| NotServed::Unreadable {
                detail: e.to_string(),
            });
        let bytes = match bytes {
            Ok(b) => b,
            Err(e) if is_skill_md => return Err(e),
            Err(_) => continue,
        };
        let size = bytes.len() as u64;
        if size > room {
            return Err(NotServed::TooLarge {
                limit: MAX_SKILL_BYTES,
            });
        }
        total += size;
        if is_skill_md {
            if skill
                .pinned_hash
                .as_deref()
                .is_some_and(|hash| crate::trust::content_hash(&bytes) != hash)
            {
                return Err(NotServed::Unapproved);
            }
            let Ok(text) = std::str::from_utf8(&bytes) else {
                return Err(NotServed::Unreadable {
                    detail: "it is not UTF-8 text".into(),
                });
            };
            frontmatter = Some(frontmatter_json(policy, text, skill)?);
        }
        if hides(policy, &bytes) {
            return Err(NotServed::HiddenText {
                path: f.path.clone(),
            });
        }
        files.push(ManifestFile {
            path: f.path.clone(),
            digest: digest(&bytes),
            size,
        });
    }
    let frontmatter = frontmatter.ok_or_else(|| NotServed::Unreadable {
        detail: "it is gone".into(),
    })?;
    // A pinned skill is served only while every file of its folder is the
    // approved one.
    if let Some(approved) = &skill.pinned_files
        && crate::trust::files_hash(files.iter().map(|f| (f.path.as_str(), f.digest.as_str())))
            != *approved
    {
        return Err(NotServed::Unapproved);
    }
    Ok((files, frontmatter))
}

/// Whether `path` is written as a plain relative path: `/`-separated
/// names, none empty, `.` or `..`, no backslash or NUL.
fn plain_relative(path: &str) -> bool {
    !path.is_empty()
        && !path.contains(['\\', '\0'])
        && path
            .split('/')
            .all(|seg| !seg.is_empty() && seg != "." && seg != "..")
        && Path::new(path)
            .components()
            .all(|c| matches!(c, Component::Normal(_)))
}

/// Reads the file at `path` below `skill`'s folder when it is a file of
/// the skill now (as [`manifest`] would list it) and the skill is served
/// whole.
pub(crate) fn resource(
    policy: &Policy,
    root: &Root,
    skill: &Skill,
    path: &str,
) -> Result<SkillResource, ResourceError> {
    if !plain_relative(path) {
        return Err(ResourceError::NotListed);
    }
    // The whole skill is looked at: a skill over the limits, unapproved or
    // with hidden text serves none of its files.
    let manifest = manifest(policy, root, skill);
    if let Some(why) = manifest.not_served {
        return Err(ResourceError::NotServed(why));
    }
    if !manifest.files.iter().any(|f| f.path == path) {
        return Err(ResourceError::NotListed);
    }
    let found = walk(root, &skill.rel)
        .map_err(ResourceError::NotServed)?
        .into_iter()
        .find(|f| f.path == path)
        .ok_or(ResourceError::NotListed)?;
    let file = open(policy, root, &found).ok_or(ResourceError::NotListed)?;
    let bytes = file
        .read_at_most(MAX_SKILL_BYTES)
        .map_err(|_| ResourceError::NotListed)?;
    if path == super::SKILL_FILE
        && skill
            .pinned_hash
            .as_deref()
            .is_some_and(|hash| crate::trust::content_hash(&bytes) != hash)
    {
        return Err(ResourceError::NotServed(NotServed::Unapproved));
    }
    if hides(policy, &bytes) {
        return Err(ResourceError::NotServed(NotServed::HiddenText {
            path: path.to_string(),
        }));
    }
    let size = bytes.len() as u64;
    let digest = digest(&bytes);
    // A pinned skill's file is served only with the approved bytes: the
    // ones the manifest just checked against the approval.
    if skill.pinned_files.is_some()
        && !manifest
            .files
            .iter()
            .any(|f| f.path == path && f.digest == digest)
    {
        return Err(ResourceError::NotServed(NotServed::Unapproved));
    }
    let (text, blob) = match String::from_utf8(bytes) {
        Ok(text) => (Some(text), None),
        Err(e) => (None, Some(crate::vocab::text::base64(e.as_bytes()))),
    };
    Ok(SkillResource {
        name: skill.name.clone(),
        origin: skill.origin,
        path: path.to_string(),
        digest,
        size,
        text,
        blob,
    })
}

impl SkillManifest {
    /// The folders of the skill's files, each with its direct children:
    /// what `resources/directory/read` lists. Keys are paths below the
    /// skill's folder (`""` for the folder itself); each child is `(name,
    /// is_folder)`, in name order.
    pub fn folders(&self) -> BTreeMap<String, Vec<(String, bool)>> {
        folders(self)
    }
}

/// See [`SkillManifest::folders`].
fn folders(manifest: &SkillManifest) -> BTreeMap<String, Vec<(String, bool)>> {
    let mut out: BTreeMap<String, Vec<(String, bool)>> = BTreeMap::new();
    out.entry(String::new()).or_default();
    for f in &manifest.files {
        let mut parent = String::new();
        let segments: Vec<&str> = f.path.split('/').collect();
        for (i, seg) in segments.iter().enumerate() {
            let last = i + 1 == segments.len();
            let children = out.entry(parent.clone()).or_default();
            if !children.iter().any(|(n, _)| n == seg) {
                children.push(((*seg).to_string(), !last));
            }
            if !parent.is_empty() {
                parent.push('/');
            }
            parent.push_str(seg);
        }
    }
    for children in out.values_mut() {
        children.sort();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_are_sha256_in_lowercase_hex() {
        assert_eq!(
            digest(b"abc"),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn only_plain_relative_paths_name_a_file() {
        for bad in [
            "",
            "/etc/passwd",
            "../x",
            "a/../b",
            "a//b",
            "./a",
            "a/.",
            "a\\b",
            "a/",
            "..",
        ] {
            assert!(!plain_relative(bad), "{bad:?}");
        }
        for good in ["SKILL.md", "scripts/run.py", ".hidden", "a/b/c.txt"] {
            assert!(plain_relative(good), "{good:?}");
        }
    }

    #[test]
    fn folders_list_direct_children() {
        let m = SkillManifest {
            name: "x".into(),
            origin: Origin::Home,
            path: PathBuf::new(),
            location: String::new(),
            frontmatter: serde_json::Value::Null,
            files: ["SKILL.md", "a/b.txt", "a/c/d.txt"]
                .into_iter()
                .map(|p| ManifestFile {
                    path: p.into(),
                    digest: String::new(),
                    size: 0,
                })
                .collect(),
            not_served: None,
        };
        let f = folders(&m);
        assert_eq!(
            f[""],
            vec![("SKILL.md".to_string(), false), ("a".to_string(), true)]
        );
        assert_eq!(
            f["a"],
            vec![("b.txt".to_string(), false), ("c".to_string(), true)]
        );
        assert_eq!(f["a/c"], vec![("d.txt".to_string(), false)]);
    }
}
