//! `lisa-context serve`: one JSON request per line on stdin, one JSON
//! response per line on stdout. A bad request gets an error response and the
//! server keeps serving; end of input ends it.

use std::collections::{HashMap, HashSet, VecDeque};
use std::io::{self, BufRead, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use lisa_context::protocol::{Answer, ErrorCode, ErrorReport, Request};
use lisa_context::{BootstrapError, Loader};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// The longest request line accepted (1 MiB).
pub const MAX_LINE: usize = 1 << 20;

/// A request's `id` exactly as the client wrote it: the raw JSON text, so an
/// integer beyond 64 bits (or a float, or a string with escapes) comes back
/// byte for byte. `null` when the request had none or could not be read.
#[derive(Debug, Clone)]
pub struct Id(Box<RawValue>);

impl Id {
    /// The id of a line that has none.
    fn null() -> Self {
        Id(RawValue::NULL.to_owned())
    }
}

/// One response: the id to echo and the body: an answer, or an error.
#[derive(Debug)]
pub struct Response {
    id: Id,
    body: Body,
}

/// A response's fields besides the id.
#[derive(Debug, serde::Serialize)]
#[serde(untagged)]
enum Body {
    Answer(Answer),
    Error { error: ErrorReport },
}

impl Response {
    fn answer(id: &Id, answer: Answer) -> Self {
        Response {
            id: id.clone(),
            body: Body::Answer(answer),
        }
    }

    fn error(id: &Id, error: ErrorReport) -> Self {
        Response {
            id: id.clone(),
            body: Body::Error { error },
        }
    }

    /// The response as one JSON line (with its newline): the raw id first,
    /// then the other fields.
    pub fn to_line(&self) -> Vec<u8> {
        let mut line = Vec::with_capacity(64);
        line.extend_from_slice(b"{\"id\":");
        line.extend_from_slice(self.id.0.get().as_bytes());
        // The body is one JSON object: its members follow the id. The
        // protocol's types serialize infallibly into a Vec.
        let body = serde_json::to_vec(&self.body).unwrap_or_else(|_| b"{}".to_vec());
        match body.get(1..) {
            Some(rest) if rest != b"}" => {
                line.push(b',');
                line.extend_from_slice(rest);
            }
            _ => line.push(b'}'),
        }
        line.push(b'\n');
        line
    }
}

fn error(id: &Id, code: ErrorCode, message: impl Into<String>) -> Response {
    Response::error(id, ErrorReport::new(code, message))
}

/// The homes a server answers for: its own (the requests that name none),
/// and, when it was given a directory of homes (`--homes-under`), each home
/// below it that a request names, with a loader of its own (its own home
/// policy, nonce key, trust store and memo), kept while in use, the least
/// recently used dropped past the most it keeps. The loaders are one group
/// (`LoaderBuilder::share`): one cache, each text once, one watch, one
/// budget of handles; never an answer from another home's build. A home's
/// loader serves only while the home is the directory it admitted
/// ([`Loader::check_home`], asked at every request): one replaced or
/// handed to another user since is admitted afresh, or refused.
pub struct Homes {
    own: Loader,
    under: Option<PathBuf>,
    max: usize,
    make: Box<MakeLoader>,
    /// By home, least recently used first out (a lookup costs the same
    /// however many homes are kept).
    named: Mutex<lru::LruCache<PathBuf, Arc<Loader>>>,
}

/// Builds the loader of a home below the directory of homes.
type MakeLoader = dyn Fn(&Loader, &Path, &Path) -> Result<Loader, BootstrapError> + Send + Sync;

/// How many homes named by requests a server keeps a loader for, unless
/// `--homes-max` says.
pub const DEFAULT_HOMES: usize = 1024;

/// The most `--homes-max` may be.
pub const MAX_HOMES: usize = 65_536;

/// How many snapshots the server's cache keeps (every home's together),
/// unless `--cache-entries` says; the bytes (`--cache-bytes`) are the
/// bound that usually holds first.
pub const DEFAULT_CACHE_ENTRIES: usize = 16_384;

impl Homes {
    /// A server's homes: `own`, and below `under` at most `max` of those
    /// `make(own, under, home)` builds a loader for (in `own`'s group).
    pub fn new(
        own: Loader,
        under: Option<PathBuf>,
        max: usize,
        make: impl Fn(&Loader, &Path, &Path) -> Result<Loader, BootstrapError> + Send + Sync + 'static,
    ) -> Self {
        Self {
            own,
            under,
            max: max.clamp(1, MAX_HOMES),
            make: Box::new(make),
            named: Mutex::new(lru::LruCache::unbounded()),
        }
    }

    /// The loader for a request naming `home` (`None`: the server's own).
    fn get(&self, home: Option<&Path>) -> Result<Arc<Loader>, ErrorReport> {
        let Some(home) = home else {
            return Err(ErrorReport::new(ErrorCode::BadRequest, String::new()));
        };
        let Some(under) = &self.under else {
            return Err(ErrorReport::new(
                ErrorCode::HomeRefused,
                "this server serves only its own home: start it with --homes-under DIR to \
                 serve the homes below DIR",
            ));
        };
        let mut named = self.named.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(loader) = named.get(home) {
            // The admission rule holds at every request, not only at the
            // first: a home no longer the directory admitted (a link put in
            // its place, another directory, another owner) loses its loader
            // and everything built from it, and is admitted afresh below,
            // or refused.
            match loader.check_home() {
                Err(lisa_context::SnapshotError::HomeRefused { .. }) => {
                    named.pop(home);
                }
                // Held, or not looked at for want of descriptors (the
                // request says so itself).
                _ => return Ok(Arc::clone(loader)),
            }
        }
        // Built under the lock: two requests for a new home build it once.
        let loader =
            (self.make)(&self.own, under, home).map_err(|e| ErrorReport::of_bootstrap(&e))?;
        let loader = Arc::new(loader);
        if named.len() >= self.max {
            named.pop_lru();
        }
        named.put(home.to_path_buf(), Arc::clone(&loader));
        Ok(loader)
    }
}

/// Parses a request line: the id (null when there is none), and the request
/// with the home it names, or the error response to send instead.
///
/// The line is first split into its members as raw JSON text, so the id is
/// kept exactly as written (a number beyond what `f64` holds included); the
/// other members are then read as values.
fn parse(line: &[u8]) -> (Id, Result<(Request, Option<PathBuf>), Response>) {
    let null = Id::null();
    let bad = |message: String| {
        let e = error(&null, ErrorCode::BadRequest, message);
        (Id::null(), Err(e))
    };
    let whole: &RawValue = match serde_json::from_slice(line) {
        Ok(v) => v,
        Err(e) => return bad(e.to_string()),
    };
    if !whole.get().starts_with('{') {
        return bad("a request is a JSON object".into());
    }
    // Members in order; a repeated name keeps its last value.
    let mut members: HashMap<String, &RawValue> = match serde_json::from_str(whole.get()) {
        Ok(m) => m,
        Err(e) => return bad(e.to_string()),
    };
    let Some(id) = members.remove("id") else {
        return bad("every request needs an \"id\"".into());
    };
    let id = Id(id.to_owned());
    // `home` is the request's, not the op's: any op may name one.
    let home = match members
        .remove("home")
        .map(|raw| serde_json::from_str::<Value>(raw.get()))
    {
        None | Some(Ok(Value::Null)) => None,
        Some(Ok(Value::String(h))) if Path::new(&h).is_absolute() => Some(PathBuf::from(h)),
        Some(_) => {
            let e = error(&id, ErrorCode::BadRequest, "\"home\" is an absolute path");
            return (id, Err(e));
        }
    };
    let mut fields = Map::new();
    for (name, raw) in members {
        match serde_json::from_str::<Value>(raw.get()) {
            Ok(v) => {
                fields.insert(name, v);
            }
            Err(e) => {
                let e = error(&id, ErrorCode::BadRequest, format!("field {name:?}: {e}"));
                return (id, Err(e));
            }
        }
    }
    if let Some(Value::String(op)) = fields.get("op")
        && !Request::OPS.contains(&op.as_str())
    {
        let e = error(&id, ErrorCode::UnknownOp, format!("unknown op {op:?}"));
        return (id, Err(e));
    }
    // Fields a request does not use are ignored, so that clients and
    // servers can evolve apart (see the compatibility promise in docs/protocol.md).
    let request = Request::deserialize(Value::Object(fields))
        .map(|r| (r, home))
        .map_err(|e| error(&id, ErrorCode::BadRequest, e.to_string()));
    (id, request)
}

/// Answers one request line.
pub fn answer(homes: &Homes, line: &[u8]) -> Response {
    match parse(line) {
        (id, Ok((request, home))) => run(homes, &id, request, home.as_deref()),
        (_, Err(response)) => response,
    }
}

/// Carries out one parsed request, with the loader of the home it names.
fn run(homes: &Homes, id: &Id, request: Request, home: Option<&Path>) -> Response {
    let named;
    let loader = match home {
        None => &homes.own,
        Some(_) => match homes.get(home) {
            Ok(l) => {
                named = l;
                &*named
            }
            Err(report) => return Response::error(id, report),
        },
    };
    let response = answer_with(loader, id, request);
    // Said once per process: past the kernel's watch limits, checks are
    // stat sweeps (exact, dearer), which an operator sizing a server wants
    // to know.
    static SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if loader.watch_limited() && !SAID.swap(true, std::sync::atomic::Ordering::Relaxed) {
        eprintln!(
            "lisa-context serve: the kernel's inotify limits were reached (max_user_watches, \
             max_user_instances); the sessions it could not watch are checked by stat sweeps \
             from now on: answers stay exact, each check costs a stat per examined path"
        );
    }
    response
}

/// Answers a parsed request with `loader`, through the library's one
/// operation core.
fn answer_with(loader: &Loader, id: &Id, request: Request) -> Response {
    match lisa_context::protocol::answer(loader, request) {
        Ok(answer) => Response::answer(id, answer),
        Err(report) => Response::error(id, report),
    }
}

/// One line read from the input.
enum Incoming {
    /// A request line (trimmed, not blank).
    Line(Vec<u8>),
    /// A line refused before parsing, with the response to send.
    Refused(Response),
}

/// Reads the next line that needs an answer; `None` at end of input.
fn next_line(input: &mut impl BufRead, line: &mut Vec<u8>) -> io::Result<Option<Incoming>> {
    loop {
        line.clear();
        let n = input
            .by_ref()
            .take(MAX_LINE as u64 + 1)
            .read_until(b'\n', line)?;
        if n == 0 {
            return Ok(None);
        }
        if line.len() > MAX_LINE && !line.ends_with(b"\n") {
            // Drop the rest of the oversized line.
            let mut rest = Vec::new();
            loop {
                rest.clear();
                let m = input
                    .by_ref()
                    .take(64 * 1024)
                    .read_until(b'\n', &mut rest)?;
                if m == 0 || rest.ends_with(b"\n") {
                    break;
                }
            }
            return Ok(Some(Incoming::Refused(error(
                &Id::null(),
                ErrorCode::LineTooLong,
                format!("request lines are limited to {MAX_LINE} bytes"),
            ))));
        }
        let trimmed = line.trim_ascii();
        if !trimmed.is_empty() {
            return Ok(Some(Incoming::Line(trimmed.to_vec())));
        }
    }
}

/// Writes one response line and flushes it.
fn send(out: &Mutex<impl Write>, response: &Response) -> io::Result<()> {
    let mut out = out.lock().unwrap_or_else(|p| p.into_inner());
    out.write_all(&response.to_line())?;
    out.flush()
}

/// Serves until end of input, answering with `jobs` worker threads (one:
/// every request in turn, on this thread).
///
/// Requests about the same cwd (as written, `.` and repeated slashes aside)
/// are answered one after another in the order they arrived; requests about
/// different cwds may be answered in any order, each response carrying its
/// request's `id`. With one job, every response comes in request order.
pub fn serve(
    loader: &Homes,
    mut input: impl BufRead,
    out: &Mutex<impl Write + Send>,
    jobs: usize,
) -> io::Result<()> {
    let mut line = Vec::new();
    if jobs <= 1 {
        while let Some(incoming) = next_line(&mut input, &mut line)? {
            let response = match incoming {
                Incoming::Line(l) => answer(loader, &l),
                Incoming::Refused(response) => response,
            };
            send(out, &response)?;
        }
        return Ok(());
    }
    let queue = Queue::default();
    let mut serial = false;
    std::thread::scope(|scope| {
        let started = start_workers(scope, jobs, || queue.work(loader, out));
        if started == 0 {
            // No worker could be started: this thread answers every request
            // itself, as with `--jobs 1`.
            serial = true;
            return Ok(());
        }
        let read = (|| -> io::Result<()> {
            while let Some(incoming) = next_line(&mut input, &mut line)? {
                let job = match incoming {
                    Incoming::Refused(response) => Job::done(response),
                    Incoming::Line(l) => match parse(&l) {
                        (id, Ok((request, home))) => Job::todo(id, request, home, l.len()),
                        (_, Err(response)) => Job::done(response),
                    },
                };
                if !queue.push(job) {
                    break;
                }
            }
            Ok(())
        })();
        queue.close();
        read
    })?;
    if serial {
        return serve(loader, input, out, 1);
    }
    match queue.lock().failed.take() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// The most worker threads `serve` starts (`--jobs` is refused above it):
/// each holds a stack, and answering is bound by the cache and the disk
/// long before this many cores would help.
pub const MAX_JOBS: usize = 256;

/// Starts up to `jobs` scoped threads running `work`, and returns how many
/// started. A thread the system refuses (a process or memory limit) is not
/// an error: the server goes on with the ones it got, and says so on
/// stderr.
fn start_workers<'scope, 'env, F>(
    scope: &'scope std::thread::Scope<'scope, 'env>,
    jobs: usize,
    work: F,
) -> usize
where
    F: Fn() + Send + Copy + 'scope,
{
    for started in 0..jobs {
        let spawned = std::thread::Builder::new()
            .name(format!("serve-{started}"))
            .spawn_scoped(scope, work);
        if let Err(e) = spawned {
            let on = if started == 0 {
                "answering on the main thread".to_string()
            } else {
                format!("serving with {started}")
            };
            eprintln!("lisa-context serve: started {started} of {jobs} workers ({e}); {on}");
            return started;
        }
    }
    jobs
}

/// Most requests waiting for a worker, and most bytes of request lines
/// among them: a client that writes faster than the server answers is
/// held back on its pipe.
const MAX_QUEUED: usize = 1024;
const MAX_QUEUED_BYTES: usize = 64 << 20;

/// One request waiting for a worker.
struct Job {
    /// The cwd whose order the request keeps (`None`: answered already).
    key: Option<PathBuf>,
    /// What to do.
    work: Result<(Id, Request, Option<PathBuf>), Response>,
    /// The request line's length.
    bytes: usize,
}

impl Job {
    fn done(response: Response) -> Self {
        Job {
            key: None,
            work: Err(response),
            bytes: 0,
        }
    }

    fn todo(id: Id, request: Request, home: Option<PathBuf>, bytes: usize) -> Self {
        Job {
            // `hello` is about no cwd: it keeps no order.
            key: request.cwd().map(|c| c.components().collect()),
            work: Ok((id, request, home)),
            bytes,
        }
    }
}

/// The requests waiting, in arrival order, and the cwds being answered.
#[derive(Default)]
struct Waiting {
    jobs: VecDeque<Job>,
    bytes: usize,
    busy: HashSet<PathBuf>,
    /// No more requests will come.
    closed: bool,
    /// Writing a response failed: the server stops.
    failed: Option<io::Error>,
}

#[derive(Default)]
struct Queue {
    waiting: Mutex<Waiting>,
    /// Signalled when a job may have become available, or the queue closed.
    ready: Condvar,
    /// Signalled when room was made in the queue.
    room: Condvar,
}

impl Queue {
    fn lock(&self) -> MutexGuard<'_, Waiting> {
        // Every update leaves the fields consistent between statements that
        // cannot panic: a poisoned queue is sound.
        self.waiting.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Adds a job, waiting for room; false once the server is stopping.
    fn push(&self, job: Job) -> bool {
        let mut w = self.lock();
        while !w.jobs.is_empty()
            && (w.jobs.len() >= MAX_QUEUED || w.bytes + job.bytes > MAX_QUEUED_BYTES)
            && w.failed.is_none()
        {
            w = self.room.wait(w).unwrap_or_else(|p| p.into_inner());
        }
        if w.failed.is_some() {
            return false;
        }
        w.bytes += job.bytes;
        w.jobs.push_back(job);
        drop(w);
        self.ready.notify_one();
        true
    }

    fn close(&self) {
        self.lock().closed = true;
        self.ready.notify_all();
    }

    /// The first waiting job whose cwd is not being answered; `None` when
    /// the queue is closed and empty, or the server is stopping.
    fn take(&self) -> Option<Job> {
        let mut w = self.lock();
        loop {
            if w.failed.is_some() {
                return None;
            }
            let busy = &w.busy;
            let next = w
                .jobs
                .iter()
                .position(|j| j.key.as_ref().is_none_or(|k| !busy.contains(k)));
            if let Some(job) = next.and_then(|i| w.jobs.remove(i)) {
                w.bytes -= job.bytes;
                if let Some(k) = &job.key {
                    w.busy.insert(k.clone());
                }
                self.room.notify_one();
                return Some(job);
            }
            if w.closed && w.jobs.is_empty() {
                return None;
            }
            w = self.ready.wait(w).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// A worker: answers jobs until there are none left.
    fn work(&self, loader: &Homes, out: &Mutex<impl Write>) {
        while let Some(job) = self.take() {
            let response = match job.work {
                Ok((id, request, home)) => run(loader, &id, request, home.as_deref()),
                Err(response) => response,
            };
            // The response goes out before the cwd is released, so the
            // next request about it is answered after this one.
            let sent = send(out, &response);
            let mut w = self.lock();
            if let Some(k) = &job.key {
                w.busy.remove(k);
            }
            if let Err(e) = sent {
                w.failed.get_or_insert(e);
                drop(w);
                self.room.notify_all();
            } else {
                drop(w);
            }
            self.ready.notify_all();
        }
    }
}
