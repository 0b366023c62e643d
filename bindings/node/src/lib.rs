//! The native part of the `lisa-context` npm package: one
//! [`lisa_context::Loader`] per JavaScript `Loader`, every call carried out
//! on libuv's thread pool (an [`AsyncTask`]), so the event loop never waits
//! on the disk.
//!
//! Each call resolves to an [`Outcome`]: the answer as JSON text (parsed on
//! the JavaScript side into the types generated from `schema/`), or the
//! error's code and message, which the package's TypeScript layer throws as
//! a `LisaContextError`. Errors never reject the native promise, so the
//! code survives the crossing.

use std::path::PathBuf;
use std::sync::Arc;

use lisa_context::protocol::{ErrorCode, ErrorReport, Hello, TrustDiff, error_chain};
use lisa_context::{SnapshotError, TrustError};
use napi::bindgen_prelude::AsyncTask;
use napi::{Env, Task};
use napi_derive::napi;

/// How to set up a loader (all optional).
#[napi(object)]
#[derive(Clone, Default)]
pub struct LoaderOptions {
    /// The home root (default: the policy's candidates, `$LISA_HOME`, then
    /// `~/.lisa`).
    pub home: Option<String>,
    /// A policy file laid over the built-in and home policies (the command
    /// line's `--policy FILE`); watched like the home's policy.
    pub policy: Option<String>,
    /// A shipped policy by name (`lisa`, `codex`, `gemini`, `claude-code`)
    /// in the built-in one's place (the command line's `--policy NAME`).
    pub base_policy: Option<String>,
    /// Whether to read the home's `context-policy.toml` (default true).
    pub home_policy: Option<bool>,
    /// Most snapshots kept (default 256): a whole number from 1 to
    /// `Loader::MAX_CACHE_ENTRIES`. Taken as a JavaScript number and checked
    /// here, so that -1, 1.5 or 2^32 is a `bad-request`, never a wrapped
    /// value.
    pub capacity: Option<f64>,
    /// Most bytes of snapshots kept (default 256 MiB): a whole number from
    /// `Loader::MIN_CACHE_BYTES` to `Loader::MAX_CACHE_BYTES`.
    pub cache_bytes: Option<f64>,
}

/// The error thrown by the constructor: its message is the JSON text
/// `{"code", "message"}`, which the TypeScript layer turns into a
/// `LisaContextError`.
fn constructor_error(code: ErrorCode, message: String) -> napi::Error {
    let body = serde_json::json!({ "code": code, "message": message });
    napi::Error::new(napi::Status::InvalidArg, body.to_string())
}

/// A whole number in `1..=max`, or a `bad-request` naming the option.
fn whole_in_range(name: &str, value: f64, max: usize) -> napi::Result<usize> {
    let ok = value.is_finite() && value.fract() == 0.0 && value >= 1.0 && value <= max as f64;
    if ok {
        // In range and whole: the conversion is exact.
        Ok(value as usize)
    } else {
        Err(constructor_error(
            ErrorCode::BadRequest,
            format!("`{name}` must be a whole number from 1 to {max}, not {value}"),
        ))
    }
}

/// The result of one call: `value` (JSON text, or absent for "nothing",
/// e.g. an unchanged `refresh`), or `code` and `message`.
#[napi(object)]
pub struct Outcome {
    /// The answer, as JSON text.
    pub value: Option<String>,
    /// The error code (see `ErrorCode`), when the call failed.
    pub code: Option<String>,
    /// The error message, when the call failed.
    pub message: Option<String>,
}

impl Outcome {
    fn value(value: Option<String>) -> Self {
        Outcome {
            value,
            code: None,
            message: None,
        }
    }

    fn error(code: ErrorCode, message: String) -> Self {
        Outcome {
            value: None,
            code: Some(code.as_str().to_string()),
            message: Some(message),
        }
    }

    fn json(value: &impl serde::Serialize) -> Self {
        match serde_json::to_string(value) {
            Ok(text) => Outcome::value(Some(text)),
            // The snapshot types serialize infallibly; say so if not.
            Err(e) => Outcome::error(ErrorCode::BadRequest, e.to_string()),
        }
    }

    fn snapshot_error(e: &SnapshotError) -> Self {
        Outcome::report(ErrorReport::of_snapshot(e))
    }

    fn trust_error(e: &TrustError) -> Self {
        Outcome::report(ErrorReport::of_trust(e))
    }

    fn report(r: ErrorReport) -> Self {
        Outcome::error(r.code, r.message)
    }
}

/// What one call does.
enum Op {
    Snapshot,
    Fingerprint,
    Refresh(String),
    Skill(String),
    Rule(String),
    TrustStatus,
    TrustDiff,
    /// What Lisa's API needs beyond the snapshot (see `NativeLoader::lisa`).
    Lisa,
    /// What touching a path adds to a named session.
    Access {
        path: String,
        session: String,
    },
}

/// One call, run on the thread pool.
pub struct Call {
    loader: Arc<lisa_context::Loader>,
    cwd: PathBuf,
    root: Option<PathBuf>,
    op: Op,
}

impl Call {
    fn run(&self) -> Outcome {
        let loader = &self.loader;
        let cwd = self.cwd.as_path();
        let root = self.root.as_deref();
        match &self.op {
            Op::Snapshot => match loader.snapshot_in(cwd, root) {
                Ok(s) => Outcome::json(&*s),
                Err(e) => Outcome::snapshot_error(&e),
            },
            // A bare string: the JavaScript side takes it as it is.
            Op::Fingerprint => match loader.fingerprint_in(cwd, root) {
                Ok(f) => Outcome::value(Some(f)),
                Err(e) => Outcome::snapshot_error(&e),
            },
            Op::Refresh(fingerprint) => match loader.refresh_in(cwd, root, fingerprint) {
                Ok(None) => Outcome::value(None),
                Ok(Some(s)) => Outcome::json(&*s),
                Err(e) => Outcome::snapshot_error(&e),
            },
            Op::Skill(name) => match loader.skill_in(cwd, root, name) {
                Ok(s) => Outcome::json(&s),
                Err(e) => Outcome::snapshot_error(&e),
            },
            Op::Rule(name) => match loader.rule_in(cwd, root, name) {
                Ok(r) => Outcome::json(&r),
                Err(e) => Outcome::snapshot_error(&e),
            },
            Op::TrustStatus => match loader.trust_status(cwd, root) {
                Ok(s) => Outcome::json(&s),
                Err(e) => Outcome::trust_error(&e),
            },
            Op::TrustDiff => match loader.trust_status(cwd, root) {
                Ok(s) => Outcome::json(&TrustDiff::of(&s)),
                Err(e) => Outcome::trust_error(&e),
            },
            Op::Lisa => match loader.snapshot_in(cwd, root) {
                Ok(s) => Outcome::json(&lisa_view(loader, &s, cwd, root)),
                Err(e) => Outcome::snapshot_error(&e),
            },
            Op::Access { path, session } => {
                match loader.access_named(session, cwd, root, std::path::Path::new(path)) {
                    Ok(a) => Outcome::json(&a),
                    Err(e) => Outcome::snapshot_error(&e),
                }
            }
        }
    }
}

impl Task for Call {
    type Output = Outcome;
    type JsValue = Outcome;

    fn compute(&mut self) -> napi::Result<Self::Output> {
        Ok(self.run())
    }

    fn resolve(&mut self, _env: Env, output: Self::Output) -> napi::Result<Self::JsValue> {
        Ok(output)
    }
}

/// A loader: many sessions (cwds), one cache, safe to call concurrently.
#[napi(js_name = "NativeLoader")]
pub struct NativeLoader {
    inner: Arc<lisa_context::Loader>,
    /// The options it was made with, for the loaders of other homes.
    options: Option<LoaderOptions>,
}

#[napi]
impl NativeLoader {
    /// Sets up a loader. Reads the policy files once (later calls watch
    /// them); an invalid policy does not fail here but makes every call
    /// fail with `policy-invalid` until fixed. Throws, with a message that
    /// is the JSON text `{"code", "message"}`, when the home root given is
    /// not a directory.
    #[napi(constructor)]
    pub fn new(options: Option<LoaderOptions>) -> napi::Result<Self> {
        Self::made(options, None)
    }

    /// A loader for `home` with this one's other options, in this one's
    /// group (`LoaderBuilder::share`: one cache under this one's bounds,
    /// each text held once, one budget of open directories): what a
    /// `Loader` asked about many homes keeps per home.
    #[napi]
    pub fn for_home(&self, home: String) -> napi::Result<NativeLoader> {
        let mut options = self.options.clone().unwrap_or_default();
        options.home = Some(home);
        Self::made(Some(options), Some(&self.inner))
    }

    fn made(
        options: Option<LoaderOptions>,
        group: Option<&lisa_context::Loader>,
    ) -> napi::Result<Self> {
        let mut builder = lisa_context::Loader::builder();
        if let Some(first) = group {
            builder = builder.share(first);
        }
        let kept = options.clone();
        if let Some(o) = options {
            if let Some(home) = o.home {
                builder = builder.home(home);
            }
            if let Some(policy) = o.policy {
                builder = builder.policy_file(policy);
            }
            if let Some(name) = o.base_policy {
                builder = builder.shipped_policy(name);
            }
            if let Some(read) = o.home_policy {
                builder = builder.home_policy(read);
            }
            if let Some(capacity) = o.capacity {
                let max = lisa_context::Loader::MAX_CACHE_ENTRIES;
                builder = builder.capacity(whole_in_range("capacity", capacity, max)?);
            }
            if let Some(bytes) = o.cache_bytes {
                let (min, max) = (
                    lisa_context::Loader::MIN_CACHE_BYTES,
                    lisa_context::Loader::MAX_CACHE_BYTES,
                );
                let n = whole_in_range("cacheBytes", bytes, max)?;
                if n < min {
                    return Err(constructor_error(
                        ErrorCode::BadRequest,
                        format!(
                            "`cacheBytes` must be a whole number from {min} to {max}, not {bytes}"
                        ),
                    ));
                }
                builder = builder.cache_bytes(n);
            }
        }
        match builder.build_lenient() {
            Ok(loader) => Ok(NativeLoader {
                inner: Arc::new(loader),
                options: kept,
            }),
            Err(e) => Err(constructor_error(e.wire_code(), error_chain(&e))),
        }
    }

    fn call(&self, cwd: String, root: Option<String>, op: Op) -> AsyncTask<Call> {
        AsyncTask::new(Call {
            loader: Arc::clone(&self.inner),
            cwd: PathBuf::from(cwd),
            root: root.map(PathBuf::from),
            op,
        })
    }

    /// The snapshot object, as JSON text.
    #[napi(ts_return_type = "Promise<Outcome>")]
    pub fn snapshot(&self, cwd: String, root: Option<String>) -> AsyncTask<Call> {
        self.call(cwd, root, Op::Snapshot)
    }

    /// The fingerprint (32 hex digits, not JSON).
    #[napi(ts_return_type = "Promise<Outcome>")]
    pub fn fingerprint(&self, cwd: String, root: Option<String>) -> AsyncTask<Call> {
        self.call(cwd, root, Op::Fingerprint)
    }

    /// No value when `fingerprint` still holds, else the new snapshot.
    #[napi(ts_return_type = "Promise<Outcome>")]
    pub fn refresh(
        &self,
        cwd: String,
        fingerprint: String,
        root: Option<String>,
    ) -> AsyncTask<Call> {
        self.call(cwd, root, Op::Refresh(fingerprint))
    }

    /// The `SKILL.md` of the skill that wins `name`: `{name, origin, path,
    /// content}`.
    #[napi(ts_return_type = "Promise<Outcome>")]
    pub fn skill(&self, cwd: String, name: String, root: Option<String>) -> AsyncTask<Call> {
        self.call(cwd, root, Op::Skill(name))
    }

    /// The text of the rule (`[rules]`) named `name`, read now: `{name,
    /// origin, mode, path, content, truncated, hiddenText, imports, prompt,
    /// shadowed}`.
    #[napi(ts_return_type = "Promise<Outcome>")]
    pub fn rule(&self, cwd: String, name: String, root: Option<String>) -> AsyncTask<Call> {
        self.call(cwd, root, Op::Rule(name))
    }

    /// The cwd's project items and their approvals (read-only).
    #[napi(ts_return_type = "Promise<Outcome>")]
    pub fn trust_status(&self, cwd: String, root: Option<String>) -> AsyncTask<Call> {
        self.call(cwd, root, Op::TrustStatus)
    }

    /// The pending items, each with its diff (read-only).
    #[napi(ts_return_type = "Promise<Outcome>")]
    pub fn trust_diff(&self, cwd: String, root: Option<String>) -> AsyncTask<Call> {
        self.call(cwd, root, Op::TrustDiff)
    }

    /// For `lisa-context/lisa` (Lisa's own API): the snapshot with what it
    /// leaves out of its JSON, as JSON text `{snapshot, texts,
    /// instructions, skillFiles}`: each kept block's text (in
    /// `instructionFiles` order), the instruction part of the prompt, and
    /// each listed skill's `SKILL.md` (by name; absent when it could not be
    /// read again).
    #[napi(ts_return_type = "Promise<Outcome>")]
    pub fn lisa(&self, cwd: String, root: Option<String>) -> AsyncTask<Call> {
        self.call(cwd, root, Op::Lisa)
    }

    /// The policy's skill sources as JSON text, `[{dir, rank, scope, root,
    /// levels}]` in rank order, `dir` resolved against the home, `root`
    /// (the repository root), or a named root; a source whose root is
    /// absent is left out. Synchronous: no disk access beyond the policy
    /// files' check.
    #[napi]
    pub fn skill_sources(&self, root: String) -> napi::Result<String> {
        let policy = self.inner.policy().map_err(|e| {
            let o = Outcome::snapshot_error(&e);
            constructor_error(ErrorCode::PolicyInvalid, o.message.unwrap_or_default())
        })?;
        let home = self.inner.home();
        let named = policy.named_root_paths();
        let mut sources: Vec<&lisa_context::policy::SkillSource> =
            policy.skills.sources.iter().collect();
        sources.sort_by_key(|s| *s.rank.get_ref());
        let mut out = Vec::new();
        for s in sources {
            let name = s.root.get_ref().as_str();
            let (base, scope) = match name {
                "home" => (home.clone(), "home"),
                "repo" => (Some(PathBuf::from(&root)), "project"),
                other => {
                    let at = policy
                        .roots
                        .named
                        .iter()
                        .position(|n| n.name.get_ref() == other);
                    (at.and_then(|i| named.get(i).cloned().flatten()), "home")
                }
            };
            let Some(base) = base else { continue };
            out.push(serde_json::json!({
                "dir": base.join(s.path.get_ref()).to_string_lossy(),
                "rank": s.rank.get_ref(),
                "scope": scope,
                "root": name,
                "levels": s.levels.word(),
            }));
        }
        serde_json::to_string(&out).map_err(|e| napi::Error::from_reason(e.to_string()))
    }

    /// What touching `path` adds to the session named `session` in `cwd`
    /// (each file once per session).
    #[napi(ts_return_type = "Promise<Outcome>")]
    pub fn access(
        &self,
        cwd: String,
        path: String,
        session: String,
        root: Option<String>,
    ) -> AsyncTask<Call> {
        self.call(cwd, root, Op::Access { path, session })
    }

    /// For the package's benchmark only (the TypeScript `Loader` does not
    /// offer it): runs `calls` calls of `op` (`"fingerprint"` or
    /// `"snapshot"`) on the calling thread, blocking it, and returns the
    /// mean time per call in microseconds, or -1 if a call failed: the
    /// library's own cost, measured in this process beside the binding's.
    #[napi]
    pub fn measure_blocking(&self, op: String, cwd: String, calls: u32) -> f64 {
        let cwd = PathBuf::from(cwd);
        let start = std::time::Instant::now();
        for _ in 0..calls {
            let ok = match op.as_str() {
                "snapshot" => self.inner.snapshot(&cwd).is_ok(),
                _ => self.inner.fingerprint(&cwd).is_ok(),
            };
            if !ok {
                return -1.0;
            }
        }
        start.elapsed().as_secs_f64() * 1e6 / f64::from(calls.max(1))
    }

    /// Snapshots in the cache.
    #[napi(getter)]
    pub fn cached_entries(&self) -> u32 {
        u32::try_from(self.inner.cached_entries()).unwrap_or(u32::MAX)
    }
}

/// What `NativeLoader::lisa` answers.
fn lisa_view(
    loader: &lisa_context::Loader,
    s: &lisa_context::Snapshot,
    cwd: &std::path::Path,
    root: Option<&std::path::Path>,
) -> serde_json::Value {
    let texts: Vec<&str> = s.instruction_files.iter().map(|b| &*b.text).collect();
    let mut skill_files = serde_json::Map::new();
    for skill in &s.skills {
        if let Ok(file) = loader.skill_in(cwd, root, &skill.name) {
            skill_files.insert(skill.name.clone(), serde_json::Value::String(file.content));
        }
    }
    serde_json::json!({
        "snapshot": s,
        "texts": texts,
        "instructions": s.instructions_prompt(),
        "skillFiles": skill_files,
    })
}

/// What this build speaks, as JSON text: the `hello` answer of `serve`.
#[napi]
pub fn hello() -> String {
    serde_json::to_string(&Hello::new()).unwrap_or_default()
}
