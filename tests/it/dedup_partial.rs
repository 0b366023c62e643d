//! A file read only in part (cut by `max-file-bytes`) cannot be shown equal
//! to anything: a later file holding just its prefix is kept, not folded.

use std::fs;

use lisa_context::policy::{Layer, Policy, PolicySource};

#[test]
fn a_prefix_of_a_cut_file_is_not_its_copy() {
    let home = tempfile::tempdir().unwrap();
    let repo = tempfile::tempdir().unwrap();
    fs::create_dir(repo.path().join(".git")).unwrap();
    let prefix = "x".repeat(100);
    // AGENTS.md is 300 bytes but only 100 are read; CLAUDE.md is those 100.
    fs::write(repo.path().join("AGENTS.md"), prefix.repeat(3)).unwrap();
    fs::write(repo.path().join("CLAUDE.md"), &prefix).unwrap();
    let policy = Policy::from_sources(&[
        PolicySource::builtin(),
        PolicySource::from_text(
            Layer::Home,
            "p.toml",
            "version = 1\n[instructions]\nmax-file-bytes = 100\n",
        ),
    ])
    .unwrap();
    let built = lisa_context::build(&policy, Some(home.path()), repo.path(), None).unwrap();
    let s = &built;
    assert!(s.deduped.is_empty(), "{:?}", s.deduped);
    assert_eq!(s.instruction_files.len(), 2);
    assert!(s.instruction_files[0].truncated);
    assert_eq!(s.instruction_files[0].included_bytes, 100);
    assert!(!s.instruction_files[1].truncated);
}
