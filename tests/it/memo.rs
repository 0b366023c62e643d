//! The frontmatter memo (`skills.frontmatter-memo-file`), from the outside:
//! a process that finds the memo answers byte for byte what one that parsed
//! everything answered, and a memo that is damaged, a link, a FIFO, too big
//! or unwritable changes nothing but the work done.

use std::fs;
use std::path::{Path, PathBuf};

use crate::support::{self, World};
use crate::validate;

const MEMO: &str = "context-frontmatter.memo";

/// A home and a repository with skills of every kind the parser tells
/// apart: plain, numbers and booleans kept as spelled, lists, nested extra
/// keys, the lenient reading, a nameless one, broken YAML, no fence.
const SKILLS: &[(&str, &str)] = &[
    (
        "plain",
        "---\nname: plain\ndescription: A plain skill.\n---\nbody\n",
    ),
    (
        "spelled",
        "---\nname: spelled\ndescription: Numbers keep their spelling.\nversion: 1.10\nlicense: 007\ntags: [a, 2.50, true]\nmetadata: {k: 0x1F, on: yes}\nallowed-tools: [Read, Bash]\n---\n",
    ),
    (
        "extra",
        "---\nname: extra\ndescription: |\n  Two lines\n  of text.\nnested: {deep: [1, 2.5, -0.0, 1e300, null, \"s\"], x: {y: z}}\nwhen: 2024-01-01\n---\n",
    ),
    (
        "lenient",
        "---\nname: lenient\ndescription: Use when: the YAML is not strict\n---\n",
    ),
    ("nameless", "---\ndescription: No name here.\n---\n"),
    ("broken", "---\nname: broken\ndescription: [unclosed\n---\n"),
    ("nofence", "name: nofence\ndescription: No fence.\n"),
    (
        "unicode",
        "---\nname: unicode\ndescription: \"Caf\\u00e9 \\U0001F600 and a tab\\there\"\n---\n",
    ),
];

fn fixture() -> World {
    let w = World::new();
    let (home, repo) = (&w.home, &w.repo);
    fs::write(repo.join("AGENTS.md"), "Use tabs.\n").unwrap();
    for (name, text) in SKILLS {
        let dir = repo.join(".agents/skills").join(name);
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("SKILL.md"), text).unwrap();
    }
    let dir = home.join("skills/home-skill");
    fs::create_dir_all(&dir).unwrap();
    fs::write(
        dir.join("SKILL.md"),
        "---\nname: home-skill\ndescription: From the home, version 2.\nversion: 2.0\n---\n",
    )
    .unwrap();
    w
}

trait MemoWorld {
    /// `snapshot --format json` as text.
    fn snapshot(&self) -> String;
    fn memo(&self) -> PathBuf;
}

impl MemoWorld for World {
    fn snapshot(&self) -> String {
        let out = self
            .cli()
            .args(["snapshot", "--format", "json", "--cwd"])
            .arg(&self.repo)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    fn memo(&self) -> PathBuf {
        self.home.join(MEMO)
    }
}

/// The listed and rejected skills of a snapshot, for a readable failure.
fn skills_of(json: &str) -> String {
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    format!("{:#}\n{:#}", v["skills"], v["rejectedSkills"])
}

fn entries(memo: &Path) -> usize {
    fs::read_to_string(memo).unwrap().lines().count() - 1
}

#[test]
fn a_process_reading_the_memo_answers_what_parsing_answered() {
    let fx = fixture();
    let parsed = fx.snapshot();
    validate::snapshot(&serde_json::from_str(&parsed).unwrap());
    // Every frontmatter is remembered, the two refused ones (broken YAML,
    // no fence) included.
    assert_eq!(entries(&fx.memo()), 9);
    let before = fs::read(fx.memo()).unwrap();
    let remembered = fx.snapshot();
    assert_eq!(skills_of(&parsed), skills_of(&remembered));
    assert_eq!(parsed, remembered, "fingerprint, nonce and prompt included");
    // Nothing new was parsed, so nothing was written.
    assert_eq!(fs::read(fx.memo()).unwrap(), before);
}

#[test]
fn a_changed_skill_is_parsed_again_and_added() {
    let fx = fixture();
    fx.snapshot();
    let skill = fx.repo.join(".agents/skills/plain/SKILL.md");
    fs::write(
        &skill,
        "---\nname: plain\ndescription: Changed since.\n---\nbody\n",
    )
    .unwrap();
    let with_memo = fx.snapshot();
    assert!(with_memo.contains("Changed since."));
    assert_eq!(entries(&fx.memo()), 10, "the new entry joins the old ones");
    fs::remove_file(fx.memo()).unwrap();
    assert_eq!(fx.snapshot(), with_memo);
}

#[test]
fn a_damaged_memo_is_ignored_line_by_line() {
    let fx = fixture();
    let parsed = fx.snapshot();
    let text = fs::read_to_string(fx.memo()).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    // A line cut short, a key that is not hex, a JSON object of the wrong
    // shape, a JSON that is not an object, and garbage.
    let half = lines[1].len() / 2;
    lines[1].truncate(half);
    lines[2].replace_range(0..4, "zzzz");
    let key3 = lines[3][..34].to_string();
    lines[3] = format!("{key3} {{\"n\": 5}}");
    let key4 = lines[4][..34].to_string();
    lines[4] = format!("{key4} [1, 2]");
    lines.push("\u{0}\u{1}not a line at all".into());
    fs::write(fx.memo(), lines.join("\n") + "\n").unwrap();
    assert_eq!(fx.snapshot(), parsed);
    // The damaged entries were parsed again and the memo written whole.
    assert_eq!(entries(&fx.memo()), 9);
    assert_eq!(fx.snapshot(), parsed);

    // Bytes that are not a memo at all, and another version's memo.
    fs::write(fx.memo(), [0xff, 0xfe, 0x00, b'\n', 0x80]).unwrap();
    assert_eq!(fx.snapshot(), parsed);
    let other = fs::read_to_string(fx.memo()).unwrap().replacen(
        env!("CARGO_PKG_VERSION"),
        "0.0.1-elsewhere",
        1,
    );
    fs::write(fx.memo(), other).unwrap();
    assert_eq!(fx.snapshot(), parsed);
    assert!(
        fs::read_to_string(fx.memo())
            .unwrap()
            .contains(env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn a_memo_that_is_a_link_is_not_followed_nor_written_through() {
    let fx = fixture();
    let parsed = fx.snapshot();
    let memo = fs::read(fx.memo()).unwrap();
    // The link points at a perfectly good memo outside the home, so
    // following it would show in the work saved only; what matters is that
    // the file outside is never written.
    let outside = fx.home.parent().unwrap().join("outside.memo");
    fs::write(&outside, &memo).unwrap();
    fs::remove_file(fx.memo()).unwrap();
    std::os::unix::fs::symlink(&outside, fx.memo()).unwrap();
    assert_eq!(fx.snapshot(), parsed);
    assert_eq!(fs::read(&outside).unwrap(), memo);
    // The link was replaced by a memo of the home's own.
    assert!(!fs::symlink_metadata(fx.memo()).unwrap().is_symlink());
}

#[test]
fn a_fifo_or_a_folder_in_its_place_neither_hangs_nor_breaks() {
    let fx = fixture();
    let parsed = fx.snapshot();
    fs::remove_file(fx.memo()).unwrap();
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        fx.memo(),
        rustix::fs::Mode::from_raw_mode(0o600),
    )
    .unwrap();
    assert_eq!(fx.snapshot(), parsed);
    fs::remove_file(fx.memo()).unwrap();
    fs::create_dir(fx.memo()).unwrap();
    fs::write(fx.memo().join("x"), "keep me").unwrap();
    assert_eq!(fx.snapshot(), parsed);
    assert_eq!(fs::read_to_string(fx.memo().join("x")).unwrap(), "keep me");
}

#[test]
fn an_unwritable_home_costs_nothing_but_the_memo() {
    let fx = fixture();
    let parsed = fx.snapshot();
    fs::remove_file(fx.memo()).unwrap();
    if !support::running_as_root() {
        use std::os::unix::fs::PermissionsExt as _;
        fs::set_permissions(&fx.home, fs::Permissions::from_mode(0o500)).unwrap();
        let again = fx.snapshot();
        fs::set_permissions(&fx.home, fs::Permissions::from_mode(0o700)).unwrap();
        assert_eq!(again, parsed);
        assert!(!fx.memo().exists());
        return;
    }
    // Root writes anywhere: run as `nobody`, for whom the home (root's,
    // mode 0755) is readable but not writable. Its nonce key is root's
    // (mode 0600), so the nonce differs: compare the skills.
    let args: Vec<&std::ffi::OsStr> = vec![
        "--home".as_ref(),
        fx.home.as_os_str(),
        "snapshot".as_ref(),
        "--format".as_ref(),
        "json".as_ref(),
        "--cwd".as_ref(),
        fx.repo.as_os_str(),
    ];
    let world = fx.home.parent().unwrap().to_path_buf();
    match support::run_unprivileged(&world, &args) {
        Ok(out) => {
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let again = String::from_utf8(out.stdout).unwrap();
            assert_eq!(skills_of(&again), skills_of(&parsed));
            assert!(!fx.memo().exists());
        }
        Err(why) => eprintln!("skipped: {why}"),
    }
}

#[test]
fn the_memo_stays_within_its_size() {
    let fx = fixture();
    fs::write(
        fx.home.join("context-policy.toml"),
        "version = 1\n[skills]\nfrontmatter-memo-max-bytes = 700\n",
    )
    .unwrap();
    let parsed = fx.snapshot();
    let len = fs::metadata(fx.memo()).unwrap().len();
    assert!(len <= 700, "{len}");
    assert!(entries(&fx.memo()) >= 1);
    assert_eq!(fx.snapshot(), parsed);
    // Switched off: no memo read or written.
    fs::remove_file(fx.memo()).unwrap();
    fs::write(
        fx.home.join("context-policy.toml"),
        "version = 1\n[skills]\nfrontmatter-memo-file = \"\"\n",
    )
    .unwrap();
    fx.snapshot();
    assert!(!fx.memo().exists());
}
