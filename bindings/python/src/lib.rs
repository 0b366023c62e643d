//! The native part of the `lisa-context` Python package,
//! `lisa_context._native`: one [`lisa_context::Loader`] per Python
//! `Loader`. Every call lets go of the GIL while it works (the disk, the
//! parsing, the rendering), so other Python threads run meanwhile and one
//! loader serves any number of threads at once.
//!
//! Answers cross as JSON text, which the package's Python layer turns into
//! the dataclasses generated from `schema/` (the Node package does the same
//! with its TypeScript types): one declaration of every field for the three
//! front ends. Every call is a request answered by the library's one
//! operation core (`lisa_context::protocol::answer`), as `serve` and the Node
//! binding answer it. Errors are raised as `lisa_context.LisaContextError`
//! from the core's report: its code, message, `help`, `available` and
//! `problems`, the fields `serve` writes.

use std::path::PathBuf;
use std::sync::Arc;

use lisa_context::protocol::{Answer, ErrorCode, ErrorReport, Hello, Request, answer};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyBool;

/// The package's one exception, raised from an error report: its code
/// and message, and the report as JSON text, from which the Python layer
/// takes `help`, `available` and `problems`.
fn raise_report(py: Python<'_>, report: ErrorReport) -> PyErr {
    let body = serde_json::to_string(&report).unwrap_or_default();
    let made = py
        .import("lisa_context._errors")
        .and_then(|m| m.getattr("LisaContextError"))
        .and_then(|class| class.call_method1("_from_report", (body,)));
    match made {
        Ok(exception) => PyErr::from_value(exception),
        // The package's Python half is missing (the module imported on its
        // own): still say what failed.
        Err(_) => PyRuntimeError::new_err(format!("{}: {}", report.code, report.message)),
    }
}

fn raise(py: Python<'_>, code: ErrorCode, message: String) -> PyErr {
    raise_report(py, ErrorReport::new(code, message))
}

fn json(py: Python<'_>, value: &impl serde::Serialize) -> PyResult<String> {
    // The answer types serialize infallibly; say so if not.
    serde_json::to_string(value).map_err(|e| raise(py, ErrorCode::BadRequest, e.to_string()))
}

/// A whole number (not a bool, not a float) in `min..=max`, or a
/// `bad-request` naming the option: Python's integers are unbounded, so
/// `2**70` must be refused here, never wrapped.
fn whole_in_range(
    py: Python<'_>,
    name: &str,
    value: &Bound<'_, PyAny>,
    min: usize,
    max: usize,
) -> PyResult<usize> {
    let refuse = || {
        let shown = value
            .repr()
            .map(|r| r.to_string())
            .unwrap_or_else(|_| "that value".to_string());
        raise(
            py,
            ErrorCode::BadRequest,
            format!("`{name}` must be a whole number from {min} to {max}, not {shown}"),
        )
    };
    if value.is_instance_of::<PyBool>() {
        return Err(refuse());
    }
    match value.extract::<u64>() {
        Ok(n) => match usize::try_from(n) {
            Ok(n) if (min..=max).contains(&n) => Ok(n),
            _ => Err(refuse()),
        },
        Err(_) => Err(refuse()),
    }
}

/// A loader: many sessions (cwds), one cache, safe to call from many
/// threads at once.
#[pyclass(frozen, module = "lisa_context._native")]
struct NativeLoader {
    inner: Arc<lisa_context::Loader>,
    /// What it was made with, for the loaders of other homes.
    options: Options,
}

#[derive(Clone, Default)]
struct Options {
    home: Option<PathBuf>,
    policy: Option<PathBuf>,
    base_policy: Option<String>,
    home_policy: Option<bool>,
    capacity: Option<usize>,
    cache_bytes: Option<usize>,
}

impl NativeLoader {
    fn made(
        py: Python<'_>,
        options: Options,
        group: Option<&lisa_context::Loader>,
    ) -> PyResult<Self> {
        let mut builder = lisa_context::Loader::builder();
        if let Some(first) = group {
            builder = builder.share(first);
        }
        if let Some(home) = &options.home {
            builder = builder.home(home);
        }
        if let Some(policy) = &options.policy {
            builder = builder.policy_file(policy);
        }
        if let Some(name) = &options.base_policy {
            builder = builder.shipped_policy(name);
        }
        if let Some(read) = options.home_policy {
            builder = builder.home_policy(read);
        }
        if let Some(n) = options.capacity {
            builder = builder.capacity(n);
        }
        if let Some(n) = options.cache_bytes {
            builder = builder.cache_bytes(n);
        }
        // Reading the policy files touches the disk: without the GIL.
        match py.detach(|| builder.build_lenient()) {
            Ok(loader) => Ok(NativeLoader {
                inner: Arc::new(loader),
                options,
            }),
            Err(e) => Err(raise_report(py, ErrorReport::of_bootstrap(&e))),
        }
    }

    /// Runs `work` on the loader without the GIL.
    fn run<T: Send>(
        &self,
        py: Python<'_>,
        work: impl FnOnce(&lisa_context::Loader) -> T + Send,
    ) -> T {
        let loader = Arc::clone(&self.inner);
        py.detach(move || work(&loader))
    }

    /// Answers `request` through the library's one operation core, the GIL
    /// let go meanwhile: the answer's value as JSON text (a fingerprint as
    /// bare text), `None` for an unchanged `refresh`, or the raised error.
    fn call(&self, py: Python<'_>, request: Request) -> PyResult<Option<String>> {
        match self.run(py, move |l| answer(l, request)) {
            Ok(Answer::Fingerprint { fingerprint }) => Ok(Some(fingerprint)),
            Ok(Answer::Unchanged { .. }) => Ok(None),
            Ok(Answer::Snapshot { snapshot } | Answer::Changed { snapshot, .. }) => {
                json(py, &*snapshot).map(Some)
            }
            Ok(Answer::Skill { skill }) => json(py, &skill).map(Some),
            Ok(Answer::Rule { rule }) => json(py, &rule).map(Some),
            Ok(Answer::Trust { trust }) => json(py, &trust).map(Some),
            Ok(Answer::TrustDiff { trust_diff }) => json(py, &trust_diff).map(Some),
            Ok(Answer::Access { access }) => json(py, &access).map(Some),
            Ok(Answer::Hello { hello }) => json(py, &hello).map(Some),
            // An answer added to the core before this binding knows it.
            Ok(other) => json(py, &other).map(Some),
            Err(report) => Err(raise_report(py, report)),
        }
    }

    /// [`call`](Self::call) for an op that always answers with a value.
    fn text(&self, py: Python<'_>, request: Request) -> PyResult<String> {
        self.call(py, request)?
            .ok_or_else(|| raise(py, ErrorCode::BadRequest, "no answer".to_string()))
    }
}

#[pymethods]
impl NativeLoader {
    /// Sets up a loader (see `lisa_context.Loader`). An invalid policy does
    /// not fail here: every call then raises `policy-invalid` until it is
    /// fixed.
    #[new]
    #[pyo3(signature = (home=None, policy=None, base_policy=None, home_policy=None, capacity=None, cache_bytes=None))]
    fn new(
        py: Python<'_>,
        home: Option<PathBuf>,
        policy: Option<PathBuf>,
        base_policy: Option<String>,
        home_policy: Option<bool>,
        capacity: Option<&Bound<'_, PyAny>>,
        cache_bytes: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let capacity = capacity
            .map(|v| {
                whole_in_range(
                    py,
                    "capacity",
                    v,
                    1,
                    lisa_context::Loader::MAX_CACHE_ENTRIES,
                )
            })
            .transpose()?;
        let cache_bytes = cache_bytes
            .map(|v| {
                whole_in_range(
                    py,
                    "cache_bytes",
                    v,
                    lisa_context::Loader::MIN_CACHE_BYTES,
                    lisa_context::Loader::MAX_CACHE_BYTES,
                )
            })
            .transpose()?;
        let options = Options {
            home,
            policy,
            base_policy,
            home_policy,
            capacity,
            cache_bytes,
        };
        Self::made(py, options, None)
    }

    /// A loader for `home` with this one's other options, in this one's
    /// group (`LoaderBuilder::share`: one cache under this one's bounds,
    /// each text held once, one budget of open directories).
    fn for_home(&self, py: Python<'_>, home: PathBuf) -> PyResult<NativeLoader> {
        let mut options = self.options.clone();
        options.home = Some(home);
        Self::made(py, options, Some(&self.inner))
    }

    /// The snapshot, as JSON text.
    #[pyo3(signature = (cwd, root=None))]
    fn snapshot(&self, py: Python<'_>, cwd: PathBuf, root: Option<PathBuf>) -> PyResult<String> {
        self.text(py, Request::Snapshot { cwd, root })
    }

    /// The fingerprint (32 hex digits).
    #[pyo3(signature = (cwd, root=None))]
    fn fingerprint(&self, py: Python<'_>, cwd: PathBuf, root: Option<PathBuf>) -> PyResult<String> {
        self.text(py, Request::Fingerprint { cwd, root })
    }

    /// `None` while `fingerprint` holds, else the new snapshot as JSON text.
    #[pyo3(signature = (cwd, fingerprint, root=None))]
    fn refresh(
        &self,
        py: Python<'_>,
        cwd: PathBuf,
        fingerprint: String,
        root: Option<PathBuf>,
    ) -> PyResult<Option<String>> {
        self.call(
            py,
            Request::Refresh {
                cwd,
                root,
                fingerprint,
            },
        )
    }

    /// The `SKILL.md` of the skill that wins `name`, as JSON text.
    #[pyo3(signature = (cwd, name, root=None))]
    fn skill(
        &self,
        py: Python<'_>,
        cwd: PathBuf,
        name: String,
        root: Option<PathBuf>,
    ) -> PyResult<String> {
        self.text(py, Request::Skill { cwd, root, name })
    }

    /// The text of the rule (`[rules]`) named `name`, read now, as JSON
    /// text.
    #[pyo3(signature = (cwd, name, root=None))]
    fn rule(
        &self,
        py: Python<'_>,
        cwd: PathBuf,
        name: String,
        root: Option<PathBuf>,
    ) -> PyResult<String> {
        self.text(py, Request::Rule { cwd, root, name })
    }

    /// The cwd's project items and their approvals, as JSON text.
    #[pyo3(signature = (cwd, root=None))]
    fn trust_status(
        &self,
        py: Python<'_>,
        cwd: PathBuf,
        root: Option<PathBuf>,
    ) -> PyResult<String> {
        self.text(py, Request::TrustStatus { cwd, root })
    }

    /// The pending items with their diffs, as JSON text.
    #[pyo3(signature = (cwd, root=None))]
    fn trust_diff(&self, py: Python<'_>, cwd: PathBuf, root: Option<PathBuf>) -> PyResult<String> {
        self.text(py, Request::TrustDiff { cwd, root })
    }

    /// What touching `path` adds to the session `session`, as JSON text.
    #[pyo3(signature = (cwd, path, session, root=None))]
    fn access(
        &self,
        py: Python<'_>,
        cwd: PathBuf,
        path: PathBuf,
        session: String,
        root: Option<PathBuf>,
    ) -> PyResult<String> {
        self.text(
            py,
            Request::Access {
                cwd,
                root,
                path,
                session: Some(session),
            },
        )
    }

    /// Snapshots in the cache.
    #[getter]
    fn cached_entries(&self) -> usize {
        self.inner.cached_entries()
    }
}

/// What this build speaks, as JSON text (`serve`'s `hello` answer).
#[pyfunction]
fn hello(py: Python<'_>) -> PyResult<String> {
    json(py, &Hello::new())
}

/// The module `lisa_context._native`.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeLoader>()?;
    m.add_function(wrap_pyfunction!(hello, m)?)?;
    Ok(())
}
