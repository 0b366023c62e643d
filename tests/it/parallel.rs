//! Skill folders examined on several threads give exactly what the
//! sequential loop gives: the same snapshot JSON (trace-derived fingerprint,
//! warnings, rejections and their order included) and the same prompt
//! bytes, on randomized skill sources.

use std::fs;
use std::path::Path;

use lisa_context::internals::set_parallel_threshold;
use lisa_context::policy::Policy;
use proptest::prelude::*;

/// What one skill folder holds.
#[derive(Debug, Clone)]
enum Folder {
    Good(usize),
    BadYaml,
    Lenient,
    NoSkillFile,
    Impostor,
    HardLinked,
    DotName,
    BadName,
    LinkToSibling,
}

fn folder() -> impl Strategy<Value = Folder> {
    prop_oneof![
        6 => (0..1000usize).prop_map(Folder::Good),
        1 => Just(Folder::BadYaml),
        1 => Just(Folder::Lenient),
        1 => Just(Folder::NoSkillFile),
        1 => Just(Folder::Impostor),
        1 => Just(Folder::HardLinked),
        1 => Just(Folder::DotName),
        1 => Just(Folder::BadName),
        1 => Just(Folder::LinkToSibling),
    ]
}

fn write_tree(base: &Path, folders: &[Folder]) {
    let source = base.join("repo/.agents/skills");
    fs::create_dir_all(&source).unwrap();
    fs::create_dir_all(base.join("repo/.git")).unwrap();
    fs::create_dir_all(base.join("home")).unwrap();
    fs::write(base.join("repo/AGENTS.md"), "Run the tests.\n").unwrap();
    fs::write(
        base.join("shared.md"),
        "---\nname: shared\ndescription: x\n---\n",
    )
    .unwrap();
    for (i, f) in folders.iter().enumerate() {
        let name = match f {
            Folder::DotName => format!(".hidden-{i:03}"),
            Folder::BadName => format!("Bad_Name_{i:03}"),
            _ => format!("skill-{i:03}"),
        };
        let dir = source.join(&name);
        if let Folder::LinkToSibling = f
            && i > 0
        {
            std::os::unix::fs::symlink(format!("skill-{:03}", i - 1), &dir).unwrap();
            continue;
        }
        fs::create_dir(&dir).unwrap();
        let file = dir.join("SKILL.md");
        let text = match f {
            Folder::Good(n) => format!(
                "---\nname: {name}\ndescription: Does thing {n}.\nversion: 1.{n}\n---\nbody {n}\n"
            ),
            Folder::BadYaml => format!("---\nname: {name}\ndescription: [unclosed\n---\n"),
            Folder::Lenient => format!("---\nname: {name}\ndescription: Use when: lenient\n---\n"),
            Folder::NoSkillFile => continue,
            Folder::Impostor => "---\nname: someone-else\ndescription: x\n---\n".to_string(),
            Folder::HardLinked => {
                fs::hard_link(base.join("shared.md"), &file).unwrap();
                continue;
            }
            _ => format!("---\nname: {name}\ndescription: plain\n---\n"),
        };
        fs::write(&file, text).unwrap();
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn parallel_examination_answers_what_the_sequential_loop_answers(
        folders in proptest::collection::vec(folder(), 0..120)
    ) {
        let tmp = tempfile::tempdir().unwrap();
        write_tree(tmp.path(), &folders);
        let policy = Policy::builtin().unwrap();
        let home = tmp.path().join("home");
        let cwd = tmp.path().join("repo");
        let snap = || {
            let s = lisa_context::build(&policy, Some(&home), &cwd, None).unwrap();
            (serde_json::to_string(&s).unwrap(), s.prompt.clone())
        };
        // The first build writes the home's nonce key; build once before
        // comparing, so both sides read the same key.
        set_parallel_threshold(usize::MAX);
        let _ = snap();
        let sequential = snap();
        set_parallel_threshold(0);
        let parallel = snap();
        set_parallel_threshold(256);
        prop_assert_eq!(&parallel.0, &sequential.0);
        prop_assert_eq!(&parallel.1, &sequential.1);
    }
}
