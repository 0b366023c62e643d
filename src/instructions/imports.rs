//! `@path` imports: an instruction file that names another file with `@`
//! gets that file's text inlined where the name stands (Gemini CLI and Claude
//! Code do this; Lisa does not, `instructions.import-depth = 0`).
//!
//! The syntax is Gemini CLI's: an `@` at the start of the text or after
//! whitespace, followed by a path that starts with `.`, `/` or an ASCII
//! letter and runs to the next whitespace; an `@` inside a code span or a
//! fence (a run of backticks up to the same run) is text. The path is
//! relative to the importing file's folder and must stay inside the
//! importing file's root: it is opened through that root's sandbox like
//! every other file, so `../` above the root, an absolute path elsewhere, a
//! URL or a link leaving the root are refused. It is refused before
//! anything is looked at, so nothing tells whether such a file exists.
//!
//! Two compat keys widen this for the user's own files, never past a root:
//! under `instructions.compat.home-import-root = "user-roots"` a home
//! file's imports (and theirs) may lie anywhere in the home root or a named
//! root (Claude Code's `~`), wherever the cwd is, each read through its
//! root's handle, never inside the repository through a named root; under
//! `instructions.compat.tilde-imports` an `@~/path` names `path` in the
//! user's home (`$HOME`) and is then read, or refused, like any absolute
//! path.
//! Without them nothing is `~`-expanded. Under
//! `instructions.compat.import-once` a file the build has read already is
//! not imported again (`import-repeated`).
//!
//! Two places are never imported from or into, under every policy: a file
//! above the repository root (`instructions.compat.ancestor-files`) imports
//! nothing (`import-from-ancestor`), and no import reads inside a
//! version-control metadata folder (`.git`, `.hg`, `.svn`, `.jj`, the
//! policy's markers and `instructions.import-excluded-names`), named in
//! the path or reached through a link (`vcs-metadata`).
//!
//! Kiro's syntax (`instructions.compat.import-syntax = "file-reference"`) is
//! `#[[file:path]]` on one line, the path relative to the importing file's
//! root rather than its folder; everything else here holds for it alike.
//!
//! Every outcome is recorded ([`Import`]); a failure leaves the `@path`
//! as written or puts the policy's `import-failed` comment in its place,
//! never nothing. Each imported file is traced (the fingerprint moves when
//! it does) and its text is part of the importing file's block, so the
//! budget counts it. What one chain imports is bounded: a depth, a number
//! of files and a number of bytes, all from the policy.

use std::path::{Component, Path, PathBuf};

use serde::Serialize;

use crate::policy::{HomeImportRoot, ImportFailure, ImportRoot, ImportSyntax, Policy};
use crate::sandbox::{Root, RootSet};
use crate::trace::{Open, View};
use crate::trust::{self, Gate, ItemKind};
use crate::vocab::hash::FastSet;
use crate::vocab::origin::{Origin, RootId};
use crate::vocab::reason::Reason;
use crate::vocab::text;

/// What became of one `@path` in an instruction file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Import {
    /// The file the `@path` was written in.
    #[serde(serialize_with = "crate::vocab::paths::lossy")]
    pub from: PathBuf,
    /// The path as written after the `@`.
    pub spec: String,
    /// The file it named, when it could be placed inside the root.
    #[serde(serialize_with = "crate::vocab::paths::lossy_opt")]
    pub path: Option<PathBuf>,
    /// How deep the importing file sits (0: a file of the chain).
    pub depth: usize,
    /// Bytes of the imported file that were inlined (0 when it was not).
    pub bytes: u64,
    /// `null` when the file was inlined; otherwise why not.
    pub reason: Option<Reason>,
    /// The line (from 1) of the reference in the text it was found in
    /// (the importing file's), when known. Not part of any JSON output
    /// (the survey shows it).
    #[serde(skip)]
    #[cfg_attr(feature = "schema", schemars(skip))]
    pub line: Option<u64>,
}

/// A root one file's imports may be read from, and the folder inside it
/// they must stay in.
struct Reach<'a> {
    root: &'a Root,
    id: RootId,
    /// The folder (root-relative) imports must stay in; `None`: nowhere
    /// (`import-root = "cwd"` and the cwd not in this root).
    bound: Option<PathBuf>,
}

/// The limits and the running totals of one file's imports.
pub(crate) struct Importer<'a> {
    policy: &'a Policy,
    /// The roots the chain file's imports may be read from: its own root
    /// first, then (a home file under `home-import-root = "user-roots"`)
    /// the named roots. Each import is read through the first that holds
    /// it, with that root's handle.
    reach: Vec<Reach<'a>>,
    /// The chain file's root.
    root_id: RootId,
    /// The repository root's path: no import is read inside it through a
    /// root other than the chain file's own (its bytes would be framed as
    /// the user's).
    repo: &'a Path,
    /// The folder `@~/` names (`tilde-imports`): `None` when `~` starts
    /// no import, `Some(None)` when the root it names has no path.
    tilde: Option<Option<&'a Path>>,
    /// The working directory, absolute.
    cwd: &'a Path,
    max_depth: usize,
    files_left: u64,
    bytes_left: u64,
    /// Every outcome, in document order.
    pub(crate) records: Vec<Import>,
    /// Hidden text found in the imported files (each treated on its own).
    pub(crate) found: crate::hidden::HiddenReport,
    /// The files this build has read (absolute), under `import-once`: the
    /// chain files before this one and every file imported so far.
    pub(crate) seen: FastSet<PathBuf>,
}

/// Whether `c` ends an import path (and may precede an `@`).
fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r')
}

/// The import references of `text` in `syntax`: (start of the reference,
/// its end, the path it names). With `tilde`, an `@~/path` is one too.
pub(crate) fn find_references(
    text: &str,
    syntax: ImportSyntax,
    tilde: bool,
) -> Vec<(usize, usize, &str)> {
    match syntax {
        ImportSyntax::AtPath => find_imports(text, tilde),
        ImportSyntax::FileReference => find_file_references(text),
    }
}

/// The opening of a Kiro file reference.
const FILE_REFERENCE_OPEN: &str = "#[[file:";

/// The `#[[file:path]]` references of `text`: (start of the `#`, end of the
/// `]]`, the path trimmed). A reference runs on one line; one with an
/// empty path, or not closed on its line, is text.
pub(crate) fn find_file_references(text: &str) -> Vec<(usize, usize, &str)> {
    let mut out = Vec::new();
    let mut i = 0;
    let finder = memchr::memmem::Finder::new(FILE_REFERENCE_OPEN);
    while let Some(k) = finder.find(&text.as_bytes()[i..]) {
        let start = i + k;
        let from = start + FILE_REFERENCE_OPEN.len();
        let line_end =
            memchr::memchr(b'\n', &text.as_bytes()[from..]).map_or(text.len(), |e| from + e);
        // The ASCII `]]` and `#[[file:` make every index here a boundary.
        match text[from..line_end].find("]]") {
            Some(close) => {
                let spec = text[from..from + close].trim();
                let end = from + close + 2;
                if !spec.is_empty() {
                    out.push((start, end, spec));
                }
                i = end;
            }
            None => i = from,
        }
    }
    out
}

/// The `@path` tokens of `text`: (start of the `@`, end of the path, path).
/// A path starts with `.`, `/` or an ASCII letter; with `tilde`, also
/// with `~/`.
pub(crate) fn find_imports(text: &str, tilde: bool) -> Vec<(usize, usize, &str)> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(at) = memchr::memchr(b'@', &bytes[i..]).map(|k| i + k) {
        if at > 0 && !is_space(bytes[at - 1]) {
            i = at + 1;
            continue;
        }
        let mut j = at + 1;
        while j < bytes.len() && !is_space(bytes[j]) {
            j += 1;
        }
        // `@` and the space bytes are ASCII, so both ends are boundaries.
        let spec = &text[at + 1..j];
        let first = spec.as_bytes().first().copied();
        if first.is_some_and(|c| c == b'.' || c == b'/' || c.is_ascii_alphabetic())
            || (tilde && spec.starts_with("~/"))
        {
            out.push((at, j, spec));
        }
        i = j + 1;
        if i >= bytes.len() {
            break;
        }
    }
    out
}

/// The byte ranges of code spans and fences: a run of backticks up to the
/// next occurrence of the same run (a shorter run when the whole one never
/// closes), as a lazy `(`+)[\s\S]*?\1` finds them.
pub(crate) fn code_regions(text: &str) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(start) = memchr::memchr(b'`', &bytes[i..]).map(|k| i + k) {
        let run = bytes[start..].iter().take_while(|&&b| b == b'`').count();
        let mut next = start + 1;
        for k in (1..=run).rev() {
            let fence = &bytes[start..start + k];
            if let Some(close) = memchr::memmem::find(&bytes[start + k..], fence) {
                let end = start + k + close + k;
                out.push((start, end));
                next = end;
                break;
            }
        }
        i = next;
        if i >= bytes.len() {
            break;
        }
    }
    out
}

impl<'a> Importer<'a> {
    /// An importer for one chain file of the root `root_id` in `roots`,
    /// with what is left of the chain's import limits (files, bytes) and
    /// the files the build has read so far (`import-once`);
    /// [`left`](Self::left) and [`seen`](Self::seen) give back what
    /// remains after it. `cwd` is the working directory, absolute.
    /// `None` when the root is not there.
    pub(crate) fn new(
        policy: &'a Policy,
        roots: &'a RootSet,
        root_id: RootId,
        cwd: &'a Path,
        (files_left, bytes_left): (u64, u64),
        seen: FastSet<PathBuf>,
    ) -> Option<Self> {
        let root = roots.get(root_id)?;
        let mut reach = vec![Reach {
            root,
            id: root_id,
            bound: Some(PathBuf::new()),
        }];
        // Under `home-import-root = "user-roots"` a home file's imports may
        // also lie in the named roots, and the cwd does not bound them.
        if Self::home_anywhere(policy, root_id) {
            for (i, named) in roots.named.iter().enumerate() {
                if let Some(other) = named {
                    reach.push(Reach {
                        root: other,
                        id: RootId::Named(i),
                        bound: Some(PathBuf::new()),
                    });
                }
            }
        }
        Some(Importer {
            policy,
            reach,
            root_id,
            repo: &roots.repo.path,
            tilde: policy.tilde_folder(),
            cwd,
            max_depth: usize::try_from(policy.instructions.import_depth).unwrap_or(0),
            files_left,
            bytes_left,
            records: Vec::new(),
            found: crate::hidden::HiddenReport::default(),
            seen,
        })
    }

    /// The chain's import limits at the start (files, bytes).
    pub(crate) fn limits(policy: &Policy) -> (u64, u64) {
        let ins = &policy.instructions;
        (
            u64::try_from(ins.import_max_files).unwrap_or(0),
            u64::try_from(ins.import_max_bytes).unwrap_or(0),
        )
    }

    /// What is left of the chain's limits (files, bytes).
    pub(crate) fn left(&self) -> (u64, u64) {
        (self.files_left, self.bytes_left)
    }

    /// The files the build has read, this file's imports included
    /// (`import-once`).
    pub(crate) fn seen(&mut self) -> FastSet<PathBuf> {
        std::mem::take(&mut self.seen)
    }

    /// Whether the chain file's root is the home root and its imports
    /// reach the user's roots wherever the cwd is (`home-import-root`).
    fn home_anywhere(policy: &Policy, root_id: RootId) -> bool {
        root_id == RootId::Home && policy.instructions.home_import_root == HomeImportRoot::UserRoots
    }

    /// Whether this policy imports at all.
    pub(crate) fn enabled(policy: &Policy) -> bool {
        policy.instructions.import_depth > 0
    }

    /// `text` (the chain file `rel`, under its root) with its imports
    /// inlined.
    pub(crate) fn expand(
        &mut self,
        text: &str,
        rel: &Path,
        view: &mut View<'_>,
        gate: &mut Gate,
    ) -> String {
        let own = &self.reach[0];
        let path = own.root.path.join(rel);
        // Under `self-import-cycle` the file being read is open already, so
        // an import of it is a cycle at once (Claude Code).
        let mut inside = if self.policy.instructions.self_import_cycle {
            vec![path.clone()]
        } else {
            Vec::new()
        };
        // A home file under `home-import-root` imports anywhere in its
        // roots; any other file within `import-root`.
        let own_bound = if Self::home_anywhere(self.policy, self.root_id) {
            Some(PathBuf::new())
        } else {
            self.bound_for(rel, view)
        };
        self.reach[0].bound = own_bound;
        if self.policy.instructions.import_once {
            self.seen.insert(path.clone());
        }
        self.expand_at(text, &path, 0, &mut inside, view, gate)
    }

    /// The folder the imports of the chain file `rel` must stay in: its
    /// root, the cwd (`import-root = "cwd"`; none when the cwd is not in
    /// this root), or (`import-root = "marker"`, Gemini CLI's rule) the
    /// nearest folder at or above the file's own holding a repository
    /// marker, else the file's own folder. The markers probed are traced.
    fn bound_for(&self, rel: &Path, view: &mut View<'_>) -> Option<PathBuf> {
        let own = &self.reach[0];
        match self.policy.instructions.import_root {
            ImportRoot::Root => return Some(PathBuf::new()),
            ImportRoot::Cwd => {
                return self
                    .cwd
                    .strip_prefix(&own.root.path)
                    .ok()
                    .map(Path::to_path_buf);
            }
            ImportRoot::Marker => {}
        }
        let dir = rel.parent().unwrap_or(Path::new(""));
        for d in dir.ancestors() {
            for marker in &self.policy.roots.repo_markers {
                let probe = d.join(marker.get_ref());
                let stamp = view.stamp(own.root, own.id, &probe);
                if stamp.is_dir() || stamp.is_file() {
                    return Some(d.to_path_buf());
                }
            }
        }
        Some(dir.to_path_buf())
    }

    /// The absolute path `spec` names from the file `from` (absolute),
    /// lexically normalized (`a/../../repo/x` that leaves a root and comes
    /// back in is inside); `None` for a URL, or an `@~/` import whose
    /// folder has no path.
    fn target(&self, from: &Path, spec: &str) -> Option<PathBuf> {
        let lower = spec.to_ascii_lowercase();
        if ["file://", "http://", "https://"]
            .iter()
            .any(|s| lower.starts_with(s))
        {
            return None;
        }
        let named = match self.policy.instructions.import_syntax {
            ImportSyntax::AtPath => match (self.tilde, spec.strip_prefix("~/")) {
                (Some(home), Some(rest)) => home?.join(rest),
                _ => from.parent().unwrap_or(Path::new("")).join(spec),
            },
            // Kiro names files from the workspace root.
            ImportSyntax::FileReference => self.reach[0].root.path.join(spec),
        };
        Some(crate::vocab::home::normalize(&named))
    }

    /// Where the absolute `target` may be read: the first root of `reach`
    /// that holds it inside its bound (a root past the chain file's own
    /// never inside the repository), and the path relative to it. `None`:
    /// outside them all.
    fn place(&self, target: &Path) -> Option<(usize, PathBuf)> {
        self.reach.iter().enumerate().find_map(|(k, r)| {
            let rel = target.strip_prefix(&r.root.path).ok()?;
            let inside = rel.components().all(|c| matches!(c, Component::Normal(_)))
                && r.bound.as_ref().is_some_and(|b| rel.starts_with(b))
                && (k == 0 || !target.starts_with(self.repo));
            inside.then(|| (k, rel.to_path_buf()))
        })
    }

    /// Whether `rel` (relative to the root `k` of `reach`, normalized) lies
    /// inside a folder imports never read (see
    /// [`Policy::is_import_excluded`]) by its own components, or by those
    /// of the path its links lead to; or, for a root past the chain
    /// file's own, whether its links lead into the repository.
    fn in_metadata(&self, k: usize, rel: &Path, view: &View<'_>) -> Option<Reason> {
        let root = self.reach[k].root;
        let excluded = |p: &Path| {
            p.components()
                .any(|c| self.policy.is_import_excluded(c.as_os_str()))
        };
        if excluded(rel) {
            return Some(Reason::VcsMetadata);
        }
        let resolved = view.resolve(root, rel)?;
        if excluded(&resolved) {
            return Some(Reason::VcsMetadata);
        }
        (k > 0 && root.path.join(&resolved).starts_with(self.repo))
            .then_some(Reason::ImportOutsideRoot)
    }

    fn record(&mut self, from: &Path, spec: &str, path: Option<PathBuf>, depth: usize) -> usize {
        self.records.push(Import {
            from: from.to_path_buf(),
            spec: spec.to_string(),
            path,
            depth,
            bytes: 0,
            reason: None,
            line: None,
        });
        self.records.len() - 1
    }

    /// What stands in the text for an import that failed: the reference
    /// as `written`, or the policy's comment.
    fn failed(&self, written: &str, spec: &str, reason: Reason) -> String {
        match self.policy.instructions.import_failure {
            ImportFailure::Literal => written.to_string(),
            ImportFailure::Comment => {
                self.policy
                    .templates
                    .import_failed
                    .render(|name| match name {
                        "path" => Some(spec.to_string()),
                        "reason" => Some(reason.as_str().to_string()),
                        _ => None,
                    })
            }
        }
    }

    /// `text`, the file `from` (absolute) at `depth`, with its imports
    /// inlined.
    fn expand_at(
        &mut self,
        text: &str,
        from: &Path,
        depth: usize,
        inside: &mut Vec<PathBuf>,
        view: &mut View<'_>,
        gate: &mut Gate,
    ) -> String {
        let tokens = find_references(
            text,
            self.policy.instructions.import_syntax,
            self.tilde.is_some(),
        );
        if tokens.is_empty() {
            return text.to_string();
        }
        let code = code_regions(text);
        let mut out = String::with_capacity(text.len());
        let mut last = 0;
        for (start, end, spec) in tokens {
            if code.iter().any(|&(s, e)| start >= s && start < e) {
                continue;
            }
            out.push_str(&text[last..start]);
            last = end;
            // The reference's line, for the record made next.
            let line = 1 + memchr::memchr_iter(b'\n', &text.as_bytes()[..start]).count() as u64;
            let first = self.records.len();
            let at_line = |me: &mut Self| {
                if let Some(r) = me.records.get_mut(first) {
                    r.line = Some(line);
                }
            };
            if depth >= self.max_depth {
                let placed = self.target(from, spec).filter(|t| self.place(t).is_some());
                let i = self.record(from, spec, placed, depth);
                self.records[i].reason = Some(Reason::ImportTooDeep);
                at_line(self);
                out.push_str(&text[start..end]);
                continue;
            }
            let inlined = self.inline(spec, from, depth, inside, view, gate);
            at_line(self);
            match inlined {
                Ok(inlined) => out.push_str(&inlined),
                Err(reason) => out.push_str(&self.failed(&text[start..end], spec, reason)),
            }
        }
        out.push_str(&text[last..]);
        out
    }

    /// Reads and expands one import; the reason it failed otherwise (the
    /// outcome is recorded either way).
    fn inline(
        &mut self,
        spec: &str,
        from: &Path,
        depth: usize,
        inside: &mut Vec<PathBuf>,
        view: &mut View<'_>,
        gate: &mut Gate,
    ) -> Result<String, Reason> {
        let target = self.target(from, spec);
        let placed = target.as_deref().and_then(|t| self.place(t));
        let recorded = placed.as_ref().and_then(|_| target.clone());
        let i = self.record(from, spec, recorded, depth);
        let fail = |me: &mut Self, reason: Reason| {
            me.records[i].reason = Some(reason);
            Err(reason)
        };
        // Under `self-import-cycle` a file that imports itself (or a file
        // it is being read from) is a cycle before anything else is asked,
        // wherever it lies (Claude Code): known lexically, nothing read.
        if self.policy.instructions.self_import_cycle
            && self.policy.instructions.import_syntax == ImportSyntax::AtPath
            && let Some(named) = &target
            && (named == from || inside.contains(named))
        {
            return fail(self, Reason::ImportCycle);
        }
        // Outside the roots and the folder imports must stay in: refused
        // before anything is looked at, so nothing tells whether such a
        // file exists.
        let (Some(target), Some((k, rel))) = (target, placed) else {
            return fail(self, Reason::ImportOutsideRoot);
        };
        // A file above the repository imports nothing: below its folder
        // lie other users' folders, not only this repository.
        if self.root_id.origin() == Origin::Ancestor {
            return fail(self, Reason::ImportFromAncestor);
        }
        let (root, id) = (self.reach[k].root, self.reach[k].id);
        if let Some(reason) = self.in_metadata(k, &rel, view) {
            // Traced as it stands, so that a link moved away from the
            // metadata (or onto it) moves the fingerprint.
            view.stamp(root, id, &rel);
            return fail(self, reason);
        }
        if inside.contains(&target) {
            return fail(self, Reason::ImportCycle);
        }
        // Each file once a build (`import-once`, Claude Code): known by
        // its path, nothing read.
        if self.policy.instructions.import_once && self.seen.contains(&target) {
            return fail(self, Reason::ImportRepeated);
        }
        // The root folder itself (`@.` at the top).
        if rel.as_os_str().is_empty() {
            return fail(self, Reason::NotRegularFile);
        }
        if self.files_left == 0 || self.bytes_left == 0 {
            return fail(self, Reason::ImportLimit);
        }
        let file = match view.open(root, id, &rel, self.policy.trust.symlinks) {
            Open::File(file) => file,
            Open::Absent => return fail(self, Reason::ImportMissing),
            Open::Refused(reason) => return fail(self, reason),
        };
        self.files_left -= 1;
        let cap = u64::try_from(self.policy.instructions.max_file_bytes)
            .unwrap_or(0)
            .min(self.bytes_left);
        let len = file.len();
        let Ok(bytes) = file.read_at_most(cap) else {
            return fail(self, Reason::Unreadable);
        };
        let read_cut = (bytes.len() as u64) < len;
        self.bytes_left = self.bytes_left.saturating_sub(bytes.len() as u64);
        if id.origin() == Origin::Project && gate.pinned() {
            let hash = trust::content_hash(&bytes);
            let shown = || String::from_utf8_lossy(&bytes).into_owned();
            if !gate.admit(ItemKind::Instruction, &rel, &target, hash, shown) {
                return fail(self, Reason::Unapproved);
            }
        }
        let read = bytes.len() as u64;
        let Some(imported) = text::decode(bytes, read_cut) else {
            return fail(self, Reason::NotText);
        };
        self.records[i].bytes = read;
        if self.policy.instructions.import_once {
            self.seen.insert(target.clone());
        }
        let (imported, report) = crate::hidden::treat_for(imported, self.policy);
        self.found.absorb(report);
        inside.push(target.clone());
        let inner = self.expand_at(&imported, &target, depth + 1, inside, view, gate);
        inside.pop();
        let t = &self.policy.templates;
        let name = |n: &str| (n == "path").then(|| spec.to_string());
        Ok(format!(
            "{}\n{}\n{}",
            t.import_open.render(name),
            inner,
            t.import_close.render(name)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_follow_whitespace_and_start_with_a_dot_slash_or_letter() {
        let text = "@a.md x@b.md @./c.md\t@/d.md @1e.md @@f @\n@g";
        let found: Vec<&str> = find_imports(text, false).into_iter().map(|t| t.2).collect();
        assert_eq!(found, ["a.md", "./c.md", "/d.md", "g"]);
    }

    #[test]
    fn file_references_close_on_their_line_and_name_a_path() {
        let text = "#[[file:a.md]] x#[[file: b/c.md ]] #[[file:]] #[[file:open\n]] #[[file:d.md]]";
        let found: Vec<&str> = find_file_references(text)
            .into_iter()
            .map(|t| t.2)
            .collect();
        assert_eq!(found, ["a.md", "b/c.md", "d.md"]);
        let (start, end, _) = find_file_references("see #[[file:x.md]].")[0];
        assert_eq!(&"see #[[file:x.md]]."[start..end], "#[[file:x.md]]");
    }

    #[test]
    fn code_regions_match_runs_of_backticks() {
        let text = "a `@x` b ```\n@y\n``` c ``@z` d";
        let regions = code_regions(text);
        let inside = |needle: &str| {
            let at = text.find(needle).unwrap_or(0);
            regions.iter().any(|&(s, e)| at >= s && at < e)
        };
        assert!(inside("@x"));
        assert!(inside("@y"));
        // A run of two with no closing pair: its first backtick closes on
        // its second, so what follows is text.
        assert!(!inside("@z"));
        assert!(!inside(" d"));
    }
}
