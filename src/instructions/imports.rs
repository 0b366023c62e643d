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
//! URL or a link leaving the root are refused. Nothing is `~`-expanded.
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

use crate::policy::{ImportFailure, ImportRoot, ImportSyntax, Policy};
use crate::sandbox::Root;
use crate::trace::{Open, View};
use crate::trust::{self, Gate, ItemKind};
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

/// The limits and the running totals of one file's imports.
pub(crate) struct Importer<'a> {
    policy: &'a Policy,
    root: &'a Root,
    root_id: RootId,
    max_depth: usize,
    /// The folder (root-relative) imports of the current file must stay in;
    /// `None`: nowhere (`import-root = "cwd"` and the cwd not in this root).
    bound: Option<PathBuf>,
    /// The cwd relative to this root, when it lies inside it.
    cwd: Option<PathBuf>,
    files_left: u64,
    bytes_left: u64,
    /// Every outcome, in document order.
    pub(crate) records: Vec<Import>,
    /// Hidden text found in the imported files (each treated on its own).
    pub(crate) found: crate::hidden::HiddenReport,
}

/// Whether `c` ends an import path (and may precede an `@`).
fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r')
}

/// The import references of `text` in `syntax`: (start of the reference,
/// its end, the path it names).
pub(crate) fn find_references(text: &str, syntax: ImportSyntax) -> Vec<(usize, usize, &str)> {
    match syntax {
        ImportSyntax::AtPath => find_imports(text),
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
pub(crate) fn find_imports(text: &str) -> Vec<(usize, usize, &str)> {
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
        if first.is_some_and(|c| c == b'.' || c == b'/' || c.is_ascii_alphabetic()) {
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
    /// An importer for one file under `root`, with what is left of the
    /// chain's import limits (files, bytes); [`left`](Self::left) gives
    /// back what remains after it.
    /// `cwd` is the working directory, absolute.
    pub(crate) fn new(
        policy: &'a Policy,
        root: &'a Root,
        root_id: RootId,
        cwd: &Path,
        (files_left, bytes_left): (u64, u64),
    ) -> Self {
        Importer {
            policy,
            root,
            root_id,
            max_depth: usize::try_from(policy.instructions.import_depth).unwrap_or(0),
            bound: Some(PathBuf::new()),
            cwd: cwd.strip_prefix(&root.path).ok().map(Path::to_path_buf),
            files_left,
            bytes_left,
            records: Vec::new(),
            found: crate::hidden::HiddenReport::default(),
        }
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

    /// Whether this policy imports at all.
    pub(crate) fn enabled(policy: &Policy) -> bool {
        policy.instructions.import_depth > 0
    }

    /// `text` (the file `rel`, under this root) with its imports inlined.
    pub(crate) fn expand(
        &mut self,
        text: &str,
        rel: &Path,
        view: &mut View<'_>,
        gate: &mut Gate,
    ) -> String {
        // Under `self-import-cycle` the file being read is open already, so
        // an import of it is a cycle at once (Claude Code).
        let mut inside = if self.policy.instructions.self_import_cycle {
            vec![rel.to_path_buf()]
        } else {
            Vec::new()
        };
        self.bound = self.bound_for(rel, view);
        self.expand_at(text, rel, 0, &mut inside, view, gate)
    }

    /// The folder the imports of the chain file `rel` must stay in: its
    /// root, the cwd (`import-root = "cwd"`; none when the cwd is not in
    /// this root), or (`import-root = "marker"`, Gemini CLI's rule) the
    /// nearest folder at or above the file's own holding a repository
    /// marker, else the file's own folder. The markers probed are traced.
    fn bound_for(&self, rel: &Path, view: &mut View<'_>) -> Option<PathBuf> {
        match self.policy.instructions.import_root {
            ImportRoot::Root => return Some(PathBuf::new()),
            ImportRoot::Cwd => return self.cwd.clone(),
            ImportRoot::Marker => {}
        }
        let dir = rel.parent().unwrap_or(Path::new(""));
        for d in dir.ancestors() {
            for marker in &self.policy.roots.repo_markers {
                let probe = d.join(marker.get_ref());
                let stamp = view.stamp(self.root, self.root_id, &probe);
                if stamp.is_dir() || stamp.is_file() {
                    return Some(d.to_path_buf());
                }
            }
        }
        Some(dir.to_path_buf())
    }

    /// The root-relative path `spec` names from the folder of `from`, or
    /// `None` when it does not stay inside the root.
    fn place(&self, from: &Path, spec: &str) -> Option<PathBuf> {
        let lower = spec.to_ascii_lowercase();
        if ["file://", "http://", "https://"]
            .iter()
            .any(|s| lower.starts_with(s))
        {
            return None;
        }
        // Resolved as an absolute path, lexically (`a/../../repo/x` that
        // leaves the root and comes back in is inside), then taken back
        // under the root and the bound.
        let base = match self.policy.instructions.import_syntax {
            ImportSyntax::AtPath => self.root.path.join(from.parent().unwrap_or(Path::new(""))),
            // Kiro names files from the workspace root.
            ImportSyntax::FileReference => self.root.path.clone(),
        };
        let absolute = crate::vocab::home::normalize(&base.join(spec));
        let rel = absolute.strip_prefix(&self.root.path).ok()?;
        if rel.components().any(|c| !matches!(c, Component::Normal(_)))
            || !self.bound.as_ref().is_some_and(|b| rel.starts_with(b))
        {
            return None;
        }
        Some(rel.to_path_buf())
    }

    /// Whether `rel` (root-relative, normalized) lies inside a folder
    /// imports never read (see [`Policy::is_import_excluded`]): by its own
    /// components, or by those of the path its links lead to.
    fn in_metadata(&self, rel: &Path, view: &View<'_>) -> bool {
        let excluded = |p: &Path| {
            p.components()
                .any(|c| self.policy.is_import_excluded(c.as_os_str()))
        };
        excluded(rel) || view.resolve(self.root, rel).is_some_and(|r| excluded(&r))
    }

    fn record(&mut self, from: &Path, spec: &str, path: Option<PathBuf>, depth: usize) -> usize {
        self.records.push(Import {
            from: self.root.path.join(from),
            spec: spec.to_string(),
            path: path.map(|p| self.root.path.join(p)),
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

    fn expand_at(
        &mut self,
        text: &str,
        from: &Path,
        depth: usize,
        inside: &mut Vec<PathBuf>,
        view: &mut View<'_>,
        gate: &mut Gate,
    ) -> String {
        let tokens = find_references(text, self.policy.instructions.import_syntax);
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
                let i = self.record(from, spec, self.place(from, spec), depth);
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
        let rel = self.place(from, spec);
        let i = self.record(from, spec, rel.clone(), depth);
        let fail = |me: &mut Self, reason: Reason| {
            me.records[i].reason = Some(reason);
            Err(reason)
        };
        // Under `self-import-cycle` a file that imports itself (or a file
        // it is being read from) is a cycle before anything else is asked,
        // wherever it lies (Claude Code): known lexically, nothing read.
        if self.policy.instructions.self_import_cycle
            && self.policy.instructions.import_syntax == ImportSyntax::AtPath
        {
            let named = crate::vocab::home::normalize(
                &self
                    .root
                    .path
                    .join(from.parent().unwrap_or(Path::new("")))
                    .join(spec),
            );
            if named == crate::vocab::home::normalize(&self.root.path.join(from))
                || inside
                    .iter()
                    .any(|open| named == crate::vocab::home::normalize(&self.root.path.join(open)))
            {
                return fail(self, Reason::ImportCycle);
            }
        }
        // A file above the repository imports nothing: below its folder
        // lie other users' folders, not only this repository.
        if self.root_id.origin() == Origin::Ancestor {
            return fail(self, Reason::ImportFromAncestor);
        }
        let Some(rel) = rel else {
            return fail(self, Reason::ImportOutsideRoot);
        };
        if self.in_metadata(&rel, view) {
            // Traced as it stands, so that a link moved away from the
            // metadata (or onto it) moves the fingerprint.
            view.stamp(self.root, self.root_id, &rel);
            return fail(self, Reason::VcsMetadata);
        }
        if inside.contains(&rel) {
            return fail(self, Reason::ImportCycle);
        }
        // The root folder itself (`@.` at the top).
        if rel.as_os_str().is_empty() {
            return fail(self, Reason::NotRegularFile);
        }
        if self.files_left == 0 || self.bytes_left == 0 {
            return fail(self, Reason::ImportLimit);
        }
        let file = match view.open(self.root, self.root_id, &rel, self.policy.trust.symlinks) {
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
        if self.root_id.origin() == Origin::Project && gate.pinned() {
            let hash = trust::content_hash(&bytes);
            let path = self.root.path.join(&rel);
            let shown = || String::from_utf8_lossy(&bytes).into_owned();
            if !gate.admit(ItemKind::Instruction, &rel, &path, hash, shown) {
                return fail(self, Reason::Unapproved);
            }
        }
        let read = bytes.len() as u64;
        let Some(imported) = text::decode(bytes, read_cut) else {
            return fail(self, Reason::NotText);
        };
        self.records[i].bytes = read;
        let (imported, report) = crate::hidden::treat_for(imported, self.policy);
        self.found.absorb(report);
        inside.push(rel.clone());
        let inner = self.expand_at(&imported, &rel, depth + 1, inside, view, gate);
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
        let found: Vec<&str> = find_imports(text).into_iter().map(|t| t.2).collect();
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
