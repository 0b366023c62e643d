//! `instructions.glob-order = "name-locale"` against JavaScript itself:
//! names drawn at random from letters of both cases, digits, punctuation,
//! accented and composed letters, other scripts and symbols are written as
//! a `.clinerules` folder, and the order the `cline` policy reads them in
//! must be the order Node's `localeCompare` (English) gives the same names,
//! as Cline sorts its rules. Without `node` on the PATH the test says so
//! and passes.

use std::process::{Command, Stdio};

use lisa_context::Loader;

use crate::support::World;

/// What names are made of.
const PIECES: &[&str] = &[
    "a", "b", "B", "z", "Z", "e", "é", "E", "É", "e\u{301}", "ß", "ss", "æ", "ø", "å", "ä", "0",
    "1", "2", "9", "10", "-", "_", " ", "(", "~", "!", "@", "+", "=", "ı", "ǆ", "Ω", "ж", "日",
    "本", "한", "🦀", "½", "²", "ａ",
];

/// A small deterministic generator.
/// Whether the cline policy takes `a` and `b` for one rule name: they
/// share a confusable skeleton (after NFC), as written or lower-cased.
fn one_name(a: &str, b: &str) -> bool {
    use unicode_normalization::UnicodeNormalization;
    let skeleton = |n: &str| -> String {
        let nfc: String = n.trim().nfc().collect();
        unicode_security::skeleton(&nfc).collect()
    };
    let keys = |n: &str| [skeleton(n), skeleton(&n.trim().to_lowercase())];
    let (ka, kb) = (keys(a), keys(b));
    ka.iter().any(|k| kb.contains(k))
}

struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) % n as u64) as usize
    }
}

/// `names` in the order Node sorts them with `localeCompare` in English,
/// starting from the order given (its sort is stable); `None` without
/// `node`.
fn node_order(names: &[String]) -> Option<Vec<String>> {
    let script = "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{\
        const v=JSON.parse(s);v.sort((a,b)=>a.localeCompare(b,'en'));\
        process.stdout.write(JSON.stringify(v));})";
    let mut child = Command::new("node")
        .args(["-e", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .ok()?;
    let input = serde_json::to_vec(names).unwrap();
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), &input).unwrap();
    drop(child.stdin.take());
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

#[test]
fn name_locale_orders_a_folder_as_javascript_localecompare_does() {
    for seed in [1u64, 2, 3] {
        let w = World::new();
        let mut rng = Lcg(seed);
        let mut names: Vec<String> = Vec::new();
        while names.len() < 60 {
            let len = 1 + rng.below(4);
            let name: String = (0..len).map(|_| PIECES[rng.below(PIECES.len())]).collect();
            // A leading space or dot is left out (a shell would quote it;
            // a glob's `*` may not take a leading dot), and so is a name
            // one with one drawn before: equal once trimmed and
            // lower-cased (as Cline compares them), or looking alike (one
            // confusable skeleton, UTS #39, as or without case): the
            // policy keeps one rule per such name.
            if name.starts_with([' ', '.']) || names.iter().any(|n| one_name(n, &name)) {
                continue;
            }
            names.push(name);
        }
        for name in &names {
            w.write(
                &format!("repo/.clinerules/{name}.md"),
                &format!("rule {name}\n"),
            );
        }
        // Node starts from the order ours starts from (paths, as bytes),
        // so names equal to the collation stay in the same order on both
        // sides.
        let mut by_bytes = names.clone();
        by_bytes.sort();
        let Some(expected) = node_order(&by_bytes) else {
            eprintln!("SKIPPED: no node on the PATH to compare with");
            return;
        };
        let loader = Loader::builder()
            .home(&w.home)
            .home_policy(false)
            .shipped_policy("cline")
            .build()
            .unwrap();
        let s = loader.snapshot(&w.repo).unwrap();
        let got: Vec<String> = s
            .instruction_files
            .iter()
            .map(|b| {
                let name = b.path.file_stem().unwrap().to_string_lossy();
                name.into_owned()
            })
            .collect();
        assert_eq!(got, expected, "seed {seed}");
    }
}
