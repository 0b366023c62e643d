//! Helpers shared by the integration tests: the [`World`] most of them
//! build their trees in, and a few checks of the machine.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use lisa_context::Loader;
use lisa_context::policy::{Layer, Policy, PolicySource};

/// A temporary world for one test, removed when dropped: `base` (a fresh
/// temporary directory, outside every root), the home root `base/home` and
/// a repository `base/repo`, marked by `.git/`. [`World::new`] creates both;
/// [`World::empty`] only names them, for tests that lay out their own.
///
/// Paths given to its methods are relative to `base`; an absolute path is
/// taken as it is (`Path::join`).
pub struct World {
    _tmp: tempfile::TempDir,
    /// The temporary directory itself.
    pub base: PathBuf,
    /// `base/home`, the home root.
    pub home: PathBuf,
    /// `base/repo`, a repository.
    pub repo: PathBuf,
}

impl World {
    /// `base/home` and `base/repo/.git/` created.
    pub fn new() -> World {
        let w = World::empty();
        fs::create_dir_all(&w.home).unwrap();
        fs::create_dir_all(w.repo.join(".git")).unwrap();
        w
    }

    /// Nothing but `base`: `home` and `repo` are named, not created.
    pub fn empty() -> World {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().to_path_buf();
        World {
            home: base.join("home"),
            repo: base.join("repo"),
            base,
            _tmp: tmp,
        }
    }

    /// `rel` under `base`.
    pub fn path(&self, rel: impl AsRef<Path>) -> PathBuf {
        self.base.join(rel)
    }

    /// Writes `content` at `rel`, creating the folders on the way; returns
    /// the file's path.
    pub fn write(&self, rel: &str, content: &str) -> PathBuf {
        let path = self.path(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, content).unwrap();
        path
    }

    /// Creates the folder `rel` (and those on the way); returns its path.
    pub fn mkdir(&self, rel: impl AsRef<Path>) -> PathBuf {
        let path = self.path(rel);
        fs::create_dir_all(&path).unwrap();
        path
    }

    /// Makes `rel` a repository (creates `rel/.git/`); returns its path.
    pub fn repo_at(&self, rel: impl AsRef<Path>) -> PathBuf {
        let path = self.path(rel);
        fs::create_dir_all(path.join(".git")).unwrap();
        path
    }

    /// `path` relative to `base`, as text (it must be under `base`).
    pub fn rel(&self, path: &Path) -> String {
        path.strip_prefix(&self.base)
            .unwrap()
            .to_string_lossy()
            .into_owned()
    }

    /// A loader on the built-in policy, with this world's home.
    pub fn loader(&self) -> Loader {
        self.loader_on(Policy::builtin().unwrap())
    }

    /// A loader on `policy`, with this world's home.
    pub fn loader_on(&self, policy: Policy) -> Loader {
        Loader::new(policy, Some(self.home.clone()))
    }

    /// The binary (`assert_cmd`), `--home` this world's home, `LISA_HOME`
    /// unset.
    pub fn cli(&self) -> assert_cmd::Command {
        let mut cmd = assert_cmd::Command::cargo_bin("lisa-context").unwrap();
        cmd.env_remove("LISA_HOME")
            .env("XDG_STATE_HOME", self.base.join("state"))
            .arg("--home")
            .arg(&self.home);
        cmd
    }

    /// [`World::cli`] as a plain `std::process::Command` (for piped
    /// standard streams and children that outlive the call).
    pub fn command(&self) -> std::process::Command {
        self.command_of(Path::new(env!("CARGO_BIN_EXE_lisa-context")))
    }

    /// [`World::command`] running `program` instead of the built binary (a
    /// [`SharedBinary`], for a command another user runs).
    pub fn command_of(&self, program: &Path) -> std::process::Command {
        let mut cmd = std::process::Command::new(program);
        cmd.env_remove("LISA_HOME")
            .env("XDG_STATE_HOME", self.base.join("state"))
            .arg("--home")
            .arg(&self.home);
        cmd
    }
}

/// Writes `text` to `path` (absolute), its folders created.
pub fn write_file(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// The built-in policy with `text` laid over it as a layer named `name`.
pub fn layered(layer: Layer, name: &str, text: impl Into<String>) -> Policy {
    Policy::from_sources(&[
        PolicySource::builtin(),
        PolicySource::from_text(layer, name, text.into()),
    ])
    .unwrap()
}

/// Returns once the file system stamps a change later than every change
/// made so far under `dir`: a scratch file is rewritten until its ctime moves
/// past the one it got first. Bounded by a deadline, not a sleep.
pub fn next_timestamp_tick(dir: &Path) {
    use std::os::unix::fs::MetadataExt as _;
    let probe = dir.join(".tick");
    let ctime = |p: &Path| {
        let m = fs::metadata(p).unwrap();
        (m.ctime(), m.ctime_nsec())
    };
    fs::write(&probe, "0").unwrap();
    let first = ctime(&probe);
    let deadline = Instant::now() + Duration::from_secs(10);
    while ctime(&probe) <= first {
        assert!(
            Instant::now() < deadline,
            "the file system clock did not tick"
        );
        std::thread::yield_now();
        fs::write(&probe, "1").unwrap();
    }
    fs::remove_file(&probe).unwrap();
}

/// Whether the tests run as root, for whom mode bits deny nothing.
pub fn running_as_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// The uid and gid of `nobody`, the other user of the tests that drop root.
pub const NOBODY: u32 = 65534;

/// The binary where another user can run it: a copy (or a hard link) in a
/// fresh folder of mode 0755 in the system's temporary folder, removed when
/// dropped. The built binary may sit where only its owner can enter (a clone
/// under `/root` or in a `mktemp -d` folder, as CI containers have it), and
/// `nobody` could not start it there.
pub struct SharedBinary {
    _dir: tempfile::TempDir,
    /// The binary's path inside the folder.
    pub path: PathBuf,
}

impl SharedBinary {
    /// Places the binary and checks that `nobody` can start it. `Err` says
    /// why not, for the test to print as its visible reason to skip.
    pub fn new() -> Result<SharedBinary, String> {
        use std::os::unix::fs::PermissionsExt as _;
        use std::os::unix::process::CommandExt as _;
        let built = Path::new(env!("CARGO_BIN_EXE_lisa-context"));
        let dir = tempfile::Builder::new()
            .prefix("lisa-bin-")
            .tempdir()
            .map_err(|e| format!("cannot make a folder for the binary: {e}"))?;
        let path = dir.path().join("lisa-context");
        let open = |p: &Path, mode| {
            fs::set_permissions(p, fs::Permissions::from_mode(mode))
                .map_err(|e| format!("cannot open up {}: {e}", p.display()))
        };
        open(dir.path(), 0o755)?;
        if fs::hard_link(built, &path).is_err() {
            fs::copy(built, &path)
                .map_err(|e| format!("cannot copy the binary to {}: {e}", path.display()))?;
        }
        open(&path, 0o755)?;
        // Every folder above must be traversable too: try it.
        let probe = std::process::Command::new(&path)
            .arg("--version")
            .uid(NOBODY)
            .gid(NOBODY)
            .output();
        match probe {
            Ok(out) if out.status.success() => Ok(SharedBinary { _dir: dir, path }),
            Ok(out) => Err(format!(
                "uid {NOBODY} cannot run {}: {}",
                path.display(),
                out.status
            )),
            Err(e) => Err(format!("uid {NOBODY} cannot run {}: {e}", path.display())),
        }
    }
}

/// Runs the `lisa-context` binary with `args` as the unprivileged user
/// `nobody` (uid and gid [`NOBODY`]), for checks that mean nothing to root
/// (a mode-000 file does not stop root). `world` is made traversable first
/// (a temporary directory starts as mode 0700), and the binary is run from a
/// [`SharedBinary`]. `Err` says why it could not be done here, for the test
/// to print as its visible reason to skip.
pub fn run_unprivileged(
    world: &Path,
    args: &[&std::ffi::OsStr],
) -> Result<std::process::Output, String> {
    use std::os::unix::fs::PermissionsExt as _;
    use std::os::unix::process::CommandExt as _;
    fs::set_permissions(world, fs::Permissions::from_mode(0o755))
        .map_err(|e| format!("cannot open up {}: {e}", world.display()))?;
    let bin = SharedBinary::new()?;
    let out = std::process::Command::new(&bin.path)
        .args(args)
        .env_remove("LISA_HOME")
        .uid(NOBODY)
        .gid(NOBODY)
        .output()
        .map_err(|e| format!("cannot run the binary as uid {NOBODY}: {e}"))?;
    if out.status.code() == Some(126) || out.status.code() == Some(127) {
        return Err(format!("the binary is not executable as uid {NOBODY}"));
    }
    Ok(out)
}
