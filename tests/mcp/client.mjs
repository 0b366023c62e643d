// Drives `lisa-context mcp` with the official TypeScript SDK client
// (@modelcontextprotocol/sdk: Client + StdioClientTransport) over a tree
// built here, and checks what a host checks: the extension is declared,
// every listed skill is a winner, every file's digest and size match the
// file on disk (hashed here, independently of the server), resources/read
// gives those bytes, and what is not a listed file is -32602.
//
//   node tests/mcp/client.mjs /path/to/lisa-context
//
// Exit 0 when every check holds; otherwise the failed check is printed.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { z } from "zod";
import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import assert from "node:assert/strict";

const bin = process.argv[2];
assert.ok(bin, "usage: node client.mjs /path/to/lisa-context");

// The tree: a home skill with a nested folder and a binary file; project
// skills, one shadowed by the home's; a link out of a skill and a FIFO.
const base = fs.mkdtempSync(path.join(os.tmpdir(), "lisa-mcp-ts-"));
const home = path.join(base, "home");
const repo = path.join(base, "repo");
const write = (rel, content) => {
  const p = path.join(base, rel);
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, content);
  return p;
};
const skill = (name, description, body) =>
  `---\nname: ${name}\ndescription: ${description}\nmetadata:\n  owner: team\n---\n${body}\n`;
fs.mkdirSync(path.join(repo, ".git"), { recursive: true });
write("repo/AGENTS.md", "Use tabs.\n");
write("home/skills/pdf/SKILL.md", skill("pdf", "Merge PDFs.", "See scripts/run.py."));
write("home/skills/pdf/scripts/run.py", "print('merge')\n");
write("home/skills/pdf/templates/regional/eu.md", "# EU\n");
write("home/skills/pdf/logo.bin", Buffer.from([0, 159, 146, 150, 255, 10]));
write("repo/.agents/skills/pdf/SKILL.md", skill("pdf", "A repo's pdf (shadowed).", "x"));
write("repo/.agents/skills/release/SKILL.md", skill("release", "Cut a release.", "Tag it."));
write("repo/.agents/skills/release/CHECKLIST.md", "- tests\n");
fs.symlinkSync("/etc/passwd", path.join(repo, ".agents/skills/release/passwd"));
fs.symlinkSync(path.join(repo, "AGENTS.md"), path.join(repo, ".agents/skills/release/agents.md"));
execFileSync("mkfifo", [path.join(repo, ".agents/skills/release/pipe")]);
const folders = {
  "home/pdf": path.join(home, "skills/pdf"),
  "project/release": path.join(repo, ".agents/skills/release"),
};

const sha256 = (bytes) => "sha256:" + createHash("sha256").update(bytes).digest("hex");
const any = z.object({}).passthrough();

const transport = new StdioClientTransport({
  command: bin,
  args: ["--home", home, "mcp", "--cwd", repo],
  env: { PATH: process.env.PATH ?? "", HOME: path.join(base, "userhome") },
  stderr: "inherit",
});
const client = new Client({ name: "lisa-context-ci", version: "0" });
await client.connect(transport);
let checks = 0;
const check = (ok, what) => {
  assert.ok(ok, what);
  checks += 1;
};

const caps = client.getServerCapabilities();
check(caps?.resources !== undefined, "the resources capability is declared");
check(
  caps?.extensions?.["io.modelcontextprotocol/skills"]?.directoryRead === true,
  `the skills extension is declared with directoryRead: ${JSON.stringify(caps)}`,
);

// skills/list, page by page.
const entries = [];
let cursor;
do {
  const page = await client.request(
    { method: "skills/list", params: cursor ? { cursor } : {} },
    any,
  );
  check(page.resultType === "complete", "resultType");
  check(typeof page.ttlMs === "number" && typeof page.cacheScope === "string", "cacheable");
  entries.push(...page.skills);
  cursor = page.nextCursor;
} while (cursor);
const uris = entries.map((e) => e.uri).sort();
assert.deepEqual(uris, ["skill://home/pdf/SKILL.md", "skill://project/release/SKILL.md"]);

for (const entry of entries) {
  const key = entry.uri.slice("skill://".length, -"/SKILL.md".length);
  const folder = folders[key];
  check(folder, `a served skill is one of the tree's winners: ${entry.uri}`);
  check(entry.frontmatter.name === key.split("/")[1], "the URI ends with the name");
  check(entry.frontmatter.metadata?.owner === "team", "the frontmatter passes through");
  check(
    entry._meta?.["dev.lisa-context/origin"] === key.split("/")[0],
    "the origin is in _meta under our own prefix",
  );
  // Every regular file of the folder, reached without a link, once.
  const onDisk = new Map();
  const walk = (dir, prefix) => {
    for (const d of fs.readdirSync(dir, { withFileTypes: true })) {
      if (d.isDirectory()) walk(path.join(dir, d.name), `${prefix}${d.name}/`);
      else if (d.isFile()) onDisk.set(`${prefix}${d.name}`, fs.readFileSync(path.join(dir, d.name)));
    }
  };
  walk(folder, "");
  const listed = new Map(
    entry.resources.map((r) => [r.uri.slice(`skill://${key}/`.length), r]),
  );
  assert.deepEqual([...listed.keys()].sort(), [...onDisk.keys()].sort(), entry.uri);
  for (const [file, bytes] of onDisk) {
    const r = listed.get(file);
    check(r.digest === sha256(bytes), `digest of ${r.uri} matches the file on disk`);
    check(r.size === bytes.length, `size of ${r.uri}`);
    const read = await client.readResource({ uri: r.uri });
    const c = read.contents[0];
    const got = c.text !== undefined ? Buffer.from(c.text, "utf8") : Buffer.from(c.blob, "base64");
    check(sha256(got) === r.digest, `resources/read of ${r.uri} gives the listed bytes`);
  }
  const got = await client.request({ method: "skills/get", params: { uri: entry.uri } }, any);
  assert.deepEqual(got.skill, entry, "skills/get answers the listed entry");
  checks += 1;
}

// Directory reads.
const dir = await client.request(
  { method: "resources/directory/read", params: { uri: "skill://home/pdf/templates" } },
  any,
);
assert.deepEqual(dir.resources, [
  { uri: "skill://home/pdf/templates/regional", name: "regional", mimeType: "inode/directory" },
]);
checks += 1;

// What is not a listed file of a served skill is -32602.
const refused = async (method, uri) => {
  try {
    await client.request({ method, params: { uri } }, any);
  } catch (e) {
    check(e.code === -32602, `${method} ${uri}: ${e.code} ${e.message}`);
    return;
  }
  assert.fail(`${method} ${uri} was answered`);
};
for (const uri of [
  "skill://project/release/passwd",
  "skill://project/release/agents.md",
  "skill://project/release/pipe",
  "skill://project/release/../../AGENTS.md",
  "skill://project/release/%2e%2e/%2e%2e/AGENTS.md",
  "skill://project/pdf/SKILL.md",
  `file://${repo}/AGENTS.md`,
]) {
  await refused("resources/read", uri);
}
await refused("skills/get", "skill://project/pdf/SKILL.md");
await refused("resources/directory/read", "skill://home/pdf/SKILL.md");

// The project context: a prompt and a resource.
const prompts = await client.listPrompts();
check(prompts.prompts.some((p) => p.name === "project-context"), "the prompt is listed");
const prompt = await client.getPrompt({ name: "project-context" });
check(prompt.messages[0].content.text.includes("Use tabs."), "the prompt holds AGENTS.md");
const context = await client.readResource({ uri: "lisa-context://project-context" });
check(context.contents[0].text === prompt.messages[0].content.text, "resource = prompt");
const resources = await client.listResources();
check(
  resources.resources.some((r) => r.uri === "skill://home/pdf/SKILL.md"),
  "SKILL.md resources are listed",
);

await client.close();
fs.rmSync(base, { recursive: true, force: true });
console.log(`mcp (TypeScript SDK ${JSON.parse(fs.readFileSync(new URL("./node_modules/@modelcontextprotocol/sdk/package.json", import.meta.url))).version}): ${checks} checks passed`);
