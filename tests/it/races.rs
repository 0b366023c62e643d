//! Races: a candidate changes between a safe regular file (or directory) and a
//! symlink to an outside secret, thousands of times, while snapshots are
//! built. The secret must never reach a prompt, a snapshot's JSON or a viewed
//! skill, whatever the interleaving.
//!
//! Swaps are atomic: a file or link is prepared under a temporary name and
//! renamed over the candidate; a directory and a link are exchanged with
//! `renameat2(RENAME_EXCHANGE)` (falling back to two renames, with a short
//! window where the name is absent, if the file system refuses the exchange).
//!
//! Each race runs until at least `MIN_SWAPS` swaps and `MIN_SNAPSHOTS`
//! snapshots are done and both states (safe, refused) have been observed, or
//! until `MAX_SNAPSHOTS` / `TIME_CAP`, whichever comes first. Snapshots
//! alternate between a fresh `snapshot::build` and one long-lived `Loader`
//! (whose cache must not serve a stale, unsafe result either).

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use lisa_context::Loader;
use lisa_context::Snapshot;
use lisa_context::policy::Policy;
use tempfile::TempDir;

const MIN_SWAPS: u64 = 3000;
const MIN_SNAPSHOTS: u64 = 500;
const MAX_SNAPSHOTS: u64 = 20_000;
const MAX_SWAPS: u64 = 2_000_000;
/// Stops the loops (not an assertion): keeps a loaded CI machine bounded.
const TIME_CAP: Duration = Duration::from_secs(20);
/// A reader that has not finished by then is hung.
const HANG: Duration = Duration::from_secs(90);

mod exchange {
    use std::ffi::{CString, c_char, c_int, c_uint};
    use std::io;
    use std::os::unix::ffi::OsStrExt;
    use std::path::Path;

    unsafe extern "C" {
        fn renameat2(
            olddirfd: c_int,
            oldpath: *const c_char,
            newdirfd: c_int,
            newpath: *const c_char,
            flags: c_uint,
        ) -> c_int;
    }

    const AT_FDCWD: c_int = -100;
    const RENAME_EXCHANGE: c_uint = 2;

    /// Atomically exchanges the entries at `a` and `b`.
    pub fn exchange(a: &Path, b: &Path) -> io::Result<()> {
        let a = CString::new(a.as_os_str().as_bytes())?;
        let b = CString::new(b.as_os_str().as_bytes())?;
        // SAFETY: both pointers are NUL-terminated strings that outlive the
        // call; renameat2 only reads them.
        let rc = unsafe { renameat2(AT_FDCWD, a.as_ptr(), AT_FDCWD, b.as_ptr(), RENAME_EXCHANGE) };
        if rc == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }
}

/// Swaps `a` and `b`: atomically when the file system allows it, otherwise
/// with three renames through `spare`.
fn swap_entries(a: &Path, b: &Path, spare: &Path, atomic: &AtomicBool) {
    if atomic.load(Ordering::Relaxed) {
        match exchange::exchange(a, b) {
            Ok(()) => return,
            Err(e) => {
                eprintln!("note: RENAME_EXCHANGE unavailable ({e}); swapping with renames");
                atomic.store(false, Ordering::Relaxed);
            }
        }
    }
    fs::rename(a, spare).unwrap();
    fs::rename(b, a).unwrap();
    fs::rename(spare, b).unwrap();
}

/// The paths of one race's tree.
#[derive(Clone)]
struct Paths {
    home: PathBuf,
    repo: PathBuf,
    outside: PathBuf,
    marker: String,
}

struct Race {
    _tmp: TempDir,
    p: Paths,
}

impl std::ops::Deref for Race {
    type Target = Paths;
    fn deref(&self) -> &Paths {
        &self.p
    }
}

fn write(path: &Path, contents: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, contents).unwrap();
}

fn skill_md(name: &str, description: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\n# {name}\n")
}

impl Race {
    fn new(case: &str) -> Race {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().to_path_buf();
        let marker = format!("SECRET-{case}-7f3a");
        let home = base.join("home");
        let repo = base.join("repo");
        let outside = base.join("outside");
        write(&outside.join("secret.txt"), &format!("{marker} key\n"));
        write(&outside.join("dir/AGENTS.md"), &format!("{marker} dir\n"));
        write(
            &outside.join("dir/CLAUDE.md"),
            &format!("{marker} dir claude\n"),
        );
        for s in ["probe", "leak"] {
            write(
                &outside.join("skills").join(s).join("SKILL.md"),
                &(skill_md(s, &format!("{marker} outside {s}")) + &format!("{marker} body\n")),
            );
        }
        write(&home.join("AGENTS.md"), "HOME-OK\n");
        fs::create_dir_all(repo.join(".git")).unwrap();
        write(&repo.join("AGENTS.md"), "SAFE root\n");
        Race {
            _tmp: tmp,
            p: Paths {
                home,
                repo,
                outside,
                marker,
            },
        }
    }
}

/// What one snapshot showed about the raced entry.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Seen {
    /// The safe content was used.
    Safe,
    /// The link was refused (or the name was briefly absent).
    Refused,
}

#[derive(Debug, Default)]
struct Stats {
    snapshots: u64,
    errors: u64,
    safe: u64,
    refused: u64,
    swaps: u64,
    /// How often each reason was recorded (skipped files and rejected skills).
    reasons: std::collections::BTreeMap<&'static str, u64>,
}

/// Runs `swap` in a loop on one thread while another builds snapshots for
/// `cwd`, checking each with `classify` and for the marker. `skill`, when
/// given, is also viewed through the long-lived loader after every snapshot.
fn race(
    r: &Race,
    cwd: PathBuf,
    skill: Option<&'static str>,
    classify: fn(&Paths, &Snapshot) -> Seen,
    mut swap: impl FnMut(u64) + Send + 'static,
) -> Stats {
    let swaps = Arc::new(AtomicU64::new(0));
    let reader_done = Arc::new(AtomicBool::new(false));
    let swapper = {
        let swaps = swaps.clone();
        let reader_done = reader_done.clone();
        std::thread::spawn(move || {
            let mut i = 0;
            while i < MAX_SWAPS && !reader_done.load(Ordering::Relaxed) {
                swap(i);
                i += 1;
                swaps.store(i, Ordering::Relaxed);
            }
        })
    };

    let (tx, rx) = mpsc::channel();
    let home = r.home.clone();
    let marker = r.marker.clone();
    let paths = r.p.clone();
    {
        let swaps = swaps.clone();
        let reader_done = reader_done.clone();
        std::thread::spawn(move || {
            let policy = Policy::builtin().unwrap();
            let loader = Loader::new(policy.clone(), Some(home.clone()));
            let started = Instant::now();
            let mut st = Stats::default();
            let mut n: u64 = 0;
            loop {
                let done_enough = n >= MIN_SNAPSHOTS
                    && swaps.load(Ordering::Relaxed) >= MIN_SWAPS
                    && st.safe > 0
                    && st.refused > 0;
                if done_enough || n >= MAX_SNAPSHOTS || started.elapsed() > TIME_CAP {
                    break;
                }
                let result = if n.is_multiple_of(2) {
                    lisa_context::build(&policy, Some(&home), &cwd, None).map(std::sync::Arc::new)
                } else {
                    loader.snapshot(&cwd)
                };
                n += 1;
                match result {
                    Ok(s) => {
                        st.snapshots += 1;
                        assert!(
                            !s.prompt.contains(&marker),
                            "snapshot {n}: the secret reached the prompt:\n{}",
                            s.prompt
                        );
                        let json = serde_json::to_string(&s).expect("the snapshot serializes");
                        assert!(
                            !json.contains(&marker),
                            "snapshot {n}: the secret reached the JSON:\n{json}"
                        );
                        for why in s
                            .skipped
                            .iter()
                            .map(|k| k.reason.as_str())
                            .chain(s.rejected_skills.iter().map(|k| k.reason.as_str()))
                        {
                            *st.reasons.entry(why).or_default() += 1;
                        }
                        match classify(&paths, &s) {
                            Seen::Safe => st.safe += 1,
                            Seen::Refused => st.refused += 1,
                        }
                    }
                    // Only the non-atomic fallback can make the cwd vanish
                    // for an instant.
                    Err(_) => st.errors += 1,
                }
                if let Some(name) = skill {
                    match loader.skill(&cwd, name) {
                        Ok(f) => assert!(
                            !f.content.contains(&marker),
                            "skill {name}: the secret was shown:\n{}",
                            f.content
                        ),
                        Err(e) => {
                            let msg = format!("{e} {e:?}");
                            assert!(!msg.contains(&marker), "skill error leaks: {msg}");
                        }
                    }
                }
            }
            reader_done.store(true, Ordering::Relaxed);
            let _ = tx.send(st);
        });
    }
    let got = rx.recv_timeout(HANG);
    reader_done.store(true, Ordering::Relaxed);
    swapper.join().expect("the swapper thread");
    let mut st = match got {
        Ok(st) => st,
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("the reader hung"),
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            panic!("the reader failed (see its panic message above)")
        }
    };
    st.swaps = swaps.load(Ordering::Relaxed);
    eprintln!("{st:?}");
    assert!(st.swaps > 0, "no swap happened");
    assert!(st.snapshots > 0, "no snapshot was built");
    assert!(
        st.safe > 0 && st.refused > 0,
        "the race did not exercise both states: {st:?}"
    );
    st
}

fn kept_text<'a>(s: &'a Snapshot, path: &Path) -> Option<&'a str> {
    s.instruction_files
        .iter()
        .find(|b| b.path == path)
        .map(|b| &*b.text)
}

fn reason(s: &Snapshot, path: &Path) -> Option<&'static str> {
    s.skipped
        .iter()
        .find(|k| k.path == path)
        .map(|k| k.reason.as_str())
        .or_else(|| {
            s.rejected_skills
                .iter()
                .find(|k| k.path == path)
                .map(|k| k.reason.as_str())
        })
}

/// (a) `repo/CLAUDE.md` renamed over, alternately, by a regular file and by a
/// symlink (relative or absolute) to the outside secret.
#[test]
fn instruction_file_swapped_with_symlink() {
    let r = Race::new("instruction_file_swapped_with_symlink");
    let target = r.repo.join("CLAUDE.md");
    write(&target, "SAFE claude\n");
    let tmp = r.repo.join(".swap-tmp");
    let abs_secret = r.outside.join("secret.txt");
    let t = target.clone();
    race(
        &r,
        r.repo.clone(),
        None,
        |r, s| {
            let p = r.repo.join("CLAUDE.md");
            match kept_text(s, &p) {
                Some(t) => {
                    assert_eq!(t, "SAFE claude");
                    Seen::Safe
                }
                None => {
                    assert_eq!(reason(s, &p), Some("symlink-escape"), "{:#?}", s.skipped);
                    Seen::Refused
                }
            }
        },
        move |i| {
            let _ = fs::remove_file(&tmp);
            match i % 4 {
                0 | 2 => fs::write(&tmp, "SAFE claude\n").unwrap(),
                1 => symlink("../outside/secret.txt", &tmp).unwrap(),
                _ => symlink(&abs_secret, &tmp).unwrap(),
            }
            fs::rename(&tmp, &t).unwrap();
        },
    );
}

/// (b) `repo/pkg` exchanged between a real directory (AGENTS.md "SAFE") and a
/// symlink to an outside directory holding a secret AGENTS.md; cwd repo/pkg.
#[test]
fn level_directory_swapped_with_symlink() {
    let r = Race::new("level_directory_swapped_with_symlink");
    let pkg = r.repo.join("pkg");
    write(&pkg.join("AGENTS.md"), "SAFE pkg\n");
    let alt = r.repo.join(".pkg-alt");
    symlink("../outside/dir", &alt).unwrap();
    let spare = r.repo.join(".pkg-spare");
    let atomic = AtomicBool::new(true);
    let p = pkg.clone();
    race(
        &r,
        pkg.clone(),
        None,
        |r, s| {
            assert_eq!(s.repo_root, r.repo);
            let f = r.repo.join("pkg/AGENTS.md");
            match kept_text(s, &f) {
                Some(t) => {
                    assert_eq!(t, "SAFE pkg");
                    Seen::Safe
                }
                None => {
                    assert_eq!(reason(s, &f), Some("symlink-escape"), "{:#?}", s.skipped);
                    Seen::Refused
                }
            }
        },
        move |_| swap_entries(&p, &alt, &spare, &atomic),
    );
}

/// (c) a skill folder exchanged between a real folder and a symlink to an
/// outside skill folder; the skill is also viewed by name every time.
#[test]
fn skill_folder_swapped_with_symlink() {
    let r = Race::new("skill_folder_swapped_with_symlink");
    let skills = r.repo.join(".lisa/skills");
    let folder = skills.join("probe");
    write(&folder.join("SKILL.md"), &skill_md("probe", "SAFE skill"));
    let alt = skills.join(".probe-alt");
    symlink("../../../outside/skills/probe", &alt).unwrap();
    let spare = skills.join(".probe-spare");
    let atomic = AtomicBool::new(true);
    let f = folder.clone();
    race(
        &r,
        r.repo.clone(),
        Some("probe"),
        |_, s| {
            match s.skills.iter().find(|k| k.name == "probe") {
                Some(k) => {
                    assert_eq!(k.description, "SAFE skill");
                    Seen::Safe
                }
                // Refused: usually `symlink-escape`, but a swap between two
                // steps of the examination can also show as `unreadable`, and
                // a listing taken during an exchange may miss the name.
                None => Seen::Refused,
            }
        },
        move |_| swap_entries(&f, &alt, &spare, &atomic),
    );
}

/// (c') a SKILL.md renamed over, alternately, by a regular file and by a
/// symlink to an outside SKILL.md of the same name.
#[test]
fn skill_file_swapped_with_symlink() {
    let r = Race::new("skill_file_swapped_with_symlink");
    let folder = r.repo.join(".lisa/skills/probe");
    let target = folder.join("SKILL.md");
    let safe = skill_md("probe", "SAFE skill");
    write(&target, &safe);
    let tmp = folder.join(".swap-tmp");
    let abs = r.outside.join("skills/probe/SKILL.md");
    let t = target.clone();
    race(
        &r,
        r.repo.clone(),
        Some("probe"),
        |r, s| {
            let file = r.repo.join(".lisa/skills/probe/SKILL.md");
            match s.skills.iter().find(|k| k.name == "probe") {
                Some(k) => {
                    assert_eq!(k.description, "SAFE skill");
                    Seen::Safe
                }
                None => {
                    let why = reason(s, &file);
                    assert_eq!(why, Some("symlink-escape"), "{:#?}", s.rejected_skills);
                    Seen::Refused
                }
            }
        },
        move |i| {
            let _ = fs::remove_file(&tmp);
            match i % 4 {
                0 | 2 => fs::write(&tmp, &safe).unwrap(),
                1 => symlink("../../../../outside/skills/probe/SKILL.md", &tmp).unwrap(),
                _ => symlink(&abs, &tmp).unwrap(),
            }
            fs::rename(&tmp, &t).unwrap();
        },
    );
}

/// (d) the skills source folder itself exchanged between a real folder and a
/// symlink to an outside folder of skills.
#[test]
fn skills_source_swapped_with_symlink() {
    let r = Race::new("skills_source_swapped_with_symlink");
    let source = r.repo.join(".lisa/skills");
    write(
        &source.join("probe/SKILL.md"),
        &skill_md("probe", "SAFE skill"),
    );
    let alt = r.repo.join(".lisa/.skills-alt");
    symlink("../../outside/skills", &alt).unwrap();
    let spare = r.repo.join(".lisa/.skills-spare");
    let atomic = AtomicBool::new(true);
    let src = source.clone();
    race(
        &r,
        r.repo.clone(),
        Some("leak"),
        |_, s| {
            assert!(s.skills.iter().all(|k| k.name != "leak"));
            match s.skills.iter().find(|k| k.name == "probe") {
                Some(k) => {
                    assert_eq!(k.description, "SAFE skill");
                    Seen::Safe
                }
                // Refused at the source or at the folder, by whichever step
                // met the link.
                None => Seen::Refused,
            }
        },
        move |_| swap_entries(&src, &alt, &spare, &atomic),
    );
}
