//! A survey answers exactly what fresh loaders answer.
//!
//! `lisa_context::survey` builds every policy's snapshot side by side, on
//! threads. On random trees holding the files of every harness
//! (instruction files at several levels, rule folders, skills good and
//! bad, links inside and out, a FIFO), each surveyed snapshot and rule
//! reach must equal what a fresh loader of that policy alone says of the
//! same tree: whatever a survey ever shares between its builds, this
//! property is the safety net.

use std::ffi::OsString;
use std::fs;
use std::path::Path;

use lisa_context::Loader;
use proptest::prelude::*;

/// Folders of the tree, relative to the repository root; the cwd is the
/// last one.
const LEVELS: &[&str] = &["", "a", "a/b"];

/// Instruction files and rule files of the harnesses, as written at a level.
const FILES: &[&str] = &[
    "AGENTS.md",
    "CLAUDE.md",
    "GEMINI.md",
    "AGENT.md",
    ".rules",
    ".cursorrules",
    ".github/copilot-instructions.md",
    ".github/instructions/style.instructions.md",
    ".cursor/rules/style.mdc",
    ".windsurf/rules/style.md",
    ".clinerules/01-style.md",
    ".kiro/steering/style.md",
    ".continue/rules/style.md",
    ".claude/rules/style.md",
];

/// What a file holds.
static TEXTS: std::sync::LazyLock<Vec<String>> = std::sync::LazyLock::new(|| {
    let mut texts: Vec<String> = [
        "Use tabs.",
        "---\nglobs: \"**/*.rs\"\nalwaysApply: false\n---\nRust only.",
        "---\ndescription: Release steps\n---\nAsk first.",
        "---\napplyTo: \"src/**\"\n---\nSources.",
        "---\ntrigger: always_on\n---\nAlways.",
        "---\ninclusion: fileMatch\nfileMatchPattern: \"*.md\"\n---\nDocs.",
        "See @AGENTS.md and #[[file:CLAUDE.md]].",
        "",
    ]
    .map(String::from)
    .into();
    // Larger than some policies read of one file, smaller than 16 KiB.
    texts.push(long());
    // Larger than 16 KiB.
    texts
        .push("Write tests from the outside in, on real trees in temporary folders.\n".repeat(600));
    texts
});

/// About 9 KiB of one rule over and over.
fn long() -> String {
    "Keep every public item documented and every example compiling.\n".repeat(150)
}

/// Skill folders, relative to a level or to the home.
const SKILL_DIRS: &[&str] = &[".agents/skills", ".claude/skills", ".cursor/skills"];

/// What a skill folder holds.
#[derive(Debug, Clone, Copy)]
enum SkillKind {
    /// A good `SKILL.md`.
    Good,
    /// A frontmatter naming another folder.
    Impostor,
    /// No description.
    NoDescription,
    /// No `SKILL.md` at all.
    Empty,
    /// `SKILL.md` is a link to a file outside every root.
    LinkOut,
    /// `SKILL.md` is a FIFO.
    Fifo,
    /// A `SKILL.md` larger than 16 KiB, whose frontmatter ends
    /// at one line or another by the policy's fences (an indented `---`
    /// closes it for `trimmed`, not for `trailing-blanks`).
    Large,
}

#[derive(Debug, Clone)]
struct Tree {
    files: Vec<(usize, usize, usize)>,
    skills: Vec<(bool, usize, usize, usize, SkillKind)>,
    home_file: Option<usize>,
}

fn tree() -> impl Strategy<Value = Tree> {
    let kind = prop_oneof![
        4 => Just(SkillKind::Good),
        1 => Just(SkillKind::Impostor),
        1 => Just(SkillKind::NoDescription),
        1 => Just(SkillKind::Empty),
        1 => Just(SkillKind::LinkOut),
        1 => Just(SkillKind::Fifo),
        1 => Just(SkillKind::Large),
    ];
    (
        prop::collection::vec((0..LEVELS.len(), 0..FILES.len(), 0..TEXTS.len()), 0..12),
        prop::collection::vec(
            (
                any::<bool>(),
                0..LEVELS.len(),
                0..SKILL_DIRS.len(),
                0..4usize,
                kind,
            ),
            0..10,
        ),
        prop::option::of(0..TEXTS.len()),
    )
        .prop_map(|(files, skills, home_file)| Tree {
            files,
            skills,
            home_file,
        })
}

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    fs::write(path, text).expect("write");
}

fn mkfifo(path: &Path) {
    let st = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("run mkfifo");
    assert!(st.success());
}

/// Lays `t` out under `base`: the repository `r` (cwd `r/a/b`), the home
/// `h`, and a secret beside both.
fn lay_out(base: &Path, t: &Tree) {
    let repo = base.join("r");
    fs::create_dir_all(repo.join(".git")).expect("git");
    fs::create_dir_all(repo.join(LEVELS[LEVELS.len() - 1])).expect("cwd");
    fs::create_dir_all(base.join("h")).expect("home");
    write(&repo.join("src/main.rs"), "fn main() {}");
    write(
        &base.join("secret.md"),
        "---\nname: s\ndescription: stolen\n---\n",
    );
    for &(level, file, text) in &t.files {
        let path = repo.join(LEVELS[level]).join(FILES[file]);
        // Files the tree already put there as folders stay folders.
        if !path.is_dir() {
            write(&path, &TEXTS[text]);
        }
    }
    if let Some(text) = t.home_file {
        write(&base.join("h/AGENTS.md"), &TEXTS[text]);
    }
    for (i, &(home, level, dir, name, kind)) in t.skills.iter().enumerate() {
        let source = if home {
            base.join("h").join(SKILL_DIRS[dir])
        } else {
            repo.join(LEVELS[level]).join(SKILL_DIRS[dir])
        };
        let folder = source.join(format!("skill-{name}"));
        if folder.exists() {
            continue;
        }
        fs::create_dir_all(&folder).expect("skill folder");
        let file = folder.join("SKILL.md");
        let name = format!("skill-{name}");
        match kind {
            SkillKind::Good => write(
                &file,
                &format!("---\nname: {name}\ndescription: does thing {i}\n---\nBody."),
            ),
            SkillKind::Impostor => write(&file, "---\nname: other\ndescription: not me\n---\n"),
            SkillKind::NoDescription => write(&file, &format!("---\nname: {name}\n---\n")),
            SkillKind::Empty => {}
            SkillKind::LinkOut => {
                std::os::unix::fs::symlink(base.join("secret.md"), &file).expect("link")
            }
            SkillKind::Fifo => mkfifo(&file),
            SkillKind::Large => write(
                &file,
                &format!(
                    "---\nname: {name}\ndescription: large {i}\n  ---\nmore: x\n---\n{}",
                    "Step.\n".repeat(4_000)
                ),
            ),
        }
    }
}

/// A loader of the shipped policy `name` whose home and `$HOME` are `home`.
fn builder(name: &str, home: &Path) -> lisa_context::LoaderBuilder {
    let env_home: OsString = home.as_os_str().to_owned();
    Loader::builder()
        .shipped_policy(name)
        .home(home)
        .home_policy(false)
        .env(move |k| (k == "HOME").then(|| env_home.clone()))
}

fn json(v: &impl serde::Serialize) -> serde_json::Value {
    serde_json::to_value(v).expect("serialize")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn a_survey_answers_what_each_policy_alone_answers(t in tree()) {
        let tmp = tempfile::tempdir().expect("tempdir");
        lay_out(tmp.path(), &t);
        let cwd = tmp.path().join("r").join(LEVELS[LEVELS.len() - 1]);
        let mismatch = survey_against_each_alone(&tmp.path().join("h"), &cwd).err();
        prop_assert_eq!(mismatch, None);
    }
}

/// Surveys `cwd` under every shipped policy and checks each policy's
/// snapshot and rule reach against a fresh loader of that policy alone;
/// the survey, or the first policy that answered otherwise.
fn survey_against_each_alone(
    home: &Path,
    cwd: &Path,
) -> Result<Vec<lisa_context::Surveyed>, String> {
    let names = lisa_context::policy::SHIPPED_NAMES;
    let surveyed = lisa_context::survey(
        names.iter().map(|n| (n.to_string(), builder(n, home))),
        cwd,
        None,
    )
    .expect("survey");
    assert_eq!(surveyed.len(), names.len());
    for s in &surveyed {
        let alone = builder(&s.policy, home).build().expect("loader");
        let snapshot = alone.snapshot(cwd).expect("snapshot");
        let reach = alone.rule_reach(cwd, None).expect("reach");
        if json(&*s.snapshot) != json(&*snapshot) || json(&s.reach) != json(&reach) {
            return Err(format!(
                "policy {}: surveyed {} / reach {}, alone {} / reach {}",
                s.policy,
                json(&*s.snapshot),
                json(&s.reach),
                json(&*snapshot),
                json(&reach)
            ));
        }
    }
    // The survey made from the policies' parts (rules unmatched grouped as
    // every problem is) is the one made a policy's reach at a time.
    let snapshots: Vec<(String, std::sync::Arc<lisa_context::Snapshot>)> = surveyed
        .iter()
        .map(|s| (s.policy.clone(), std::sync::Arc::clone(&s.snapshot)))
        .collect();
    let mut noted = lisa_context::protocol::Survey::of(cwd, &snapshots);
    for s in &surveyed {
        noted.note_reach(&s.policy, &s.reach);
    }
    let grouped = lisa_context::protocol::Survey::of_surveyed(cwd, &surveyed);
    if json(&grouped) != json(&noted) {
        return Err(format!(
            "survey from parts {}, a reach at a time {}",
            json(&grouped),
            json(&noted)
        ));
    }
    // What the command shows, made by builds that keep no trace and sum
    // each snapshot up at once, is the survey of the full snapshots.
    let run = lisa_context::protocol::Survey::run(
        names.iter().map(|n| (n.to_string(), builder(n, home))),
        cwd,
        None,
    )
    .expect("survey run");
    if json(&run) != json(&grouped) {
        return Err(format!(
            "survey as the command makes it {}, of the full snapshots {}",
            json(&run),
            json(&grouped)
        ));
    }
    Ok(surveyed)
}

/// The tree of every kind at once: the property's cases are random, this
/// one is sure to hold a skill of each kind under every source, and files
/// of every harness at every level.
#[test]
fn a_survey_of_every_kind_at_once_answers_what_each_policy_alone_answers() {
    let kinds = [
        SkillKind::Good,
        SkillKind::Impostor,
        SkillKind::NoDescription,
        SkillKind::Empty,
        SkillKind::LinkOut,
        SkillKind::Fifo,
        SkillKind::Large,
    ];
    let mut t = Tree {
        files: Vec::new(),
        skills: Vec::new(),
        home_file: Some(0),
    };
    for level in 0..LEVELS.len() {
        for file in 0..FILES.len() {
            t.files.push((level, file, (level + file) % TEXTS.len()));
        }
        for dir in 0..SKILL_DIRS.len() {
            for (name, kind) in kinds.iter().enumerate() {
                t.skills.push((false, level, dir, name, *kind));
                t.skills.push((true, 0, dir, name, *kind));
            }
        }
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    lay_out(tmp.path(), &t);
    let surveyed = survey_against_each_alone(&tmp.path().join("h"), &tmp.path().join("r/a/b"))
        .unwrap_or_else(|e| panic!("{e}"));
    let loaded: usize = surveyed
        .iter()
        .map(|s| s.snapshot.skills.len() + s.snapshot.rejected_skills.len())
        .sum();
    // The tree is one every policy finds much in.
    assert!(loaded > 100, "only {loaded} skills met");
}

/// A temporary folder holding an empty home `h` and a repository `r`.
fn home_and_repo() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (home, repo) = (tmp.path().join("h"), tmp.path().join("r"));
    fs::create_dir_all(repo.join(".git")).expect("git");
    fs::create_dir_all(&home).expect("home");
    (tmp, home, repo)
}

/// The lisa policy with `overrides` laid over it as the home's layer.
fn lisa_with(overrides: &str) -> lisa_context::policy::Policy {
    use lisa_context::policy::{Layer, Policy, PolicySource};
    Policy::from_sources(&[
        PolicySource::builtin(),
        PolicySource::from_text(Layer::Home, "<test>", overrides),
    ])
    .expect("policy")
}

/// Surveys `repo` under lisa with each of `variants` laid over it (each
/// a policy text without its `version` line), in the order given and then
/// reversed, so that each is built both before and after the others. Each
/// surveyed snapshot must equal what the same policy alone answers; the
/// set of `answer`s of the snapshots is returned.
fn each_variant_both_ways(
    home: &Path,
    repo: &Path,
    variants: &[String],
    answer: &dyn Fn(&lisa_context::Snapshot) -> String,
) -> std::collections::BTreeSet<String> {
    let texts: Vec<String> = variants
        .iter()
        .map(|v| format!("version = 1\n{v}"))
        .collect();
    let builder = |text: &str| {
        Loader::builder()
            .policy(lisa_with(text))
            .home(home)
            .home_policy(false)
    };
    let mut orders = vec![texts.clone()];
    orders.push(texts.iter().rev().cloned().collect());
    let mut answers = std::collections::BTreeSet::new();
    for order in orders {
        let builders = order
            .iter()
            .enumerate()
            .map(|(i, text)| (format!("p{i}"), builder(text)));
        let surveyed = lisa_context::survey(builders, repo, None).expect("survey");
        for (s, text) in surveyed.iter().zip(&order) {
            let alone = builder(text).build().expect("loader");
            let snapshot = alone.snapshot(repo).expect("snapshot");
            assert_eq!(json(&*s.snapshot), json(&*snapshot), "{text}");
            answers.insert(answer(&s.snapshot));
        }
    }
    answers
}

/// Policies that read the same folders under other bounds each answer
/// what they answer alone: a `SKILL.md` between two policies' size caps,
/// a listing cut short by one policy's entry bound, and an instruction
/// file one policy cuts, in either order.
#[test]
fn a_survey_under_other_caps_and_bounds_answers_what_each_alone_answers() {
    let (_tmp, home, repo) = home_and_repo();
    let body = "Steps.\n".repeat(1_000);
    // More folders than the small policy lists (16 times its bound of 5):
    // its listing stops short, in the file system's order.
    for i in 0..100 {
        let name = format!("skill-{i:03}");
        let text = format!("---\nname: {name}\ndescription: does {i}\n---\n");
        // Every third skill is larger than the small cap.
        let text = if i % 3 == 0 { text + &body } else { text };
        write(
            &repo.join(".agents/skills").join(&name).join("SKILL.md"),
            &text,
        );
    }
    // Instruction files of about 9 KiB at the root and one level down:
    // cut at 4 KiB by the small policy.
    write(&repo.join("AGENTS.md"), &long());
    // (Not the same text: a repeated text is folded.)
    write(&repo.join("a/AGENTS.md"), &format!("Level a.\n{}", long()));
    let small = "version = 1\n[instructions]\nmax-file-bytes = 4096\n\
                 [skills]\nmax-skill-file-bytes = 2048\nmax-entries-per-source = 5\n";
    let large = "version = 1\n[skills]\nmax-skill-file-bytes = 65536\n\
                 max-entries-per-source = 100\n";
    for order in [[small, large], [large, small]] {
        let builders = order.iter().enumerate().map(|(i, text)| {
            let b = Loader::builder()
                .policy(lisa_with(text))
                .home(&home)
                .home_policy(false);
            (format!("p{i}"), b)
        });
        let cwd = repo.join("a");
        let surveyed = lisa_context::survey(builders, &cwd, None).expect("survey");
        for (s, text) in surveyed.iter().zip(order) {
            let alone = Loader::builder()
                .policy(lisa_with(text))
                .home(&home)
                .home_policy(false)
                .build()
                .expect("loader");
            let snapshot = alone.snapshot(&cwd).expect("snapshot");
            assert_eq!(json(&*s.snapshot), json(&*snapshot), "{text}");
            // Both instruction files were read, as far as the policy's
            // limits let it: the small one cuts each at 4 KiB.
            let files = &s.snapshot.instruction_files;
            assert_eq!(files.len(), 2, "{text}");
            let cut = files.iter().all(|f| f.file_limit_cut);
            assert_eq!(cut, text == small, "{text}");
        }
        // Each policy met what its bounds let it.
        let counts: Vec<(usize, usize)> = surveyed
            .iter()
            .map(|s| (s.snapshot.skills.len(), s.snapshot.rejected_skills.len()))
            .collect();
        let (small_at, large_at) = if order[0] == small { (0, 1) } else { (1, 0) };
        assert_eq!(counts[large_at], (100, 0), "{counts:?}");
        // Five folders examined, some of them too large; the cut is a
        // rejection too.
        let (skills, rejected) = counts[small_at];
        assert!(
            skills + rejected <= 6 && skills >= 1 && rejected >= 1,
            "{counts:?}"
        );
    }
}

/// Policies that differ in one setting of how a `SKILL.md` is read (its
/// fences, the fallback for loose YAML, scalars, a byte order mark, a
/// linked file, its size cap, pinning) read the same files in one survey:
/// each answers what it answers alone.
#[test]
fn policies_reading_skills_each_their_own_way_answer_what_each_alone_answers() {
    let (_tmp, home, repo) = home_and_repo();
    let skills = repo.join(".agents/skills");
    let texts = [
        // A byte order mark before the fence.
        (
            "bom",
            "\u{feff}---\nname: bom\ndescription: With a mark.\n---\n".to_string(),
        ),
        // An indented closing fence: `trimmed` closes there, the others
        // read on to the next one.
        (
            "indented",
            "---\nname: indented\ndescription: Early.\n  ---\nname: other\n---\n".to_string(),
        ),
        // A number where a string is expected.
        (
            "number",
            "---\nname: number\ndescription: 42\n---\n".to_string(),
        ),
        // Not strict YAML: a colon inside a plain value.
        (
            "loose",
            "---\nname: loose\ndescription: a: b\n---\n".to_string(),
        ),
        // Larger than the small cap.
        (
            "large",
            format!(
                "---\nname: large\ndescription: Big.\n---\n{}",
                "Step.\n".repeat(600)
            ),
        ),
        (
            "plain",
            "---\nname: plain\ndescription: Plain.\n---\n".to_string(),
        ),
    ];
    for (name, text) in &texts {
        write(&skills.join(name).join("SKILL.md"), text);
    }
    // A `SKILL.md` that links to a file inside the repository.
    write(
        &repo.join("docs/linked.md"),
        "---\nname: linked\ndescription: Linked.\n---\n",
    );
    fs::create_dir_all(skills.join("linked")).expect("mkdir");
    std::os::unix::fs::symlink("../../../docs/linked.md", skills.join("linked/SKILL.md"))
        .expect("symlink");
    let variants = [
        "",
        "[skills]\nfences = \"trimmed\"\n",
        "[skills]\nfences = \"exact-open\"\n",
        "[skills]\nfrontmatter = \"strict\"\n",
        "[skills]\nfrontmatter = \"name-description-lines\"\n",
        "[skills]\nfrontmatter = \"values-as-text\"\n",
        "[skills]\ncompat.scalars = \"as-written\"\n",
        "[skills]\nleading-bom = \"text\"\n",
        "[skills]\ncompat.skill-file-symlinks = \"never\"\n",
        "[skills]\nmax-skill-file-bytes = 2048\n",
        "[trust]\nproject = \"pinned\"\n",
    ]
    .map(String::from);
    let answers = each_variant_both_ways(&home, &repo, &variants, &|s| {
        let listed: Vec<&str> = s.skills.iter().map(|k| k.name.as_str()).collect();
        format!("{listed:?}")
    });
    // The variants do read the tree differently.
    assert!(answers.len() >= 5, "{answers:?}");
}

/// Policies that scan a skill source folder with every scan setting equal
/// but the rank, or differing in any setting a scan reads (how names are
/// taken and checked, descriptions cut or collapsed, hard links, the
/// executable file, links, a template, the source's depth or own
/// `SKILL.md`), each answer, in either order, what they answer alone.
#[test]
fn policies_scanning_a_source_each_their_own_way_answer_what_each_alone_answers() {
    let (_tmp, home, repo) = home_and_repo();
    let skills = repo.join(".agents/skills");
    let skill = |folder: &str, front: &str| {
        write(
            &skills.join(folder).join("SKILL.md"),
            &format!("---\n{front}\n---\nBody.\n"),
        );
    };
    skill("plain", "name: plain\ndescription: Plain.");
    skill(
        "long",
        &format!("name: long\ndescription: {}", "word ".repeat(30).trim_end()),
    );
    skill("spread", "name: spread\ndescription: |\n  two\n  lines");
    skill(
        "Upper",
        "name: Upper\ndescription: A folder name lisa refuses.",
    );
    skill("posing", "name: someone\ndescription: Named otherwise.");
    skill("deep/inner", "name: inner\ndescription: One level down.");
    write(
        &skills.join("SKILL.md"),
        "---\nname: skills\ndescription: The source's own.\n---\n",
    );
    fs::create_dir_all(skills.join("hard")).expect("mkdir");
    fs::hard_link(skills.join("plain/SKILL.md"), skills.join("hard/SKILL.md")).expect("hard link");
    std::os::unix::fs::symlink("plain", skills.join("linked")).expect("symlink");
    write(
        &home.join("skills/tool/SKILL.md"),
        "---\nname: tool\ndescription: A home tool.\n---\n",
    );
    write(&home.join("skills/tool/run.sh"), "#!/bin/sh\n");
    let sources = |rank: u32, extra: &str| {
        format!(
            "[[skills.sources]]\nroot = \"home\"\npath = \"skills\"\nrank = 0\n\n\
             [[skills.sources]]\nroot = \"repo\"\npath = \".agents/skills\"\nrank = {rank}\n{extra}"
        )
    };
    let variants = [
        sources(200, ""),
        // Only the rank differs.
        sources(300, ""),
        sources(200, "depth = 3\n"),
        sources(200, "source-skill = true\n"),
        format!(
            "[skills]\nname-from = \"frontmatter\"\n{}",
            sources(200, "")
        ),
        format!(
            "[skills]\nname-rule = '^[a-z]{{1,5}}$'\n{}",
            sources(200, "")
        ),
        format!(
            "[skills]\ndescription-max-chars = 40\nlong-description = \"cut\"\n{}",
            sources(200, "")
        ),
        format!(
            "[skills]\ndescription-max-chars = 40\nlong-description = \"cut\"\n{}\n\
             [templates]\ndescription-cut-suffix = \" (more)\"\n",
            sources(200, "")
        ),
        format!(
            "[skills]\ncompat.description-whitespace = \"collapse\"\n{}",
            sources(200, "")
        ),
        format!(
            "[skills]\nexecutable-file = \"run.sh\"\n{}",
            sources(200, "")
        ),
        format!("{}\n[trust]\nhard-links = \"refuse\"\n", sources(200, "")),
        format!("{}\n[trust]\nsymlinks = \"never\"\n", sources(200, "")),
    ];
    let answers = each_variant_both_ways(&home, &repo, &variants, &|s| {
        let mut seen = json(&s.skills);
        seen.as_array_mut()
            .into_iter()
            .flatten()
            .filter_map(serde_json::Value::as_object_mut)
            .for_each(|skill| {
                skill.remove("rank");
            });
        format!("{seen}{}", json(&s.rejected_skills))
    });
    // Every variant but the rank-only one finds something else.
    assert_eq!(answers.len(), variants.len() - 1, "{answers:#?}");
}

/// A rule that two policies read and no path of the repository reaches is
/// one `rule-unmatched` problem naming both, in survey order, whether the
/// survey is made from the policies' parts or a reach at a time.
#[test]
fn a_rule_no_path_reaches_is_one_problem_for_every_policy_reading_it() {
    let (_tmp, home, repo) = home_and_repo();
    write(
        &repo.join(".cursor/rules/zig.mdc"),
        "---\nglobs: \"**/*.zig\"\n---\nZig.\n",
    );
    write(&repo.join("src/main.rs"), "fn main() {}\n");
    // A team's policy over cursor's reads the same rules folder.
    let over_cursor = Loader::builder()
        .policy(lisa_with("version = 1\nextends = \"cursor\"\n"))
        .home(&home)
        .home_policy(false);
    let policies = vec![
        ("cursor".to_string(), builder("cursor", &home)),
        ("lisa".to_string(), builder("lisa", &home)),
        ("team".to_string(), over_cursor),
    ];
    let surveyed = lisa_context::survey(policies, &repo, None).expect("survey");
    let survey = lisa_context::protocol::Survey::of_surveyed(&repo, &surveyed);
    let unmatched: Vec<&lisa_context::protocol::SurveyProblem> = survey
        .problems
        .iter()
        .filter(|p| p.kind == "rule-unmatched")
        .collect();
    assert_eq!(unmatched.len(), 1, "{:?}", survey.problems);
    assert!(unmatched[0].path.ends_with(".cursor/rules/zig.mdc"));
    assert_eq!(unmatched[0].policies, ["cursor", "team"]);
    let snapshots: Vec<(String, std::sync::Arc<lisa_context::Snapshot>)> = surveyed
        .iter()
        .map(|s| (s.policy.clone(), std::sync::Arc::clone(&s.snapshot)))
        .collect();
    let mut noted = lisa_context::protocol::Survey::of(&repo, &snapshots);
    for s in &surveyed {
        noted.note_reach(&s.policy, &s.reach);
    }
    assert_eq!(json(&survey), json(&noted));
}

/// A policy whose loader cannot be set up ends the survey with its name,
/// wherever it stands in the list and whichever thread sets it up.
#[test]
fn a_policy_that_cannot_be_set_up_is_named() {
    let (_tmp, home, repo) = home_and_repo();
    for names in [
        &["no-such-harness", "lisa", "codex"][..],
        &["lisa", "no-such-harness", "codex"][..],
        &["lisa", "codex", "zed", "no-such-harness"][..],
    ] {
        let builders = names.iter().map(|n| (n.to_string(), builder(n, &home)));
        match lisa_context::survey(builders, &repo, None) {
            Err(lisa_context::SurveyError::Bootstrap { policy, .. }) => {
                assert_eq!(policy, "no-such-harness", "{names:?}");
            }
            other => panic!("{names:?}: {other:?}"),
        }
    }
}
