#!/usr/bin/env node
// Runs the REAL OpenCode on every case of opencode.json (next to this file)
// and prints what it loaded, in the shape of each case's `expect`.
//
//   node tests/compat/harnesses/record-opencode.mjs [--bin PATH] [--cases FILE]
//        [--only NAME[,NAME...]] [--out FILE] [--timeout SECONDS] [--jobs N]
//        [--check | --write] [--keep] [--dump DIR] [--quiet]
//
// --bin: the `opencode` program (npm package `opencode-ai`); by default
//   $OPENCODE_BIN, else ${XDG_CACHE_HOME:-~/.cache}/lisa-context-peers/
//   opencode-ai@<PINNED>/node_modules/.bin/opencode, else `opencode` on PATH.
// --out: also write the observations as JSON (version, date, one entry per case).
// --check: exit 1 when an observation differs from the case's `expect`.
// --write: put each observation into its case's `expect` in --cases (a case
//   whose observation differs from `expect` only in a race keeps its `expect`).
// --keep: leave the temporary trees (their paths are printed).
// --dump DIR: write every request body OpenCode sent as DIR/<case>.requests.json.
// --jobs N: cases run side by side (default: the CPU count, at most 4).
//
// How a case is run (nothing leaves the machine):
// - the case's tree is written into a fresh temporary root holding home/ and
//   repo/; a `dir` entry named `.git` becomes a real repository (`git init`),
//   as OpenCode asks git for the worktree (an empty .git folder is not a
//   repository to it: its walk would then go on up to `/`);
// - a fake OpenAI-compatible chat server on 127.0.0.1 (this process) keeps
//   every request; OpenCode is pointed at it through OPENCODE_CONFIG (a
//   custom provider using the bundled @ai-sdk/openai-compatible: no
//   download). HOME is the tree's home/, XDG_CONFIG_HOME its home/.config
//   (so ~/.config/opencode is the tree's), XDG_DATA/CACHE/STATE_HOME and
//   TMPDIR a separate temporary folder; autoupdate, share, models.dev fetch
//   and LSP downloads are off;
// - `opencode run --title lisa-compat hi` in the case's cwd (the title
//   saves the separate title request). The fake model answers with a `read`
//   tool call for each of the case's `accesses` in turn, then the text `ok`;
// - the first request's system prompt holds the startup instruction files as
//   `Instructions from: <absolute path>\n<text>`, the text the file's whole
//   text (checked); `includedBytes` gives each one's UTF-8 bytes in the prompt
//   (OpenCode shows no block for an empty file, and the whole text, white
//   space alone included, for any other); the last request holds each `read`
//   result, which ends with a `<system-reminder>` of the same blocks when the
//   read loaded any;
// - for a case whose `expect` has `skills`: the first request's system prompt
//   lists the skills in one `<available_skills>` block, each `<skill>` with
//   its `<name>`, `<description>` and `<location>` (the SKILL.md's absolute
//   path, HTML-escaped); the built-in `customize-opencode` (location
//   `<built-in>`) is left out, every other must be a SKILL.md in the fixture
//   whose text holds the name and description shown; each is recorded as
//   { path, name, description }, the name and description as the prompt
//   shows them (OpenCode escapes neither). The `skill` tool's
//   description names no skill (it points at the system prompt). Of two
//   copies of a name OpenCode keeps the one whose parse ends last (all are
//   parsed at once): a race. Its log names each duplicate; a case whose
//   observation differs from `expect` only in which copy of such a name
//   won is a RACE, printed but not a difference for --check.
// A run is killed (its whole process group) after --timeout seconds. Any
// output the recorder cannot account for is an error, never an empty list.

import { spawn, spawnSync } from 'node:child_process';
import {
  existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync,
  rmSync, symlinkSync, writeFileSync,
} from 'node:fs';
import http from 'node:http';
import { availableParallelism, tmpdir } from 'node:os';
import { basename, dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const PINNED = '1.18.33';
const PROVIDER = 'lisa-fake';
const MODEL = 'model';
const HEADER = 'Instructions from: ';

class RecordError extends Error {}
const fail = (msg) => { throw new RecordError(msg); };

function parseArgs(argv) {
  const o = { bin: null, cases: join(here, 'opencode.json'), only: null, out: null, timeout: 90, jobs: Math.max(1, Math.min(4, availableParallelism())), check: false, write: false, keep: false, dump: null, quiet: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const val = () => {
      if (i + 1 >= argv.length) fail(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--bin') o.bin = val();
    else if (a === '--cases') o.cases = val();
    else if (a === '--only') o.only = val().split(',').filter(Boolean);
    else if (a === '--out') o.out = val();
    else if (a === '--timeout') o.timeout = Number(val());
    else if (a === '--jobs') o.jobs = Number(val());
    else if (a === '--check') o.check = true;
    else if (a === '--write') o.write = true;
    else if (a === '--keep') o.keep = true;
    else if (a === '--dump') o.dump = val();
    else if (a === '--quiet') o.quiet = true;
    else if (a === '-h' || a === '--help') {
      const lines = readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n');
      console.log(lines.slice(1, lines.findIndex((l) => l.startsWith('// How a case')) - 1).map((l) => l.replace(/^\/\/ ?/, '')).join('\n'));
      process.exit(0);
    } else fail(`unknown argument ${a}`);
  }
  if (!(o.timeout > 0)) fail('--timeout must be a positive number of seconds');
  if (!(Number.isInteger(o.jobs) && o.jobs > 0)) fail('--jobs must be a positive integer');
  if (o.check && o.write) fail('--check and --write do not go together');
  return o;
}

function findBin(given) {
  if (given) {
    if (!existsSync(given)) fail(`no such program: ${given}`);
    return given;
  }
  if (process.env.OPENCODE_BIN) return process.env.OPENCODE_BIN;
  const cache = process.env.XDG_CACHE_HOME || join(process.env.HOME || tmpdir(), '.cache');
  const pinned = join(cache, 'lisa-context-peers', `opencode-ai@${PINNED}`, 'node_modules', '.bin', 'opencode');
  if (existsSync(pinned)) return pinned;
  const onPath = spawnSync('sh', ['-c', 'command -v opencode'], { encoding: 'utf8' });
  if (onPath.status === 0 && onPath.stdout.trim()) return onPath.stdout.trim();
  fail(`no opencode program: pass --bin, or install it with: npm install --prefix ${dirname(dirname(dirname(pinned)))} opencode-ai@${PINNED}`);
}

// ------------------------------------------------------------------ environment

/** A scratch folder outside the fixture for OpenCode's own data, and the env. */
function isolatedEnv(root, scratch, configFile, registry) {
  for (const d of ['data', 'cache', 'state', 'tmp', 'npm']) mkdirSync(join(scratch, d), { recursive: true });
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    LANG: 'C.UTF-8',
    HOME: join(root, 'home'),
    XDG_CONFIG_HOME: join(root, 'home', '.config'),
    XDG_DATA_HOME: join(scratch, 'data'),
    XDG_CACHE_HOME: join(scratch, 'cache'),
    XDG_STATE_HOME: join(scratch, 'state'),
    TMPDIR: join(scratch, 'tmp'),
    OPENCODE_CONFIG: configFile,
    OPENCODE_DISABLE_AUTOUPDATE: '1',
    OPENCODE_DISABLE_SHARE: '1',
    OPENCODE_DISABLE_MODELS_FETCH: '1',
    OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
    GIT_CONFIG_NOSYSTEM: '1',
    // OpenCode installs @opencode-ai/plugin into each config folder in the
    // background (its bundled npm, which reads npm_config_*): keep that
    // offline and out of the fixture's home; it fails, which it only logs.
    npm_config_offline: 'true',
    npm_config_registry: registry,
    npm_config_cache: join(scratch, 'npm'),
    npm_config_userconfig: join(scratch, 'npmrc'),
    npm_config_globalconfig: join(scratch, 'npmrc-global'),
    npm_config_update_notifier: 'false',
  };
}

function writeConfig(file, baseURL) {
  const config = {
    $schema: 'https://opencode.ai/config.json',
    autoupdate: false,
    share: 'disabled',
    snapshot: false,
    model: `${PROVIDER}/${MODEL}`,
    small_model: `${PROVIDER}/${MODEL}`,
    provider: {
      [PROVIDER]: {
        npm: '@ai-sdk/openai-compatible',
        name: 'lisa-context fake model',
        options: { baseURL, apiKey: 'compat-offline' },
        models: { [MODEL]: { name: 'fake', tool_call: true } },
      },
    },
  };
  writeFileSync(file, JSON.stringify(config, null, 2) + '\n');
}

function version(bin) {
  const scratch = mkdtempSync(join(tmpdir(), 'lisa-oc-version-'));
  try {
    mkdirSync(join(scratch, 'home'));
    const cfg = join(scratch, 'opencode.json');
    writeConfig(cfg, 'http://127.0.0.1:9/v1');
    const v = spawnSync(bin, ['--version'], { encoding: 'utf8', timeout: 60_000, cwd: scratch, env: isolatedEnv(scratch, scratch, cfg, 'http://127.0.0.1:9/') });
    const m = /^(\d+\.\d+\.\d+\S*)\s*$/.exec(v.stdout ?? '');
    if (v.status !== 0 || !m) fail(`\`${bin} --version\` said: ${v.stdout}${v.stderr}`);
    return m[1];
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

// ------------------------------------------------------------------ the tree

function writeTree(root, c) {
  mkdirSync(join(root, 'home'), { recursive: true });
  mkdirSync(join(root, 'repo'), { recursive: true });
  for (const e of c.tree) {
    if (e.path.split('/').includes('..') || e.path.startsWith('/')) fail(`${c.name}: tree path ${e.path} leaves the root`);
    const p = join(root, ...e.path.split('/'));
    if (e.dir && basename(p) === '.git') {
      mkdirSync(dirname(p), { recursive: true });
      const g = spawnSync('git', ['-c', 'init.defaultBranch=main', 'init', '-q', dirname(p)], {
        encoding: 'utf8', timeout: 30_000, env: { PATH: process.env.PATH, HOME: join(root, 'home'), GIT_CONFIG_NOSYSTEM: '1' },
      });
      if (g.status !== 0) fail(`${c.name}: git init ${dirname(p)}: ${g.stderr || g.error}`);
    } else if (e.dir) {
      mkdirSync(p, { recursive: true });
    } else if (e.symlink !== undefined) {
      mkdirSync(dirname(p), { recursive: true });
      symlinkSync(e.symlink, p);
    } else {
      mkdirSync(dirname(p), { recursive: true });
      writeFileSync(p, e.text ?? `[${e.path}]\n`);
    }
  }
  mkdirSync(join(root, ...c.cwd.split('/')), { recursive: true });
}

// ------------------------------------------------------------------ fake model

/**
 * One fake OpenAI-compatible server for the whole recording; each case has
 * its own path prefix `/<id>/v1` so cases can run side by side.
 */
function fakeServer() {
  const routes = new Map();
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => { body += d; });
    req.on('end', () => {
      const m = /^\/([^/]+)\/v1\/chat\/completions$/.exec(req.url);
      const route = routes.get(req.url.split('/')[1]);
      if (!route) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end('{"error":{"message":"no such case"}}');
        return;
      }
      if (req.url.startsWith(`/${req.url.split('/')[1]}/npm/`)) {
        route.registry.push(`${req.method} ${req.url}`);
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end('{"error":"Not found"}');
        return;
      }
      if (req.method !== 'POST' || !m) {
        route.requests.push({ method: req.method, url: req.url, unexpected: true });
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end('{"error":{"message":"not served"}}');
        return;
      }
      let j = null;
      try { j = JSON.parse(body); } catch { /* kept as null: an error below */ }
      route.requests.push({ method: req.method, url: req.url, body: j });
      const n = route.requests.filter((r) => r.body).length - 1;
      const call = route.reply(n, j);
      const head = { id: `chatcmpl-${n}`, object: 'chat.completion.chunk', created: 0, model: j?.model ?? MODEL };
      const usage = { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 };
      const delta = call
        ? { role: 'assistant', tool_calls: [{ index: 0, id: call.id, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.input) } }] }
        : { role: 'assistant', content: 'ok' };
      const finish = call ? 'tool_calls' : 'stop';
      if (!j?.stream) {
        const message = call ? { role: 'assistant', content: null, tool_calls: delta.tool_calls.map(({ index, ...t }) => t) } : { role: 'assistant', content: 'ok' };
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ ...head, object: 'chat.completion', choices: [{ index: 0, message, finish_reason: finish }], usage }));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const chunk = (o) => res.write(`data: ${JSON.stringify(o)}\n\n`);
      chunk({ ...head, choices: [{ index: 0, delta, finish_reason: null }] });
      chunk({ ...head, choices: [{ index: 0, delta: {}, finish_reason: finish }], usage });
      res.end('data: [DONE]\n\n');
    });
  });
  return new Promise((ok, ko) => {
    server.on('error', ko);
    server.listen(0, '127.0.0.1', () => ok({ server, routes, port: server.address().port }));
  });
}

// ------------------------------------------------------------------ one case

// The process groups still running and the temporary folders in use: when
// the recorder is stopped, the groups are killed and the folders removed
// (unless --keep).
const live = new Set();
const inUse = new Set();
let keepFolders = false;
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => {
    for (const pid of live) { try { process.kill(-pid, 'SIGKILL'); } catch { /* gone */ } }
    if (!keepFolders) for (const d of inUse) rmSync(d, { recursive: true, force: true });
    process.exit(130);
  });
}

function runProgram(bin, args, cwd, env, seconds) {
  return new Promise((ok) => {
    const started = Date.now();
    const child = spawn(bin, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    if (child.pid) live.add(child.pid);
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { out += d; });
    let timedOut = false;
    const killGroup = () => { try { process.kill(-child.pid, 'SIGKILL'); } catch { /* already gone */ } };
    const timer = setTimeout(() => { timedOut = true; killGroup(); }, seconds * 1000);
    child.on('error', (e) => { clearTimeout(timer); ok({ code: null, out: e.message, ms: Date.now() - started, timedOut }); });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      killGroup(); // whatever it left behind in its group
      live.delete(child.pid);
      ok({ code, signal, out, ms: Date.now() - started, timedOut });
    });
  });
}

async function recordCase(ctx, c, id) {
  const root = realpathSync(mkdtempSync(join(tmpdir(), `lisa-oc-${c.name}-`)));
  const scratch = realpathSync(mkdtempSync(join(tmpdir(), `lisa-oc-run-`)));
  inUse.add(root).add(scratch);
  const accesses = (c.expect.accesses ?? []).map((a) => a.path);
  const calls = accesses.map((p, i) => ({ id: `call_lisa_${i}`, name: 'read', input: { filePath: `${root}/${p}` } }));
  const route = { requests: [], registry: [], reply: (n) => calls[n] ?? null };
  ctx.api.routes.set(id, route);
  try {
    writeTree(root, c);
    const cfg = join(scratch, 'opencode.json');
    writeConfig(cfg, `http://127.0.0.1:${ctx.api.port}/${id}/v1`);
    const env = isolatedEnv(root, scratch, cfg, `http://127.0.0.1:${ctx.api.port}/${id}/npm/`);
    const cwd = join(root, ...c.cwd.split('/'));
    const run = await runProgram(ctx.bin, ['run', '--title', 'lisa-compat', 'hi'], cwd, env, ctx.timeout);
    const logs = `${join(scratch, 'data', 'opencode', 'log')}${ctx.keep ? '' : ' (removed: run with --keep to read it)'}`;
    if (run.timedOut) fail(`${c.name}: opencode still running after ${ctx.timeout} s (killed); its log: ${logs}`);
    if (run.code !== 0) fail(`${c.name}: opencode exited with ${run.signal ?? run.code}: ${run.out.slice(-2000)}`);
    const odd = route.requests.filter((r) => r.unexpected || !r.body);
    if (odd.length) fail(`${c.name}: requests the fake server does not serve: ${odd.map((r) => `${r.method} ${r.url}`).join(', ')}`);
    const bodies = route.requests.map((r) => r.body);
    if (ctx.dump) writeFileSync(join(ctx.dump, `${c.name}.requests.json`), JSON.stringify(bodies, null, 2) + '\n');
    if (bodies.length !== accesses.length + 1) fail(`${c.name}: ${bodies.length} model requests, expected ${accesses.length + 1} (one per access, then the answer); output: ${run.out.slice(-1500)}`);
    for (const b of bodies) {
      if (!(b.tools ?? []).some((t) => t.function?.name === 'read')) fail(`${c.name}: a request offers no \`read\` tool (a title or summary request?)`);
    }
    const readTool = bodies[0].tools.find((t) => t.function.name === 'read');
    if (!readTool.function.parameters?.properties?.filePath) fail(`${c.name}: the read tool takes no filePath: ${JSON.stringify(readTool.function.parameters)}`);
    const observed = startup(c, root, bodies[0]);
    if (c.expect.accesses) observed.accesses = onAccess(c, root, calls, accesses, bodies[bodies.length - 1]);
    if (c.expect.skills) observed.skills = skillsListed(c, root, bodies[0]);
    return { observed, duplicates: duplicateSkills(c, root, scratch), ms: run.ms, root, scratch };
  } finally {
    ctx.api.routes.delete(id);
    inUse.delete(root);
    inUse.delete(scratch);
    if (!ctx.keep) {
      rmSync(scratch, { recursive: true, force: true });
      rmSync(root, { recursive: true, force: true });
    }
  }
}

const textOf = (content) => (typeof content === 'string' ? content
  : Array.isArray(content) ? content.map((p) => (typeof p === 'string' ? p : p.text ?? '')).join('') : '');

/**
 * The `Instructions from:` blocks of `text`, in order, as fixture paths with
 * the UTF-8 bytes of the text each shows. Each block's text must be the
 * file's whole text (the fixture's files are short).
 */
function blocks(c, root, text, where) {
  const found = [];
  const re = /Instructions from: ([^\n]*)\n/g;
  let m;
  while ((m = re.exec(text))) {
    const abs = m[1];
    if (abs !== root && !abs.startsWith(root + sep)) fail(`${c.name}: ${where} names a file outside the fixture: ${abs}`);
    let body;
    try { body = readFileSync(abs, 'utf8'); } catch (e) { fail(`${c.name}: ${where} names ${abs}, which cannot be read: ${e.message}`); }
    const shown = text.slice(re.lastIndex, re.lastIndex + body.length);
    if (shown !== body) fail(`${c.name}: ${where} shows ${abs} as text that is not the file's: ${JSON.stringify(text.slice(re.lastIndex, re.lastIndex + 120))}`);
    found.push({ path: relative(root, abs).split(sep).join('/'), bytes: Buffer.byteLength(body) });
  }
  return found;
}

function startup(c, root, body) {
  const system = body.messages.filter((m) => m.role === 'system').map((m) => textOf(m.content)).join('\n');
  if (!system.includes('<env>')) fail(`${c.name}: the first request has no system prompt with an <env> block`);
  // The walks stop at the git worktree; without one OpenCode takes `/` and
  // would read this machine's folders above the fixture.
  const top = /\n {2}Workspace root folder: ([^\n]*)\n/.exec(system)?.[1];
  if (!top || !(top === root || top.startsWith(root + sep))) fail(`${c.name}: OpenCode's worktree is ${top ?? '(not shown)'}, not inside the fixture: give the tree a \`repo/.git\` folder`);
  const rest = body.messages.filter((m) => m.role !== 'system').map((m) => textOf(m.content)).join('\n');
  if (rest.includes(HEADER)) fail(`${c.name}: instructions outside the system prompt of the first request`);
  const found = blocks(c, root, system, 'the system prompt');
  const paths = found.map((b) => b.path);
  if (new Set(paths).size !== paths.length) fail(`${c.name}: a file shown twice at the start: ${paths.join(', ')}`);
  return { instructions: paths, includedBytes: Object.fromEntries(found.map((b) => [b.path, b.bytes])) };
}

const unescapeXml = (t) => t.replace(/&(lt|gt|quot|#39|amp);/g, (_, e) => ({ lt: '<', gt: '>', quot: '"', '#39': "'", amp: '&' })[e]);

/**
 * The skills OpenCode lists in the first request's system prompt, each as
 * { path, name, description } (the fixture path of its SKILL.md, the name
 * and description as shown), sorted by path. Its built-in skill is left out.
 */
function skillsListed(c, root, body) {
  const system = body.messages.filter((m) => m.role === 'system').map((m) => textOf(m.content)).join('\n');
  const rest = body.messages.filter((m) => m.role !== 'system').map((m) => textOf(m.content)).join('\n');
  if (rest.includes('<available_skills>')) fail(`${c.name}: skills listed outside the system prompt`);
  const opens = system.split('<available_skills>').length - 1;
  if (opens !== 1) fail(`${c.name}: the system prompt has ${opens} <available_skills> blocks, not one`);
  if (!(body.tools ?? []).some((t) => t.function?.name === 'skill')) fail(`${c.name}: skills listed but no \`skill\` tool offered`);
  const start = system.indexOf('<available_skills>\n') + '<available_skills>\n'.length;
  const end = system.indexOf('\n</available_skills>', start);
  if (start < '<available_skills>\n'.length || end < 0) fail(`${c.name}: an <available_skills> block that is not closed`);
  const block = system.slice(start, end);
  const re = /^ {2}<skill>\n {4}<name>(.*)<\/name>\n {4}<description>([\s\S]*?)<\/description>\n {4}<location>(.*)<\/location>\n {2}<\/skill>(?:\n|$)/;
  const found = [];
  let builtIn = 0;
  let at = 0;
  while (at < block.length) {
    const m = re.exec(block.slice(at));
    if (!m) fail(`${c.name}: <available_skills> holds text that is not a <skill> entry: ${JSON.stringify(block.slice(at, at + 200))}`);
    at += m[0].length;
    const [, name, description, escaped] = m;
    const abs = unescapeXml(escaped);
    if (abs === '<built-in>') { builtIn++; continue; }
    if (!abs.startsWith(root + sep) || basename(abs) !== 'SKILL.md') fail(`${c.name}: skill ${name} is at ${abs}, not a SKILL.md in the fixture`);
    let text;
    try { text = readFileSync(abs, 'utf8'); } catch (e) { fail(`${c.name}: skill ${name} is at ${abs}, which cannot be read: ${e.message}`); }
    if (!text.includes(name) || !text.includes(description)) fail(`${c.name}: skill ${name} (${abs}) is shown with a name or description its file does not hold`);
    found.push({ path: relative(root, abs).split(sep).join('/'), name, description });
  }
  if (builtIn !== 1) fail(`${c.name}: ${builtIn} built-in skills listed, not one (customize-opencode)`);
  const paths = found.map((k) => k.path);
  if (new Set(paths).size !== paths.length) fail(`${c.name}: a SKILL.md listed twice: ${paths.join(', ')}`);
  return found.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/**
 * The copies of each skill name OpenCode found more than once, as its log
 * says (`duplicate skill name`), as fixture paths: name -> [paths].
 */
function duplicateSkills(c, root, scratch) {
  const dir = join(scratch, 'data', 'opencode', 'log');
  const dups = {};
  let names = [];
  try { names = readdirSync(dir); } catch { return dups; }
  const re = /message="duplicate skill name" name=("[^"]*"|\S+) existing=("[^"]*"|\S+) duplicate=("[^"]*"|\S+)/g;
  const unq = (v) => (v.startsWith('"') ? JSON.parse(v) : v);
  for (const f of names) {
    const text = readFileSync(join(dir, f), 'utf8');
    let m;
    while ((m = re.exec(text))) {
      const name = unq(m[1]);
      for (const abs of [unq(m[2]), unq(m[3])]) {
        if (!abs.startsWith(root + sep)) fail(`${c.name}: OpenCode logs a duplicate of skill ${name} outside the fixture: ${abs}`);
        const rel = relative(root, abs).split(sep).join('/');
        dups[name] ??= [];
        if (!dups[name].includes(rel)) dups[name].push(rel);
      }
    }
  }
  return dups;
}

function onAccess(c, root, calls, accesses, last) {
  return calls.map((call, i) => {
    const results = last.messages.filter((m) => m.role === 'tool' && m.tool_call_id === call.id);
    if (results.length !== 1) fail(`${c.name}: the last request carries ${results.length} results for the read of ${accesses[i]}`);
    const text = textOf(results[0].content);
    if (!text.startsWith(`<path>${call.input.filePath}</path>`)) fail(`${c.name}: the read of ${accesses[i]} did not succeed: ${JSON.stringify(text.slice(0, 300))}`);
    const at = text.indexOf('\n\n<system-reminder>\n');
    let loaded = [];
    if (at >= 0) {
      const reminder = text.slice(at + '\n\n<system-reminder>\n'.length);
      if (!reminder.endsWith('\n</system-reminder>')) fail(`${c.name}: the read of ${accesses[i]} ends with an unclosed reminder`);
      loaded = blocks(c, root, reminder.slice(0, -'\n</system-reminder>'.length), `the read of ${accesses[i]}`).map((b) => b.path);
    } else if (text.includes(HEADER)) fail(`${c.name}: the read of ${accesses[i]} shows instructions outside a reminder`);
    return { path: accesses[i], instructions: loaded };
  });
}

// ------------------------------------------------------------------ main

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const pathOf = (k) => (typeof k === 'string' ? k : k.path);
const byPath = (a, b) => (pathOf(a) < pathOf(b) ? -1 : pathOf(a) > pathOf(b) ? 1 : 0);
const KEYS = ['instructions', 'includedBytes', 'accesses', 'skills'];
/**
 * An observation in the shape of `want` (an `expect` or `ours`): its
 * `instructions`, and `includedBytes`, `accesses` and `skills` where `want`
 * has them; skills as SKILL.md paths where `want` lists paths, else as
 * { path, name, description }; skills sorted by path, as the test suite
 * compares them.
 */
function shaped(observed, want) {
  const odd = Object.keys(want).filter((k) => !KEYS.includes(k));
  if (odd.length) fail(`an expectation with keys the recorder does not observe: ${odd.join(', ')}`);
  const out = { instructions: observed.instructions };
  if (want.includedBytes) out.includedBytes = observed.includedBytes;
  if (want.accesses) out.accesses = observed.accesses;
  if (want.skills) {
    const full = want.skills.some((k) => typeof k !== 'string');
    out.skills = observed.skills.map((k) => (full ? k : k.path)).sort(byPath);
  }
  return out;
}
const norm = (want) => ({ ...want, ...(want.skills ? { skills: [...want.skills].sort(byPath) } : {}) });
const sameAs = (observed, want) => same(Object.keys(shaped(observed, want)).sort(), Object.keys(want).sort())
  && KEYS.every((k) => same(shaped(observed, want)[k], norm(want)[k]));

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const bin = findBin(opts.bin);
  const ver = version(bin);
  const file = JSON.parse(readFileSync(opts.cases, 'utf8'));
  let cases = file.cases;
  if (opts.only) {
    const unknown = opts.only.filter((n) => !cases.some((c) => c.name === n));
    if (unknown.length) fail(`no such case: ${unknown.join(', ')}`);
    cases = cases.filter((c) => opts.only.includes(c.name));
  }
  if (!opts.quiet) console.log(`opencode ${ver} (${bin}), ${cases.length} cases`);
  if (ver !== PINNED && !opts.quiet) console.log(`  note: the cases were last recorded with ${PINNED}`);
  const api = await fakeServer();
  keepFolders = opts.keep;
  if (opts.dump) mkdirSync(opts.dump, { recursive: true });
  const ctx = { bin, api, timeout: opts.timeout, keep: opts.keep, dump: opts.dump };
  const results = new Array(cases.length);
  let next = 0;
  const started = Date.now();
  const worker = async () => {
    while (next < cases.length) {
      const i = next++;
      const c = cases[i];
      try {
        results[i] = await recordCase(ctx, c, `c${i}`);
      } catch (e) {
        if (!(e instanceof RecordError)) throw e;
        results[i] = { error: e.message };
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(opts.jobs, cases.length) }, worker));
  } finally {
    await new Promise((ok) => api.server.close(ok));
  }
  let differ = 0;
  let errors = 0;
  let raced = 0;
  cases.forEach((c, i) => {
    const r = results[i];
    if (r.error) {
      errors++;
      console.log(`ERROR  ${r.error}`);
      return;
    }
    const ok = sameAs(r.observed, c.expect);
    // Only which copy of a duplicated name won differs: a race, not a rule.
    const copies = new Set(Object.values(r.duplicates).flat());
    const race = !ok && Object.keys(r.duplicates).length > 0 && r.observed.skills && c.expect.skills
      && sameAs({ ...r.observed, skills: r.observed.skills.filter((k) => !copies.has(k.path)) }, { ...c.expect, skills: c.expect.skills.filter((k) => !copies.has(pathOf(k))) })
      && r.observed.skills.filter((k) => copies.has(k.path)).length === c.expect.skills.filter((k) => copies.has(pathOf(k))).length;
    r.race = race;
    if (race) raced++;
    else if (!ok) differ++;
    const dupNote = Object.keys(r.duplicates).length ? `; duplicated names (the copy parsed last wins): ${JSON.stringify(r.duplicates)}` : '';
    const note = (ok ? 'matches expect' : `${race ? 'RACE: another copy won than in' : 'DIFFERS from'} expect ${JSON.stringify(c.expect)}`) + dupNote;
    const ours = c.ours ? (sameAs(r.observed, c.ours) ? '; = ours' : '') : '';
    if (!opts.quiet || !ok) console.log(`${ok ? 'same' : race ? 'RACE' : 'DIFF'}   ${c.name.padEnd(28)} ${(r.ms / 1000).toFixed(1)} s  ${JSON.stringify(r.observed)}\n       ${note}${ours}${opts.keep ? `\n       tree: ${r.root}, its data: ${r.scratch}` : ''}`);
  });
  if (!opts.quiet) console.log(`${cases.length} cases in ${((Date.now() - started) / 1000).toFixed(1)} s: ${cases.length - differ - raced - errors} as expected, ${differ} different, ${raced} raced, ${errors} errors`);
  if (opts.write) {
    // Each observation, in full, becomes its case's `expect` (the keys the
    // case records: accesses and skills only where it had them).
    const all = JSON.parse(readFileSync(opts.cases, 'utf8'));
    let written = 0;
    cases.forEach((c, i) => {
      const r = results[i];
      if (r.error || r.race) return;
      const kase = all.cases.find((k) => k.name === c.name);
      const expect = { instructions: r.observed.instructions, includedBytes: r.observed.includedBytes };
      if (c.expect.accesses) expect.accesses = r.observed.accesses;
      if (c.expect.skills) expect.skills = r.observed.skills;
      if (!same(expect, kase.expect)) written++;
      kase.expect = expect;
    });
    writeFileSync(opts.cases, JSON.stringify(all, null, 2) + '\n');
    if (!opts.quiet) console.log(`${opts.cases}: ${written} expectations changed`);
  }
  if (opts.out) {
    const out = {
      peer: 'opencode',
      version: ver,
      recorded: new Date().toISOString().slice(0, 10),
      cases: cases.map((c, i) => (results[i].error ? { name: c.name, error: results[i].error }
        : { name: c.name, observed: results[i].observed, ...(Object.keys(results[i].duplicates).length ? { duplicates: results[i].duplicates } : {}) })),
    };
    writeFileSync(opts.out, JSON.stringify(out, null, 2) + '\n');
  }
  if (errors) process.exit(2);
  if (opts.check && differ) process.exit(1);
}

main().catch((e) => {
  console.error(e instanceof RecordError ? `record-opencode: ${e.message}` : e);
  process.exit(2);
});
