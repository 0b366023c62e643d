//! `lisa-context mcp`: a Model Context Protocol server on stdin/stdout
//! (newline-delimited JSON-RPC 2.0), serving the session's skills through
//! the Skills extension (`io.modelcontextprotocol/skills`, SEP-2640) and the
//! project context as a prompt and a resource.
//!
//! Every answer comes from the library's one operation core
//! ([`lisa_context::protocol::answer`]); this file only translates MCP's
//! methods, URIs and result shapes into its requests and back. The framing
//! (bounded lines, message kinds) is [`lisa_context::protocol::jsonrpc`].
//!
//! What is served: the skills that win their names for the session's cwd
//! (home and project; never a shadowed, refused, impostor or, under
//! `pinned`, unapproved one), each file of a skill's folder as
//! `skill://<origin>/<name>/<path>`, and nothing else. A URI is accepted
//! only in the exact form this server writes (no `..`, `.`, empty segment,
//! non-canonical percent-encoding, query or fragment); any other is -32602.

use std::io::{self, BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use lisa_context::Loader;
use lisa_context::protocol::jsonrpc::{self, Id, Line, Message, codes};
use lisa_context::protocol::{Answer, ErrorCode, ErrorReport, Request, SkillManifest};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};
use serde_json::{Value, json};

/// The extension's identifier.
pub const SKILLS_EXTENSION: &str = "io.modelcontextprotocol/skills";

/// Our own `_meta` prefix (the extension reserves
/// `io.modelcontextprotocol.skills/` for itself).
pub const META_PREFIX: &str = "dev.lisa-context/";

/// The URI of the project context as a resource.
pub const CONTEXT_URI: &str = "lisa-context://project-context";

/// The prompt's name.
pub const CONTEXT_PROMPT: &str = "project-context";

/// The protocol revisions this server speaks, newest first.
pub const PROTOCOL_VERSIONS: &[&str] = &[
    "2026-07-28",
    "2025-11-25",
    "2025-06-18",
    "2025-03-26",
    "2024-11-05",
];

/// The revision answered to a client asking for one this server does not
/// know (the newest with the `initialize` handshake).
const FALLBACK_VERSION: &str = "2025-11-25";

/// Skills per page of `skills/list` and `resources/list`.
pub const PAGE: usize = 100;

/// How long a host may hold a listing or an entry before asking again.
/// Files of a skill below its folder are not watched, so this stays short.
const TTL_MS: u64 = 30_000;

/// What a URI path segment may hold unescaped: RFC 3986's unreserved
/// characters (`-._~`, letters, digits); everything else is
/// percent-encoded, so each file name has exactly one spelling.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// How the server was started.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// `--cwd` (absolute): the session's cwd, whatever roots the client
    /// offers.
    pub cwd: Option<PathBuf>,
    /// `--root`: the repository root, when given.
    pub root: Option<PathBuf>,
    /// `--instructions`: the project context in `initialize`'s
    /// `instructions`.
    pub instructions: bool,
}

/// Where the session stands.
#[derive(Debug, Default)]
struct Session {
    /// The cwd from the client's first root.
    from_roots: Option<PathBuf>,
    /// The client said it has roots.
    client_roots: bool,
    /// The id of the `roots/list` request awaiting its answer.
    roots_pending: Option<Id>,
    /// How many requests this server sent.
    sent: u64,
    /// Requests held until the roots are known.
    deferred: Vec<(Id, String, Value)>,
    /// The change watcher was started.
    watching: bool,
    /// The client completed the `initialize` handshake: change notices go
    /// to it unsolicited (revisions before 2026-07-28).
    initialized: bool,
    /// The open `subscriptions/listen` streams (2026-07-28): each id, and
    /// whether it asked for resource and for prompt list changes.
    subscriptions: Vec<(Id, bool, bool)>,
}

/// The server.
pub struct Server<W: Write + Send + 'static> {
    loader: Arc<Loader>,
    options: Options,
    out: Arc<Mutex<W>>,
    session: Arc<Mutex<Session>>,
}

/// An error answer: a JSON-RPC code and a message.
type Failure = (i64, String);

fn invalid(message: impl Into<String>) -> Failure {
    (codes::INVALID_PARAMS, message.into())
}

/// Writes one line and flushes it.
fn send<W: Write>(out: &Mutex<W>, line: &[u8]) -> io::Result<()> {
    let mut out = out.lock().unwrap_or_else(|p| p.into_inner());
    out.write_all(line)?;
    out.flush()
}

/// A skill as served: its manifest, and whether another winner shares its
/// name (a policy that keeps both, such as Codex's): each of those is then
/// told apart by a prefix segment, the first 12 hex digits of the SHA-256
/// of its `SKILL.md`'s place in its root, stable while it stays there.
struct Tagged {
    m: SkillManifest,
    shared: bool,
}

/// Marks the manifests whose name another of `manifests` has (every winner
/// of a name comes in one answer).
fn tag(manifests: Vec<SkillManifest>) -> Vec<Tagged> {
    let mut count: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for m in &manifests {
        *count.entry(m.name.clone()).or_default() += 1;
    }
    manifests
        .into_iter()
        .map(|m| Tagged {
            shared: count.get(&m.name).copied().unwrap_or(0) > 1,
            m,
        })
        .collect()
}

impl Tagged {
    /// The prefix segment of a skill that shares its name.
    fn prefix(&self) -> Option<String> {
        use sha2::Digest as _;
        self.shared.then(|| {
            let sum = sha2::Sha256::digest(self.m.location.as_bytes());
            sum.iter().take(6).map(|b| format!("{b:02x}")).collect()
        })
    }

    /// `skill://<origin>[/<prefix>]/<name>`.
    fn root_uri(&self) -> String {
        let mut uri = format!("skill://{}", self.m.origin.as_str());
        if let Some(prefix) = self.prefix() {
            uri.push('/');
            uri.push_str(&prefix);
        }
        uri.push('/');
        uri.extend(utf8_percent_encode(&self.m.name, SEGMENT));
        uri
    }

    /// The URI of the file at `path` (`/`-separated) of the skill.
    fn file_uri(&self, path: &str) -> String {
        let mut uri = self.root_uri();
        for segment in path.split('/') {
            uri.push('/');
            uri.extend(utf8_percent_encode(segment, SEGMENT));
        }
        uri
    }
}

/// A `skill://` URI taken apart: the origin and the segments after it.
/// `None` unless every segment is written exactly as this server writes
/// one (no empty, `.` or `..` segment, no other percent-encoding, no query
/// or fragment).
fn parse_skill_uri(uri: &str) -> Option<(String, Vec<String>)> {
    let rest = uri.strip_prefix("skill://")?;
    if rest.contains(['?', '#', '\\']) {
        return None;
    }
    let mut segments = Vec::new();
    for raw in rest.split('/') {
        let decoded = percent_decode_str(raw).decode_utf8().ok()?;
        if decoded.is_empty()
            || decoded == "."
            || decoded == ".."
            || decoded.contains(['/', '\0'])
            || utf8_percent_encode(&decoded, SEGMENT).to_string() != raw
        {
            return None;
        }
        segments.push(decoded.into_owned());
    }
    if segments.len() < 2 {
        return None;
    }
    let origin = segments.remove(0);
    Some((origin, segments))
}

/// The MIME type a file is served with, by its name.
fn mime_type(path: &str) -> &'static str {
    let ext = path.rsplit_once('.').map_or("", |(_, e)| e);
    match ext.to_ascii_lowercase().as_str() {
        "md" | "markdown" => "text/markdown",
        "txt" => "text/plain",
        "json" => "application/json",
        "py" => "text/x-python",
        "sh" => "text/x-shellscript",
        "js" | "mjs" => "text/javascript",
        "ts" => "text/x-typescript",
        "html" => "text/html",
        "csv" => "text/csv",
        "yaml" | "yml" => "application/yaml",
        "toml" => "application/toml",
        "xml" => "application/xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "svg" => "image/svg+xml",
        "pdf" => "application/pdf",
        _ => "application/octet-stream",
    }
}

/// A JSON-RPC failure for an error of the core: the skill or file not
/// served is the caller's mistake (-32602); anything else is ours.
fn failure(report: &ErrorReport) -> Failure {
    match report.code {
        ErrorCode::SkillNotFound | ErrorCode::SkillUnreadable | ErrorCode::InvalidSkillName => {
            invalid(report.message.clone())
        }
        _ => (codes::INTERNAL_ERROR, report.message.clone()),
    }
}

/// A `file://` URI's path (absolute, percent-decoded).
fn file_uri_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    let path = match rest.strip_prefix("localhost") {
        Some(p) => p,
        None => rest,
    };
    if !path.starts_with('/') {
        return None;
    }
    let bytes: Vec<u8> = percent_decode_str(path).collect();
    use std::os::unix::ffi::OsStringExt as _;
    Some(PathBuf::from(std::ffi::OsString::from_vec(bytes)))
}

/// The result fields every result carries under the 2026-07-28 revision
/// (older clients ignore them).
fn complete(mut result: Value, cacheable: bool) -> Value {
    if let Value::Object(map) = &mut result {
        map.insert("resultType".into(), "complete".into());
        if cacheable {
            map.insert("ttlMs".into(), TTL_MS.into());
            map.insert("cacheScope".into(), "private".into());
        }
    }
    result
}

impl<W: Write + Send + 'static> Server<W> {
    /// A server answering with `loader` (watched, for change notices)
    /// and writing to `out`.
    pub fn new(loader: Loader, options: Options, out: W) -> Self {
        Server {
            loader: Arc::new(loader),
            options,
            out: Arc::new(Mutex::new(out)),
            session: Arc::new(Mutex::new(Session::default())),
        }
    }

    fn session(&self) -> std::sync::MutexGuard<'_, Session> {
        self.session.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The session's cwd: `--cwd`, else the client's first root, else the
    /// process's.
    fn cwd(&self) -> PathBuf {
        current_cwd(&self.options, &self.session)
    }

    /// Asks the core.
    fn ask(&self, request: Request) -> Result<Answer, Failure> {
        lisa_context::protocol::answer(&self.loader, request).map_err(|r| failure(&r))
    }

    fn root(&self) -> Option<PathBuf> {
        self.options.root.clone()
    }

    /// The project context (the snapshot's prompt).
    fn context(&self) -> Result<String, Failure> {
        let request = serde_json::from_value(json!({
            "op": "snapshot", "cwd": self.cwd(), "root": self.root(),
        }))
        .map_err(|e| (codes::INTERNAL_ERROR, e.to_string()))?;
        match self.ask(request)? {
            Answer::Snapshot { snapshot } => Ok(snapshot.prompt.clone()),
            _ => Err((codes::INTERNAL_ERROR, "unexpected answer".into())),
        }
    }

    /// The names of the skills that win for the cwd, in name order.
    fn skill_names(&self) -> Result<Vec<String>, Failure> {
        let request = serde_json::from_value(json!({
            "op": "snapshot", "cwd": self.cwd(), "root": self.root(),
        }))
        .map_err(|e| (codes::INTERNAL_ERROR, e.to_string()))?;
        match self.ask(request)? {
            Answer::Snapshot { snapshot } => {
                // Each name once, in the snapshot's order (its collation,
                // not byte order: nothing here assumes either).
                let mut seen = std::collections::HashSet::new();
                Ok(snapshot
                    .skills
                    .iter()
                    .filter(|s| seen.insert(s.name.as_str()))
                    .map(|s| s.name.clone())
                    .collect())
            }
            _ => Err((codes::INTERNAL_ERROR, "unexpected answer".into())),
        }
    }

    /// The manifests of the skills named.
    fn manifests(&self, names: Vec<String>) -> Result<Vec<Tagged>, Failure> {
        let request = serde_json::from_value(json!({
            "op": "skill-manifests", "cwd": self.cwd(), "root": self.root(), "names": names,
        }))
        .map_err(|e| (codes::INTERNAL_ERROR, e.to_string()))?;
        match self.ask(request)? {
            Answer::SkillManifests { manifests } => Ok(tag(manifests)),
            _ => Err((codes::INTERNAL_ERROR, "unexpected answer".into())),
        }
    }

    /// The skill a URI names, served, and the path below its folder
    /// (empty for the folder itself).
    fn served(&self, uri: &str) -> Result<(Tagged, String), Failure> {
        let not_served = || invalid(format!("no skill is served at {uri}"));
        let (origin, segments) = parse_skill_uri(uri).ok_or_else(not_served)?;
        let names = self.skill_names()?;
        let known = |n: &String| names.contains(n);
        // `<name>/<path>`, or `<prefix>/<name>/<path>` for a name shared.
        let mut found = None;
        if let Some(name) = segments.first().filter(|n| known(n)) {
            found = self
                .manifests(vec![name.clone()])?
                .into_iter()
                .find(|t| !t.shared && t.m.origin.as_str() == origin)
                .map(|t| (t, segments[1..].join("/")));
        }
        if found.is_none()
            && let [prefix, name, ..] = segments.as_slice()
            && known(name)
        {
            found = self
                .manifests(vec![name.clone()])?
                .into_iter()
                .find(|t| t.prefix().as_ref() == Some(prefix) && t.m.origin.as_str() == origin)
                .map(|t| (t, segments[2..].join("/")));
        }
        let (tagged, path) = found.ok_or_else(not_served)?;
        if let Some(why) = &tagged.m.not_served {
            return Err(invalid(format!("the skill at {uri} is not served: {why}")));
        }
        Ok((tagged, path))
    }

    /// One page of manifests from `cursor`, and the next cursor.
    fn page(&self, params: &Value) -> Result<(Vec<Tagged>, Option<String>), Failure> {
        let start = match params.get("cursor") {
            None | Some(Value::Null) => 0,
            Some(Value::String(c)) => c
                .parse::<usize>()
                .ok()
                .filter(|n| n.to_string() == *c)
                .ok_or_else(|| invalid("unknown cursor"))?,
            Some(_) => return Err(invalid("the cursor is a string")),
        };
        let names = self.skill_names()?;
        if start > names.len() {
            return Err(invalid("unknown cursor"));
        }
        let end = (start + PAGE).min(names.len());
        let page = names[start..end].to_vec();
        let next = (end < names.len()).then(|| end.to_string());
        let manifests = if page.is_empty() {
            Vec::new()
        } else {
            self.manifests(page)?
        };
        Ok((manifests, next))
    }

    /// A skill entry of the extension.
    fn entry(t: &Tagged) -> Value {
        let m = &t.m;
        let resources: Vec<Value> = m
            .files
            .iter()
            .map(|f| json!({ "uri": t.file_uri(&f.path), "digest": f.digest, "size": f.size }))
            .collect();
        json!({
            "uri": t.file_uri("SKILL.md"),
            "frontmatter": m.frontmatter,
            "resources": resources,
            "_meta": { format!("{META_PREFIX}origin"): m.origin.as_str() },
        })
    }

    /// The skills of a page not served, with why (said in `_meta` and on
    /// stderr).
    fn not_served(manifests: &[Tagged]) -> Vec<Value> {
        manifests
            .iter()
            .filter_map(|t| {
                let m = &t.m;
                let why = m.not_served.as_ref()?;
                eprintln!(
                    "lisa-context mcp: skill {:?} ({}) is not served: {why}",
                    m.name,
                    m.origin.as_str()
                );
                Some(json!({
                    "uri": t.file_uri("SKILL.md"),
                    "name": m.name,
                    "reason": why.to_string(),
                }))
            })
            .collect()
    }

    fn capabilities() -> Value {
        json!({
            "resources": { "listChanged": true },
            "prompts": { "listChanged": true },
            "extensions": { SKILLS_EXTENSION: { "directoryRead": true } },
        })
    }

    fn server_info() -> Value {
        json!({ "name": "lisa-context", "version": env!("CARGO_PKG_VERSION") })
    }

    /// Answers one request.
    fn handle(&self, method: &str, params: &Value) -> Result<Value, Failure> {
        match method {
            "initialize" => {
                let asked = params.get("protocolVersion").and_then(Value::as_str);
                let version = asked
                    .filter(|v| PROTOCOL_VERSIONS.contains(v) && *v != "2026-07-28")
                    .unwrap_or(FALLBACK_VERSION);
                self.session().client_roots = params
                    .pointer("/capabilities/roots")
                    .is_some_and(Value::is_object);
                let mut result = json!({
                    "protocolVersion": version,
                    "capabilities": Self::capabilities(),
                    "serverInfo": Self::server_info(),
                });
                if self.options.instructions {
                    result["instructions"] = self.context()?.into();
                }
                Ok(complete(result, false))
            }
            "server/discover" => {
                let mut result = json!({
                    "supportedVersions": PROTOCOL_VERSIONS,
                    "capabilities": Self::capabilities(),
                    "_meta": { "io.modelcontextprotocol/serverInfo": Self::server_info() },
                });
                if self.options.instructions {
                    result["instructions"] = self.context()?.into();
                }
                Ok(complete(result, true))
            }
            "ping" => Ok(complete(json!({}), false)),
            "skills/list" => {
                let (manifests, next) = self.page(params)?;
                let skills: Vec<Value> = manifests
                    .iter()
                    .filter(|t| t.m.not_served.is_none())
                    .map(Self::entry)
                    .collect();
                let mut result = json!({ "skills": skills });
                let left_out = Self::not_served(&manifests);
                if !left_out.is_empty() {
                    result["_meta"] = json!({ format!("{META_PREFIX}notServed"): left_out });
                }
                if let Some(next) = next {
                    result["nextCursor"] = next.into();
                }
                Ok(complete(result, true))
            }
            "skills/get" => {
                let uri = params
                    .get("uri")
                    .and_then(Value::as_str)
                    .ok_or_else(|| invalid("skills/get takes a \"uri\""))?;
                let (skill, path) = self.served(uri)?;
                if path != "SKILL.md" {
                    return Err(invalid(format!("no skill is served at {uri}")));
                }
                Ok(complete(json!({ "skill": Self::entry(&skill) }), true))
            }
            "resources/list" => {
                let (manifests, next) = self.page(params)?;
                let mut resources = Vec::new();
                if params.get("cursor").is_none_or(Value::is_null) {
                    resources.push(json!({
                        "uri": CONTEXT_URI,
                        "name": CONTEXT_PROMPT,
                        "description": "The project context: instruction files and skills \
                                        for the session's directory, under the user's policy",
                        "mimeType": "text/plain",
                    }));
                }
                for t in manifests.iter().filter(|t| t.m.not_served.is_none()) {
                    let m = &t.m;
                    let skill_md = m.files.iter().find(|f| f.path == "SKILL.md");
                    resources.push(json!({
                        "uri": t.file_uri("SKILL.md"),
                        "name": m.name,
                        "description": m.frontmatter.get("description").cloned().unwrap_or(Value::Null),
                        "mimeType": "text/markdown",
                        "size": skill_md.map(|f| f.size),
                        "_meta": { format!("{META_PREFIX}origin"): m.origin.as_str() },
                    }));
                }
                let mut result = json!({ "resources": resources });
                if let Some(next) = next {
                    result["nextCursor"] = next.into();
                }
                Ok(complete(result, true))
            }
            "resources/templates/list" => Ok(complete(json!({ "resourceTemplates": [] }), true)),
            "resources/read" => {
                let uri = params
                    .get("uri")
                    .and_then(Value::as_str)
                    .ok_or_else(|| invalid("resources/read takes a \"uri\""))?;
                if uri == CONTEXT_URI {
                    let text = self.context()?;
                    return Ok(complete(
                        json!({ "contents": [{ "uri": uri, "mimeType": "text/plain", "text": text }] }),
                        true,
                    ));
                }
                let unknown = || invalid(format!("no resource is served at {uri}"));
                let (skill, path) = self.served(uri).map_err(|_| unknown())?;
                if path.is_empty() || !skill.m.files.iter().any(|f| f.path == path) {
                    return Err(unknown());
                }
                let request = serde_json::from_value(json!({
                    "op": "skill-resource", "cwd": self.cwd(), "root": self.root(),
                    "name": skill.m.name, "location": skill.m.location, "path": path,
                }))
                .map_err(|e| (codes::INTERNAL_ERROR, e.to_string()))?;
                let Answer::SkillResource { resource } = self.ask(request)? else {
                    return Err((codes::INTERNAL_ERROR, "unexpected answer".into()));
                };
                let mut content = json!({ "uri": uri, "mimeType": mime_type(&path) });
                match (resource.text, resource.blob) {
                    (Some(text), _) => content["text"] = text.into(),
                    (None, Some(blob)) => content["blob"] = blob.into(),
                    (None, None) => content["text"] = "".into(),
                }
                Ok(complete(json!({ "contents": [content] }), true))
            }
            "resources/directory/read" => {
                let uri = params
                    .get("uri")
                    .and_then(Value::as_str)
                    .ok_or_else(|| invalid("resources/directory/read takes a \"uri\""))?;
                let not_dir = || invalid(format!("{uri} is not a directory resource"));
                let (skill, path) = self.served(uri)?;
                let manifest = &skill.m;
                let folders = manifest.folders();
                let children = folders.get(&path).ok_or_else(not_dir)?;
                let resources: Vec<Value> = children
                    .iter()
                    .map(|(child, is_folder)| {
                        let full = if path.is_empty() {
                            child.clone()
                        } else {
                            format!("{path}/{child}")
                        };
                        if *is_folder {
                            json!({ "uri": skill.file_uri(&full), "name": child,
                                    "mimeType": "inode/directory" })
                        } else {
                            let size = manifest
                                .files
                                .iter()
                                .find(|f| f.path == full)
                                .map(|f| f.size);
                            json!({ "uri": skill.file_uri(&full), "name": child,
                                    "mimeType": mime_type(child), "size": size })
                        }
                    })
                    .collect();
                Ok(complete(json!({ "resources": resources }), false))
            }
            "prompts/list" => Ok(complete(
                json!({ "prompts": [{
                    "name": CONTEXT_PROMPT,
                    "description": "The project context for the session's directory: \
                                    instruction files and skills, framed as the user's policy says",
                }] }),
                true,
            )),
            "prompts/get" => {
                if params.get("name").and_then(Value::as_str) != Some(CONTEXT_PROMPT) {
                    return Err(invalid(format!("the only prompt is {CONTEXT_PROMPT:?}")));
                }
                let text = self.context()?;
                Ok(complete(
                    json!({
                        "description": "The project context for the session's directory",
                        "messages": [{ "role": "user", "content": { "type": "text", "text": text } }],
                    }),
                    false,
                ))
            }
            _ => Err((
                codes::METHOD_NOT_FOUND,
                format!("unknown method {method:?}"),
            )),
        }
    }

    /// Whether a method's answer depends on the cwd (held until the
    /// client's roots are known).
    fn needs_cwd(method: &str) -> bool {
        !matches!(method, "initialize" | "ping" | "server/discover")
    }

    /// Answers a request, or holds it while the roots are asked for.
    fn request(&self, id: Id, method: String, params: Value) -> io::Result<()> {
        if method == "subscriptions/listen" {
            return self.listen(id, &params);
        }
        {
            let mut session = self.session();
            if session.roots_pending.is_some() && Self::needs_cwd(&method) {
                session.deferred.push((id, method, params));
                return Ok(());
            }
        }
        let line = match self.handle(&method, &params) {
            Ok(result) => jsonrpc::result_line(&id, &result),
            Err((code, message)) => jsonrpc::error_line(Some(&id), code, &message),
        };
        send(&self.out, &line)
    }

    /// Opens a `subscriptions/listen` stream (2026-07-28): acknowledged at
    /// once with the notices this server sends (resource and prompt list
    /// changes), which then carry the stream's id; the request is answered
    /// only when the stream ends.
    fn listen(&self, id: Id, params: &Value) -> io::Result<()> {
        let asked = |key: &str| {
            params
                .pointer(&format!("/notifications/{key}"))
                .and_then(Value::as_bool)
                == Some(true)
        };
        let (resources, prompts) = (asked("resourcesListChanged"), asked("promptsListChanged"));
        let mut honored = serde_json::Map::new();
        if resources {
            honored.insert("resourcesListChanged".into(), true.into());
        }
        if prompts {
            honored.insert("promptsListChanged".into(), true.into());
        }
        let subscription_id: Value = serde_json::from_str(id.json()).unwrap_or(Value::Null);
        send(
            &self.out,
            &jsonrpc::request_line(
                None,
                "notifications/subscriptions/acknowledged",
                &json!({
                    "notifications": honored,
                    "_meta": { "io.modelcontextprotocol/subscriptionId": subscription_id },
                }),
            ),
        )?;
        self.session().subscriptions.push((id, resources, prompts));
        self.watch();
        Ok(())
    }

    /// Asks the client for its roots (when it has them and `--cwd` was not
    /// given).
    fn ask_roots(&self) -> io::Result<()> {
        if self.options.cwd.is_some() {
            return Ok(());
        }
        let id = {
            let mut session = self.session();
            if !session.client_roots {
                return Ok(());
            }
            session.sent += 1;
            let id = Id::string(&format!("lisa-context-roots-{}", session.sent));
            session.roots_pending = Some(id.clone());
            id
        };
        send(
            &self.out,
            &jsonrpc::request_line(Some(&id), "roots/list", &Value::Null),
        )
    }

    /// The client's answer to a request this server sent.
    fn response(&self, id: &Id, outcome: Result<Value, Value>) -> io::Result<()> {
        let deferred = {
            let mut session = self.session();
            if session.roots_pending.as_ref() != Some(id) {
                return Ok(());
            }
            session.roots_pending = None;
            let first = outcome.ok().and_then(|r| {
                r.get("roots")?
                    .as_array()?
                    .iter()
                    .find_map(|root| file_uri_path(root.get("uri")?.as_str()?))
            });
            let changed = first != session.from_roots;
            session.from_roots = first;
            if changed && session.watching {
                drop(session);
                notify_changed(&self.out, &self.session)?;
                session = self.session();
            }
            std::mem::take(&mut session.deferred)
        };
        for (id, method, params) in deferred {
            self.request(id, method, params)?;
        }
        Ok(())
    }

    /// Starts the thread that tells the client when the context changed:
    /// it waits on the loader's watch (the kernel wakes it) and compares
    /// fingerprints.
    fn watch(&self) {
        {
            let mut session = self.session();
            if session.watching {
                return;
            }
            session.watching = true;
        }
        let loader = Arc::clone(&self.loader);
        let out = Arc::clone(&self.out);
        let session = Arc::clone(&self.session);
        let options = self.options.clone();
        let fingerprint = move |loader: &Loader, session: &Mutex<Session>| {
            let cwd = current_cwd(&options, session);
            let fp = loader.fingerprint_in(&cwd, options.root.as_deref()).ok();
            // A second check arms the watch on a build the first one made.
            let _ = loader.fingerprint_in(&cwd, options.root.as_deref());
            fp
        };
        // Taken before the first look, on this thread: a change made once
        // the request after `initialized` is answered is never missed.
        let Some(mut seen) = loader.change_count() else {
            return;
        };
        let mut last = fingerprint(&loader, &session);
        let started = std::thread::Builder::new()
            .name("mcp-watch".into())
            .spawn(move || {
                // After a look, the build may hold files changed within the
                // racy window, which the watch does not cover yet: one more
                // look once the window has passed arms it. Otherwise the
                // wait has no end but the kernel's event.
                let settle = Loader::RACY_WINDOW + std::time::Duration::from_millis(100);
                let mut settling = true;
                loop {
                    let Some(now) = loader.wait_for_change(seen, settling.then_some(settle)) else {
                        return;
                    };
                    settling = now != seen;
                    seen = now;
                    let fp = fingerprint(&loader, &session);
                    if fp != last {
                        last = fp;
                        if notify_changed(&out, &session).is_err() {
                            return;
                        }
                    }
                }
            });
        if let Err(e) = started {
            eprintln!("lisa-context mcp: no change notices ({e})");
        }
    }

    /// Serves until the input ends.
    pub fn serve(&self, mut input: impl BufRead) -> io::Result<()> {
        let mut buf = Vec::new();
        while let Some(line) = jsonrpc::read_line(&mut input, &mut buf, jsonrpc::MAX_MESSAGE)? {
            let line = match line {
                Line::Message(line) => line,
                Line::TooLong => {
                    send(
                        &self.out,
                        &jsonrpc::error_line(
                            None,
                            codes::INVALID_REQUEST,
                            &format!("messages are limited to {} bytes", jsonrpc::MAX_MESSAGE),
                        ),
                    )?;
                    continue;
                }
            };
            match jsonrpc::parse(&line) {
                Err(bad) => send(
                    &self.out,
                    &jsonrpc::error_line(bad.id.as_ref(), bad.code, &bad.message),
                )?,
                Ok(Message::Request { id, method, params }) => self.request(id, method, params)?,
                Ok(Message::Notification { method, params }) => match method.as_str() {
                    "notifications/initialized" => {
                        self.session().initialized = true;
                        self.ask_roots()?;
                        self.watch();
                    }
                    "notifications/cancelled" => {
                        let cancelled = params
                            .get("requestId")
                            .map(Value::to_string)
                            .unwrap_or_default();
                        self.session()
                            .subscriptions
                            .retain(|(id, _, _)| id.json() != cancelled);
                    }
                    "notifications/roots/list_changed" => self.ask_roots()?,
                    _ => {}
                },
                Ok(Message::Response { id, outcome }) => self.response(&id, outcome)?,
            }
        }
        Ok(())
    }
}

/// The session's cwd: `--cwd`, else the client's first root, else the
/// process's.
fn current_cwd(options: &Options, session: &Mutex<Session>) -> PathBuf {
    if let Some(cwd) = &options.cwd {
        return cwd.clone();
    }
    let from_roots = session
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .from_roots
        .clone();
    from_roots.unwrap_or_else(|| super::context::absolute(Path::new(".")))
}

/// Tells the client the resources and the prompt changed: unsolicited to a
/// client that made the `initialize` handshake, and on each open
/// `subscriptions/listen` stream that asked for them (with its id).
fn notify_changed<W: Write>(out: &Mutex<W>, session: &Mutex<Session>) -> io::Result<()> {
    const RESOURCES: &str = "notifications/resources/list_changed";
    const PROMPTS: &str = "notifications/prompts/list_changed";
    let (initialized, subscriptions) = {
        let s = session.lock().unwrap_or_else(|p| p.into_inner());
        (s.initialized, s.subscriptions.clone())
    };
    if initialized {
        for method in [RESOURCES, PROMPTS] {
            send(out, &jsonrpc::request_line(None, method, &Value::Null))?;
        }
    }
    for (id, resources, prompts) in subscriptions {
        let meta = json!({ "_meta": {
            "io.modelcontextprotocol/subscriptionId":
                serde_json::from_str::<Value>(id.json()).unwrap_or(Value::Null),
        }});
        for (wanted, method) in [(resources, RESOURCES), (prompts, PROMPTS)] {
            if wanted {
                send(out, &jsonrpc::request_line(None, method, &meta))?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_have_one_spelling() {
        let parts = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            parse_skill_uri("skill://project/pdf/SKILL.md"),
            Some(("project".into(), parts(&["pdf", "SKILL.md"])))
        );
        assert_eq!(
            parse_skill_uri("skill://home/pdf/a%20b/c.txt"),
            Some(("home".into(), parts(&["pdf", "a b", "c.txt"])))
        );
        assert_eq!(
            parse_skill_uri("skill://home/pdf"),
            Some(("home".into(), parts(&["pdf"])))
        );
        for bad in [
            "skill://project/pdf/../x/SKILL.md",
            "skill://project/pdf/%2e%2e/SKILL.md",
            "skill://project/pdf/%2E%2E/SKILL.md",
            "skill://project/pdf/./SKILL.md",
            "skill://project/pdf//SKILL.md",
            "skill://project/pdf/%53KILL.md",
            "skill://project/pdf/a%2fb",
            "skill://project/pdf/SKILL.md?x",
            "skill://project/pdf/SKILL.md#x",
            "skill://project",
            "file:///etc/passwd",
            "SKILL://project/pdf/SKILL.md",
            "skill://project/pdf/a\\b",
            "skill://project/pdf/%zz",
        ] {
            assert_eq!(parse_skill_uri(bad), None, "{bad}");
        }
    }

    #[test]
    fn file_roots_are_paths() {
        assert_eq!(
            file_uri_path("file:///home/me/my%20repo"),
            Some(PathBuf::from("/home/me/my repo"))
        );
        assert_eq!(
            file_uri_path("file://localhost/srv"),
            Some(PathBuf::from("/srv"))
        );
        assert_eq!(file_uri_path("https://example.com/x"), None);
        assert_eq!(file_uri_path("file://host/x"), None);
    }
}
