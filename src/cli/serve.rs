//! `lisa-context serve`: one JSON request per line on stdin, one JSON
//! response per line on stdout. A bad request gets an error response and the
//! server keeps serving; end of input ends it.

use std::io::{self, BufRead, Read, Write};
use std::path::PathBuf;

use lisa_context::{Loader, SnapshotError};
use serde::Deserialize;
use serde_json::{Value, json};

/// The longest request line accepted (1 MiB).
pub const MAX_LINE: usize = 1 << 20;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Request {
    id: Value,
    op: String,
    cwd: Option<PathBuf>,
    root: Option<PathBuf>,
    fingerprint: Option<String>,
    name: Option<String>,
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

/// Answers one request line.
pub fn answer(loader: &Loader, line: &[u8]) -> Value {
    let req: Request = match serde_json::from_slice(line) {
        Ok(r) => r,
        Err(e) => {
            // Keep the id when the line is a JSON object that has one.
            let id = serde_json::from_slice::<Value>(line)
                .ok()
                .and_then(|v| v.get("id").cloned())
                .unwrap_or(Value::Null);
            return error(&id, "bad-request", e.to_string());
        }
    };
    let id = &req.id;
    let Some(cwd) = req.cwd.as_deref() else {
        return error(id, "bad-request", "every request needs a \"cwd\"");
    };
    let root = req.root.as_deref();
    let result = match req.op.as_str() {
        "snapshot" => loader
            .snapshot_in(cwd, root)
            .map(|s| json!({ "id": id, "snapshot": &*s })),
        "fingerprint" => loader
            .fingerprint_in(cwd, root)
            .map(|f| json!({ "id": id, "fingerprint": f })),
        "refresh" => {
            let Some(prev) = req.fingerprint.as_deref() else {
                return error(
                    id,
                    "bad-request",
                    "\"refresh\" needs the previous \"fingerprint\"",
                );
            };
            loader.refresh_in(cwd, root, prev).map(|r| match r {
                None => json!({ "id": id, "changed": false }),
                Some(s) => json!({ "id": id, "changed": true, "snapshot": &*s }),
            })
        }
        "skill" => {
            let Some(name) = req.name.as_deref() else {
                return error(id, "bad-request", "\"skill\" needs a \"name\"");
            };
            loader
                .skill_in(cwd, root, name)
                .map(|s| json!({ "id": id, "skill": s }))
        }
        other => return error(id, "unknown-op", format!("unknown op {other:?}")),
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
