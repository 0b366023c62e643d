//! The conformance corpus (`tests/compat/corpus/`) is derived from the
//! recordings by `build.mjs`; these tests keep it in step with them (a
//! fixture, a recorded answer or a recorded harness case changed without
//! rebuilding the corpus fails here) and hold every case and answer to the
//! corpus's own JSON Schemas.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn compat() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/compat")
}

fn json(p: &Path) -> Value {
    let text = fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// `dir`'s `.json` files by name, sorted.
fn files(dir: &Path) -> BTreeMap<String, PathBuf> {
    fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), p))
        .collect()
}

fn validator(name: &str) -> jsonschema::Validator {
    let schema = json(&compat().join("corpus/schema").join(name));
    jsonschema::validator_for(&schema).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn valid(v: &jsonschema::Validator, what: &Path, instance: &Value) {
    let errors: Vec<String> = v
        .iter_errors(instance)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{}: {}",
        what.display(),
        errors.join("\n")
    );
}

#[test]
fn every_fixture_and_recorded_answer_is_in_the_corpus_as_it_is() {
    let corpus = compat().join("corpus");
    let cases = files(&corpus.join("cases"));
    for (name, path) in files(&compat().join("fixtures")) {
        let mut want = json(&path);
        let obj = want.as_object_mut().unwrap();
        obj.remove("peers");
        obj.insert(
            "source".into(),
            Value::String(format!("tests/compat/fixtures/{name}")),
        );
        let got = cases.get(&name).unwrap_or_else(|| {
            panic!("fixture {name} is not in the corpus: node tests/compat/corpus/build.mjs")
        });
        assert_eq!(
            json(got),
            want,
            "corpus/cases/{name} is not fixtures/{name}: node tests/compat/corpus/build.mjs"
        );
    }
    for peer in fs::read_dir(compat().join("expected")).unwrap() {
        let peer = peer.unwrap().path();
        let pname = peer.file_name().unwrap().to_string_lossy().into_owned();
        for (name, path) in files(&peer) {
            let got = corpus.join("answers").join(&pname).join(&name);
            assert_eq!(
                fs::read(&got).ok(),
                Some(fs::read(&path).unwrap()),
                "corpus/answers/{pname}/{name} is not expected/{pname}/{name}: node tests/compat/corpus/build.mjs"
            );
        }
    }
}

#[test]
fn every_corpus_case_and_answer_matches_its_schema() {
    let corpus = compat().join("corpus");
    let case_v = validator("case.schema.json");
    let answer_v = validator("answer.schema.json");
    let cases = files(&corpus.join("cases"));
    assert!(cases.len() >= 100, "only {} cases", cases.len());
    for (name, path) in &cases {
        let c = json(path);
        valid(&case_v, path, &c);
        assert_eq!(
            c["name"].as_str().map(|n| format!("{n}.json")).as_deref(),
            Some(name.as_str()),
            "{}: its name is its file's",
            path.display()
        );
    }
    let mut answers = 0;
    for peer in fs::read_dir(corpus.join("answers")).unwrap() {
        let peer = peer.unwrap().path();
        for (name, path) in files(&peer) {
            answers += 1;
            let a = json(&path);
            valid(&answer_v, &path, &a);
            assert!(
                cases.contains_key(&name),
                "{}: an answer for no case",
                path.display()
            );
            assert_eq!(
                a["fixture"]
                    .as_str()
                    .map(|n| format!("{n}.json"))
                    .as_deref(),
                Some(name.as_str()),
                "{}",
                path.display()
            );
        }
    }
    assert!(answers >= cases.len(), "{answers} answers");
}

/// The whole derivation (harness cases too), where Node is installed.
#[test]
fn the_corpus_is_what_its_build_script_derives() {
    let script = compat().join("corpus/build.mjs");
    let Ok(out) = Command::new("node").arg(&script).arg("--check").output() else {
        eprintln!("no node: the harness-case part of the corpus is not checked");
        return;
    };
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
