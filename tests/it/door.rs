//! The one door to the disk, checked on the source itself: outside
//! `src/sandbox/`, no file names `std::fs`, ambient authority or a cap-std
//! handle, and only the sandbox's own files allow the clippy rules of
//! `clippy.toml` (which `.ci/door` proves are in force).

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    #[allow(
        clippy::disallowed_methods,
        reason = "the test lists the crate's own sources"
    )]
    let entries = std::fs::read_dir(dir).unwrap();
    for entry in entries {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        } else {
            #[allow(clippy::disallowed_methods, reason = "as above")]
            let is_dir = path.is_dir();
            if is_dir {
                rust_files(&path, out);
            }
        }
    }
}

fn sources() -> Vec<(String, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let rel = p
                .strip_prefix(&src)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            #[allow(clippy::disallowed_methods, reason = "as above")]
            let text = std::fs::read_to_string(&p).unwrap();
            // Code only: doc examples may build fixture trees.
            let code: Vec<&str> = text
                .lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .collect();
            (rel, code.join("\n"))
        })
        .collect()
}

/// Words that reach the disk (or hand out the power to) without the sandbox.
const FORBIDDEN: &[&str] = &[
    "std::fs",
    "use std::fs",
    "ambient_authority",
    "open_ambient",
    "cap_std::fs::Dir",
    "fs::metadata",
    "symlink_metadata",
    "read_dir(",
    "canonicalize(",
    "rustix::fs",
    "fs::statx",
    "fs::openat",
];

#[test]
fn only_the_sandbox_touches_the_disk() {
    let files = sources();
    assert!(files.len() > 20, "the walk found the sources");
    let mut offences = Vec::new();
    for (rel, text) in &files {
        if rel.starts_with("sandbox/") {
            continue;
        }
        for word in FORBIDDEN {
            if text.contains(word) {
                offences.push(format!("src/{rel} names `{word}`"));
            }
        }
        if text.contains("clippy::disallowed_") {
            offences.push(format!("src/{rel} allows a disk-access lint"));
        }
    }
    assert!(
        offences.is_empty(),
        "outside src/sandbox/:\n{}",
        offences.join("\n")
    );
}

#[test]
fn inside_the_sandbox_only_the_named_files_allow_disk_access() {
    // The list the sandbox's own doc gives: the paragraph that says which
    // files carry an `#[allow]`, every `name.rs` it names.
    #[allow(
        clippy::disallowed_methods,
        reason = "the test reads the sandbox's doc"
    )]
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/sandbox/mod.rs"))
            .unwrap();
    let paragraph: String = doc
        .lines()
        .skip_while(|l| !l.contains("Clippy enforces the door"))
        .take_while(|l| l.trim() != "//!")
        .collect::<Vec<_>>()
        .join(" ");
    let named: std::collections::BTreeSet<String> = paragraph
        .split('`')
        .filter(|w| w.ends_with(".rs") && !w.contains('/'))
        .map(|w| format!("sandbox/{w}"))
        .collect();
    assert!(
        !named.is_empty(),
        "src/sandbox/mod.rs names the files: {paragraph}"
    );
    let mut allowing = std::collections::BTreeSet::new();
    for (rel, text) in sources() {
        if text.contains("allow(\n    clippy::disallowed_")
            || text.contains("allow(clippy::disallowed_")
            || text.contains("clippy::disallowed_methods,")
            || text.contains("clippy::disallowed_types,")
        {
            allowing.insert(rel);
        }
    }
    assert_eq!(
        allowing, named,
        "the files that allow a disk-access lint are the ones src/sandbox/mod.rs names"
    );
}

#[test]
fn the_clippy_rules_name_the_doors() {
    #[allow(clippy::disallowed_methods, reason = "the test reads clippy.toml")]
    let rules =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("clippy.toml")).unwrap();
    for path in [
        "std::fs::metadata",
        "std::fs::read_dir",
        "std::fs::File::open",
        "std::path::Path::exists",
        "cap_std::ambient_authority",
        "cap_std::fs::Dir::open_ambient_dir",
        "rustix::fs::statx",
        "rustix::fs::openat2",
        "rustix::fs::statat",
    ] {
        assert!(
            rules.contains(&format!("\"{path}\"")),
            "clippy.toml disallows {path}"
        );
    }
}
