//! The entry points under fuzz and their invariants, shared word for word by
//! the cargo-fuzz targets (`fuzz/fuzz_targets/*.rs`), the proptest harnesses
//! (`tests/it/proptest_entry_points.rs`) and the regression tests
//! (`tests/it/fuzz_regressions.rs`), which include this file with `#[path]`.
//!
//! Each `check_*` function runs one entry point on one input and panics when
//! an invariant breaks; it returns what it computed so that a test can assert
//! concrete outcomes on top.

#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::OnceLock;

use lisa_context::Snapshot;
use lisa_context::internals::{
    as_seen, for_prompt, frontmatter_end, parse_frontmatter, parse_or_fallback, parse_or_lenient,
};
use lisa_context::policy::{
    FrontmatterMode, HiddenText, InvalidPolicy, Layer, Policy, PolicyError, PolicySource,
};
use lisa_context::snapshot::{Frontmatter, FrontmatterError};
use miette::{GraphicalReportHandler, GraphicalTheme};

/// The display name of the policy layer under test.
pub const OVERRIDE_NAME: &str = "fuzz.toml";

/// The built-in policy, loaded once.
pub fn builtin() -> &'static Policy {
    static BUILTIN: OnceLock<Policy> = OnceLock::new();
    BUILTIN.get_or_init(|| Policy::builtin().expect("the built-in policy loads"))
}

// ---------------------------------------------------------------------------
// policy

/// What loading a policy layer gave.
pub enum PolicyOutcome {
    /// The layer applied over the built-in policy.
    Loaded(Box<Policy>),
    /// The layer was refused; the graphical report as rendered.
    Invalid(InvalidPolicy, String),
}

/// Renders a diagnostic the way the CLI does, without colours.
pub fn render_report(diagnostic: &dyn miette::Diagnostic) -> String {
    let mut out = String::new();
    GraphicalReportHandler::new_themed(GraphicalTheme::unicode_nocolor())
        .render_report(&mut out, diagnostic)
        .expect("the graphical report renders");
    out
}

/// Lays `text` over the built-in policy as the home layer.
///
/// Invariants: only `PolicyError::Invalid` can come out of text; a refusal
/// names the layer under test, lists at least one problem, labels spans that
/// lie inside the text on character boundaries, and renders; an accepted
/// policy prints (`policy show`) to TOML that loads back to the same policy.
pub fn check_policy(text: &str) -> PolicyOutcome {
    let sources = [
        PolicySource::builtin(),
        PolicySource::from_text(Layer::Home, OVERRIDE_NAME, text),
    ];
    match Policy::from_sources(&sources) {
        Ok(policy) => {
            let shown = policy.to_toml();
            let _ = policy.to_annotated_toml();
            let again = Policy::from_sources(&[PolicySource::from_text(
                Layer::Builtin,
                "shown.toml",
                shown.clone(),
            )]);
            match again {
                Ok(again) => assert_eq!(
                    again.digest(),
                    policy.digest(),
                    "`policy show` printed a different policy:\n{shown}"
                ),
                Err(e) => panic!(
                    "`policy show` printed TOML that does not load back:\n{shown}\n{}",
                    render_report(&e)
                ),
            }
            PolicyOutcome::Loaded(Box::new(policy))
        }
        Err(PolicyError::Invalid(invalid)) => {
            assert_eq!(
                invalid.name, OVERRIDE_NAME,
                "the built-in layer was blamed for the override"
            );
            assert!(!invalid.problems.is_empty(), "a refusal with no problem");
            for p in &invalid.problems {
                let spans = std::iter::once(&p.span).chain(p.related_spans.iter().map(|(s, _)| s));
                for span in spans {
                    assert!(
                        span.start <= span.end && span.end <= text.len(),
                        "span {span:?} outside the {}-byte text ({})",
                        text.len(),
                        p.message
                    );
                    assert!(
                        text.is_char_boundary(span.start) && text.is_char_boundary(span.end),
                        "span {span:?} splits a character ({})",
                        p.message
                    );
                }
            }
            let report = render_report(&invalid);
            assert!(report.contains(OVERRIDE_NAME), "report: {report}");
            PolicyOutcome::Invalid(invalid, report)
        }
        Err(other) => panic!("text gave a non-text policy error: {other:?}"),
    }
}

// ---------------------------------------------------------------------------
// frontmatter

/// Runs `frontmatter_end` on the raw bytes and `parse` on them decoded
/// lossily.
///
/// Invariants: the end is inside the bytes, just past a `\n`, and a prefix
/// cut there gives the same end; on the decoded text, a found end means
/// `parse` finds both fences and gives the same answer on the prefix; a
/// parsed frontmatter has a non-blank name and description, the description
/// without trailing line breaks.
pub fn check_frontmatter(bytes: &[u8]) -> Result<Frontmatter, FrontmatterError> {
    check_end(bytes);
    let text = String::from_utf8_lossy(bytes);
    let end = check_end(text.as_bytes());
    let parsed = parse_frontmatter(&text);
    if let Some(end) = end {
        assert!(
            !matches!(
                parsed,
                Err(FrontmatterError::NoOpeningFence | FrontmatterError::NoClosingFence)
            ),
            "frontmatter_end found a block at {end} but parse says {parsed:?}"
        );
        let prefix =
            std::str::from_utf8(&text.as_bytes()[..end]).expect("the end is a character boundary");
        assert_eq!(
            parse_frontmatter(prefix),
            parsed,
            "parse differs on the prefix up to the end of the block"
        );
    }
    // The lenient fallback agrees with the strict reading wherever that
    // succeeds, and keeps the same field rules where it takes over.
    match (&parsed, parse_or_lenient(&text, true)) {
        (Ok(strict), Ok((lenient, None))) => assert_eq!(strict, &lenient),
        (Ok(_), other) => panic!("strict parse succeeded but lenient says {other:?}"),
        (Err(_), Ok((fm, Some(_)))) => {
            assert!(!fm.name.trim().is_empty(), "lenient blank name");
            assert!(
                !fm.description.trim().is_empty(),
                "lenient blank description"
            );
        }
        (Err(_), Ok((_, None))) => panic!("lenient success without the strict error"),
        (Err(_), Err(_)) => {}
    }
    // Codex's retry likewise: the strict answer where strict YAML reads the
    // block, and no blank field where it takes over.
    match (
        &parsed,
        parse_or_fallback(&text, FrontmatterMode::ValuesAsText),
    ) {
        (Ok(strict), Ok((retried, None))) => assert_eq!(strict, &retried),
        (Ok(_), other) => panic!("strict parse succeeded but values-as-text says {other:?}"),
        (Err(_), Ok((fm, Some(_)))) => {
            assert!(!fm.name.trim().is_empty(), "values-as-text blank name");
            assert!(
                !fm.description.trim().is_empty(),
                "values-as-text blank description"
            );
        }
        (Err(_), Ok((_, None))) => panic!("values-as-text success without the strict error"),
        (Err(_), Err(_)) => {}
    }
    if let Ok(fm) = &parsed {
        assert!(!fm.name.trim().is_empty(), "blank name {:?}", fm.name);
        assert!(
            !fm.description.trim().is_empty(),
            "blank description {:?}",
            fm.description
        );
        assert!(
            !fm.description.ends_with(['\n', '\r']),
            "description keeps a trailing line break: {:?}",
            fm.description
        );
    }
    parsed
}

fn check_end(bytes: &[u8]) -> Option<usize> {
    let end = frontmatter_end(bytes);
    if let Some(end) = end {
        assert!(end <= bytes.len(), "end {end} past {} bytes", bytes.len());
        assert!(end >= b"---\n---\n".len(), "end {end} too early");
        assert_eq!(
            bytes[end - 1],
            b'\n',
            "the end is not just past a line break"
        );
        assert_eq!(
            frontmatter_end(&bytes[..end]),
            Some(end),
            "the prefix up to the end does not give the same end"
        );
    }
    end
}

// ---------------------------------------------------------------------------
// render

/// The byte that separates the parts of a fuzz input for [`Tree`].
pub const PART_SEPARATOR: u8 = 0xFF;

/// The folder name of the one project skill.
pub const SKILL_NAME: &str = "fuzz-skill";

/// The files of a small home + repository tree. `None` leaves a file out.
#[derive(Debug, Clone, Default)]
pub struct Tree {
    /// `home/AGENTS.md`.
    pub home: Option<Vec<u8>>,
    /// `repo/AGENTS.md` (the repository root holds `.git/`).
    pub project: Option<Vec<u8>>,
    /// `repo/sub/AGENTS.md`; `repo/sub` is the cwd.
    pub nested: Option<Vec<u8>>,
    /// `repo/.lisa/skills/fuzz-skill/SKILL.md`.
    pub skill: Option<Vec<u8>>,
    /// A policy layer laid over the built-in one; the built-in policy alone
    /// when it is absent or does not load.
    pub policy: Option<Vec<u8>>,
}

impl Tree {
    /// Splits a fuzz input on [`PART_SEPARATOR`] into home, project, nested,
    /// skill and policy texts, in that order; missing parts are absent files.
    pub fn from_bytes(data: &[u8]) -> Self {
        let mut parts = data.splitn(5, |&b| b == PART_SEPARATOR).map(<[u8]>::to_vec);
        Self {
            home: parts.next(),
            project: parts.next(),
            nested: parts.next(),
            skill: parts.next(),
            policy: parts.next(),
        }
    }

    /// The inverse of [`Tree::from_bytes`] for parts without the separator
    /// byte, for writing seed files.
    pub fn to_bytes(&self) -> Vec<u8> {
        let parts = [
            &self.home,
            &self.project,
            &self.nested,
            &self.skill,
            &self.policy,
        ];
        let n = parts.iter().rposition(|p| p.is_some()).map_or(0, |i| i + 1);
        let mut out = Vec::new();
        for (i, part) in parts[..n].iter().enumerate() {
            if i > 0 {
                out.push(PART_SEPARATOR);
            }
            out.extend_from_slice(part.as_deref().unwrap_or_default());
        }
        out
    }

    /// The effective policy: the override over the built-in policy when it
    /// loads, the built-in policy otherwise.
    pub fn policy(&self) -> Policy {
        let Some(text) = self.policy.as_deref() else {
            return builtin().clone();
        };
        let text = String::from_utf8_lossy(text);
        Policy::from_sources(&[
            PolicySource::builtin(),
            PolicySource::from_text(Layer::Home, OVERRIDE_NAME, text),
        ])
        .unwrap_or_else(|_| builtin().clone())
    }
}

/// The paths of a tree written to disk.
pub struct Written {
    /// Keeps the directory alive.
    pub dir: tempfile::TempDir,
    /// The home root.
    pub home: PathBuf,
    /// The repository root.
    pub repo: PathBuf,
    /// The working directory (`repo/sub`).
    pub cwd: PathBuf,
}

/// Writes `tree` into a fresh temporary directory.
pub fn write_tree(tree: &Tree) -> Written {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    let repo = dir.path().join("repo");
    let cwd = repo.join("sub");
    let skill = repo.join(".lisa/skills").join(SKILL_NAME);
    for d in [&home, &repo.join(".git"), &cwd, &skill] {
        std::fs::create_dir_all(d).expect("mkdir");
    }
    let files: [(&Option<Vec<u8>>, PathBuf); 4] = [
        (&tree.home, home.join("AGENTS.md")),
        (&tree.project, repo.join("AGENTS.md")),
        (&tree.nested, cwd.join("AGENTS.md")),
        (&tree.skill, skill.join("SKILL.md")),
    ];
    for (content, path) in files {
        if let Some(bytes) = content {
            std::fs::write(&path, bytes).expect("write");
        }
    }
    Written {
        dir,
        home,
        repo,
        cwd,
    }
}

/// What [`check_render`] built.
pub struct Rendered {
    /// The tree on disk (kept so that paths in the snapshot still exist).
    pub written: Written,
    /// The effective policy.
    pub policy: Policy,
    /// The snapshot.
    pub snapshot: std::sync::Arc<Snapshot>,
    /// The nonce of the kept blocks.
    pub nonce: String,
}

/// Whether the policy's templates are the built-in ones.
pub fn builtin_templates(policy: &Policy) -> bool {
    let sources = |p: &Policy| {
        let t = &p.templates;
        [
            &t.heading,
            &t.preamble,
            &t.home_header,
            &t.project_header,
            &t.footer,
            &t.forged_line_prefix,
            &t.truncation_note,
            &t.hidden_marker,
            &t.skills_heading,
            &t.skill_entry,
            &t.project_skill_label,
            &t.more_skills,
        ]
        .map(|t| t.source().to_string())
    };
    sources(policy) == sources(builtin())
}

/// Writes `tree`, builds the snapshot for `repo/sub` and checks it.
///
/// Invariants: the build succeeds; the budget is kept (`used <= limit`, and
/// `used` is the sum of the kept blocks' `included_bytes`); no block
/// includes more than its text (`text_bytes`), a cut block says it was cut,
/// and a text outgrows its file only when hidden text in it was revealed;
/// the snapshot serializes; the
/// lines of the prompt that carry the nonce are exactly the nonce-bearing
/// lines of the preamble, the headers and the footers, so file text never
/// adds one; with the built-in templates, the lines opening with `<<<` are
/// exactly each block's header and footer, in order, even when lines are
/// split on every character of [`LINE_BREAKS`].
pub fn check_render(tree: &Tree) -> Rendered {
    let policy = tree.policy();
    let written = write_tree(tree);
    let built = lisa_context::build(&policy, Some(&written.home), &written.cwd, None)
        .unwrap_or_else(|e| panic!("build failed: {e:?}"));
    let snapshot = std::sync::Arc::new(built);

    let budget = snapshot.budget;
    assert!(budget.used <= budget.limit, "budget overrun: {budget:?}");
    assert_eq!(
        i64::try_from(budget.limit).ok(),
        Some(policy.instructions.budget_bytes),
        "the budget limit is not the policy's"
    );
    let sum: u64 = snapshot
        .instruction_files
        .iter()
        .map(|b| b.included_bytes)
        .sum();
    assert_eq!(sum, budget.used, "budget.used is not the sum of the blocks");
    for b in &snapshot.instruction_files {
        assert_eq!(
            b.included_bytes,
            b.text.len() as u64,
            "{}",
            b.path.display()
        );
        assert!(
            b.included_bytes <= b.text_bytes,
            "{} includes {} bytes of a {}-byte text",
            b.path.display(),
            b.included_bytes,
            b.text_bytes
        );
        assert!(
            b.truncated || b.included_bytes == b.text_bytes,
            "{} was cut ({} of {} bytes) but is not marked truncated",
            b.path.display(),
            b.included_bytes,
            b.text_bytes
        );
        // Only revealing hidden text (a character of 2 to 4 bytes becomes a
        // longer marker) makes the text outgrow its file: that case is
        // `included_bytes_never_exceed_the_text` in tests/it/fuzz_regressions.rs.
        let revealed = policy.trust.hidden_text == HiddenText::Reveal
            && snapshot.hidden_text.iter().any(|h| h.path == b.path);
        assert!(
            revealed || b.text_bytes <= b.bytes,
            "{} has {} bytes of text from a {}-byte file: {:?}",
            b.path.display(),
            b.text_bytes,
            b.bytes,
            b.text
        );
    }
    serde_json::to_string(&snapshot).expect("the snapshot serializes");

    let nonce = snapshot.nonce.clone();
    check_prompt(&policy, &snapshot, &nonce);
    Rendered {
        written,
        policy,
        snapshot,
        nonce,
    }
}

/// Every character some reader takes for a line break (a lone `\r` is one
/// in CommonMark). File text reaches the prompt with each of them folded to
/// `\n`, so none can start a line the renderer did not see.
pub const LINE_BREAKS: [char; 7] = [
    '\n', '\r', '\u{0B}', '\u{0C}', '\u{85}', '\u{2028}', '\u{2029}',
];

/// Lines of `text` (split on `\n`, as the renderer joins them) containing
/// `needle`.
fn lines_with(text: &str, needle: &str) -> usize {
    text.split('\n').filter(|l| l.contains(needle)).count()
}

fn header_footer(
    policy: &Policy,
    b: &lisa_context::snapshot::Block,
    nonce: &str,
) -> (String, String) {
    let t = &policy.templates;
    let path = for_prompt(&b.path);
    let header = match b.origin {
        lisa_context::snapshot::Origin::Home => &t.home_header,
        lisa_context::snapshot::Origin::Project => &t.project_header,
        _ => &t.ancestor_header,
    };
    (
        header.fill(&[
            ("path", &path),
            ("origin", b.origin.as_str()),
            ("nonce", nonce),
        ]),
        t.footer.fill(&[("path", &path), ("nonce", nonce)]),
    )
}

fn check_prompt(policy: &Policy, snapshot: &Snapshot, nonce: &str) {
    let prompt = &snapshot.prompt;
    let blocks = &snapshot.instruction_files;
    let listed = snapshot.skills.iter().filter(|s| s.listed).count();
    if blocks.is_empty() && listed == 0 && snapshot.hidden_project_skills == 0 {
        assert!(
            prompt.is_empty(),
            "a prompt with nothing to show: {prompt:?}"
        );
        return;
    }
    if blocks.is_empty() {
        return;
    }

    let t = &policy.templates;
    let mut expected = lines_with(&t.heading.fill(&[]), nonce)
        + lines_with(&t.preamble.fill(&[("nonce", nonce)]), nonce);
    for b in blocks {
        let (header, footer) = header_footer(policy, b, nonce);
        expected += lines_with(&header, nonce) + lines_with(&footer, nonce);
    }
    let actual = lines_with(prompt, nonce);
    assert_eq!(
        actual, expected,
        "{actual} prompt lines carry the nonce {nonce}, expected {expected}:\n{prompt}"
    );

    if builtin_templates(policy) {
        // What a reader sees: leads that render as nothing or blank (and
        // characters taken back by a backspace or DEL) do not count.
        let opening: Vec<&str> = prompt
            .split(LINE_BREAKS)
            .filter(|l| as_seen(l).starts_with("<<<"))
            .collect();
        let mut want = Vec::new();
        for b in blocks {
            let (header, footer) = header_footer(policy, b, nonce);
            want.push(header);
            want.push(footer);
        }
        assert_eq!(
            opening, want,
            "the lines opening with `<<<` are not exactly the headers and footers:\n{prompt}"
        );
    }
}

// ---------------------------------------------------------------------------
// jsonrpc (the framing of `lisa-context mcp`)

/// Reads `bytes` as newline-delimited JSON-RPC with a small line bound,
/// and parses each line.
///
/// Invariants: reading never holds more than the bound, and gives exactly
/// the non-blank lines (trimmed) that fit it, a `TooLong` for each that does
/// not; `parse` never panics; a request's or a response's id is written
/// back byte for byte in a response line, which is valid JSON; an error
/// line is valid JSON with the code given.
pub fn check_jsonrpc(bytes: &[u8]) -> Vec<Result<lisa_context::protocol::jsonrpc::Message, i64>> {
    use lisa_context::protocol::jsonrpc::{self, Line, Message};
    const MAX: usize = 256;
    let mut expected = Vec::new();
    let mut pieces: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
    if bytes.ends_with(b"\n") || bytes.is_empty() {
        pieces.pop();
    }
    for piece in &pieces {
        if piece.len() > MAX {
            expected.push(Line::TooLong);
        } else if !piece.trim_ascii().is_empty() {
            expected.push(Line::Message(piece.trim_ascii().to_vec()));
        }
    }
    let mut reader = std::io::BufReader::with_capacity(64, bytes);
    let mut buf = Vec::new();
    let mut got = Vec::new();
    while let Some(line) = jsonrpc::read_line(&mut reader, &mut buf, MAX).expect("reading a slice")
    {
        assert!(buf.len() <= MAX + 1, "the reader held {} bytes", buf.len());
        got.push(line);
    }
    assert_eq!(got, expected, "the lines read");
    got.into_iter()
        .filter_map(|line| match line {
            Line::Message(text) => Some(text),
            Line::TooLong => None,
        })
        .map(|text| {
            let parsed = jsonrpc::parse(&text);
            match &parsed {
                Ok(Message::Request { id, .. } | Message::Response { id, .. }) => {
                    let line = jsonrpc::result_line(id, &serde_json::Value::Null);
                    let back: serde_json::Value =
                        serde_json::from_slice(&line).expect("a response line is JSON");
                    let original: serde_json::Value =
                        serde_json::from_str(id.json()).expect("an id is JSON");
                    assert_eq!(back["id"], original);
                    assert!(String::from_utf8_lossy(&line).contains(id.json()));
                }
                Ok(Message::Notification { .. }) => {}
                Err(bad) => {
                    let line = jsonrpc::error_line(bad.id.as_ref(), bad.code, &bad.message);
                    let back: serde_json::Value =
                        serde_json::from_slice(&line).expect("an error line is JSON");
                    assert_eq!(back["error"]["code"], bad.code);
                }
            }
            parsed.map_err(|bad| bad.code)
        })
        .collect()
}
