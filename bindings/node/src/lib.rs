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

use lisa_context::protocol::{Answer, ErrorCode, ErrorReport, Hello, Request, answer};
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

/// The error thrown by the constructor: its message is the JSON text of
/// the [`ErrorReport`] (`{code, message, help?, available?, problems?}`),
/// which the TypeScript layer turns into a `LisaContextError`.
fn constructor_error(report: &ErrorReport) -> napi::Error {
    let body = serde_json::to_string(report).unwrap_or_default();
    napi::Error::new(napi::Status::InvalidArg, body)
}

/// A whole number in `1..=max`, or a `bad-request` naming the option.
fn whole_in_range(name: &str, value: f64, max: usize) -> napi::Result<usize> {
    let ok = value.is_finite() && value.fract() == 0.0 && value >= 1.0 && value <= max as f64;
    if ok {
        // In range and whole: the conversion is exact.
        Ok(value as usize)
    } else {
        Err(constructor_error(&ErrorReport::new(
            ErrorCode::BadRequest,
            format!("`{name}` must be a whole number from 1 to {max}, not {value}"),
        )))
    }
}

/// The result of one call: `value` (JSON text, or absent for "nothing",
/// e.g. an unchanged `refresh`), or the error: `code` and `message`, and
/// `error`, the JSON text of the whole [`ErrorReport`] (the same fields
/// `serve` writes: `help`, `available`, `problems` where they apply).
#[napi(object)]
pub struct Outcome {
    /// The answer, as JSON text.
    pub value: Option<String>,
    /// The error code (see `ErrorCode`), when the call failed.
    pub code: Option<String>,
    /// The error message, when the call failed.
    pub message: Option<String>,
    /// The whole error report as JSON text, when the call failed.
    pub error: Option<String>,
}

impl Outcome {
    fn value(value: Option<String>) -> Self {
        Outcome {
            value,
            code: None,
            message: None,
            error: None,
        }
    }

    fn json(value: &impl serde::Serialize) -> Self {
        match serde_json::to_string(value) {
            Ok(text) => Outcome::value(Some(text)),
            // The snapshot types serialize infallibly; say so if not.
            Err(e) => Outcome::report(ErrorReport::new(ErrorCode::BadRequest, e.to_string())),
        }
    }

    fn report(r: ErrorReport) -> Self {
        Outcome {
            value: None,
            code: Some(r.code.as_str().to_string()),
            message: Some(r.message.clone()),
            error: serde_json::to_string(&r).ok(),
        }
    }

    /// A JavaScript value for an answer of the core: the object each op's
    /// method promises (a fingerprint as bare text, an unchanged `refresh`
    /// as nothing).
    fn answer(answer: Answer) -> Self {
        match answer {
            Answer::Hello { hello } => Outcome::json(&hello),
            Answer::Snapshot { snapshot } => Outcome::json(&*snapshot),
            Answer::Fingerprint { fingerprint } => Outcome::value(Some(fingerprint)),
            Answer::Unchanged { .. } => Outcome::value(None),
            Answer::Changed { snapshot, .. } => Outcome::json(&*snapshot),
            Answer::Skill { skill } => Outcome::json(&skill),
            Answer::Rule { rule } => Outcome::json(&rule),
            Answer::Trust { trust } => Outcome::json(&trust),
            Answer::TrustDiff { trust_diff } => Outcome::json(&trust_diff),
            Answer::Access { access } => Outcome::json(&access),
            // An answer added to the core before this binding knows it.
            other => Outcome::json(&other),
        }
    }
}

/// What one call does: a request of the protocol, or Lisa's view (a
/// snapshot answer with what Lisa's API needs beside it).
enum Op {
    Request(Request),
    /// What Lisa's API needs beyond the snapshot (see `NativeLoader::lisa`).
    Lisa(Request),
}

/// One call, run on the thread pool.
pub struct Call {
    loader: Arc<lisa_context::Loader>,
    op: Option<Op>,
}

impl Call {
    fn run(&mut self) -> Outcome {
        let loader = &*self.loader;
        match self.op.take() {
            None => Outcome::report(ErrorReport::new(
                ErrorCode::BadRequest,
                "the call ran twice",
            )),
            Some(Op::Request(request)) => match answer(loader, request) {
                Ok(a) => Outcome::answer(a),
                Err(report) => Outcome::report(report),
            },
            Some(Op::Lisa(request)) => {
                let (cwd, root) = match &request {
                    Request::Snapshot { cwd, root } => (cwd.clone(), root.clone()),
                    _ => return Outcome::report(ErrorReport::new(ErrorCode::BadRequest, "lisa")),
                };
                match answer(loader, request) {
                    Ok(Answer::Snapshot { snapshot }) => {
                        Outcome::json(&lisa_view(loader, &snapshot, &cwd, root.as_deref()))
                    }
                    Ok(other) => Outcome::answer(other),
                    Err(report) => Outcome::report(report),
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
                    return Err(constructor_error(&ErrorReport::new(
                        ErrorCode::BadRequest,
                        format!(
                            "`cacheBytes` must be a whole number from {min} to {max}, not {bytes}"
                        ),
                    )));
                }
                builder = builder.cache_bytes(n);
            }
        }
        match builder.build_lenient() {
            Ok(loader) => Ok(NativeLoader {
                inner: Arc::new(loader),
                options: kept,
            }),
            Err(e) => Err(constructor_error(&ErrorReport::of_bootstrap(&e))),
        }
    }

    fn call(&self, op: Op) -> AsyncTask<Call> {
        AsyncTask::new(Call {
            loader: Arc::clone(&self.inner),
            op: Some(op),
        })
    }

    fn request(&self, request: Request) -> AsyncTask<Call> {
        self.call(Op::Request(request))
    }

    /// The snapshot object, as JSON text.
    #[napi(ts_return_type = "Promise<Outcome>")]
    pub fn snapshot(&self, cwd: String, root: Option<String>) -> AsyncTask<Call> {
        self.request(Request::Snapshot {
            cwd: cwd.into(),
            root: root.map(Into::into),
        })
    }

    /// The fingerprint (32 hex digits, not JSON).
    #[napi(ts_return_type = "Promise<Outcome>")]
    pub fn fingerprint(&self, cwd: String, root: Option<String>) -> AsyncTask<Call> {
        self.request(Request::Fingerprint {
            cwd: cwd.into(),
            root: root.map(Into::into),
        })
    }

    /// No value when `fingerprint` still holds, else the new snapshot.
    #[napi(ts_return_type = "Promise<Outcome>")]
    pub fn refresh(
        &self,
        cwd: String,
        fingerprint: String,
        root: Option<String>,
    ) -> AsyncTask<Call> {
        self.request(Request::Refresh {
            cwd: cwd.into(),
            root: root.map(Into::into),
            fingerprint,
        })
    }

    /// The `SKILL.md` of the skill that wins `name`: `{name, origin, path,
    /// content}`.
    #[napi(ts_return_type = "Promise<Outcome>")]
    pub fn skill(&self, cwd: String, name: String, root: Option<String>) -> AsyncTask<Call> {
        self.request(Request::Skill {
            cwd: cwd.into(),
            root: root.map(Into::into),
            name,
        })
    }

    /// The text of the rule (`[rules]`) named `name`, read now: `{name,
    /// origin, mode, path, content, truncated, hiddenText, imports, prompt,
    /// shadowed}`.
    #[napi(ts_return_type = "Promise<Outcome>")]
    pub fn rule(&self, cwd: String, name: String, root: Option<String>) -> AsyncTask<Call> {
        self.request(Request::Rule {
            cwd: cwd.into(),
            root: root.map(Into::into),
            name,
        })
    }

    /// The cwd's project items and their approvals (read-only).
    #[napi(ts_return_type = "Promise<Outcome>")]
    pub fn trust_status(&self, cwd: String, root: Option<String>) -> AsyncTask<Call> {
        self.request(Request::TrustStatus {
            cwd: cwd.into(),
            root: root.map(Into::into),
        })
    }

    /// The pending items, each with its diff (read-only).
    #[napi(ts_return_type = "Promise<Outcome>")]
    pub fn trust_diff(&self, cwd: String, root: Option<String>) -> AsyncTask<Call> {
        self.request(Request::TrustDiff {
            cwd: cwd.into(),
            root: root.map(Into::into),
        })
    }

    /// For `lisa-context/lisa` (Lisa's own API): the snapshot with what it
    /// leaves out of its JSON, as JSON text `{snapshot, texts,
    /// instructions, skillFiles}`: each kept block's text (in
    /// `instructionFiles` order), the instruction part of the prompt, and
    /// each listed skill's `SKILL.md` (by name; absent when it could not be
    /// read again).
    #[napi(ts_return_type = "Promise<Outcome>")]
    pub fn lisa(&self, cwd: String, root: Option<String>) -> AsyncTask<Call> {
        self.call(Op::Lisa(Request::Snapshot {
            cwd: cwd.into(),
            root: root.map(Into::into),
        }))
    }

    /// The policy's skill sources as JSON text, `[{dir, rank, scope, root,
    /// levels}]` in rank order, `dir` resolved against the home, `root`
    /// (the repository root), or a named root; a source whose root is
    /// absent is left out. Synchronous: no disk access beyond the policy
    /// files' check.
    #[napi]
    pub fn skill_sources(&self, root: String) -> napi::Result<String> {
        let policy = self
            .inner
            .policy()
            .map_err(|e| constructor_error(&ErrorReport::of_snapshot(&e)))?;
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
        self.request(Request::Access {
            cwd: cwd.into(),
            root: root.map(Into::into),
            path: path.into(),
            session: Some(session),
        })
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
