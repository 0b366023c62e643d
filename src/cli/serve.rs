//! `lisa-context serve`: one JSON request per line on stdin, one JSON
//! response per line on stdout. A bad request gets an error response and the
//! server keeps serving; end of input ends it.

use std::io::{self, BufRead, Read, Write};
use std::path::PathBuf;

use lisa_context::{Loader, SnapshotError};
use serde::Deserialize;
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

fn error(id: &Value, code: &str, message: impl Into<String>) -> Value {
    json!({ "id": id, "error": { "code": code, "message": message.into() } })
}

fn snapshot_error(id: &Value, e: &SnapshotError) -> Value {
    let code = match e {
        SnapshotError::InvalidSkillName(_) => "invalid-skill-name",
        SnapshotError::SkillNotFound { .. } => "skill-not-found",
        SnapshotError::SkillUnreadable { .. } => "skill-unreadable",
        SnapshotError::RootDoesNotContainCwd { .. } => "root-outside",
        SnapshotError::RelativeCwd(_) => "relative-cwd",
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

/// Parses a request line: the id (null when there is none), and the request
/// or the error response to send instead.
fn parse(line: &[u8]) -> (Value, Result<Request, Value>) {
    let mut fields: Map<String, Value> = match serde_json::from_slice(line) {
        Ok(Value::Object(fields)) => fields,
        Ok(_) => {
            let e = error(&Value::Null, "bad-request", "a request is a JSON object");
            return (Value::Null, Err(e));
        }
        Err(e) => {
            return (
                Value::Null,
                Err(error(&Value::Null, "bad-request", e.to_string())),
            );
        }
    };
    let Some(id) = fields.remove("id") else {
        let e = error(&Value::Null, "bad-request", "every request needs an \"id\"");
        return (Value::Null, Err(e));
    };
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
pub fn answer(loader: &Loader, line: &[u8]) -> Value {
    let (id, request) = parse(line);
    let request = match request {
        Ok(r) => r,
        Err(response) => return response,
    };
    let id = &id;
    let result = match request {
        Request::Snapshot { cwd, root } => loader
            .snapshot_in(&cwd, root.as_deref())
            .map(|s| json!({ "id": id, "snapshot": &*s })),
        Request::Fingerprint { cwd, root } => loader
            .fingerprint_in(&cwd, root.as_deref())
            .map(|f| json!({ "id": id, "fingerprint": f })),
        Request::Refresh {
            cwd,
            root,
            fingerprint,
        } => loader
            .refresh_in(&cwd, root.as_deref(), &fingerprint)
            .map(|r| match r {
                None => json!({ "id": id, "changed": false }),
                Some(s) => json!({ "id": id, "changed": true, "snapshot": &*s }),
            }),
        Request::Skill { cwd, root, name } => loader
            .skill_in(&cwd, root.as_deref(), &name)
            .map(|s| json!({ "id": id, "skill": s })),
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
                &Value::Null,
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
        serde_json::to_writer(&mut *out, &response)?;
        out.write_all(b"\n")?;
        out.flush()?;
    }
}
