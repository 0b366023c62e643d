//! The differential suite: lisa-context under each shipped compat policy
//! against what the real program loaded on the same tree.
//!
//! `tests/compat/fixtures/*.json` describe the trees; the real programs'
//! answers are recorded in `tests/compat/expected/<peer>/<fixture>.json`
//! (`tests/compat/record.mjs`; `.ci/compat-live` records them again when
//! the peers can be installed). Each fixture is built here in a temporary
//! directory, loaded with `--policy <peer>` and the fixture's settings laid
//! over it, and compared: the instruction files in order with how much of
//! each went in, and the skills listed (name, `SKILL.md`, description).
//! The peers' bundled skills (`"system": true`) are not ours to list.
//!
//! Where the compat policy differs from the program on purpose, the
//! difference is a class in `tests/compat/intended.json` with the reason,
//! and each fixture pair it lists is checked to differ: a listed difference
//! that went away is a failure too, so the list stays true. The same file
//! names the random-tree features each class covers, for the generative
//! differential (`random_trees_load_what_the_real_programs_load`).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use lisa_context::{Loader, Snapshot};
use serde::{Deserialize, Serialize};

/// The programs the suite compares with.
/// `claude-code`'s answers are recorded from `claude -p` against a fake
/// Messages API on 127.0.0.1 (tests/compat/README.md, "Claude Code").
const PEERS: &[&str] = &["codex", "gemini", "claude-code"];

/// `tests/compat/intended.json`: where the compat policy differs from the
/// program on purpose (`classes`), and known differences being fixed
/// (`pending`, random trees only).
#[derive(Debug, Deserialize)]
struct Intended {
    classes: Vec<Class>,
    #[serde(default)]
    pending: Vec<Class>,
}

/// One named difference: why, for which peers, the fixed fixtures it covers
/// (each such pair must differ) and the random-tree features it covers
/// (a tree carrying one may differ).
#[derive(Debug, Deserialize)]
struct Class {
    name: String,
    reason: String,
    peers: Vec<String>,
    #[serde(default)]
    fixtures: Vec<String>,
    #[serde(default)]
    features: Vec<String>,
    /// The parts of an answer a covered random tree may differ in
    /// (`instructions`, `skills`, `onAccess`, `error`: no answer).
    sections: Vec<String>,
    /// Why the difference is intended (every class; a pending one has
    /// none: it is a bug being fixed).
    #[serde(default)]
    why: Option<Why>,
    /// For `safety`: the SECURITY.md guarantee the difference keeps.
    #[serde(default)]
    guarantee: Option<u32>,
    /// For `peer-defect`: an issue, a source line, a nondeterminism shown
    /// by two recordings.
    #[serde(default)]
    evidence: Option<String>,
}

/// Why a class differs on purpose: it protects a user (`guarantee` names
/// the SECURITY.md guarantee it keeps), or the peer is wrong (`evidence`).
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum Why {
    /// The difference keeps a SECURITY.md guarantee.
    Safety,
    /// The peer is wrong.
    PeerDefect,
}

impl Class {
    fn covers_fixture(&self, peer: &str, fixture: &str) -> bool {
        self.peers.iter().any(|p| p == peer) && self.fixtures.iter().any(|f| f == fixture)
    }

    fn covers_features(&self, peer: &str, features: &[String], section: &str) -> bool {
        self.peers.iter().any(|p| p == peer)
            && self.sections.iter().any(|s| s == section)
            && self.features.iter().any(|f| features.contains(f))
    }
}

fn intended() -> Intended {
    let path = compat_dir().join("intended.json");
    let text = fs::read_to_string(&path).expect("tests/compat/intended.json readable");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Fixture {
    name: String,
    peers: Vec<String>,
    /// The intended-difference and pending features a random tree carries.
    #[serde(default)]
    features: Vec<String>,
    #[serde(default)]
    settings: Settings,
    tree: Vec<Entry>,
    cwd: String,
    #[serde(default)]
    accesses: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Settings {
    extra_names: Option<Vec<String>>,
    markers: Option<Vec<String>>,
    max_bytes: Option<i64>,
}

#[derive(Debug, Deserialize)]
struct Entry {
    path: String,
    #[serde(default)]
    dir: bool,
    text: Option<String>,
    fill: Option<Fill>,
    symlink: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Fill {
    head: String,
    byte: String,
    size: usize,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Recording {
    version: String,
    instructions: Vec<RecordedFile>,
    skills: Vec<RecordedSkill>,
    #[serde(default)]
    on_access: Vec<RecordedAccess>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RecordedFile {
    path: String,
    included_bytes: u64,
    #[serde(default)]
    imports: Vec<RecordedImport>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RecordedImport {
    path: Option<String>,
    included_bytes: Option<u64>,
    spec: Option<String>,
    outcome: Option<String>,
    #[serde(default)]
    imports: Vec<RecordedImport>,
}

#[derive(Debug, Deserialize)]
struct RecordedAccess {
    access: String,
    instructions: Vec<RecordedFile>,
}

#[derive(Debug, Deserialize)]
struct RecordedSkill {
    name: String,
    path: String,
    description: String,
    #[serde(default)]
    system: bool,
}

/// How much of a file went into the prompt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
enum Share {
    /// All of its text.
    Whole,
    /// The first this many bytes.
    Part(u64),
}

/// What became of one `@path`: inlined (its path, its bytes, its own
/// imports), or not (the path as written, and an outcome word).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
enum Imported {
    Inlined(String, u64, Vec<Imported>),
    Failed(String, String),
}

/// One instruction file: its path, how much of it, its imports.
type File = (String, Share, Vec<Imported>);

/// One side's answer, in comparable form.
#[derive(Debug, PartialEq, Eq, Serialize)]
struct Answer {
    instructions: Vec<File>,
    skills: Vec<(String, String, String)>,
    /// For each access, in order: what it loaded.
    on_access: Vec<(String, Vec<File>)>,
}

/// The outcome word the recordings use for one of our reasons.
fn outcome_word(reason: Option<lisa_context::snapshot::Reason>) -> &'static str {
    match reason.map(|r| r.as_str()) {
        None => "inlined",
        Some("import-outside-root" | "symlink-escape" | "symlink-refused") => "refused",
        Some("import-cycle") => "cycle",
        Some("import-repeated") => "seen",
        Some("import-too-deep") => "too-deep",
        Some("import-limit") => "limit",
        Some(_) => "missing",
    }
}

/// Our flat import records (document order, each with its depth) as the
/// recordings' tree, for the imports of the chain file `from`.
fn import_tree(
    imports: &[lisa_context::snapshot::Import],
    from: &Path,
    root: &Path,
) -> Vec<Imported> {
    fn build(
        list: &[&lisa_context::snapshot::Import],
        i: &mut usize,
        depth: usize,
        root: &Path,
    ) -> Vec<Imported> {
        let mut out = Vec::new();
        while *i < list.len() && list[*i].depth >= depth {
            let rec = list[*i];
            *i += 1;
            if rec.depth > depth {
                continue;
            }
            match (rec.reason, &rec.path) {
                (None, Some(path)) => {
                    let children = build(list, i, depth + 1, root);
                    out.push(Imported::Inlined(relative(path, root), rec.bytes, children));
                }
                _ => out.push(Imported::Failed(
                    rec.spec.clone(),
                    outcome_word(rec.reason).to_string(),
                )),
            }
        }
        out
    }
    let mine: Vec<&lisa_context::snapshot::Import> = imports
        .iter()
        .skip_while(|r| !(r.depth == 0 && r.from == from))
        .take_while(|r| r.depth > 0 || r.from == from)
        .collect();
    let mut i = 0;
    build(&mine, &mut i, 0, root)
}

/// The recordings' import tree, without the tokens that were code (we do
/// not record text that never was an import).
fn their_imports(list: &[RecordedImport]) -> Vec<Imported> {
    list.iter()
        .filter(|r| r.outcome.as_deref() != Some("code"))
        .map(|r| match (&r.path, &r.outcome) {
            (Some(path), None) => Imported::Inlined(
                path.clone(),
                r.included_bytes.unwrap_or(0),
                their_imports(&r.imports),
            ),
            _ => Imported::Failed(
                r.spec.clone().unwrap_or_default(),
                r.outcome.clone().unwrap_or_default(),
            ),
        })
        .collect()
}

fn compat_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/compat")
}

fn fixtures_in(dir: &Path) -> Vec<Fixture> {
    let mut paths: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| {
            let text = fs::read_to_string(p).expect("fixture readable");
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        })
        .collect()
}

/// The bytes an entry's file holds.
fn content(entry: &Entry) -> Option<Vec<u8>> {
    if let Some(text) = &entry.text {
        return Some(text.as_bytes().to_vec());
    }
    let fill = entry.fill.as_ref()?;
    let mut bytes = fill.head.as_bytes().to_vec();
    let byte = fill.byte.as_bytes().first().copied().unwrap_or(b' ');
    while bytes.len() < fill.size {
        bytes.push(byte);
    }
    Some(bytes)
}

/// Writes the fixture's tree under `root`, following the README's rules.
fn materialize(fixture: &Fixture, root: &Path) {
    fs::create_dir_all(root.join("home")).expect("mkdir home");
    fs::create_dir_all(root.join("repo")).expect("mkdir repo");
    for entry in &fixture.tree {
        let path = root.join(&entry.path);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).expect("mkdir parent");
        }
        if entry.dir {
            fs::create_dir_all(&path).expect("mkdir");
        } else if let Some(target) = &entry.symlink {
            std::os::unix::fs::symlink(target, &path).expect("symlink");
        } else if let Some(bytes) = content(entry) {
            fs::write(&path, bytes).expect("write");
        } else {
            panic!("{}: entry {} has no kind", fixture.name, entry.path);
        }
    }
    // The cwd folder is created if no entry creates it (README).
    fs::create_dir_all(root.join(&fixture.cwd)).expect("mkdir cwd");
}

/// A TOML basic string holding `s` exactly (Rust's `{:?}` escapes are not
/// all TOML's).
fn toml_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The fixture's settings as a policy laid over the shipped one.
fn overlay(peer: &str, settings: &Settings) -> String {
    let quoted = |names: &[String]| {
        let items: Vec<String> = names.iter().map(|n| toml_string(n)).collect();
        format!("[{}]", items.join(", "))
    };
    let mut roots = String::new();
    let mut instructions = String::new();
    if let Some(markers) = &settings.markers {
        roots += &format!("repo-markers = {}\n", quoted(markers));
    }
    if let Some(names) = &settings.extra_names {
        let names: Vec<String> = names
            .iter()
            .filter(|n| !(peer == "gemini" && n.as_str() == "GEMINI.md"))
            // A policy takes plain names only (Codex ignores the others;
            // Gemini reads them as paths, a listed difference).
            .filter(|n| !n.is_empty() && *n != "." && *n != ".." && !n.contains('/'))
            .cloned()
            .collect();
        instructions += &format!("extra-level-files = {}\n", quoted(&names));
        if peer == "gemini" {
            instructions += &format!("extra-home-files = {}\n", quoted(&names));
        }
    }
    if peer == "codex"
        && let Some(max) = settings.max_bytes
    {
        instructions += &format!("budget-bytes = {max}\n");
    }
    format!("version = 1\n[roots]\n{roots}[instructions]\n{instructions}")
}

/// The fixture's files by path (links resolved inside the fixture), for
/// the size of each.
fn sizes(fixture: &Fixture) -> BTreeMap<String, Vec<u8>> {
    let entries: BTreeMap<&str, &Entry> =
        fixture.tree.iter().map(|e| (e.path.as_str(), e)).collect();
    let resolve = |start: &str| {
        let mut path = start.to_string();
        for _ in 0..8 {
            let entry = entries.get(path.as_str())?;
            let Some(target) = &entry.symlink else {
                return content(entry);
            };
            let mut parts: Vec<&str> = path.split('/').collect();
            parts.pop();
            for c in target.split('/') {
                match c {
                    ".." => {
                        parts.pop();
                    }
                    "." | "" => {}
                    c => parts.push(c),
                }
            }
            path = parts.join("/");
        }
        None
    };
    fixture
        .tree
        .iter()
        .filter_map(|e| resolve(&e.path).map(|c| (e.path.clone(), c)))
        .collect()
}

fn relative(path: &Path, root: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

/// lisa-context's answer for `fixture` under `peer`'s shipped policy.
fn ours(fixture: &Fixture, peer: &str) -> Result<Answer, String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let root = dir.path().join("fx");
    materialize(fixture, &root);
    let policy_file = dir.path().join("settings.toml");
    fs::write(&policy_file, overlay(peer, &fixture.settings)).map_err(|e| e.to_string())?;
    let home = root.join("home");
    let loader: Loader = Loader::builder()
        .shipped_policy(peer)
        .policy_file(&policy_file)
        .env(move |name| (name == "HOME").then(|| home.clone().into_os_string()))
        .build()
        .map_err(|e| format!("{e:?}"))?;
    let snap: std::sync::Arc<Snapshot> = loader
        .snapshot(&root.join(&fixture.cwd))
        .map_err(|e| format!("{e:?}"))?;
    let sizes = sizes(fixture);
    let files = |blocks: &[lisa_context::snapshot::Block],
                 imports: &[lisa_context::snapshot::Import]|
     -> Vec<File> {
        blocks
            .iter()
            .map(|b| {
                // A cut that kept every byte of the text, blanks at the end
                // aside, shows the whole text: Whole, as on the recorded side.
                let rel = relative(&b.path, &root);
                let covers_text = sizes.get(&rel).is_some_and(|c| {
                    b.included_bytes >= String::from_utf8_lossy(c).trim_end().len() as u64
                });
                let share = if b.truncated && !covers_text {
                    // Measured as the recordings measure a cut: the bytes of
                    // the file, from its start, that the shown text spans.
                    Share::Part(
                        sizes
                            .get(&rel)
                            .map_or(b.included_bytes, |raw| raw_span(raw, b.included_bytes)),
                    )
                } else {
                    Share::Whole
                };
                (
                    relative(&b.path, &root),
                    share,
                    import_tree(imports, &b.path, &root),
                )
            })
            .collect()
    };
    let instructions = files(&snap.instruction_files, &snap.imports);
    let mut session = lisa_context::Session::new(root.join(&fixture.cwd), None);
    let mut on_access = Vec::new();
    for access in &fixture.accesses {
        let loaded = match loader.access(&mut session, &root.join(access)) {
            Ok(a) => files(&a.instruction_files, &a.imports),
            // A path outside the root loads nothing (an error here).
            Err(lisa_context::AccessError::OutsideRoot { .. }) => Vec::new(),
            Err(e) => return Err(format!("access {access}: {e:?}")),
        };
        on_access.push((access.clone(), loaded));
    }
    let mut skills: Vec<_> = snap
        .skills
        .iter()
        .filter(|s| s.listed)
        .map(|s| {
            (
                s.name.clone(),
                relative(&s.path, &root),
                s.description.clone(),
            )
        })
        .collect();
    skills.sort();
    Ok(Answer {
        instructions,
        skills,
        on_access,
    })
}

/// How many bytes of the file `raw`, from its start, a block that kept
/// `included` bytes of its text spans: the snapshot counts the text as the
/// engine holds it (no byte order mark, every line break one `\n`, the
/// leading white space trimmed); a recording counts the bytes of the file
/// the peer showed, which it does not change. A byte order mark, the
/// leading white space and each line break are counted as the file holds
/// them, so a cut at the same place in the file gives the same number on
/// both sides (and a cut elsewhere does not).
fn raw_span(raw: &[u8], included: u64) -> u64 {
    let bom = if raw.starts_with(b"\xEF\xBB\xBF") {
        3
    } else {
        0
    };
    let text = String::from_utf8_lossy(&raw[bom..]);
    // (raw offset, normalized offset) after each character, normalized as
    // the engine's decoding does: CRLF, CR, VT, FF, NEL, U+2028, U+2029
    // each become one `\n`.
    let mut ends: Vec<(usize, usize)> = vec![(0, 0)];
    let (mut r, mut n) = (0usize, 0usize);
    let mut chars = text.char_indices().peekable();
    while let Some((_, c)) = chars.next() {
        let width = match c {
            '\r' if chars.peek().map(|p| p.1) == Some('\n') => {
                chars.next();
                2
            }
            _ => c.len_utf8(),
        };
        r += width;
        n += match c {
            '\r' | '\u{0B}' | '\u{0C}' | '\u{85}' | '\u{2028}' | '\u{2029}' => 1,
            _ => c.len_utf8(),
        };
        ends.push((r, n));
    }
    let normalized: String = {
        let t = text.replace("\r\n", "\n");
        t.chars()
            .map(|c| match c {
                '\r' | '\u{0B}' | '\u{0C}' | '\u{85}' | '\u{2028}' | '\u{2029}' => '\n',
                c => c,
            })
            .collect()
    };
    let start = normalized.len() - normalized.trim_start().len();
    let end = start + usize::try_from(included).unwrap_or(usize::MAX);
    let raw_end = ends
        .iter()
        .take_while(|(_, n)| *n <= end)
        .last()
        .map_or(0, |(r, _)| *r);
    (bom + raw_end) as u64
}

/// The recorded answer, in the same form.
fn theirs(fixture: &Fixture, recording: &Recording) -> Answer {
    let sizes = sizes(fixture);
    let files = |list: &[RecordedFile]| -> Vec<File> {
        list.iter()
            .map(|f| {
                // Whole when every byte of the text (trailing whitespace
                // aside) went in: a cut inside a file's trailing whitespace
                // shows the same text whether the blanks are kept (Codex
                // keeps them, and trims them when the file ends its message)
                // or not; both sides are measured this way.
                let share = match sizes.get(&f.path) {
                    Some(c) => {
                        let text_len = String::from_utf8_lossy(c).trim_end().len() as u64;
                        if f.included_bytes >= text_len {
                            Share::Whole
                        } else {
                            Share::Part(f.included_bytes)
                        }
                    }
                    None => Share::Part(f.included_bytes),
                };
                (f.path.clone(), share, their_imports(&f.imports))
            })
            .collect()
    };
    let instructions = files(&recording.instructions);
    let on_access = recording
        .on_access
        .iter()
        .map(|a| (a.access.clone(), files(&a.instructions)))
        .collect();
    let mut skills: Vec<_> = recording
        .skills
        .iter()
        .filter(|s| !s.system)
        .map(|s| (s.name.clone(), s.path.clone(), s.description.clone()))
        .collect();
    skills.sort();
    Answer {
        instructions,
        skills,
        on_access,
    }
}

/// One comparison: the recorded answer and ours.
struct Outcome {
    version: String,
    expected: Answer,
    got: Result<Answer, String>,
}

impl Outcome {
    fn same(&self) -> bool {
        self.got.as_ref().is_ok_and(|a| *a == self.expected)
    }

    /// Which parts differ (`error` when we gave no answer).
    fn sections(&self) -> Vec<&'static str> {
        match &self.got {
            Err(_) => vec!["error"],
            Ok(got) => {
                let mut out = Vec::new();
                if got.instructions != self.expected.instructions {
                    out.push("instructions");
                }
                if got.skills != self.expected.skills {
                    out.push("skills");
                }
                if got.on_access != self.expected.on_access {
                    out.push("onAccess");
                }
                out
            }
        }
    }
}

/// Compares `fixture` under `peer` with the recording at `path`; `None`
/// when there is no recording.
fn compare(fixture: &Fixture, peer: &str, path: &Path) -> Option<Outcome> {
    let text = fs::read_to_string(path).ok()?;
    let recording: Recording =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Some(Outcome {
        version: recording.version.clone(),
        expected: theirs(fixture, &recording),
        got: ours(fixture, peer),
    })
}

/// Every intended class says why in a form a program checks: a safety
/// class names a guarantee SECURITY.md states, a peer defect carries its
/// evidence. A difference that is neither belongs in `pending`.
#[test]
fn every_intended_difference_says_why() {
    #[allow(clippy::disallowed_methods, reason = "the test reads SECURITY.md")]
    let security = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("SECURITY.md"))
        .expect("SECURITY.md readable");
    let intended = intended();
    for class in &intended.classes {
        match class.why {
            None => panic!(
                "intended.json: class {} has no `why` (safety with its guarantee, or \
                 peer-defect with evidence); a difference that is neither is pending",
                class.name
            ),
            Some(Why::Safety) => {
                let Some(guarantee) = class.guarantee else {
                    panic!(
                        "intended.json: safety class {} names no `guarantee`",
                        class.name
                    );
                };
                assert!(
                    security
                        .lines()
                        .any(|l| l.starts_with(&format!("{guarantee}. **"))),
                    "intended.json: class {} names SECURITY.md guarantee {guarantee}, which it does not state",
                    class.name
                );
            }
            Some(Why::PeerDefect) => assert!(
                class
                    .evidence
                    .as_deref()
                    .is_some_and(|e| e.trim().len() >= 20),
                "intended.json: class {} is a peer defect without evidence",
                class.name
            ),
        }
    }
    for class in &intended.pending {
        assert!(
            class.why.is_none() && class.guarantee.is_none() && class.evidence.is_none(),
            "intended.json: pending class {} says why it is intended: move it to `classes`",
            class.name
        );
    }
}

#[test]
fn shipped_compat_policies_load_what_the_real_programs_load() {
    let fixtures = fixtures_in(&compat_dir().join("fixtures"));
    assert!(!fixtures.is_empty(), "no fixtures in tests/compat/fixtures");
    let intended = intended();
    for class in &intended.classes {
        for name in &class.fixtures {
            assert!(
                fixtures.iter().any(|f| &f.name == name),
                "intended.json: class {} names fixture {name}, which does not exist",
                class.name
            );
        }
    }
    let mut report = String::new();
    let mut failures = Vec::new();
    let mut score: BTreeMap<&str, (usize, usize, usize)> = BTreeMap::new();
    let mut rates: BTreeMap<String, FixtureRate> = BTreeMap::new();
    for peer in PEERS {
        for fixture in fixtures
            .iter()
            .filter(|f| f.peers.iter().any(|p| p == peer))
        {
            let path = compat_dir()
                .join("expected")
                .join(peer)
                .join(format!("{}.json", fixture.name));
            let Some(outcome) = compare(fixture, peer, &path) else {
                report += &format!("{peer:7} {:28} no recording\n", fixture.name);
                continue;
            };
            let listed: Vec<&Class> = intended
                .classes
                .iter()
                .filter(|c| c.covers_fixture(peer, &fixture.name))
                .collect();
            let rate = rates.entry(peer.to_string()).or_default();
            rate.recorded += 1;
            if rate.version.is_empty() || rate.version == outcome.version {
                rate.version = outcome.version.clone();
            } else {
                failures.push(format!(
                    "{peer}/{}: recorded with {} {}, the others with {}: record every fixture \
                     of a peer with one version",
                    fixture.name, peer, outcome.version, rate.version
                ));
            }
            match (outcome.same(), listed.is_empty()) {
                (true, _) => rate.raw_matches += 1,
                (false, false) => rate.intended += 1,
                (false, true) => rate.pending += 1,
            }
            rate.net_matches = rate.raw_matches + rate.intended;
            // A known difference being fixed: reported, not failed.
            if let Some(class) = intended
                .pending
                .iter()
                .find(|c| c.covers_fixture(peer, &fixture.name))
                && !outcome.same()
            {
                report += &format!(
                    "{peer:7} {:28} pending ({}): {}\n",
                    fixture.name, class.name, class.reason
                );
                continue;
            }
            let entry = score.entry(peer).or_default();
            entry.2 = entry.2.max(1);
            let verdict = match (outcome.same(), listed.first()) {
                (true, None) => {
                    entry.0 += 1;
                    "match".to_string()
                }
                (false, Some(class)) => {
                    entry.1 += 1;
                    format!("differs on purpose ({}): {}", class.name, class.reason)
                }
                (true, Some(class)) => {
                    failures.push(format!(
                        "{peer}/{}: listed as an intended difference ({}), but now matches \
                         (remove it from tests/compat/intended.json)",
                        fixture.name, class.name
                    ));
                    "match (listed as different!)".to_string()
                }
                (false, None) => {
                    failures.push(format!(
                        "{peer}/{} (recorded with {} {}):\n  expected {:#?}\n  got {:#?}",
                        fixture.name, peer, outcome.version, outcome.expected, outcome.got
                    ));
                    "MISMATCH".to_string()
                }
            };
            report += &format!("{peer:7} {:28} {verdict}\n", fixture.name);
        }
    }
    for (peer, (matched, intended, _)) in &score {
        report += &format!("{peer}: {matched} fixtures match, {intended} differ on purpose\n");
    }
    if failures.is_empty()
        && let Err(stale) = check_fixture_rates(&rates)
    {
        failures.push(stale);
    }
    println!("{report}");
    assert!(failures.is_empty(), "{report}\n{}", failures.join("\n\n"));
}

/// Counts for one peer over the random trees.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
struct PeerScore {
    trees: usize,
    recorded: usize,
    unrecorded: usize,
    raw_matches: usize,
    intended_mismatches: usize,
    net_matches: usize,
    pending_mismatches: usize,
    mismatches: usize,
}

/// The generative differential (`tests/compat/differential.mjs`): when
/// `LISA_COMPAT_RANDOM` names a folder holding `fixtures/*.json` (from
/// `random.mjs`) and `<peer>/<fixture>.json` recordings (or `.error` for a
/// tree the recorder could not read), compares every tree as the test above
/// does and writes a JSON report (`LISA_COMPAT_RANDOM_REPORT`, default
/// `<dir>/report.json`). Fails on a mismatch that no intended class of a
/// feature the tree carries covers; a pending class's mismatches are
/// reported apart.
#[test]
fn random_trees_load_what_the_real_programs_load() {
    let Some(dir) = std::env::var_os("LISA_COMPAT_RANDOM").map(PathBuf::from) else {
        println!("LISA_COMPAT_RANDOM is not set: no random trees compared");
        return;
    };
    let fixtures = fixtures_in(&dir.join("fixtures"));
    let intended = intended();
    let mut scores: BTreeMap<&str, PeerScore> = BTreeMap::new();
    let mut mismatches = Vec::new();
    let mut unrecorded = Vec::new();
    let mut lines = String::new();
    for peer in ["codex", "gemini", "claude-code"] {
        let score = scores.entry(peer).or_default();
        for fixture in fixtures
            .iter()
            .filter(|f| f.peers.iter().any(|p| p == peer))
        {
            score.trees += 1;
            let base = dir.join(peer).join(&fixture.name);
            let Some(outcome) = compare(fixture, peer, &base.with_extension("json")) else {
                score.unrecorded += 1;
                let reason = fs::read_to_string(base.with_extension("error"))
                    .unwrap_or_else(|_| "no recording".to_string());
                unrecorded.push(serde_json::json!({
                    "peer": peer,
                    "fixture": fixture.name,
                    "reason": reason.lines().next().unwrap_or_default(),
                }));
                continue;
            };
            score.recorded += 1;
            if outcome.same() {
                score.raw_matches += 1;
                continue;
            }
            // Each differing part must be covered by a class of a feature
            // the tree carries: intended first, then pending.
            let sections = outcome.sections();
            let mut classes = Vec::new();
            let mut pending = false;
            let mut uncovered = false;
            for section in &sections {
                let find = |list: &[Class]| {
                    list.iter()
                        .find(|c| c.covers_features(peer, &fixture.features, section))
                        .map(|c| c.name.clone())
                };
                if let Some(c) = find(&intended.classes) {
                    classes.push(c);
                } else if let Some(c) = find(&intended.pending) {
                    pending = true;
                    classes.push(c);
                } else {
                    uncovered = true;
                }
            }
            classes.dedup();
            let kind = if uncovered {
                score.mismatches += 1;
                "new"
            } else if pending {
                score.pending_mismatches += 1;
                "pending"
            } else {
                score.intended_mismatches += 1;
                "intended"
            };
            let class = (!classes.is_empty()).then(|| classes.join("+"));
            lines += &format!(
                "{peer:7} {:24} {kind:8} {:28} {}\n",
                fixture.name,
                class.as_deref().unwrap_or("-"),
                sections.join(",")
            );
            mismatches.push(serde_json::json!({
                "peer": peer,
                "fixture": fixture.name,
                "kind": kind,
                "class": class,
                "features": fixture.features,
                "sections": sections,
                "expected": outcome.expected,
                "got": outcome.got.as_ref().map_err(|e| e.clone()),
            }));
        }
        score.net_matches = score.raw_matches + score.intended_mismatches;
    }
    let report = serde_json::json!({
        "fixtures": fixtures.len(),
        "peers": scores,
        "mismatches": mismatches,
        "unrecorded": unrecorded,
    });
    let out = std::env::var_os("LISA_COMPAT_RANDOM_REPORT")
        .map(PathBuf::from)
        .unwrap_or_else(|| dir.join("report.json"));
    let text = serde_json::to_string_pretty(&report).expect("report as JSON") + "\n";
    fs::write(&out, text).unwrap_or_else(|e| panic!("{}: {e}", out.display()));
    let mut summary = String::new();
    for (peer, s) in &scores {
        summary += &format!(
            "{peer}: {} trees, {} recorded; {} match raw, {} net of intended classes; \
             {} pending, {} new mismatches\n",
            s.trees, s.recorded, s.raw_matches, s.net_matches, s.pending_mismatches, s.mismatches
        );
    }
    println!("{lines}{summary}report: {}", out.display());
    let new: usize = scores.values().map(|s| s.mismatches).sum();
    assert!(
        new == 0,
        "{new} random tree(s) differ outside every intended class:\n{lines}{summary}"
    );
}

// ---------------------------------------------------------------- rates

/// One peer's score over the fixed fixtures, as `tests/compat/rates.json`
/// holds it: `recorded` fixtures compared, `rawMatches` that give the same
/// answer, `intended` that differ as a class of `intended.json` says,
/// `pending` that differ otherwise (a pending class: a known bug), and
/// `netMatches` = `rawMatches` + `intended`.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct FixtureRate {
    version: String,
    recorded: usize,
    raw_matches: usize,
    intended: usize,
    pending: usize,
    net_matches: usize,
}

/// `tests/compat/rates.json`: the one file the pages' figures come from.
fn rates_path() -> PathBuf {
    compat_dir().join("rates.json")
}

/// Whether this run writes `rates.json` and the pages instead of checking
/// them (`LISA_COMPAT_RATES=write`).
fn writing_rates() -> bool {
    std::env::var_os("LISA_COMPAT_RATES").is_some_and(|v| v == "write")
}

fn read_rates() -> serde_json::Value {
    let path = rates_path();
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Checks `rates.json`'s `fixtures` part against this run's score (or,
/// with `LISA_COMPAT_RATES=write`, writes it, leaving the `random` part
/// that `differential.mjs --rates` writes as it is).
fn check_fixture_rates(rates: &BTreeMap<String, FixtureRate>) -> Result<(), String> {
    let mut file = read_rates();
    let now = serde_json::to_value(rates).expect("rates as JSON");
    if writing_rates() {
        if file["fixtures"] != now {
            file["fixtures"] = now;
            let text = serde_json::to_string_pretty(&file).expect("rates as JSON") + "\n";
            fs::write(rates_path(), text).expect("write tests/compat/rates.json");
        }
        // The pages follow the file (this test writes them, after the
        // file: the pages' own test only checks).
        sync_pages(&file, true);
        return Ok(());
    }
    if file["fixtures"] == now {
        return Ok(());
    }
    Err(format!(
        "tests/compat/rates.json's `fixtures` part is not this run's score: it says\n{:#}\nthe \
         run gives\n{:#}\n(rewrite it and the pages with `LISA_COMPAT_RATES=write cargo test \
         --test it compat`, then review the diff)",
        file["fixtures"], now
    ))
}

/// A peer's name as the pages spell it.
fn peer_title(peer: &str) -> &str {
    match peer {
        "codex" => "Codex",
        "gemini" => "Gemini",
        "claude-code" => "Claude Code",
        other => other,
    }
}

/// `n` of `of` as a percentage with one decimal.
fn percent(n: u64, of: u64) -> String {
    if of == 0 {
        return "-".to_string();
    }
    format!("{:.1}%", n as f64 * 100.0 / of as f64)
}

/// A count with thousands separated by commas, as the pages write them.
fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The text a page shows between `<!-- rates:NAME -->` and
/// `<!-- /rates:NAME -->`, rendered from `rates.json`.
fn render_rates(name: &str, rates: &serde_json::Value) -> String {
    let num = |v: &serde_json::Value| v.as_u64().unwrap_or(0);
    let fixtures = rates["fixtures"].as_object().cloned().unwrap_or_default();
    // Pages list the peers in the suite's order.
    let fixed: Vec<(&str, &serde_json::Value)> = PEERS
        .iter()
        .filter_map(|p| fixtures.get(*p).map(|r| (*p, r)))
        .collect();
    let random = &rates["random"];
    let random_peers: Vec<(&str, &serde_json::Value)> = ["codex", "gemini", "claude-code"]
        .iter()
        .filter_map(|p| random["peers"].get(*p).map(|r| (*p, r)))
        .collect();
    match name {
        "fixtures-list" => fixed
            .iter()
            .map(|(peer, r)| {
                format!(
                    "- {} {}: {} of {} fixtures match raw ({}), {} net of intended \
                     differences ({}){}\n",
                    peer_title(peer),
                    r["version"].as_str().unwrap_or("?"),
                    num(&r["rawMatches"]),
                    num(&r["recorded"]),
                    percent(num(&r["rawMatches"]), num(&r["recorded"])),
                    num(&r["netMatches"]),
                    percent(num(&r["netMatches"]), num(&r["recorded"])),
                    match num(&r["pending"]) {
                        0 => String::new(),
                        n => format!(", {n} pending (known, being fixed)"),
                    }
                )
            })
            .collect(),
        "fixtures-table" => {
            let mut out = String::from(
                "| peer | version | fixtures | match raw | match net of intended classes | pending |\n\
                 |---|---|---|---|---|---|\n",
            );
            for (peer, r) in &fixed {
                out += &format!(
                    "| {} | {} | {} | {} ({}) | {} ({}) | {} |\n",
                    peer_title(peer),
                    r["version"].as_str().unwrap_or("?"),
                    num(&r["recorded"]),
                    num(&r["rawMatches"]),
                    percent(num(&r["rawMatches"]), num(&r["recorded"])),
                    num(&r["netMatches"]),
                    percent(num(&r["netMatches"]), num(&r["recorded"])),
                    num(&r["pending"]),
                );
            }
            out
        }
        "random-table" => {
            if random_peers.is_empty() {
                return "No random run is recorded in `tests/compat/rates.json`.\n".to_string();
            }
            let versions: Vec<String> = random_peers
                .iter()
                .map(|(peer, r)| {
                    format!(
                        "{} {}",
                        peer_title(peer),
                        r["version"].as_str().unwrap_or("?")
                    )
                })
                .collect();
            let mut out = format!(
                "Random trees, each run drawing trees for the peers it names (a tree the \
                 recorder cannot read is not counted), measured with {}:\n\n\
                 | peer | run (seed, trees drawn, date) | recorded | match raw | match net of intended classes | pending | new |\n\
                 |---|---|---|---|---|---|---|\n",
                versions.join(", "),
            );
            for (peer, r) in &random_peers {
                out += &format!(
                    "| {} | {}, {}, {} | {} of {} | {} ({}) | {} ({}) | {} | {} |\n",
                    peer_title(peer),
                    num(&r["seed"]),
                    count(num(&r["count"])),
                    r["date"].as_str().unwrap_or("?"),
                    count(num(&r["recorded"])),
                    count(num(&r["trees"])),
                    count(num(&r["rawMatches"])),
                    percent(num(&r["rawMatches"]), num(&r["recorded"])),
                    count(num(&r["netMatches"])),
                    percent(num(&r["netMatches"]), num(&r["recorded"])),
                    count(num(&r["pendingMismatches"])),
                    count(num(&r["mismatches"])),
                );
            }
            out
        }
        "random-classes" => {
            let mut out = String::new();
            for (peer, r) in &random_peers {
                let classes = r["classes"].as_object().cloned().unwrap_or_default();
                let mut list: Vec<(String, u64)> =
                    classes.iter().map(|(k, v)| (k.clone(), num(v))).collect();
                list.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
                let parts: Vec<String> = list.iter().map(|(k, n)| format!("`{k}` {n}")).collect();
                out += &format!(
                    "- {}: {} of {} recorded trees differ{}{}\n",
                    peer_title(peer),
                    count(num(&r["recorded"]) - num(&r["rawMatches"])),
                    count(num(&r["recorded"])),
                    if parts.is_empty() { "" } else { ": " },
                    parts.join(", "),
                );
            }
            out
        }
        other => panic!("no rates block named {other}"),
    }
}

/// The pages that show rates, and the blocks each holds.
const RATE_PAGES: &[(&str, &[&str])] = &[
    ("README.md", &["fixtures-list"]),
    ("docs/compat.md", &["fixtures-table", "random-table"]),
    (
        "tests/compat/README.md",
        &["random-table", "random-classes"],
    ),
];

/// Compares each page's rate blocks with what `rates` renders; with
/// `write`, rewrites the blocks that differ. Returns the differences.
fn sync_pages(rates: &serde_json::Value, write: bool) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut stale = Vec::new();
    for (page, blocks) in RATE_PAGES {
        let path = root.join(page);
        let mut text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{page}: {e}"));
        let mut changed = false;
        for block in *blocks {
            let open = format!("<!-- rates:{block} -->\n");
            let close = format!("<!-- /rates:{block} -->");
            let start = text
                .find(&open)
                .unwrap_or_else(|| panic!("{page}: no `{}` marker", open.trim_end()))
                + open.len();
            let end = start
                + text[start..]
                    .find(&close)
                    .unwrap_or_else(|| panic!("{page}: no `{close}` marker"));
            let want = render_rates(block, rates);
            if text[start..end] != want {
                stale.push(format!(
                    "{page}, block {block}:\n--- page\n{}--- rates.json\n{want}",
                    &text[start..end]
                ));
                text.replace_range(start..end, &want);
                changed = true;
            }
        }
        if write && changed {
            fs::write(&path, &text).unwrap_or_else(|e| panic!("{page}: {e}"));
        }
    }
    stale
}

/// Every figure the pages give for the differential comes from
/// `tests/compat/rates.json`: each block between `<!-- rates:NAME -->` and
/// `<!-- /rates:NAME -->` is what the file renders to, so no page can drift
/// from it (`LISA_COMPAT_RATES=write` has the fixed-fixture test rewrite
/// the file's `fixtures` part, then the blocks).
#[test]
fn pages_show_the_rates_of_the_generated_file() {
    if writing_rates() {
        // `shipped_compat_policies_load_what_the_real_programs_load` writes
        // the pages once it has written the file.
        return;
    }
    let stale = sync_pages(&read_rates(), false);
    assert!(
        stale.is_empty(),
        "the pages' rates differ from tests/compat/rates.json (rewrite them with \
         `LISA_COMPAT_RATES=write cargo test --test it compat`):\n{}",
        stale.join("\n")
    );
}
