//! The SKILL.md frontmatter parser, from the outside.

use std::collections::BTreeMap;

use lisa_context::internals::{frontmatter_end, parse_frontmatter as parse};
use lisa_context::snapshot::{Frontmatter, FrontmatterError};
use serde_json::json;

/// Parses text that is expected to be good.
fn ok(text: &str) -> Frontmatter {
    match parse(text) {
        Ok(fm) => fm,
        Err(err) => panic!("expected frontmatter, got {err:?} for {text:?}"),
    }
}

/// Parses text that is expected to be refused.
fn err(text: &str) -> FrontmatterError {
    match parse(text) {
        Ok(fm) => panic!("expected an error, got {fm:?} for {text:?}"),
        Err(err) => err,
    }
}

/// The message inside a `Yaml` error.
fn yaml_message(error: FrontmatterError) -> String {
    match error {
        FrontmatterError::Yaml(message) => message,
        other => panic!("expected FrontmatterError::Yaml, got {other:?}"),
    }
}

#[test]
fn simple() {
    let fm = ok("---\nname: pdf-tools\ndescription: Fill in PDF forms.\n---\n# Body\n");
    let mut want = Frontmatter::default();
    want.name = "pdf-tools".into();
    want.description = "Fill in PDF forms.".into();
    assert_eq!(fm, want);
    assert!(want.metadata.is_empty() && want.extra.is_empty() && want.tags.is_empty());
}

#[test]
fn all_known_fields() {
    let fm = ok(concat!(
        "---\n",
        "name: pdf-tools\n",
        "description: Fill in PDF forms.\n",
        "license: Apache-2.0\n",
        "compatibility: Needs python3 and network access\n",
        "version: 2.1.0\n",
        "---\n",
    ));
    assert_eq!(fm.license.as_deref(), Some("Apache-2.0"));
    assert_eq!(
        fm.compatibility.as_deref(),
        Some("Needs python3 and network access")
    );
    assert_eq!(fm.version.as_deref(), Some("2.1.0"));
}

#[test]
fn folded_description() {
    let fm =
        ok("---\nname: a\ndescription: >\n  Folds these\n  two lines.\n\n  New paragraph.\n---\n");
    assert_eq!(fm.description, "Folds these two lines.\nNew paragraph.");
}

#[test]
fn literal_description() {
    let fm =
        ok("---\nname: a\ndescription: |\n  Line one.\n    Indented: yes.\n  Line three.\n---\n");
    assert_eq!(fm.description, "Line one.\n  Indented: yes.\nLine three.");
}

#[test]
fn literal_description_keep_chomping_is_trimmed_at_the_end_only() {
    let fm = ok("---\nname: a\ndescription: |+\n  One.\n\n  Two.\n\n\n---\n");
    assert_eq!(fm.description, "One.\n\nTwo.");
}

#[test]
fn double_quoted_description_with_colons() {
    let fm = ok("---\nname: a\ndescription: \"Use when: the user asks: \\\"merge\\\"\"\n---\n");
    assert_eq!(fm.description, "Use when: the user asks: \"merge\"");
}

#[test]
fn single_quoted_description_with_colons() {
    let fm = ok("---\nname: a\ndescription: 'Use when: it''s a PDF: any'\n---\n");
    assert_eq!(fm.description, "Use when: it's a PDF: any");
}

#[test]
fn plain_description_with_a_colon_not_followed_by_space() {
    let fm = ok("---\nname: a\ndescription: see http://x\n---\n");
    assert_eq!(fm.description, "see http://x");

    let fm = ok("---\nname: a\ndescription: ratio 3:4, time 12:30\n---\n");
    assert_eq!(fm.description, "ratio 3:4, time 12:30");
}

#[test]
fn description_and_name_are_not_trimmed() {
    let fm = ok("---\nname: \" a \"\ndescription: \"  padded  \"\n---\n");
    assert_eq!(fm.name, " a ");
    assert_eq!(fm.description, "  padded  ");
}

#[test]
fn crlf_line_endings() {
    let text = "---\r\nname: pdf-tools\r\ndescription: |\r\n  One.\r\n  Two.\r\ntags: [a, b]\r\n---\r\nBody\r\n";
    let fm = ok(text);
    assert_eq!(fm.name, "pdf-tools");
    assert_eq!(fm.description, "One.\nTwo.");
    assert_eq!(fm.tags, ["a", "b"]);
    let end = text.find("Body").unwrap();
    assert_eq!(frontmatter_end(text.as_bytes()), Some(end));
}

#[test]
fn bom_before_the_opening_fence() {
    let text = "\u{feff}---\nname: a\ndescription: b\n---\n";
    let fm = ok(text);
    assert_eq!(fm.name, "a");
    assert_eq!(fm.description, "b");
    assert_eq!(frontmatter_end(text.as_bytes()), Some(text.len()));
}

#[test]
fn fences_may_have_trailing_blanks() {
    let text = "---  \nname: a\ndescription: b\n--- \t\r\nbody";
    assert_eq!(ok(text).name, "a");
    assert_eq!(frontmatter_end(text.as_bytes()), Some(text.len() - 4));
}

#[test]
fn closing_fence_on_the_last_line_without_newline() {
    let fm = ok("---\nname: a\ndescription: b\n---");
    assert_eq!(fm.description, "b");
}

#[test]
fn body_is_ignored() {
    let fm = ok("---\nname: a\ndescription: b\n---\n: not yaml [\n---\nname: other\n");
    assert_eq!(fm.name, "a");
}

#[test]
fn missing_name() {
    let e = err("---\ndescription: b\n---\n");
    assert_eq!(e, FrontmatterError::MissingName);
    assert_eq!(e.reason().as_str(), "missing-name");
}

#[test]
fn blank_or_non_string_name() {
    for text in [
        "---\nname: ''\ndescription: b\n---\n",
        "---\nname: '   '\ndescription: b\n---\n",
        "---\nname:\ndescription: b\n---\n",
        "---\nname: 42\ndescription: b\n---\n",
        "---\nname: [a]\ndescription: b\n---\n",
        "---\nname: true\ndescription: b\n---\n",
    ] {
        assert_eq!(err(text), FrontmatterError::MissingName, "{text:?}");
    }
}

#[test]
fn empty_description() {
    let e = err("---\nname: a\ndescription: \"\"\n---\n");
    assert_eq!(e, FrontmatterError::MissingDescription);
    assert_eq!(e.reason().as_str(), "missing-description");
    assert_eq!(
        err("---\nname: a\ndescription:\n---\n"),
        FrontmatterError::MissingDescription
    );
    assert_eq!(
        err("---\nname: a\n---\n"),
        FrontmatterError::MissingDescription
    );
}

#[test]
fn description_only_whitespace() {
    assert_eq!(
        err("---\nname: a\ndescription: \"  \\t \\n \"\n---\n"),
        FrontmatterError::MissingDescription
    );
    assert_eq!(
        err("---\nname: a\ndescription: |\n\n\n---\n"),
        FrontmatterError::MissingDescription
    );
}

#[test]
fn non_string_description() {
    assert_eq!(
        err("---\nname: a\ndescription: 3\n---\n"),
        FrontmatterError::MissingDescription
    );
    assert_eq!(
        err("---\nname: a\ndescription: {a: b}\n---\n"),
        FrontmatterError::MissingDescription
    );
}

#[test]
fn not_a_mapping() {
    let e = err("---\n- name\n- description\n---\n");
    assert_eq!(e, FrontmatterError::NotAMapping);
    assert_eq!(e.reason().as_str(), "bad-frontmatter");
    assert_eq!(err("---\njust text\n---\n"), FrontmatterError::NotAMapping);
}

#[test]
fn empty_frontmatter_has_no_name() {
    assert_eq!(err("---\n---\n"), FrontmatterError::MissingName);
    assert_eq!(
        err("---\n# a comment\n---\n"),
        FrontmatterError::MissingName
    );
}

#[test]
fn no_opening_fence() {
    for text in [
        "name: a\ndescription: b\n---\n",
        "",
        "# Title\n---\nname: a\n---\n",
        "\n---\nname: a\ndescription: b\n---\n",
        "----\nname: a\ndescription: b\n---\n",
        " ---\nname: a\ndescription: b\n---\n",
    ] {
        let e = err(text);
        assert_eq!(e, FrontmatterError::NoOpeningFence, "{text:?}");
        assert_eq!(e.reason().as_str(), "bad-frontmatter");
    }
}

#[test]
fn no_closing_fence() {
    for text in [
        "---\nname: a\ndescription: b\n",
        "---\n",
        "---",
        "---\nname: a\ndescription: b\n----\n",
        "---\nname: a\ndescription: b\n  ---\n",
    ] {
        let e = err(text);
        assert_eq!(e, FrontmatterError::NoClosingFence, "{text:?}");
        assert_eq!(e.reason().as_str(), "bad-frontmatter");
    }
}

#[test]
fn alias_bomb_is_refused() {
    // The classic "billion laughs": nine levels, each nine times the last.
    let mut text = String::from("---\nname: a\ndescription: b\n");
    text.push_str("l0: &l0 \"lol\"\n");
    for level in 1..=9 {
        let refs = vec![format!("*l{}", level - 1); 9].join(", ");
        text.push_str(&format!("l{level}: &l{level} [{refs}]\n"));
    }
    text.push_str("---\n");
    let e = err(&text);
    assert_eq!(e.reason().as_str(), "bad-frontmatter");
    let message = yaml_message(e);
    assert!(message.contains("budget"), "{message}");
}

#[test]
fn many_aliases_to_one_anchor_are_refused() {
    let refs = vec!["*x"; 100].join(", ");
    let text = format!("---\nname: a\ndescription: b\nx: &x 1\ny: [{refs}]\n---\n");
    let message = yaml_message(err(&text));
    assert!(message.contains("Aliases"), "{message}");
}

#[test]
fn a_few_aliases_are_fine() {
    let fm = ok("---\nname: &n a\ndescription: b\ntags: [*n, c]\n---\n");
    assert_eq!(fm.tags, ["a", "c"]);
}

#[test]
fn deep_flow_nesting_is_refused() {
    let text = format!(
        "---\nname: a\ndescription: b\nx: {}\n---\n",
        "[".repeat(1000)
    );
    let e = err(&text);
    assert!(matches!(e, FrontmatterError::Yaml(_)), "{e:?}");

    let closed = format!(
        "---\nname: a\ndescription: b\nx: {}{}\n---\n",
        "[".repeat(1000),
        "]".repeat(1000)
    );
    assert!(matches!(err(&closed), FrontmatterError::Yaml(_)));
}

#[test]
fn deep_block_nesting_is_refused() {
    let mut text = String::from("---\nname: a\ndescription: b\n");
    for depth in 0..100 {
        text.push_str(&" ".repeat(depth));
        text.push_str("k:\n");
    }
    text.push_str("---\n");
    let message = yaml_message(err(&text));
    assert!(message.contains("Depth"), "{message}");
}

#[test]
fn moderate_nesting_is_fine() {
    let text = format!(
        "---\nname: a\ndescription: b\nx: {}1{}\n---\n",
        "[".repeat(20),
        "]".repeat(20)
    );
    let fm = ok(&text);
    let mut expected = json!(1);
    for _ in 0..20 {
        expected = json!([expected]);
    }
    assert_eq!(fm.extra["x"], expected);
}

#[test]
fn huge_scalar_is_refused() {
    let text = format!(
        "---\nname: a\ndescription: {}\n---\n",
        "x".repeat(300 * 1024)
    );
    let message = yaml_message(err(&text));
    assert!(message.contains("ScalarBytes"), "{message}");
}

#[test]
fn second_document_is_refused() {
    // `...` ends a YAML document; anything after it is a second one.
    let message = yaml_message(err("---\nname: a\ndescription: b\n...\nname: c\n---\n"));
    assert!(message.contains("Documents"), "{message}");
    // A lone `...` is fine.
    assert_eq!(ok("---\nname: a\ndescription: b\n...\n---\n").name, "a");
}

#[test]
fn duplicate_keys_are_refused() {
    let message = yaml_message(err("---\nname: a\ndescription: b\nname: c\n---\n"));
    assert!(message.contains("duplicate"), "{message}");
}

#[test]
fn yaml_errors_count_lines_from_the_top_of_the_file() {
    let message = yaml_message(err("---\nname: a\ndescription: b\nname: c\n---\n"));
    assert!(message.contains("line 4"), "{message}");
}

#[test]
fn invalid_yaml() {
    let e = err("---\nname: a\ndescription: [unclosed\n---\n");
    assert!(matches!(e, FrontmatterError::Yaml(_)), "{e:?}");
    assert_eq!(e.reason().as_str(), "bad-frontmatter");
    let e = err("---\nname: a\n  description: b\n---\n");
    assert!(matches!(e, FrontmatterError::Yaml(_)), "{e:?}");
}

#[test]
fn metadata_map() {
    let fm = ok(concat!(
        "---\n",
        "name: a\n",
        "description: b\n",
        "metadata:\n",
        "  author: example-org\n",
        "  version: \"1.0\"\n",
        "  revision: 1.10\n",
        "  internal: true\n",
        "---\n",
    ));
    let expected: BTreeMap<String, String> = [
        ("author", "example-org"),
        ("internal", "true"),
        ("revision", "1.10"),
        ("version", "1.0"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    assert_eq!(fm.metadata, expected);
    assert!(fm.extra.is_empty());
}

#[test]
fn metadata_with_nested_values_goes_to_extra() {
    let fm = ok("---\nname: a\ndescription: b\nmetadata:\n  owners: [x, y]\n---\n");
    assert!(fm.metadata.is_empty());
    assert_eq!(fm.extra["metadata"], json!({"owners": ["x", "y"]}));
}

#[test]
fn allowed_tools_as_string() {
    let fm = ok("---\nname: a\ndescription: b\nallowed-tools: Bash(git:*) Read  Write\n---\n");
    assert_eq!(fm.allowed_tools.as_deref(), Some("Bash(git:*) Read  Write"));
}

#[test]
fn allowed_tools_as_list() {
    let fm = ok(
        "---\nname: a\ndescription: b\nallowed-tools:\n  - Bash(git:*)\n  - Read\n  - Write\n---\n",
    );
    assert_eq!(fm.allowed_tools.as_deref(), Some("Bash(git:*) Read Write"));

    let fm = ok("---\nname: a\ndescription: b\nallowed-tools: [Read, Grep]\n---\n");
    assert_eq!(fm.allowed_tools.as_deref(), Some("Read Grep"));

    let fm = ok("---\nname: a\ndescription: b\nallowed-tools: []\n---\n");
    assert_eq!(fm.allowed_tools.as_deref(), Some(""));
}

#[test]
fn allowed_tools_with_a_nested_list_goes_to_extra() {
    let fm = ok("---\nname: a\ndescription: b\nallowed-tools: [[Read]]\n---\n");
    assert_eq!(fm.allowed_tools, None);
    assert_eq!(fm.extra["allowed-tools"], json!([["Read"]]));
}

#[test]
fn version_as_number() {
    let version = |v: &str| {
        ok(&format!(
            "---\nname: a\ndescription: b\nversion: {v}\n---\n"
        ))
        .version
    };
    assert_eq!(version("2").as_deref(), Some("2"));
    assert_eq!(version("1.0").as_deref(), Some("1.0"));
    assert_eq!(version("1.10").as_deref(), Some("1.10"));
    assert_eq!(version("0x1F").as_deref(), Some("0x1F"));
    assert_eq!(version("1.2.3").as_deref(), Some("1.2.3"));
    assert_eq!(version("\"1.10\"").as_deref(), Some("1.10"));
    assert_eq!(version("'007'").as_deref(), Some("007"));
    assert_eq!(version("").as_deref(), None);
    assert_eq!(version("~").as_deref(), None);
}

#[test]
fn version_through_an_alias() {
    let fm = ok("---\nname: a\ndescription: b\nmetadata: {v: &v 3.50}\nversion: *v\n---\n");
    assert_eq!(fm.version.as_deref(), Some("3.50"));
    assert_eq!(fm.metadata["v"], "3.50");
}

#[test]
fn tags_list() {
    let fm = ok("---\nname: a\ndescription: b\ntags:\n  - pdf\n  - forms\n  - 2024\n---\n");
    assert_eq!(fm.tags, ["pdf", "forms", "2024"]);

    let fm = ok("---\nname: a\ndescription: b\ntags: [x, 'y: z']\n---\n");
    assert_eq!(fm.tags, ["x", "y: z"]);
}

#[test]
fn tags_not_a_list_goes_to_extra() {
    let fm = ok("---\nname: a\ndescription: b\ntags: pdf\n---\n");
    assert!(fm.tags.is_empty());
    assert_eq!(fm.extra["tags"], json!("pdf"));
}

#[test]
fn unknown_keys_are_kept_in_extra() {
    let fm = ok(concat!(
        "---\n",
        "name: a\n",
        "description: b\n",
        "user-invocable: false\n",
        "argument-hint: \"[file]\"\n",
        "model: null\n",
        "hooks:\n",
        "  pre: [lint, 3]\n",
        "---\n",
    ));
    assert_eq!(fm.extra.len(), 4);
    assert_eq!(fm.extra["user-invocable"], json!(false));
    assert_eq!(fm.extra["argument-hint"], json!("[file]"));
    assert_eq!(fm.extra["model"], json!(null));
    assert_eq!(fm.extra["hooks"], json!({"pre": ["lint", 3]}));
}

#[test]
fn known_key_with_a_wrong_shape_goes_to_extra() {
    let fm = ok("---\nname: a\ndescription: b\nlicense: [MIT, Apache-2.0]\n---\n");
    assert_eq!(fm.license, None);
    assert_eq!(fm.extra["license"], json!(["MIT", "Apache-2.0"]));
}

#[test]
fn null_known_keys_are_absent() {
    let fm = ok(
        "---\nname: a\ndescription: b\nlicense:\ncompatibility: ~\ntags:\nmetadata: null\n---\n",
    );
    assert_eq!(fm.license, None);
    assert_eq!(fm.compatibility, None);
    assert!(fm.tags.is_empty());
    assert!(fm.metadata.is_empty());
    assert!(fm.extra.is_empty());
}

#[test]
fn yaml_1_1_booleans_stay_strings() {
    let fm = ok("---\nname: a\ndescription: b\nlicense: no\nflag: yes\n---\n");
    assert_eq!(fm.license.as_deref(), Some("no"));
    assert_eq!(fm.extra["flag"], json!("yes"));
}

#[test]
fn name_with_a_cyrillic_look_alike_is_returned_unchanged() {
    // The `а` below is U+0430 CYRILLIC SMALL LETTER A, not ASCII `a`.
    let name = "pdf-tools-\u{0430}";
    let fm = ok(&format!("---\nname: {name}\ndescription: b\n---\n"));
    assert_eq!(fm.name, name);
    assert_ne!(fm.name, "pdf-tools-a");
}

#[test]
fn frontmatter_end_on_partial_input() {
    let text = "---\nname: a\ndescription: b\n---\n# Body\n";
    let end = text.find("# Body").unwrap();
    for cut in 0..end {
        assert_eq!(
            frontmatter_end(&text.as_bytes()[..cut]),
            None,
            "prefix of {cut} bytes"
        );
    }
    for cut in end..=text.len() {
        assert_eq!(frontmatter_end(&text.as_bytes()[..cut]), Some(end));
    }
}

#[test]
fn frontmatter_end_is_where_the_parse_stops() {
    let text = "\u{feff}---\r\nname: a\r\ndescription: é\r\n---\r\n# Body — ü\r\n";
    let end = frontmatter_end(text.as_bytes()).unwrap();
    assert_eq!(&text[end..], "# Body — ü\r\n");
    assert_eq!(parse(&text[..end]), parse(text));
}

#[test]
fn frontmatter_end_without_frontmatter() {
    assert_eq!(frontmatter_end(b""), None);
    assert_eq!(frontmatter_end(b"---"), None);
    assert_eq!(frontmatter_end(b"---\nname: a\n"), None);
    assert_eq!(frontmatter_end(b"# Title\n---\n---\n"), None);
    assert_eq!(frontmatter_end(b"---\n---\n"), Some(8));
    assert_eq!(frontmatter_end(b"---\n----\n"), None);
}

#[test]
fn frontmatter_end_on_bytes_cut_inside_a_character() {
    // A reader's chunk may end halfway through a UTF-8 sequence.
    let text = "---\nname: \u{0430}\ndescription: b\n---\nrest";
    let bytes = text.as_bytes();
    let inside = text.find('\u{0430}').unwrap() + 1;
    assert_eq!(frontmatter_end(&bytes[..inside]), None);
    assert_eq!(frontmatter_end(bytes), Some(bytes.len() - 4));
}

#[test]
fn reasons_are_stable() {
    assert_eq!(
        FrontmatterError::NoOpeningFence.reason().as_str(),
        "bad-frontmatter"
    );
    assert_eq!(
        FrontmatterError::NoClosingFence.reason().as_str(),
        "bad-frontmatter"
    );
    assert_eq!(
        FrontmatterError::Yaml("x".into()).reason().as_str(),
        "bad-frontmatter"
    );
    assert_eq!(
        FrontmatterError::NotAMapping.reason().as_str(),
        "bad-frontmatter"
    );
    assert_eq!(
        FrontmatterError::MissingName.reason().as_str(),
        "missing-name"
    );
    assert_eq!(
        FrontmatterError::MissingDescription.reason().as_str(),
        "missing-description"
    );
}

#[test]
fn serializes_to_json() {
    let fm = ok("---\nname: a\ndescription: b\nallowed-tools: [Read]\nx: 1\n---\n");
    let value = serde_json::to_value(&fm).unwrap();
    assert_eq!(value["name"], json!("a"));
    assert_eq!(value["allowedTools"], json!("Read"));
    assert_eq!(value["extra"], json!({"x": 1}));
    // Absent optional fields are left out of the JSON rather than null.
    assert!(value.get("license").is_none());
    assert!(value.get("tags").is_none());
}
