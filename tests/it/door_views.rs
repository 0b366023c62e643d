//! The door keeps the trace, checked on the source itself: outside
//! `src/trace/` no code records into a trace by hand (a stage asks the
//! disk through a `trace::View`, which records each answer as it is
//! given); the records that are not a view's answer (`View::note`,
//! `View::note_entry`) are exactly the derived ones ARCHITECTURE.md lists;
//! and the policy layer keeps no process-wide memo (its memos live on the
//! `policy::Memo` a loader owns).

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

/// Every source file under `src/`, by its path there, with its code
/// (comment lines left out).
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
            let code: Vec<&str> = text
                .lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .collect();
            (rel, code.join("\n"))
        })
        .collect()
}

#[test]
fn only_a_view_records_into_a_trace() {
    let mut found = Vec::new();
    for (rel, code) in sources() {
        if rel.starts_with("trace/") {
            continue;
        }
        for word in [
            "trace.push",
            ".push_entry(",
            "&mut Trace",
            "Trace::forgetting",
        ] {
            let n = code.matches(word).count();
            if n > 0 {
                found.push(format!("{rel}: {word} ×{n}"));
            }
        }
    }
    assert!(
        found.is_empty(),
        "records kept by hand outside the views:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_records_a_view_did_not_answer_are_the_listed_derived_ones() {
    // Each is said at its site: the sandbox's probes before the build (4)
    // and the nonce key's stamp (1); the trust store by its approvals or
    // its failure (2); a `SKILL.md` found absent after its folder was
    // looked at, one refused unread for its hard links, and the shared
    // entry of one read (3).
    let listed = [
        ("skills/discover.rs", 3),
        ("snapshot.rs", 5),
        ("trust/gate.rs", 2),
    ];
    let mut counted: Vec<(String, usize)> = sources()
        .into_iter()
        .filter(|(rel, _)| !rel.starts_with("trace/"))
        .map(|(rel, code)| {
            let n = code.matches("view.note(").count() + code.matches("view.note_entry(").count();
            (rel, n)
        })
        .filter(|(_, n)| *n > 0)
        .collect();
    counted.sort();
    let listed: Vec<(String, usize)> = listed.iter().map(|(f, n)| (f.to_string(), *n)).collect();
    assert_eq!(counted, listed);
}

#[test]
fn the_policy_layer_keeps_no_statics() {
    let mut found = Vec::new();
    for (rel, code) in sources() {
        if !rel.starts_with("policy/") {
            continue;
        }
        for line in code.lines() {
            let t = line.trim_start();
            if t.starts_with("static ") || t.contains(" static ") && !t.contains("'static") {
                found.push(format!("{rel}: {t}"));
            }
        }
    }
    assert!(
        found.is_empty(),
        "statics in src/policy:\n{}",
        found.join("\n")
    );
}
