//! `lisa-context serve`: one JSON request per line on stdin, one JSON
//! response per line on stdout. A bad request gets an error response and the
//! server keeps serving; end of input ends it.

use std::collections::HashMap;
use std::io::{self, BufRead, Read, Write};
use std::path::PathBuf;

use lisa_context::{Loader, SnapshotError};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

/// The longest request line accepted (1 MiB).
pub const MAX_LINE: usize = 1 << 20;

/// One request, by its `op`; the `id` is taken out first and echoed back.
#[derive(Deserialize, strum::VariantNames)]
#[serde(tag = "op", rename_all = "kebab-case", deny_unknown_fields)]
#[strum(serialize_all = "kebab-case")]
enum Request {
    /// The snapshot for a cwd.
    Snapshot { cwd: PathBuf, root: Option<PathBuf> },
    /// The fingerprint alone.
    Fingerprint { cwd: PathBuf, root: Option<PathBuf> },
    /// A new snapshot only if the fingerprint moved.
    Refresh {
        cwd: PathBuf,
        root: Option<PathBuf>,
        fingerprint: String,
    },
    /// The `SKILL.md` of the skill that wins a name.
    Skill {
        cwd: PathBuf,
        root: Option<PathBuf>,
        name: String,
    },
}

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

/// One response: the id to echo and the other fields.
#[derive(Debug)]
pub struct Response {
    id: Id,
    body: Map<String, Value>,
}

impl Response {
    fn new(id: &Id, body: Value) -> Self {
        let body = match body {
            Value::Object(fields) => fields,
            other => Map::from_iter([("result".to_string(), other)]),
        };
        Response {
            id: id.clone(),
            body,
        }
    }

    /// The response as one JSON line (with its newline): the raw id first,
    /// then the other fields.
    pub fn to_line(&self) -> Vec<u8> {
        let mut line = Vec::with_capacity(64);
        line.extend_from_slice(b"{\"id\":");
        line.extend_from_slice(self.id.0.get().as_bytes());
        for (key, value) in &self.body {
            line.push(b',');
            // Strings and values serialize infallibly into a Vec.
            let _ = serde_json::to_writer(&mut line, key);
            line.push(b':');
            let _ = serde_json::to_writer(&mut line, value);
        }
        line.extend_from_slice(b"}\n");
        line
    }
}

fn error(id: &Id, code: &str, message: impl Into<String>) -> Response {
    Response::new(
        id,
        json!({ "error": { "code": code, "message": message.into() } }),
    )
}

fn snapshot_error(id: &Id, e: &SnapshotError) -> Response {
    let code = match e {
        SnapshotError::InvalidSkillName(_) => "invalid-skill-name",
        SnapshotError::SkillNotFound { .. } => "skill-not-found",
        SnapshotError::SkillUnreadable { .. } => "skill-unreadable",
        SnapshotError::RootDoesNotContainCwd { .. } => "root-outside",
        SnapshotError::RelativeCwd(_) => "relative-cwd",
        SnapshotError::ResourceExhausted { .. } => "resource-exhausted",
        SnapshotError::PolicyInvalid(failure) => {
            return error(id, "policy-invalid", plain_report(failure));
        }
        _ => "bad-cwd",
    };
    let mut message = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        message.push_str(": ");
        message.push_str(&s.to_string());
        source = s.source();
    }
    error(id, code, message)
}

/// A diagnostic rendered as plain text, spans and help included, without
/// colour or terminal sequences (a JSON client shows it as it is).
fn plain_report(diagnostic: &dyn miette::Diagnostic) -> String {
    let handler = miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::none())
        .with_links(false)
        .with_width(100);
    let mut out = String::new();
    match handler.render_report(&mut out, diagnostic) {
        Ok(()) => out,
        Err(_) => diagnostic.to_string(),
    }
}

/// Parses a request line: the id (null when there is none), and the request
/// or the error response to send instead.
///
/// The line is first split into its members as raw JSON text, so the id is
/// kept exactly as written (a number beyond what `f64` holds included); the
/// other members are then read as values.
fn parse(line: &[u8]) -> (Id, Result<Request, Response>) {
    let null = Id::null();
    let bad = |message: String| {
        let e = error(&null, "bad-request", message);
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
    let mut fields = Map::new();
    for (name, raw) in members {
        match serde_json::from_str::<Value>(raw.get()) {
            Ok(v) => {
                fields.insert(name, v);
            }
            Err(e) => {
                let e = error(&id, "bad-request", format!("field {name:?}: {e}"));
                return (id, Err(e));
            }
        }
    }
    if let Some(Value::String(op)) = fields.get("op") {
        if !<Request as strum::VariantNames>::VARIANTS.contains(&op.as_str()) {
            let e = error(&id, "unknown-op", format!("unknown op {op:?}"));
            return (id, Err(e));
        }
    }
    let request = Request::deserialize(Value::Object(fields))
        .map_err(|e| error(&id, "bad-request", e.to_string()));
    (id, request)
}

/// Answers one request line.
pub fn answer(loader: &Loader, line: &[u8]) -> Response {
    let (id, request) = parse(line);
    let request = match request {
        Ok(r) => r,
        Err(response) => return response,
    };
    let id = &id;
    let result = match request {
        Request::Snapshot { cwd, root } => loader
            .snapshot_in(&cwd, root.as_deref())
            .map(|s| Response::new(id, json!({ "snapshot": &*s }))),
        Request::Fingerprint { cwd, root } => loader
            .fingerprint_in(&cwd, root.as_deref())
            .map(|f| Response::new(id, json!({ "fingerprint": f }))),
        Request::Refresh {
            cwd,
            root,
            fingerprint,
        } => loader
            .refresh_in(&cwd, root.as_deref(), &fingerprint)
            .map(|r| match r {
                None => Response::new(id, json!({ "changed": false })),
                Some(s) => Response::new(id, json!({ "changed": true, "snapshot": &*s })),
            }),
        Request::Skill { cwd, root, name } => loader
            .skill_in(&cwd, root.as_deref(), &name)
            .map(|s| Response::new(id, json!({ "skill": s }))),
    };
    result.unwrap_or_else(|e| snapshot_error(id, &e))
}

/// Serves until end of input.
pub fn serve(loader: &Loader, mut input: impl BufRead, out: &mut impl Write) -> io::Result<()> {
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = (&mut input)
            .take(MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut line)?;
        if n == 0 {
            return Ok(());
        }
        let response = if line.len() > MAX_LINE && !line.ends_with(b"\n") {
            // Drop the rest of the oversized line.
            let mut rest = Vec::new();
            loop {
                rest.clear();
                let m = (&mut input).take(64 * 1024).read_until(b'\n', &mut rest)?;
                if m == 0 || rest.ends_with(b"\n") {
                    break;
                }
            }
            error(
                &Id::null(),
                "line-too-long",
                format!("request lines are limited to {MAX_LINE} bytes"),
            )
        } else {
            let trimmed = line.trim_ascii();
            if trimmed.is_empty() {
                continue;
            }
            answer(loader, trimmed)
        };
        out.write_all(&response.to_line())?;
        out.flush()?;
    }
}
