//! The integration tests, in one binary: one module per former
//! `tests/*.rs` crate, so the library and the dependency tree are linked
//! once, not once per file (as jj's `lib/tests/runner.rs` does). A file in
//! `tests/it/` that is not declared here would silently never run:
//! `every_test_file_is_a_module` fails then.
//!
//! `cargo test --locked --test it` runs them all; `cargo test --locked
//! --test it chain::` one former crate's tests.
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "tests build their fixture trees on the real disk, read the checkout and /proc"
)]

// The shared helpers.
mod support;
mod validate;

// The fuzz targets' entry points and invariants (also the proptest
// harnesses' and the regression tests').
#[path = "../../fuzz/fuzz_targets/harness.rs"]
mod harness;

mod access;
mod access_budget;
mod adversarial;
mod adversarial_ancestors;
mod adversarial_bounds;
mod adversarial_homes;
mod adversarial_output;
mod adversarial_rules;
mod adversarial_serve;
mod adversarial_state;
mod adversarial_state_owner;
mod adversarial_store;
mod adversarial_vcs;
mod appear;
mod bootstrap;
mod cache_bytes;
mod chain;
mod char_caps;
mod cli;
mod cli_word;
mod compat;
mod completion;
mod corpus;
mod cut_notes;
mod dedup_partial;
mod description_from_body;
mod descriptors;
mod docs_source;
mod door;
mod door_views;
mod duplicate_keys;
mod fingerprint_rules;
mod frontmatter;
mod fuzz_regressions;
mod glob_order;
mod group;
mod harnesses;
mod hidden_text;
mod imports;
mod load;
mod loader;
mod loader_model;
mod look_alike_names;
mod mcp;
mod memo;
mod parallel;
mod peer_rules;
mod policy_compat;
mod policy_constraints;
mod policy_diagnostics;
mod policy_language;
mod policy_reload;
mod prompt_share;
mod proptest_entry_points;
mod races;
mod read_bounds;
mod readme;
mod render_guards;
mod rule_show;
mod rules;
#[cfg(feature = "schema")]
mod sarif;
mod schema;
mod serve;
mod serve_homes;
mod skills;
mod soak;
mod state_env;
mod survey_alone;
mod survey_docs;
mod survey_exit;
mod survey_gate;
mod survey_places;
mod survey_scope;
mod trust;
mod trust_folder;
mod unmarked_levels;

/// Every `.rs` file in `tests/it/` (but this one) is declared above as a
/// module, and every module declared here has its file: a test file
/// forgotten here would compile into nothing and run no test.
#[test]
fn every_test_file_is_a_module() {
    use std::collections::BTreeSet;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it");
    let files: BTreeSet<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .filter(|stem| stem != "main")
        .collect();
    let declared: BTreeSet<String> = include_str!("main.rs")
        .lines()
        .filter_map(|l| l.strip_prefix("mod ")?.strip_suffix(';'))
        .map(str::to_string)
        .filter(|m| m != "harness")
        .collect();
    let missing: Vec<&String> = files.difference(&declared).collect();
    let stale: Vec<&String> = declared.difference(&files).collect();
    assert!(
        missing.is_empty(),
        "files in tests/it/ that main.rs does not declare (add `mod NAME;` to tests/it/main.rs): {missing:?}"
    );
    assert!(
        stale.is_empty(),
        "modules in tests/it/main.rs without a file: {stale:?}"
    );
}
