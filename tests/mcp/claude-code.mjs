// Claude Code as a host of `lisa-context mcp`, offline: `claude -p` runs
// against a fake Messages API on 127.0.0.1 (as tests/compat/record.mjs
// records it), configured with `lisa-context mcp` as its one MCP server
// (`--mcp-config`, `--strict-mcp-config`), in a repository whose skills
// live only where lisa-context's policy reads them (`.lisa/skills`, which
// Claude Code itself does not read). What reaches the request Claude Code
// sends is printed as JSON: which of the server's skills, prompt and
// instructions appear in it, and the names of the MCP tools it offers.
//
//   node tests/mcp/claude-code.mjs /path/to/lisa-context /path/to/claude
//
// Prints the observation (JSON) and exits 0 when Claude Code ran and sent
// its request; what the request holds is reported, not asserted.
import { spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";

const [bin, claude] = process.argv.slice(2);
if (!bin || !claude) {
  console.error("usage: node claude-code.mjs /path/to/lisa-context /path/to/claude");
  process.exit(2);
}

const base = fs.mkdtempSync(path.join(os.tmpdir(), "lisa-mcp-claude-"));
const home = path.join(base, "home");
const lisaHome = path.join(base, "lisa-home");
const repo = path.join(base, "repo");
const write = (p, text) => {
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, text);
};
fs.mkdirSync(path.join(repo, ".git"), { recursive: true });
fs.mkdirSync(home, { recursive: true });
write(path.join(repo, "AGENTS.md"), "LISA-AGENTS-MARKER: use tabs.\n");
write(
  path.join(repo, ".lisa/skills/release-notes/SKILL.md"),
  "---\nname: release-notes\ndescription: LISA-SKILL-MARKER write release notes from the changelog.\n---\nRead CHANGELOG.md.\n",
);
write(
  path.join(lisaHome, "skills/home-tool/SKILL.md"),
  "---\nname: home-tool\ndescription: LISA-HOME-SKILL-MARKER the user's own tool.\n---\nbody\n",
);
const mcpConfig = path.join(base, "mcp.json");
fs.writeFileSync(
  mcpConfig,
  JSON.stringify({
    mcpServers: {
      "lisa-context": {
        type: "stdio",
        command: bin,
        args: ["--home", lisaHome, "mcp", "--cwd", repo, "--instructions"],
      },
    },
  }),
);

// The fake Messages API: every request kept, each answered `ok`.
const requests = [];
const server = http.createServer((req, res) => {
  let body = "";
  req.on("data", (d) => {
    body += d;
  });
  req.on("end", () => {
    if (req.method !== "POST" || !req.url.startsWith("/v1/messages") || req.url.startsWith("/v1/messages/")) {
      requests.push({ url: req.url, unexpected: true });
      res.writeHead(404, { "content-type": "application/json" });
      res.end('{"type":"error","error":{"type":"not_found_error","message":"not here"}}');
      return;
    }
    let j = null;
    try {
      j = JSON.parse(body);
    } catch {}
    requests.push({ url: req.url, body: j });
    const message = {
      id: `msg_${requests.length}`, type: "message", role: "assistant", model: j?.model ?? "fake",
      content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 },
    };
    if (!j?.stream) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ ...message, content: [{ type: "text", text: "ok" }], stop_reason: "end_turn" }));
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream" });
    const ev = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    ev("message_start", { message });
    ev("content_block_start", { index: 0, content_block: { type: "text", text: "" } });
    ev("content_block_delta", { index: 0, delta: { type: "text_delta", text: "ok" } });
    ev("content_block_stop", { index: 0 });
    ev("message_delta", { delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 1 } });
    ev("message_stop", {});
    res.end();
  });
});
await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
const port = server.address().port;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "lisa-mcp-claude-tmp-"));
const env = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: home, TMPDIR: tmp,
  ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}`, ANTHROPIC_API_KEY: "mcp-offline",
  DISABLE_TELEMETRY: "1", DISABLE_AUTOUPDATER: "1", DISABLE_ERROR_REPORTING: "1",
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY: "1",
};
const run = await new Promise((ok) => {
  const child = spawn(
    claude,
    ["-p", "hi", "--mcp-config", mcpConfig, "--strict-mcp-config"],
    { cwd: repo, env, stdio: ["ignore", "pipe", "pipe"] },
  );
  let out = "";
  child.stdout.on("data", (d) => {
    out += d;
  });
  child.stderr.on("data", (d) => {
    out += d;
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), 180_000);
  child.on("close", (code, signal) => {
    clearTimeout(timer);
    ok({ code, signal, out });
  });
});
server.close();

const bodies = requests.filter((r) => r.body).map((r) => r.body);
const main = bodies.find((b) => Array.isArray(b.tools) && b.tools.length > 0) ?? bodies[bodies.length - 1];
const text = main ? JSON.stringify(main) : "";
const observation = {
  claude: run.code === 0 ? "ran" : `exited ${run.signal ?? run.code}: ${run.out.slice(-500)}`,
  modelRequests: bodies.length,
  unexpectedRequests: requests.filter((r) => r.unexpected).map((r) => r.url),
  mcpTools: (main?.tools ?? []).map((t) => t.name).filter((n) => n.startsWith("mcp__") || /Mcp|Resource/.test(n)),
  reaches: {
    projectSkillFromServer: text.includes("LISA-SKILL-MARKER"),
    homeSkillFromServer: text.includes("LISA-HOME-SKILL-MARKER"),
    agentsMdText: text.includes("LISA-AGENTS-MARKER"),
    serverInstructions: text.includes("<<<") && text.includes("LISA-AGENTS-MARKER"),
    skillUri: text.includes("skill://"),
  },
};
// Where each marker sits: a short excerpt of the text around it.
const around = (marker) => {
  const i = text.indexOf(marker);
  return i < 0 ? null : JSON.parse(`"${text.slice(Math.max(0, i - 240), i + 120).replace(/\\?$/, "").replace(/(^|[^\\])"/g, "$1\\\"")}"`);
};
observation.excerpts = Object.fromEntries(
  ["LISA-SKILL-MARKER", "LISA-HOME-SKILL-MARKER", "LISA-AGENTS-MARKER"].map((m) => [m, around(m)]),
);
observation.tools = (main?.tools ?? []).map((t) => t.name);
// Claude Code's own skills listing (what its Skill tool offers): whether
// the server's skills are in it, and under which names.
const messages = (main?.messages ?? []).flatMap((m) =>
  typeof m.content === "string" ? [m.content] : m.content.filter((c) => c.type === "text").map((c) => c.text),
);
const listing = messages.find((t) => t.includes("The following skills are available for use with the Skill tool"));
const head = "The following skills are available for use with the Skill tool:\n\n";
observation.skillToolListing = listing
  ? listing
      .slice(listing.indexOf(head) + head.length)
      .split("\n")
      .filter((l) => l.startsWith("- "))
      .map((l) => l.slice(2).split(":")[0])
  : null;
observation.markerCount = {
  skill: text.split("LISA-SKILL-MARKER").length - 1,
  homeSkill: text.split("LISA-HOME-SKILL-MARKER").length - 1,
};
console.log(JSON.stringify(observation, null, 2));
fs.rmSync(base, { recursive: true, force: true });
fs.rmSync(tmp, { recursive: true, force: true });
process.exit(run.code === 0 && bodies.length > 0 ? 0 : 1);
