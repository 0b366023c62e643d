//! Property tests over the three fuzzed entry points, with the invariants of
//! the cargo-fuzz targets (`fuzz/fuzz_targets/harness.rs`): policy text laid
//! over the built-in policy, SKILL.md frontmatter, and the rendered prompt
//! of a small real tree. `.ci/fuzz` runs this file when cargo-fuzz is not
//! installed.

use proptest::prelude::*;
use proptest::sample::select;

use crate::harness;
use crate::harness::{PolicyOutcome, Tree, check_frontmatter, check_policy, check_render};

// ---------------------------------------------------------------------------
// policy text

/// Every key of the schema, without its table.
const KEYS: &[&str] = &[
    "version",
    "home",
    "repo-markers",
    "repo-marker-kind",
    "safe-directories",
    "ceiling-directories",
    "home-files",
    "level-files",
    "exclude-levels",
    "dedup-by-content",
    "skip-blank",
    "budget-bytes",
    "max-file-bytes",
    "budget-order",
    "extra-home-files",
    "extra-level-files",
    "home-pick",
    "level-pick",
    "order",
    "fold-same-file",
    "budget-scope",
    "budget-counts",
    "trim",
    "leading-bom",
    "path-order",
    "fences",
    "scalars",
    "skill-file-symlinks",
    "named",
    "name",
    "candidates",
    "files",
    "extends",
    "levels",
    "depth",
    "source-skill",
    "name-from",
    "conflict",
    "long-description",
    "description-whitespace",
    "frontmatter-memo-file",
    "frontmatter-memo-max-bytes",
    "description-cut-suffix",
    "import-depth",
    "import-failure",
    "import-max-files",
    "import-max-bytes",
    "import-excluded-names",
    "import-open",
    "import-close",
    "import-failed",
    "on-access",
    "access-root",
    "access-budget-bytes",
    "import-root",
    "fallback-level-files",
    "ancestor-files",
    "scoped-rules",
    "skip-larger-than",
    "ancestor-header",
    "name-rule",
    "name-max-chars",
    "description-max-chars",
    "max-skill-file-bytes",
    "project-description-chars",
    "max-project-skills",
    "max-entries-per-source",
    "executable-file",
    "frontmatter",
    "root",
    "path",
    "rank",
    "symlinks",
    "hidden-text",
    "hard-links",
    "nonce-key-file",
    "project",
    "store-file",
    "review-command",
    "heading",
    "preamble",
    "home-header",
    "project-header",
    "footer",
    "forged-line-prefix",
    "truncation-note",
    "file-limit-note",
    "hidden-marker",
    "skills-heading",
    "skill-entry",
    "project-skill-label",
    "more-skills",
    "unapproved-note",
    "unknown-key",
    "compat",
];

const TABLES: &[&str] = &[
    "[roots]",
    "[instructions]",
    "[skills]",
    "[[skills.sources]]",
    "[trust]",
    "[templates]",
    "[bogus]",
    "[instructions.nested]",
    "[instructions.compat]",
    "[rules.compat]",
    "[skills.compat]",
];

const WORDS: &[&str] = &[
    "any",
    "file",
    "dir",
    "outermost-first",
    "nearest-first",
    "within-root",
    "never",
    "reveal",
    "strip",
    "keep",
    "home",
    "repo",
    "AGENTS.md",
    ".lisa/skills",
    "../up",
    "a/b",
    "",
    "^[a-z]+$",
    "((",
    "**/vendor",
    "[",
];

/// Template-ish text: placeholders (known and not), doubled and stray
/// braces, `<<<`, escapes and multibyte characters.
fn template_text() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            select(
                &[
                    "{nonce}",
                    "{path}",
                    "{origin}",
                    "{count}",
                    "{name}",
                    "{description}",
                    "{label}",
                    "{codepoint}",
                    "{bytes}",
                    "{included}",
                    "{bogus}",
                    "{}",
                    "{{",
                    "}}",
                    "{",
                    "}",
                    "<<<",
                    ">>>",
                    " end",
                    "\\u00e9",
                    "\\t",
                    "\\n",
                    "\\\\",
                    "\u{6f22}",
                    "\u{200b}",
                ][..]
            )
            .prop_map(str::to_string),
            "[a-z ]{0,6}",
        ],
        0..6,
    )
    .prop_map(|parts| parts.concat())
}

/// A TOML value: right or wrong for whatever key it lands on.
fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<i64>().prop_map(|n| n.to_string()),
        (-2i64..70_000).prop_map(|n| n.to_string()),
        any::<bool>().prop_map(|b| b.to_string()),
        select(WORDS).prop_map(|w| format!("{w:?}")),
        prop::collection::vec(select(WORDS), 0..3).prop_map(|ws| format!("{ws:?}")),
        template_text().prop_map(|t| format!("\"{}\"", t.replace('"', ""))),
        template_text().prop_map(|t| format!("'''{t}'''")),
        template_text().prop_map(|t| format!("\"\"\"{t}\\\n  {t}\"\"\"")),
        Just("{ a = 1 }".to_string()),
        "\\PC{0,12}",
    ]
}

/// One line of a policy file: a table header, a key with a value, or noise.
fn policy_line() -> impl Strategy<Value = String> {
    prop_oneof![
        2 => Just("version = 1".to_string()),
        3 => select(TABLES).prop_map(str::to_string),
        8 => (select(KEYS), value()).prop_map(|(k, v)| format!("{k} = {v}")),
        1 => "\\PC{0,20}",
        1 => "[ -~]{0,20}",
    ]
}

/// What a key takes.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Names,
    Bool,
    Int(i64, i64),
    Word(&'static [&'static str]),
    Str,
    Regex,
    Template,
}

/// The schema, table by table, for documents that are mostly well typed.
const SCHEMA: &[(&str, &[(&str, Kind)])] = &[
    (
        "[roots]",
        &[
            ("home", Kind::Names),
            ("repo-markers", Kind::Names),
            ("repo-marker-kind", Kind::Word(&["any", "file", "dir"])),
            ("safe-directories", Kind::Names),
            ("ceiling-directories", Kind::Names),
        ],
    ),
    (
        "[instructions]",
        &[
            ("home-files", Kind::Names),
            ("level-files", Kind::Names),
            ("exclude-levels", Kind::Names),
            ("dedup-by-content", Kind::Bool),
            ("skip-blank", Kind::Bool),
            ("budget-bytes", Kind::Int(-1, 1 << 21)),
            ("max-file-bytes", Kind::Int(-1, 1 << 25)),
            (
                "budget-order",
                Kind::Word(&["outermost-first", "nearest-first"]),
            ),
            ("extra-home-files", Kind::Names),
            ("extra-level-files", Kind::Names),
            (
                "home-pick",
                Kind::Word(&["all", "first-file", "first-non-blank"]),
            ),
            (
                "level-pick",
                Kind::Word(&["all", "first-file", "first-non-blank"]),
            ),
            ("order", Kind::Word(&["root-to-cwd", "sorted-paths"])),
            ("fold-same-file", Kind::Bool),
            ("budget-scope", Kind::Word(&["all", "project", "none"])),
            ("budget-counts", Kind::Word(&["text", "file"])),
            ("trim", Kind::Word(&["white-space", "javascript"])),
            ("leading-bom", Kind::Word(&["drop", "text"])),
            ("path-order", Kind::Word(&["code-points", "utf-16"])),
            ("import-depth", Kind::Int(-1, 20)),
            ("import-failure", Kind::Word(&["literal", "comment"])),
            ("import-max-files", Kind::Int(-1, 200_000)),
            ("import-max-bytes", Kind::Int(-1, 1 << 25)),
            ("import-excluded-names", Kind::Names),
            ("on-access", Kind::Bool),
            ("access-root", Kind::Word(&["root", "cwd"])),
            ("import-root", Kind::Word(&["root", "marker", "cwd"])),
            ("fallback-level-files", Kind::Names),
            ("ancestor-files", Kind::Names),
            ("scoped-rules", Kind::Bool),
            ("skip-larger-than", Kind::Int(-1, 1 << 41)),
            ("access-budget-bytes", Kind::Int(-1, 1 << 21)),
        ],
    ),
    (
        "[skills]",
        &[
            ("name-rule", Kind::Regex),
            ("name-max-chars", Kind::Int(0, 300)),
            ("description-max-chars", Kind::Int(0, 70_000)),
            ("max-skill-file-bytes", Kind::Int(0, 1 << 25)),
            ("project-description-chars", Kind::Int(0, 70_000)),
            ("max-project-skills", Kind::Int(-1, 200_000)),
            ("max-entries-per-source", Kind::Int(0, 2_000_000)),
            ("executable-file", Kind::Str),
            (
                "name-from",
                Kind::Word(&[
                    "folder-and-frontmatter",
                    "frontmatter",
                    "frontmatter-else-folder",
                    "folder",
                ]),
            ),
            ("conflict", Kind::Word(&["lowest-rank", "list-all"])),
            ("long-description", Kind::Word(&["refuse", "cut"])),
            ("description-whitespace", Kind::Word(&["keep", "collapse"])),
            ("leading-bom", Kind::Word(&["drop", "text"])),
            (
                "fences",
                Kind::Word(&["trailing-blanks", "trimmed", "exact-open"]),
            ),
            ("scalars", Kind::Word(&["strings", "as-written"])),
            ("skill-file-symlinks", Kind::Word(&["within-root", "never"])),
            ("frontmatter-memo-file", Kind::Str),
            ("frontmatter-memo-max-bytes", Kind::Int(-1, 1 << 27)),
        ],
    ),
    (
        "[[skills.sources]]",
        &[
            ("root", Kind::Word(&["home", "repo", "user"])),
            ("path", Kind::Str),
            ("rank", Kind::Int(-2, 300)),
            ("levels", Kind::Word(&["root", "every-level", "cwd"])),
            ("depth", Kind::Int(-1, 20)),
            ("source-skill", Kind::Bool),
        ],
    ),
    (
        "[trust]",
        &[
            ("symlinks", Kind::Word(&["within-root", "never"])),
            ("hidden-text", Kind::Word(&["reveal", "strip", "keep"])),
            ("hard-links", Kind::Word(&["allow", "refuse"])),
            ("project", Kind::Word(&["open", "pinned"])),
        ],
    ),
    (
        "[templates]",
        &[
            ("heading", Kind::Template),
            ("preamble", Kind::Template),
            ("home-header", Kind::Template),
            ("project-header", Kind::Template),
            ("footer", Kind::Template),
            ("forged-line-prefix", Kind::Template),
            ("truncation-note", Kind::Template),
            ("file-limit-note", Kind::Template),
            ("hidden-marker", Kind::Template),
            ("skills-heading", Kind::Template),
            ("skill-entry", Kind::Template),
            ("project-skill-label", Kind::Template),
            ("more-skills", Kind::Template),
            ("unapproved-note", Kind::Template),
            ("description-cut-suffix", Kind::Template),
            ("import-open", Kind::Template),
            ("import-close", Kind::Template),
            ("import-failed", Kind::Template),
            ("ancestor-header", Kind::Template),
        ],
    ),
];

/// A value of the right type for `kind`, spelled in one of TOML's ways.
fn typed_value(kind: Kind) -> BoxedStrategy<String> {
    match kind {
        Kind::Names => prop::collection::vec(select(WORDS), 0..3)
            .prop_map(|ws| format!("{ws:?}"))
            .boxed(),
        Kind::Bool => any::<bool>().prop_map(|b| b.to_string()).boxed(),
        Kind::Int(lo, hi) => prop_oneof![
            (lo..=hi).prop_map(|n| n.to_string()),
            select(vec![lo, hi, lo + 1, hi - 1]).prop_map(|n| format!("{n}")),
            (0..=hi.max(1)).prop_map(|n| format!("0x{n:x}")),
        ]
        .boxed(),
        Kind::Word(words) => select(words).prop_map(|w| format!("{w:?}")).boxed(),
        Kind::Str => select(WORDS).prop_map(|w| format!("{w:?}")).boxed(),
        Kind::Regex => select(
            &[
                "^[a-z0-9-]+$",
                ".*",
                "((",
                "\\p{L}+",
                "a{1000}{1000}",
                "[z-a]",
            ][..],
        )
        .prop_map(|r| format!("'{r}'"))
        .boxed(),
        Kind::Template => prop_oneof![
            template_text().prop_map(|t| format!("\"{}\"", t.replace('"', ""))),
            template_text().prop_map(|t| format!("'{}'", t.replace(['\'', '\n'], ""))),
            template_text().prop_map(|t| format!("'''{t}'''")),
            template_text().prop_map(|t| format!("\"\"\"{t}\\\n  {t}\"\"\"")),
        ]
        .boxed(),
    }
}

/// A `[table]` with some of its keys, each at most once, mostly well typed.
fn section(table: &'static str, keys: &'static [(&'static str, Kind)]) -> BoxedStrategy<String> {
    prop::sample::subsequence(keys.to_vec(), 0..=keys.len().min(4))
        .prop_flat_map(|chosen| {
            chosen
                .into_iter()
                .map(|(key, kind)| {
                    prop_oneof![6 => typed_value(kind), 1 => value()]
                        .prop_map(move |v| format!("{key} = {v}\n"))
                })
                .collect::<Vec<_>>()
        })
        .prop_map(move |entries| format!("{table}\n{}", entries.concat()))
        .boxed()
}

/// Some of the tables, each at most once and in schema order.
fn sections() -> impl Strategy<Value = String> {
    prop::sample::subsequence(SCHEMA.to_vec(), 0..=SCHEMA.len()).prop_flat_map(|tables| {
        tables
            .into_iter()
            .map(|(table, keys)| section(table, keys))
            .collect::<Vec<_>>()
            .prop_map(|texts| texts.concat())
    })
}

fn policy_text() -> impl Strategy<Value = String> {
    let loose = (
        prop::collection::vec(policy_line(), 0..12),
        select(&["\n", "\r\n"][..]),
    )
        .prop_map(|(lines, eol)| lines.join(eol));
    let structured = (
        prop_oneof![8 => Just("version = 1\n"), 1 => Just("version = 2\n"), 1 => Just("")],
        sections(),
    )
        .prop_map(|(version, sections)| format!("{version}{sections}"));
    prop_oneof![3 => structured, 1 => loose]
}

// ---------------------------------------------------------------------------
// frontmatter

fn fence() -> impl Strategy<Value = String> {
    select(
        &[
            "---\n",
            "---\r\n",
            "---  \n",
            "--- \t\r\n",
            "\u{feff}---\n",
            "----\n",
            "--\n",
            "---",
            "",
        ][..],
    )
    .prop_map(str::to_string)
}

fn yaml_line() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => (
            select(&[
                "name", "description", "license", "compatibility", "version", "tags",
                "metadata", "allowed-tools", "extra", "<<", "? k",
            ][..]),
            select(&[
                "", " x", " \"quoted \\u00e9\"", " 'single'", " 1.10", " true", " yes",
                " ~", " [a, 1, true]", " {k: v, n: 2}", " |", " >-", " &a [x, x]",
                " *a", " !!float \"1.50\"", " !tag v", " .nan", " [[[[", " \u{6f22}",
                " ---", " '''",
            ][..]),
        )
            .prop_map(|(k, v)| format!("{k}:{v}")),
        1 => select(&["  - item", "  indented text", "- seq", "# comment", "...", "%YAML 1.2", "\t"][..])
            .prop_map(str::to_string),
        1 => "\\PC{0,16}",
    ]
}

fn frontmatter_text() -> impl Strategy<Value = Vec<u8>> {
    (
        fence(),
        prop::collection::vec(yaml_line(), 0..8),
        select(&["\n", "\r\n"][..]),
        fence(),
        prop::collection::vec(any::<u8>(), 0..8),
    )
        .prop_map(|(open, lines, eol, close, body)| {
            let mut text = open;
            for line in lines {
                text.push_str(&line);
                text.push_str(eol);
            }
            text.push_str(&close);
            let mut bytes = text.into_bytes();
            bytes.extend(body);
            bytes
        })
}

// ---------------------------------------------------------------------------
// render

/// Text fragments aimed at the renderer's guards and the reader.
fn fragment() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => select(&[
            "<<<", "<<< end>>>", ">>>", "\\", "\\<<<", "  <<<", "\n", "\r\n", "\r", "\n\n",
            "\t", " ", "\u{feff}", "\u{e9}", "\u{6f22}\u{5b57}", "\u{1f600}", "\u{200b}",
            "\u{202e}", "\u{2066}", "\u{e0041}", "\u{00ad}", "\u{2028}", "\u{85}", "\u{0b}",
            "<!--", "-->", "<!-->", "use tabs", "---", "name: fuzz-skill", "{nonce}",
        ][..])
        .prop_map(|s| s.as_bytes().to_vec()),
        1 => "[0-9a-f]{16}".prop_map(|h| format!("<<<{h} end>>>").into_bytes()),
        1 => "[0-9a-f]{16}".prop_map(String::into_bytes),
        1 => "\\PC{0,8}".prop_map(String::into_bytes),
        1 => prop::collection::vec(any::<u8>(), 1..4),
    ]
}

fn file_text() -> impl Strategy<Value = Option<Vec<u8>>> {
    prop::option::weighted(
        0.85,
        prop::collection::vec(fragment(), 0..10).prop_map(|parts| parts.concat()),
    )
}

fn skill_text() -> impl Strategy<Value = Option<Vec<u8>>> {
    prop::option::weighted(
        0.8,
        (
            select(&["---\n", "---\r\n", "\u{feff}---\n"][..]),
            select(&["fuzz-skill", "other", "\"fuzz-skill\""][..]),
            prop::collection::vec(fragment(), 0..6),
        )
            .prop_map(|(fence, name, description)| {
                let description = String::from_utf8_lossy(&description.concat())
                    .replace(['\n', '\r', '"', '\\'], " ");
                format!("{fence}name: {name}\ndescription: \"{description}\"\n---\nbody\n")
                    .into_bytes()
            }),
    )
}

fn policy_override() -> impl Strategy<Value = Option<Vec<u8>>> {
    prop::option::weighted(
        0.6,
        prop::collection::vec(
            select(
                &[
                    "[instructions]\nbudget-bytes = 1",
                    "[instructions]\nbudget-bytes = 7",
                    "[instructions]\nbudget-bytes = 40",
                    "[instructions]\nmax-file-bytes = 5",
                    "[instructions]\nbudget-order = \"nearest-first\"",
                    "[instructions]\ndedup-by-content = false",
                    "[instructions]\nskip-blank = false",
                    "[trust]\nhidden-text = \"strip\"",
                    "[trust]\nhidden-text = \"keep\"",
                    "[skills]\nproject-description-chars = 3",
                    "[skills]\nmax-project-skills = 0",
                    "[templates]\nforged-line-prefix = \"> \"",
                    "[templates]\nfooter = \"{nonce}\"",
                    "[templates]\nhome-header = \"{nonce}\\n{path}\"",
                    "[templates]\nhidden-marker = \"<<<{codepoint}\"",
                    "[templates]\nskill-entry = \"{description}\"",
                    "[instructions]\nbudget-bytes = \"oops\"",
                ][..],
            ),
            0..4,
        )
        .prop_map(|parts| {
            // Repeating a table is a TOML error: the built-in policy then
            // applies, which is part of what this exercises.
            let mut text = String::from("version = 1\n");
            for p in parts {
                text.push_str(p);
                text.push('\n');
            }
            text.into_bytes()
        }),
    )
}

fn tree() -> impl Strategy<Value = Tree> {
    (
        file_text(),
        file_text(),
        file_text(),
        skill_text(),
        policy_override(),
    )
        .prop_map(|(home, project, nested, skill, policy)| Tree {
            home,
            project,
            nested,
            skill,
            policy,
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn policy_text_keeps_its_invariants(text in policy_text()) {
        match check_policy(&text) {
            PolicyOutcome::Loaded(policy) => {
                // 0 is valid: no project instruction file (issue 29).
                prop_assert!(policy.instructions.budget_bytes >= 0);
                prop_assert!(policy.instructions.max_file_bytes >= 1);
            }
            PolicyOutcome::Invalid(invalid, report) => {
                prop_assert!(!invalid.problems.is_empty());
                prop_assert!(!report.is_empty());
            }
        }
    }

    #[test]
    fn frontmatter_keeps_its_invariants(bytes in frontmatter_text()) {
        if let Ok(fm) = check_frontmatter(&bytes) {
            prop_assert!(!fm.name.trim().is_empty());
        }
    }

    #[test]
    fn frontmatter_of_raw_bytes_keeps_its_invariants(
        bytes in prop::collection::vec(any::<u8>(), 0..64),
    ) {
        let mut with_fence = b"---\n".to_vec();
        with_fence.extend_from_slice(&bytes);
        let _ = check_frontmatter(&bytes);
        let _ = check_frontmatter(&with_fence);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn render_keeps_its_invariants(tree in tree()) {
        let r = check_render(&tree);
        let s = &r.snapshot;
        prop_assert!(s.budget.used <= s.budget.limit);
        if s.instruction_files.is_empty() {
            prop_assert!(!s.prompt.contains(&r.nonce));
        }
    }

    #[test]
    fn render_of_split_fuzz_bytes_keeps_its_invariants(
        data in prop::collection::vec(
            prop_oneof![4 => fragment(), 1 => Just(vec![harness::PART_SEPARATOR])],
            0..24,
        ),
    ) {
        let tree = Tree::from_bytes(&data.concat());
        prop_assert_eq!(Tree::from_bytes(&tree.to_bytes()).to_bytes(), tree.to_bytes());
        let _ = check_render(&tree);
    }
}
