#!/usr/bin/env node
// Records what the REAL peer programs load on each fixture (see README.md).
//
//   node tests/compat/record.mjs [--peer codex|gemini|claude-code|both|all] [--out DIR]
//        [--codex PREFIX] [--gemini PREFIX] [--claude PREFIX] [--only NAME[,NAME...]]
//        [--keep] [--isolate] [--fixtures DIR] [--keep-going] [--quiet]
//
// PREFIX is an `npm install --prefix` folder holding the peer package
// (`@openai/codex`, `@google/gemini-cli-core`, `@anthropic-ai/claude-code`);
// `both` is Codex and Gemini, `all` (the default) adds Claude Code; by default the pinned versions
// under ${XDG_CACHE_HOME:-~/.cache}/lisa-context-peers/. The output is
// DIR/<peer>/<fixture>.json (DIR defaults to tests/compat/expected).
// --fixtures DIR reads the fixtures from DIR (default tests/compat/fixtures);
// --keep-going writes a fixture the recorder cannot read as
// DIR/<peer>/<fixture>.error (the reason) and goes on with the others.
//
// Codex runs as a child process (`codex debug prompt-input`) with HOME and
// CODEX_HOME inside the fixture and a model provider on a closed local port:
// nothing leaves the machine. Gemini CLI's core library runs in one child
// Node process that handles every fixture in turn (`--isolate`: a fresh
// process per fixture, same answers, much slower).
//
// Gemini also shows what each of a fixture's `accesses` loads (its on-access
// discovery) and how each file's `@` imports were expanded.
//
// Claude Code (`claude -p`, print mode) runs as a child process against a fake
// Anthropic Messages API on 127.0.0.1 started by this script: the first request
// carries the memory files and the skills listing; a fixture's `accesses` are
// played as `Read` tool calls answered by the fake model, one per turn.
//
// The recorder reads only what the program shows: any output it cannot parse
// is an error, never an empty list.

import { spawn, spawnSync } from 'node:child_process';
import {
  existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync,
  rmSync, statSync, symlinkSync, writeFileSync,
} from 'node:fs';
import { createHash } from 'node:crypto';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const PINNED = { codex: '0.171.0', gemini: '0.61.0', claude: '2.1.332' };
const cacheRoot = join(process.env.XDG_CACHE_HOME || join(process.env.HOME || tmpdir(), '.cache'), 'lisa-context-peers');
const DEFAULT_PREFIX = {
  codex: join(cacheRoot, `@openai+codex@${PINNED.codex}`),
  gemini: join(cacheRoot, `@google+gemini-cli-core@${PINNED.gemini}`),
  claude: join(cacheRoot, `@anthropic-ai+claude-code@${PINNED.claude}`),
};
// Prompt separators and frames, as each program writes them.
const CODEX_PROJECT_SEP = '\n\n--- project-doc ---\n\n';
const CODEX_DOC_SEP = '\n\n';
const CODEX_HOME_NAMES = ['AGENTS.override.md', 'AGENTS.md'];
const GEMINI_BLOCK_SEP = '\n\n';

class RecordError extends Error {}
const fail = (msg) => { throw new RecordError(msg); };

// ------------------------------------------------------------------ main

function parseArgs(argv) {
  const o = { peer: 'all', out: join(here, 'expected'), codex: DEFAULT_PREFIX.codex, gemini: DEFAULT_PREFIX.gemini, claude: DEFAULT_PREFIX.claude, only: null, keep: false, isolate: false, fixtures: join(here, 'fixtures'), keepGoing: false, quiet: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const val = () => argv[++i] ?? fail(`${a} needs a value`);
    if (a === '--peer') o.peer = val();
    else if (a === '--out') o.out = val();
    else if (a === '--codex') o.codex = val();
    else if (a === '--gemini') o.gemini = val();
    else if (a === '--claude') o.claude = val();
    else if (a === '--only') o.only = val().split(',');
    else if (a === '--keep') o.keep = true;
    else if (a === '--isolate') o.isolate = true;
    else if (a === '--fixtures') o.fixtures = val();
    else if (a === '--keep-going') o.keepGoing = true;
    else if (a === '--quiet') o.quiet = true;
    else if (a === '-h' || a === '--help') {
      console.log(readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n').slice(1, 13).map((l) => l.replace(/^\/\/ ?/, '')).join('\n'));
      process.exit(0);
    } else fail(`unknown argument ${a}`);
  }
  if (!['codex', 'gemini', 'claude-code', 'both', 'all'].includes(o.peer)) fail(`--peer must be codex, gemini, claude-code, both or all, not ${o.peer}`);
  return o;
}

async function main(opts) {
  const fixtures = loadFixtures(opts.fixtures, opts.only);
  const peers = { both: ['codex', 'gemini'], all: ['codex', 'gemini', 'claude-code'] }[opts.peer] ?? [opts.peer];
  checkNoSystemSources(peers);
  for (const peer of peers) {
    const tool = peer === 'codex' ? codexTool(opts.codex)
      : peer === 'gemini' ? geminiTool(opts.gemini, opts.isolate)
        : claudeTool(opts.claude);
    console.log(`${peer} ${tool.version} (${tool.where})`);
    const outDir = join(opts.out, peer);
    mkdirSync(outDir, { recursive: true });
    const mine = fixtures.filter((f) => f.peers.includes(peer));
    const names = new Set(mine.map((f) => f.name));
    if (!opts.only) {
      for (const old of readdirSync(outDir)) {
        if (old.endsWith('.json') && !names.has(old.slice(0, -5))) rmSync(join(outDir, old));
        if (old.endsWith('.error') && !names.has(old.slice(0, -6))) rmSync(join(outDir, old));
      }
    }
    const runs = [];
    try {
      for (const f of mine) runs.push({ f, root: materialize(f) });
      const answers = await tool.recordAll(runs, opts.keepGoing);
      let failed = 0;
      runs.forEach(({ f }, i) => {
        const a = answers[i];
        const stale = join(outDir, `${f.name}.${a.failed ? 'json' : 'error'}`);
        if (existsSync(stale)) rmSync(stale);
        if (a.failed) {
          failed++;
          writeFileSync(join(outDir, `${f.name}.error`), `${a.failed}\n`);
          if (!opts.quiet) console.log(`  ${f.name.padEnd(22)} NOT RECORDED: ${a.failed.split('\n')[0].slice(0, 160)}`);
          return;
        }
        writeFileSync(join(outDir, `${f.name}.json`), render({ peer, version: tool.version, fixture: f.name, ...a }));
        if (!opts.quiet) console.log(`  ${f.name.padEnd(22)} ${a.instructions.length} files, ${a.skills.length} skills`);
      });
      if (opts.quiet || failed) console.log(`  ${runs.length - failed} recorded, ${failed} not recorded`);
    } catch (e) {
      if (e instanceof RecordError && opts.keep) e.message += ` (trees kept under ${tmpdir()})`;
      throw e;
    } finally {
      if (!opts.keep) for (const { root } of runs) rmSync(root, { recursive: true, force: true });
    }
  }
}

/**
 * Runs `fn` on each run in turn, naming the fixture in any error; with
 * `keepGoing`, a fixture the recorder cannot read gives `{ failed: reason }`.
 */
async function eachRun(peer, runs, width, fn, keepGoing = false) {
  return pool(runs, width, async (run) => {
    const { f, root } = run;
    try {
      return await fn(f, root, run);
    } catch (e) {
      if (e instanceof RecordError) e.message = `${peer} on ${f.name}: ${e.message}`;
      if (keepGoing && (e instanceof RecordError || e instanceof Error)) return { failed: e.message };
      throw e;
    }
  });
}

async function pool(items, width, fn) {
  const out = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
  return out;
}

function loadFixtures(dir, only) {
  const all = readdirSync(dir).filter((n) => n.endsWith('.json')).sort()
    .map((n) => JSON.parse(readFileSync(join(dir, n), 'utf8')));
  if (!only) return all;
  for (const n of only) if (!all.some((f) => f.name === n)) fail(`no fixture named ${n}`);
  return all.filter((f) => only.includes(f.name));
}

/** Answers are written with a fixed key order and a trailing newline. */
function render(a) {
  const ordered = {
    peer: a.peer,
    version: a.version,
    fixture: a.fixture,
    instructions: a.instructions.map(renderInstruction),
    skills: [...a.skills]
      .sort((x, y) => Buffer.compare(Buffer.from(x.name), Buffer.from(y.name)) || Buffer.compare(Buffer.from(x.path), Buffer.from(y.path)))
      .map((s) => ({ name: s.name, path: s.path, description: s.description, ...(s.system ? { system: true } : {}) })),
    // Only for a fixture with `accesses`: one entry per access, in order.
    ...(a.onAccess ? { onAccess: a.onAccess.map((o) => ({ access: o.access, instructions: o.instructions.map(renderInstruction) })) } : {}),
  };
  return JSON.stringify(ordered, null, 2) + '\n';
}

/** An instruction file, or an inlined import: `imports` only when it has any. */
function renderInstruction(i) {
  return {
    path: i.path,
    includedBytes: i.includedBytes,
    ...(i.imports && i.imports.length ? { imports: i.imports.map(renderImport) } : {}),
  };
}

/** An import entry: inlined (a file, with its own imports) or not (spec + outcome). */
function renderImport(m) {
  return m.outcome ? { spec: m.spec, outcome: m.outcome } : renderInstruction(m);
}

/** Machine-wide skill folders would leak into every recording. */
function checkNoSystemSources(peers) {
  if (peers.includes('codex')) {
    for (const p of ['/etc/codex/skills', '/etc/codex']) {
      if (existsSync(p)) fail(`${p} exists on this machine: Codex would add its skills/config to every recording; record elsewhere`);
    }
  }
  // Claude Code's managed policy folder (CLAUDE.md, skills, settings) on Linux.
  if (peers.includes('claude-code') && existsSync('/etc/claude-code')) {
    fail('/etc/claude-code exists on this machine: Claude Code would add its managed memory/skills/settings to every recording; record elsewhere');
  }
}

// ------------------------------------------------------------------ trees

/** Writes a fixture into a fresh temporary folder; returns its real path. */
function materialize(f) {
  const root = realpathSync(mkdtempSync(join(tmpdir(), `lisa-compat-${f.name}-`)));
  mkdirSync(join(root, 'home'));
  mkdirSync(join(root, 'repo'));
  for (const e of f.tree) {
    if (e.path.startsWith('/') || e.path.split('/').includes('..')) fail(`${f.name}: path ${e.path} leaves the fixture`);
    const p = join(root, ...e.path.split('/'));
    mkdirSync(dirname(p), { recursive: true });
    if (e.dir) mkdirSync(p, { recursive: true });
    else if (typeof e.text === 'string') writeFileSync(p, e.text);
    else if (e.fill) {
      const head = Buffer.from(e.fill.head, 'utf8');
      const byte = Buffer.from(e.fill.byte, 'utf8');
      if (byte.length !== 1) fail(`${f.name}: fill byte of ${e.path} must be one byte`);
      if (e.fill.size < head.length) fail(`${f.name}: fill size of ${e.path} is smaller than its head`);
      writeFileSync(p, Buffer.concat([head, Buffer.alloc(e.fill.size - head.length, byte)]));
    } else if (typeof e.symlink === 'string') symlinkSync(e.symlink, p);
    else fail(`${f.name}: entry ${e.path} is none of dir, text, fill, symlink`);
  }
  mkdirSync(join(root, ...f.cwd.split('/')), { recursive: true });
  // A marker above the fixture (say /tmp/.git) would move the project root.
  const markers = f.settings.markers ?? ['.git'];
  for (let d = dirname(root); ; d = dirname(d)) {
    for (const m of markers) if (existsSync(join(d, m))) fail(`marker ${m} exists in ${d}, above the fixture root; set TMPDIR elsewhere`);
    if (dirname(d) === d) break;
  }
  return root;
}

/** Fixture-relative spelling of an absolute path the program printed. */
function relPath(root, abs, what) {
  const r = relative(root, abs);
  if (r === '' || r.startsWith('..') || r.startsWith(sep)) fail(`${what} ${abs} is outside the fixture root ${root}`);
  return r.split(sep).join('/');
}

/** Rust's `str::trim` (Unicode White_Space at both ends). */
const RUST_WS = '\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const rustTrim = (s) => s.replace(new RegExp(`^[${RUST_WS}]+|[${RUST_WS}]+$`, 'gu'), '');

/** The fixture file an entry leads to (itself, or through links): its path and bytes. */
function entryFile(f, root, p) {
  let real;
  try { real = realpathSync(join(root, ...p.split('/'))); } catch { return null; }
  const r = relative(root, real);
  if (r.startsWith('..')) return null;
  const rel = r.split(sep).join('/');
  const e = f.tree.find((x) => x.path === rel);
  if (!e || !(typeof e.text === 'string' || e.fill)) return null;
  return { rel, bytes: readFileSync(real) };
}

/** The content bytes of a fixture file, by fixture-relative path. */
function fileBytes(f, root, p) {
  const e = f.tree.find((x) => x.path === p);
  // A link the program followed to a file of the fixture: that file's bytes.
  if (e && typeof e.symlink === 'string') {
    const to = entryFile(f, root, p);
    if (to) return to.bytes;
  }
  if (!e || !(typeof e.text === 'string' || e.fill)) fail(`the prompt names ${p}, which is not a file of the fixture`);
  return readFileSync(join(root, ...p.split('/')));
}

// ------------------------------------------------------------------ codex

function codexTool(prefix) {
  const bin = [join(prefix, 'node_modules', '.bin', 'codex'), join(prefix, 'bin', 'codex.js'), prefix]
    .find((p) => existsSync(p) && statSync(p).isFile());
  if (!bin) fail(`no codex under ${prefix}; install it with: npm install --prefix ${prefix} @openai/codex@${PINNED.codex}`);
  const v = spawnSync(bin, ['--version'], { encoding: 'utf8', env: cleanEnv({}) });
  const m = /^codex-cli (\S+)\s*$/.exec(v.stdout ?? '');
  if (v.status !== 0 || !m) fail(`\`${bin} --version\` said: ${v.stdout}${v.stderr}`);
  return { version: m[1], where: bin, recordAll: (runs, keepGoing) => eachRun('codex', runs, 1, (f, root) => recordCodex(bin, f, root), keepGoing) };
}

/** A child environment with nothing from ours but PATH (and TMPDIR). */
function cleanEnv(extra) {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8' };
  if (process.env.TMPDIR) env.TMPDIR = process.env.TMPDIR;
  return { ...env, ...extra };
}

const tomlString = (s) => JSON.stringify(s); // a TOML basic string has JSON's escapes for these
function codexConfig(settings) {
  const lines = [
    '# written by tests/compat/record.mjs: offline, nothing can reach a model',
    'model_provider = "compat_offline"',
    'model = "gpt-5"',
  ];
  if (settings.maxBytes !== undefined) lines.push(`project_doc_max_bytes = ${settings.maxBytes}`);
  if (settings.extraNames) lines.push(`project_doc_fallback_filenames = [${settings.extraNames.map(tomlString).join(', ')}]`);
  if (settings.markers) lines.push(`project_root_markers = [${settings.markers.map(tomlString).join(', ')}]`);
  lines.push('', '[model_providers.compat_offline]', 'name = "offline"', 'base_url = "http://127.0.0.1:9/v1"', 'wire_api = "responses"', '');
  return lines.join('\n');
}

function recordCodex(bin, f, root) {
  // `codex debug prompt-input` shows the prompt at session start; no tool runs.
  if (f.accesses) fail('the fixture has `accesses`, which the Codex recorder cannot play (no tool call runs); list it for gemini only');
  const home = join(root, 'home');
  const codexHome = join(home, '.codex');
  mkdirSync(codexHome, { recursive: true });
  const cfg = join(codexHome, 'config.toml');
  if (existsSync(cfg)) fail('the fixture has its own home/.codex/config.toml; the recorder writes that file');
  writeFileSync(cfg, codexConfig(f.settings));
  const cwd = join(root, ...f.cwd.split('/'));
  const run = spawnSync(bin, ['debug', 'prompt-input'], {
    cwd, encoding: 'utf8', timeout: 60_000, maxBuffer: 64 << 20,
    env: cleanEnv({ HOME: home, CODEX_HOME: codexHome }),
  });
  if (run.error) fail(`codex did not run: ${run.error.message}`);
  if (run.status !== 0) fail(`codex exited with ${run.status}: ${run.stderr}`);
  let items;
  try { items = JSON.parse(run.stdout); } catch (e) { fail(`codex output is not JSON (${e.message}): ${run.stdout.slice(0, 400)}`); }
  if (!Array.isArray(items)) fail('codex output is not a list of prompt items');
  const texts = [];
  for (const it of items) {
    if (it.type !== 'message' || !Array.isArray(it.content)) continue;
    for (const c of it.content) if (typeof c.text === 'string') texts.push(c.text);
  }
  if (!texts.some((t) => t.includes('<environment_context>'))) fail('codex prompt has no <environment_context>: output format changed');
  const instr = texts.filter((t) => t.includes('<INSTRUCTIONS>'));
  if (instr.length > 1) fail(`codex prompt has ${instr.length} instruction messages`);
  const skills = texts.filter((t) => t.includes('<skills_instructions>'));
  // Codex always lists its bundled skills: no skills message means a new format.
  if (skills.length !== 1) fail(`codex prompt has ${skills.length} skills messages (expected 1: the bundled skills are always listed)`);
  return {
    instructions: instr.length ? parseCodexInstructions(f, root, cwd, instr[0]) : [],
    skills: parseCodexSkills(root, skills[0]),
  };
}

function parseCodexInstructions(f, root, cwd, text) {
  // With no project root found (no marker), the heading names no folder.
  const head = [`# AGENTS.md instructions for ${cwd}\n\n<INSTRUCTIONS>\n`, '# AGENTS.md instructions\n\n<INSTRUCTIONS>\n'].find((h) => text.startsWith(h));
  const tail = '\n</INSTRUCTIONS>';
  if (!head || !text.endsWith(tail)) fail(`codex instructions not framed as expected:\n${text.slice(0, 300)}`);
  let body = text.slice(head.length, text.length - tail.length);
  const out = [];
  // Global part: the home file, trimmed by Codex, before the project marker.
  const cut = body.indexOf(CODEX_PROJECT_SEP);
  const ancestors = ancestorsOf(f.cwd);
  const names = [...CODEX_HOME_NAMES, ...(f.settings.extraNames ?? [])];
  // A home file the shown text is (the file, or the file trimmed: Codex is
  // written in Rust, whose whitespace is not JavaScript's: U+0085 is
  // whitespace there, U+FEFF is not).
  const homeFile = (g) => CODEX_HOME_NAMES.map((n) => entryFile(f, root, `home/.codex/${n}`)).find((c) => {
    if (!c) return false;
    const t = c.bytes.toString('utf8');
    return g === t || g === t.trim() || g === rustTrim(t);
  });
  const firstTag = tagAt(body, 0);
  let project = body;
  if (cut >= 0 || (firstTag && firstTag.startsWith('home/.codex/')) || homeFile(body)) {
    const global = cut >= 0 ? body.slice(0, cut) : body;
    project = cut >= 0 ? body.slice(cut + CODEX_PROJECT_SEP.length) : '';
    const home = homeFile(global) ?? fail(`codex global text is none of the home files, whole or trimmed: ${JSON.stringify(global.slice(0, 80))}`);
    out.push({ path: spelledPath(f, root, home.rel, ['home/.codex'], CODEX_HOME_NAMES)[0], includedBytes: home.bytes.length });
  }
  // Project part: files joined by a blank line; only the last may be cut.
  // A file is found by its tag line; a text without one (a file Codex takes
  // as non-blank though it holds no tag, or a cut inside the tag line) by
  // its content, among the files Codex could have read, when only one fits.
  let pos = 0;
  const seen = [];
  const wholeAt = (rest, content) => rest.startsWith(content) && (rest.length === content.length || rest.startsWith(CODEX_DOC_SEP, content.length));
  while (project.length > 0 && pos < project.length) {
    const rest = project.slice(pos);
    let tag = tagAt(project, pos);
    if (!tag || !f.tree.some((e) => e.path === tag && (typeof e.text === 'string' || e.fill))) {
      const fits = new Map();
      for (const e of f.tree) {
        if (e.dir || !ancestors.includes(dirname(e.path)) || !names.includes(e.path.split('/').pop())) continue;
        const c = entryFile(f, root, e.path);
        if (!c) continue;
        const content = c.bytes.toString('utf8');
        if (content.length > 0 && (wholeAt(rest, content) || content.startsWith(rest) || (rest.endsWith('\uFFFD') && content.startsWith(rest.slice(0, -1))))) fits.set(c.rel, c);
      }
      if (fits.size !== 1) fail(`codex project text at offset ${pos} has no tag line and ${fits.size} files fit it: ${JSON.stringify(rest.slice(0, 80))}`);
      tag = [...fits.keys()][0];
    }
    const bytes = fileBytes(f, root, tag);
    const content = bytes.toString('utf8');
    let included;
    if (wholeAt(rest, content)) {
      included = bytes.length;
      pos += content.length;
      if (pos < project.length) pos += CODEX_DOC_SEP.length;
    } else {
      included = cutLength(content, rest, tag);
      pos = project.length;
    }
    seen.push({ tag, includedBytes: included });
  }
  // Map each shown text to the directory entry Codex found it through.
  const byTag = new Map();
  for (const s of seen) byTag.set(s.tag, (byTag.get(s.tag) ?? 0) + 1);
  const spelled = new Map();
  for (const [tag, count] of byTag) {
    let c = spelledPath(f, root, tag, ancestors, names);
    // More entries than showings: only the folders from the project root
    // (the nearest marker folder, else the cwd) down are read.
    if (c.length > count) {
      const top = codexProjectRoot(f, root);
      c = c.filter((p) => p === top || p.startsWith(top + '/'));
    }
    if (c.length !== count) fail(`codex shows ${tag} ${count} time(s) but ${c.length} entries on the cwd's ancestry lead to it (${c.join(', ')}): ambiguous`);
    spelled.set(tag, c);
  }
  const used = new Map();
  for (const s of seen) {
    const i = used.get(s.tag) ?? 0;
    used.set(s.tag, i + 1);
    out.push({ path: spelled.get(s.tag)[i], includedBytes: s.includedBytes });
  }
  return out;
}

/** How many bytes of `content` the shown `rest` (a cut) carries. */
function cutLength(content, rest, tag) {
  if (content.startsWith(rest)) return Buffer.byteLength(rest);
  // A cut inside a character is decoded lossily: one U+FFFD at the end.
  if (rest.endsWith('\uFFFD')) {
    const kept = rest.slice(0, -1);
    if (content.startsWith(kept)) {
      const next = content.codePointAt(kept.length);
      const width = Buffer.byteLength(String.fromCodePoint(next));
      if (width === 2) return Buffer.byteLength(kept) + 1;
      fail(`codex cut ${tag} inside a ${width}-byte character: the number of bytes kept cannot be read from the prompt`);
    }
  }
  fail(`codex text for ${tag} is neither the whole file nor a prefix of it: ${JSON.stringify(rest.slice(0, 120))}`);
}

/** The fixture path named by a tag line starting at `pos`, if any. */
function tagAt(text, pos) {
  const end = text.indexOf('\n', pos);
  if (end < 0) return null;
  // A byte-order mark before the tag, or a CRLF after it, is the file's own.
  const m = /^\uFEFF?\[([^\]\n]+)\]\r?$/.exec(text.slice(pos, end));
  return m ? m[1] : null;
}

/** Codex's project root: the nearest folder at or above the cwd holding a marker, else the cwd. */
function codexProjectRoot(f, root) {
  const markers = f.settings.markers ?? ['.git'];
  const dirs = ancestorsOf(f.cwd).reverse();
  return dirs.find((d) => markers.some((m) => existsSync(join(root, ...d.split('/'), m)))) ?? f.cwd;
}

function ancestorsOf(cwd) {
  const parts = cwd.split('/');
  return parts.map((_, i) => parts.slice(0, i + 1).join('/'));
}

/**
 * Entries of the tree (files or links) in one of `dirs`, named one of the
 * `names` the program was configured to look for, that lead to the file
 * `target`, root-most first: Codex prints a file's text, not the path it found
 * it through, so a link is told apart from its target by where it sits.
 */
function spelledPath(f, root, target, dirs, names) {
  const real = realpathSync(join(root, ...target.split('/')));
  const hits = [];
  for (const e of f.tree) {
    if (e.dir || !dirs.includes(dirname(e.path)) || !names.includes(e.path.split('/').pop())) continue;
    let r;
    try { r = realpathSync(join(root, ...e.path.split('/'))); } catch { continue; }
    if (r === real) hits.push(e.path);
  }
  if (hits.length === 0) fail(`no entry in ${dirs.join(', ')} leads to ${target}`);
  return hits.sort((a, b) => a.split('/').length - b.split('/').length);
}

function parseCodexSkills(root, text) {
  const lines = text.split('\n');
  const rootsAt = lines.indexOf('### Skill roots');
  const listAt = lines.indexOf('### Available skills');
  if (rootsAt < 0 || listAt < rootsAt) fail(`codex skills message lacks "### Skill roots" / "### Available skills":\n${text.slice(0, 400)}`);
  const roots = new Map();
  for (const l of lines.slice(rootsAt + 1, listAt)) {
    const m = /^- `(\w+)` = `(.+)`$/.exec(l);
    if (!m) fail(`codex skill roots line not understood: ${l}`);
    roots.set(m[1], m[2]);
  }
  const entries = [];
  for (const l of lines.slice(listAt + 1)) {
    if (l === '</skills_instructions>' || l.startsWith('#')) break;
    if (l.startsWith('- ')) entries.push(l.slice(2));
    else if (entries.length) entries[entries.length - 1] += '\n' + l;
    else if (l.trim() !== '') fail(`codex skills list opens with an unexpected line: ${l}`);
  }
  if (entries.length === 0) fail('codex lists no skills at all, not even its bundled ones: format changed?');
  const systemDir = join(root, 'home', '.codex', 'skills', '.system') + sep;
  return entries.map((e) => {
    const m = /^(.*?): ([\s\S]*) \(file: ([^()\n]+)\)$/.exec(e);
    if (!m) fail(`codex skill entry not understood: ${e}`);
    const [, name, description, short] = m;
    const slash = short.indexOf('/');
    const base = slash > 0 ? roots.get(short.slice(0, slash)) : undefined;
    const abs = base !== undefined ? join(base, short.slice(slash + 1)) : short;
    if (!abs.startsWith('/')) fail(`codex skill path ${short} names no known root`);
    return { name, description, path: relPath(root, abs, 'codex skill'), system: abs.startsWith(systemDir) };
  });
}

// ------------------------------------------------------------------ gemini

function geminiTool(prefix, isolate) {
  const pkg = [join(prefix, 'node_modules', '@google', 'gemini-cli-core'), prefix]
    .find((p) => existsSync(join(p, 'package.json')) && JSON.parse(readFileSync(join(p, 'package.json'), 'utf8')).name === '@google/gemini-cli-core');
  if (!pkg) fail(`no @google/gemini-cli-core under ${prefix}; install it with: npm install --prefix ${prefix} @google/gemini-cli-core@${PINNED.gemini}`);
  const version = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')).version;
  const recordAll = isolate
    // One fresh process per fixture (slow: the library takes seconds to load).
    ? (runs, keepGoing) => eachRun('gemini', runs, 2, async (f, root) => parseGemini(f, root, (await geminiProcess(pkg, [geminiJob(f, root)]))[0]), keepGoing)
    // One process for all fixtures; the child resets every process-wide input.
    : async (runs, keepGoing) => {
      const raws = await geminiProcess(pkg, runs.map(({ f, root }) => geminiJob(f, root)));
      const withRaw = runs.map((r, i) => ({ ...r, raw: raws[i] }));
      return eachRun('gemini', withRaw, 1, (f, root, run) => parseGemini(f, root, run.raw), keepGoing);
    };
  return { version, where: pkg, recordAll };
}

function geminiJob(f, root) {
  return {
    name: f.name,
    home: join(root, 'home'),
    cwd: join(root, ...f.cwd.split('/')),
    outFile: join(root, '.gemini-answer.json'),
    settings: f.settings,
    // Absolute, spelled as given (a `..` stays in): discoverContext resolves it.
    accesses: (f.accesses ?? []).map((a) => `${root}/${a}`),
  };
}

/** Runs the jobs in one child Node process; returns its raw answers. */
function geminiProcess(pkg, jobs) {
  return new Promise((resolve, reject) => {
    // The jobs go through a file: a long list would not fit in one argument.
    const jobDir = mkdtempSync(join(tmpdir(), 'lisa-compat-jobs-'));
    const jobFile = join(jobDir, 'jobs.json');
    writeFileSync(jobFile, JSON.stringify({ pkg, jobs }));
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--gemini-child', jobFile], {
      cwd: jobs[0].cwd, env: cleanEnv({ HOME: jobs[0].home }), stdio: ['ignore', 'pipe', 'pipe'],
    });
    let log = '';
    child.stdout.on('data', (d) => { log += d; });
    child.stderr.on('data', (d) => { log += d; });
    const timer = setTimeout(() => child.kill('SIGKILL'), 300_000 + 2_000 * jobs.length);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      rmSync(jobDir, { recursive: true, force: true });
      try {
        if (code !== 0) fail(`gemini child failed (${signal ?? code}) on ${jobs.map((j) => j.name).join(', ')}:\n${log.slice(-3000)}`);
        resolve(jobs.map((j) => {
          const raw = JSON.parse(readFileSync(j.outFile, 'utf8'));
          rmSync(j.outFile);
          return raw;
        }));
      } catch (e) { reject(e); }
    });
  });
}

/**
 * Runs inside a child Node process. For each job: HOME (read by os.homedir()
 * on every call), the working directory and the context-file names (the only
 * module-level state on this path) are set afresh, then a new Config is built.
 */
async function geminiChild({ pkg, jobs }) {
  const load = (p) => import(pathToFileURL(join(pkg, 'dist', 'src', p)).href);
  const { Config } = await load('config/config.js');
  const { MemoryContextManager } = await load('context/memoryContextManager.js');
  const memoryTool = await load('tools/memoryTool.js');
  const builtinDir = join(pkg, 'dist', 'src', 'skills', 'builtin') + sep;
  for (const job of jobs) {
    try {
      await geminiJobRun(job, { Config, MemoryContextManager, memoryTool, builtinDir });
    } catch (e) {
      // One fixture's failure is that fixture's answer, not the batch's.
      writeFileSync(job.outFile, JSON.stringify({ childError: String(e && e.stack ? e.stack : e) }));
    }
  }
}

async function geminiJobRun(job, { Config, MemoryContextManager, memoryTool, builtinDir }) {
  {
    process.env.HOME = job.home;
    delete process.env.GEMINI_CLI_HOME;
    process.chdir(job.cwd);
    const names = job.settings.extraNames ? ['GEMINI.md', ...job.settings.extraNames] : undefined;
    // What the CLI's loadCliConfig does with settings.context.fileName; the
    // reset first, so one job's names never leak into the next.
    memoryTool.resetGeminiMdFilename(memoryTool.DEFAULT_CONTEXT_FILENAME);
    if (names) memoryTool.setGeminiMdFilename(names);
    const config = new Config({
      sessionId: 'lisa-compat-record',
      targetDir: job.cwd,
      cwd: job.cwd,
      debugMode: false,
      model: 'gemini-2.5-pro',
      contextFileName: names,
      memoryBoundaryMarkers: job.settings.markers,
      trustedFolder: true,
      folderTrust: false,
      usageStatisticsEnabled: false,
      telemetry: { enabled: false },
    });
    if (!config.isTrustedFolder()) throw new Error(`${job.name}: the fixture folder is not trusted: workspace skills and project memory would be skipped`);
    await config.storage.initialize();
    const memory = new MemoryContextManager(config);
    await memory.refresh();
    const skills = config.getSkillManager();
    await skills.discoverSkills(config.storage, [], config.isTrustedFolder());
    // On access: what tools/jit-context.js's discoverJitContext does for
    // read_file, write_file, replace, list_directory and read_many_files,
    // on this session's manager (the one refresh() filled), in order.
    const onAccess = [];
    for (const accessed of job.accesses) {
      onAccess.push(await memory.discoverContext(accessed, [...config.getWorkspaceContext().getDirectories()]));
    }
    const answer = {
      fileNames: memoryTool.getAllGeminiMdFilenames(),
      global: memory.getGlobalMemory(),
      extension: memory.getExtensionMemory(),
      project: memory.getEnvironmentMemory(),
      userProject: memory.getUserProjectMemory(),
      onAccess,
      skills: skills.getSkills().map((s) => ({
        name: s.name,
        description: s.description,
        location: s.location,
        builtin: Boolean(s.isBuiltin),
        bundledPath: s.location.startsWith(builtinDir) ? s.location.slice(builtinDir.length) : null,
      })),
    };
    writeFileSync(job.outFile, JSON.stringify(answer));
  }
}

function parseGemini(f, root, raw) {
  if (raw.childError) fail(`gemini failed on the fixture: ${raw.childError}`);
  if (raw.extension || raw.userProject) fail(`gemini loaded extension or user-project memory, which no fixture provides: ${raw.extension}${raw.userProject}`);
  const instructions = [...parseGeminiBlocks(f, root, raw.global, 'global'), ...parseGeminiBlocks(f, root, raw.project, 'project')];
  const skills = raw.skills.map((s) => {
    if (s.builtin) {
      if (!s.bundledPath) fail(`gemini built-in skill ${s.name} is not in the package's builtin folder: ${s.location}`);
      return { name: s.name, description: s.description, path: `(bundled)/${s.bundledPath.split(sep).join('/')}`, system: true };
    }
    return { name: s.name, description: s.description, path: relPath(root, s.location, 'gemini skill') };
  });
  if (!skills.some((s) => s.system)) fail('gemini lists no built-in skills: format changed?');
  if (raw.onAccess.length !== (f.accesses ?? []).length) fail(`gemini answered ${raw.onAccess.length} accesses, the fixture has ${(f.accesses ?? []).length}`);
  const onAccess = f.accesses
    ? f.accesses.map((access, i) => ({ access, instructions: parseGeminiBlocks(f, root, raw.onAccess[i], `on-access (${access})`) }))
    : undefined;
  return { instructions, skills, onAccess };
}

/** Splits Gemini's `--- Context from: <path> ---` blocks, checking each. */
function parseGeminiBlocks(f, root, text, part) {
  const out = [];
  let pos = 0;
  while (pos < text.length) {
    const open = /^--- Context from: (.+?) ---\n/.exec(text.slice(pos));
    if (!open) fail(`gemini ${part} memory at offset ${pos} is not a context block: ${JSON.stringify(text.slice(pos, pos + 120))}`);
    const abs = open[1];
    const close = `\n--- End of Context from: ${abs} ---`;
    const start = pos + open[0].length;
    const end = text.indexOf(close, start);
    if (end < 0) fail(`gemini ${part} block for ${abs} is not closed`);
    const shown = text.slice(start, end);
    const path = relPath(root, abs, `gemini ${part} file`);
    const bytes = readFileSync(abs);
    // The block is the file's text with its imports processed, then trimmed.
    const imports = readGeminiImports(root, abs, shown, path);
    out.push({ path, includedBytes: bytes.length, imports });
    pos = end + close.length;
    if (pos < text.length) {
      if (!text.startsWith(GEMINI_BLOCK_SEP, pos)) fail(`gemini ${part} blocks not separated by a blank line after ${path}`);
      pos += GEMINI_BLOCK_SEP.length;
    }
  }
  return out;
}

// ------------------------------------------------------------------ gemini imports

// Gemini's memoryImportProcessor ("tree" format, the CLI's default) replaces
// each `@path` token of a file with the imported file's processed text,
// framed, or with a comment; a token it leaves alone stays as written. The
// recorder reads which happened from the shown text, walking it alongside the
// file. To know where tokens are, it uses the processor's own token rule
// (`@` at the start or after whitespace, up to whitespace, the first character
// `.`, `/` or an ASCII letter) and code-region rule (a backtick run up to the
// next run of the same length); both are checked against the output: a token
// shown as written must be in a code region or in a file past the depth limit,
// and a token in a code region must be shown as written.
const GEMINI_IMPORT_MAX_DEPTH = 5;
const isWs = (c) => c === ' ' || c === '\t' || c === '\n' || c === '\r';

function geminiImportTokens(content) {
  const out = [];
  let i = 0;
  while (i < content.length) {
    i = content.indexOf('@', i);
    if (i < 0) break;
    if (i > 0 && !isWs(content[i - 1])) { i++; continue; }
    let j = i + 1;
    while (j < content.length && !isWs(content[j])) j++;
    const spec = content.slice(i + 1, j);
    if (spec.length > 0 && /^[./A-Za-z]/.test(spec)) out.push({ start: i, end: j, spec });
    i = j + 1;
  }
  return out;
}

function geminiCodeRegions(content) {
  const out = [];
  const re = /(`+)([\s\S]*?)\1/g;
  let m;
  while ((m = re.exec(content)) !== null) out.push([m.index, m.index + m[0].length]);
  return out;
}

/** The imports of the top-level file `abs`, read from its shown (trimmed) block. */
function readGeminiImports(root, abs, shown, what) {
  const content = readFileSync(abs, 'utf8');
  const lead = content.length - content.trimStart().length;
  const state = { root, shown, pos: 0, what };
  const imports = walkGeminiImports(state, content, abs, 0, lead, true);
  if (state.pos !== shown.length) fail(`gemini shows ${what} with ${shown.length - state.pos} unexplained characters at the end: ${JSON.stringify(shown.slice(state.pos, state.pos + 80))}`);
  return imports;
}

/**
 * Matches the processed form of `content` (the file `abs`, at import depth
 * `depth`) against state.shown from state.pos; returns the import entries.
 * `top`: the outermost file, whose processed text was trimmed.
 */
function walkGeminiImports(state, content, abs, depth, from, top) {
  const { root, shown } = state;
  const where = () => `${state.what}, in ${relPath(root, abs, 'imported file')} at shown offset ${state.pos}`;
  const expect = (lit) => {
    if (!shown.startsWith(lit, state.pos)) fail(`gemini shows ${where()} ${JSON.stringify(shown.slice(state.pos, state.pos + 80))}, expected ${JSON.stringify(lit.slice(0, 80))}`);
    state.pos += lit.length;
  };
  const regions = geminiCodeRegions(content);
  const imports = [];
  let last = from;
  for (const t of geminiImportTokens(content)) {
    if (t.start < from) continue;
    expect(content.slice(last, t.start));
    last = t.end;
    const inCode = regions.some(([s, e]) => t.start >= s && t.start < e);
    const tooDeep = depth >= GEMINI_IMPORT_MAX_DEPTH;
    if (shown.startsWith(`@${t.spec}`, state.pos)) {
      if (!tooDeep && !inCode) fail(`gemini left @${t.spec} as written (${where()}) though it is neither in a code region nor past the depth limit`);
      state.pos += 1 + t.spec.length;
      imports.push({ spec: t.spec, outcome: tooDeep ? 'too-deep' : 'code' });
      continue;
    }
    if (tooDeep || inCode) fail(`gemini processed @${t.spec} (${where()}) though it is ${tooDeep ? 'past the depth limit' : 'in a code region'}`);
    const opened = `<!-- Imported from: ${t.spec} -->\n`;
    if (shown.startsWith(opened, state.pos)) {
      state.pos += opened.length;
      const target = resolve(dirname(abs), t.spec);
      const nested = walkGeminiImports(state, readFileSync(target, 'utf8'), target, depth + 1, 0, false);
      expect(`\n<!-- End of import from: ${t.spec} -->`);
      imports.push({ path: relPath(root, target, 'imported file'), includedBytes: readFileSync(target).length, imports: nested });
    } else if (shown.startsWith(`<!-- File already processed: ${t.spec} -->`, state.pos)) {
      state.pos += `<!-- File already processed: ${t.spec} -->`.length;
      imports.push({ spec: t.spec, outcome: 'cycle' });
    } else if (shown.startsWith(`<!-- Import failed: ${t.spec} - `, state.pos)) {
      const close = shown.indexOf(' -->', state.pos);
      const message = shown.slice(state.pos + `<!-- Import failed: ${t.spec} - `.length, close);
      state.pos = close + ' -->'.length;
      imports.push({ spec: t.spec, outcome: message === 'Path traversal attempt' ? 'refused' : 'missing' });
    } else {
      fail(`gemini shows @${t.spec} (${where()}) as ${JSON.stringify(shown.slice(state.pos, state.pos + 80))}, none of the known forms`);
    }
  }
  const rest = content.slice(last);
  expect(top ? rest.trimEnd() : rest);
  return imports;
}

// ------------------------------------------------------------------ claude code

// Claude Code ships as a native program with no offline command that prints
// what it loads; it is observed through the requests it sends. `claude -p`
// runs against a fake Messages API on 127.0.0.1 (this process): every request
// is kept, and each is answered with a minimal streamed reply, a `Read` tool
// call for the next of the fixture's `accesses`, else the text `ok`. Telemetry,
// auto-update and other traffic are switched off; HOME and TMPDIR are the
// fixture's, so nothing of this machine's ~/.claude is read.
const CLAUDE_MEMORY_HEAD = '<system-reminder>\nCodebase and user instructions are shown below. Be sure to adhere to these instructions. IMPORTANT: These instructions OVERRIDE any default behavior and you MUST follow them exactly as written.\n\n';
const CLAUDE_REMINDER_TAIL = '\n</system-reminder>';
const CLAUDE_SKILLS_HEAD = 'The following skills are available for use with the Skill tool:\n\n';
const CLAUDE_IMPORT_MAX_DEPTH = 4;

function claudeTool(prefix) {
  const bin = [join(prefix, 'node_modules', '.bin', 'claude'), prefix].find((p) => existsSync(p) && statSync(p).isFile());
  if (!bin) fail(`no claude under ${prefix}; install it with: npm install --prefix ${prefix} @anthropic-ai/claude-code@${PINNED.claude}`);
  const v = spawnSync(bin, ['--version'], { encoding: 'utf8', timeout: 60_000, env: cleanEnv({ DISABLE_AUTOUPDATER: '1', DISABLE_TELEMETRY: '1' }) });
  const m = /^(\S+) \(Claude Code\)\s*$/.exec(v.stdout ?? '');
  if (v.status !== 0 || !m) fail(`\`${bin} --version\` said: ${v.stdout}${v.stderr}`);
  return { version: m[1], where: bin, recordAll: (runs, keepGoing) => eachRun('claude-code', runs, 1, (f, root) => recordClaude(bin, f, root), keepGoing) };
}

/** A fake Anthropic Messages API; `reply(n, body)` picks the n-th answer. */
function fakeMessagesApi(reply) {
  const requests = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => { body += d; });
    req.on('end', () => {
      if (req.method !== 'POST' || !req.url.startsWith('/v1/messages') || req.url.startsWith('/v1/messages/')) {
        requests.push({ url: req.url, unexpected: true });
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end('{"type":"error","error":{"type":"not_found_error","message":"not here"}}');
        return;
      }
      let j;
      try { j = JSON.parse(body); } catch { j = null; }
      requests.push({ url: req.url, body: j });
      const n = requests.filter((r) => r.body).length - 1;
      const tool = reply(n);
      const message = { id: `msg_${n}`, type: 'message', role: 'assistant', model: j?.model ?? 'fake', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } };
      const block = tool ? { type: 'tool_use', id: `toolu_${n}`, name: tool.name, input: tool.input } : { type: 'text', text: 'ok' };
      const stop = tool ? 'tool_use' : 'end_turn';
      if (!j?.stream) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ ...message, content: [block], stop_reason: stop }));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const ev = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
      ev('message_start', { message });
      if (tool) {
        ev('content_block_start', { index: 0, content_block: { ...block, input: {} } });
        ev('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify(tool.input) } });
      } else {
        ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
        ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'ok' } });
      }
      ev('content_block_stop', { index: 0 });
      ev('message_delta', { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 1 } });
      ev('message_stop', {});
      res.end();
    });
  });
  return new Promise((ok, ko) => {
    server.on('error', ko);
    server.listen(0, '127.0.0.1', () => ok({ server, requests, port: server.address().port }));
  });
}

async function recordClaude(bin, f, root) {
  const home = join(root, 'home');
  if (existsSync(join(home, '.claude.json')) || existsSync(join(home, '.claude', 'settings.json'))) fail('the fixture has its own ~/.claude.json or ~/.claude/settings.json; the recorder runs Claude Code with none');
  const cwd = join(root, ...f.cwd.split('/'));
  const accesses = f.accesses ?? [];
  const api = await fakeMessagesApi((n) => (n < accesses.length ? { name: 'Read', input: { file_path: `${root}/${accesses[n]}` } } : null));
  const tmp = mkdtempSync(join(tmpdir(), 'lisa-compat-claude-tmp-'));
  try {
    const env = cleanEnv({
      HOME: home, TMPDIR: tmp,
      ANTHROPIC_BASE_URL: `http://127.0.0.1:${api.port}`, ANTHROPIC_API_KEY: 'compat-offline',
      DISABLE_TELEMETRY: '1', DISABLE_AUTOUPDATER: '1', DISABLE_ERROR_REPORTING: '1',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY: '1',
    });
    const run = await new Promise((ok) => {
      const child = spawn(bin, ['-p', 'hi', '--allowedTools', 'Read'], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (d) => { out += d; });
      child.stderr.on('data', (d) => { out += d; });
      const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
      child.on('error', (e) => { clearTimeout(timer); ok({ code: null, signal: null, out: e.message }); });
      child.on('close', (code, signal) => { clearTimeout(timer); ok({ code, signal, out }); });
    });
    if (run.code !== 0) fail(`claude exited with ${run.signal ?? run.code}: ${run.out.slice(-2000)}`);
    const odd = api.requests.filter((r) => r.unexpected || !r.body);
    if (odd.length) fail(`claude made requests the fake API does not serve: ${odd.map((r) => r.url).join(', ')}`);
    const bodies = api.requests.map((r) => r.body);
    if (bodies.length !== accesses.length + 1) fail(`claude sent ${bodies.length} model requests, expected ${accesses.length + 1} (one per access, then the last answer)`);
    return parseClaude(f, root, cwd, bodies[0], bodies[bodies.length - 1]);
  } finally {
    await new Promise((ok) => api.server.close(ok));
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** The text parts of a message, in order. */
function claudeTexts(m) {
  if (typeof m.content === 'string') return [m.content];
  return m.content.filter((c) => c.type === 'text').map((c) => c.text);
}

function parseClaude(f, root, cwd, first, last) {
  const user = first.messages?.[0];
  if (!user || user.role !== 'user') fail('claude request does not open with a user message');
  const rootRe = root.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  // The memory reminder, if any file was loaded; nothing else may name a fixture file as context.
  const memory = claudeTexts(user).filter((t) => t.startsWith(CLAUDE_MEMORY_HEAD));
  if (memory.length > 1) fail(`claude request has ${memory.length} memory reminders`);
  const allText = JSON.stringify(first.messages) + JSON.stringify(first.system);
  const mentions = (allText.match(new RegExp(`Contents of ${rootRe}/`, 'g')) ?? []).length;
  let blocks = [];
  if (memory.length) {
    const text = memory[0];
    if (!text.endsWith(CLAUDE_REMINDER_TAIL)) fail('claude memory reminder is not closed as expected');
    blocks = claudeBlocks(f, root, text.slice(CLAUDE_MEMORY_HEAD.length, -CLAUDE_REMINDER_TAIL.length), true, 'memory');
  }
  if (mentions !== blocks.length) fail(`claude request names ${mentions} fixture files as "Contents of", the memory reminder holds ${blocks.length}`);
  const instructions = claudeImportTree(f, root, cwd, blocks);
  // Skills: the `- name: description` list in the session's system-role message.
  const lists = first.messages.flatMap(claudeTexts).filter((t) => t.includes(CLAUDE_SKILLS_HEAD));
  if (lists.length !== 1) fail(`claude request has ${lists.length} skills listings (expected 1: its bundled skills are always listed)`);
  const skills = parseClaudeSkills(f, root, lists[0]);
  // On access: what follows each Read result in the last request.
  const onAccess = f.accesses ? claudeOnAccess(f, root, cwd, last) : undefined;
  return { instructions, skills, onAccess };
}

/**
 * Splits `Contents of <abs>[ (<kind>)]:\n\n<text>` blocks joined by a blank
 * line; checks each text against the file (whole, its ends trimmed, or a
 * prefix: a cut).
 */
function claudeBlocks(f, root, body, withKind, part) {
  const head = new RegExp(`(?:^|\\n\\n)Contents of (${root.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/[^\\n]*?)${withKind ? ' \\([^()\\n]*\\)' : ''}:\\n\\n`, 'g');
  const starts = [...body.matchAll(head)];
  if (starts.length === 0 || starts[0].index !== 0) fail(`claude ${part} does not open with a "Contents of" block: ${JSON.stringify(body.slice(0, 120))}`);
  return starts.map((m, i) => {
    const from = m.index + m[0].length;
    const to = i + 1 < starts.length ? starts[i + 1].index : body.length;
    const shown = body.slice(from, to);
    const path = relPath(root, m[1], `claude ${part} file`);
    const bytes = fileBytes(f, root, path);
    const content = bytes.toString('utf8');
    let includedBytes;
    if (shown === content || shown === content.trimEnd() || shown === content.trim() || shown.trimEnd() === content.trimEnd()) includedBytes = bytes.length;
    else if (content.startsWith(shown)) includedBytes = Buffer.byteLength(shown);
    else fail(`claude shows ${path} as text that is neither the file nor a prefix of it: ${JSON.stringify(shown.slice(0, 120))}`);
    return { path, includedBytes, abs: m[1], content };
  });
}

// Claude Code lists each file an `@path` import brought in as a block of its
// own, right after the file that imports it (depth first). The recorder finds
// the `@` tokens of each file (at the start or after whitespace; in backtick
// code also right after a backtick) and rebuilds the tree from the blocks that
// follow; `@~/x` names `x` in the fixture's home (`home/`, Claude Code's
// `$HOME`). A token with no block gets its outcome from the tree: `code` (in a
// code span or fence), `too-deep` (in a file four hops down), `cycle` (on its
// own import chain), `refused` (a file of the repository whose target lies
// outside the cwd: an "external" import, skipped until the user approves
// external imports, which no recording does; the user's files in
// `home/.claude/` and what they import are not held to the cwd), `seen` (a
// file shown already in the same list: Claude Code loads each file once),
// `missing` (no such file); anything else is an error.
function claudeImportTokens(content) {
  const code = [];
  for (const m of content.matchAll(/(`+)[\s\S]*?\1/g)) code.push([m.index, m.index + m[0].length]);
  const out = [];
  // Also an `@` right after a backtick, when it is inside code: never an
  // import, recorded as `code` (`@a.md` written as a code span).
  for (const m of content.matchAll(/(^|\s|`)@([^\s`]+)/g)) {
    const at = m.index + m[1].length;
    const inCode = code.some(([s, e]) => at >= s && at < e);
    if (m[1] === '`' && !inCode) continue;
    out.push({ spec: m[2], inCode });
  }
  return out;
}

function claudeImportTree(f, root, cwd, blocks) {
  const home = join(root, 'home');
  // Every file shown so far in this list (Claude Code loads each once).
  const shown = new Set();
  let i = 0;
  const walk = (block, depth, chain, user) => {
    const imports = [];
    for (const t of claudeImportTokens(block.content)) {
      const target = t.spec.startsWith('~/') ? resolve(home, t.spec.slice(2)) : resolve(dirname(block.abs), t.spec);
      const next = blocks[i];
      if (!t.inCode && depth < CLAUDE_IMPORT_MAX_DEPTH && next && next.abs === target) {
        i++;
        shown.add(target);
        imports.push({ path: next.path, includedBytes: next.includedBytes, imports: walk(next, depth + 1, [...chain, target], user) });
        continue;
      }
      const inside = relative(cwd, target);
      let outcome;
      if (t.inCode) outcome = 'code';
      else if (depth >= CLAUDE_IMPORT_MAX_DEPTH) outcome = 'too-deep';
      else if (chain.includes(target)) outcome = 'cycle';
      else if (!user && (inside.startsWith('..') || inside.startsWith(sep))) outcome = 'refused';
      else if (shown.has(target)) outcome = 'seen';
      else if (!existsSync(target)) outcome = 'missing';
      else fail(`claude did not import @${t.spec} from ${block.path}, and none of the known reasons applies`);
      imports.push({ spec: t.spec, outcome });
    }
    return imports;
  };
  const out = [];
  while (i < blocks.length) {
    const b = blocks[i++];
    shown.add(b.abs);
    // The user's own files (`home/.claude/`, Claude Code's configuration
    // folder): it follows their imports wherever they lie.
    const user = b.path.startsWith('home/.claude/');
    out.push({ path: b.path, includedBytes: b.includedBytes, imports: walk(b, 0, [b.abs], user) });
  }
  return out;
}

/** The skills listing; a skill's path is the fixture SKILL.md it must come from. */
function parseClaudeSkills(f, root, text) {
  const start = text.indexOf(CLAUDE_SKILLS_HEAD) + CLAUDE_SKILLS_HEAD.length;
  const end = text.indexOf('\n\n', start);
  const after = end < 0 ? '' : text.slice(end);
  if (!/^\n\nToday's date is \d{4}-\d{2}-\d{2}\.\s*$/.test(after)) fail(`claude skills listing is not followed by the date line (a description with a blank line?): ${JSON.stringify(after.slice(0, 120))}`);
  const entries = [];
  // The fixture's skill folders, longest first: a folder name may hold a
  // space, a colon or parentheses, so an entry is read by the folder it
  // opens with before the generic `- name: description` form.
  const folders = [...new Set(f.tree.filter((e) => /(^|\/)\.claude\/skills\/[^/]+\/SKILL\.md$/.test(e.path)).map((e) => e.path.split('/').slice(-2)[0]))]
    .sort((a, b) => b.length - a.length);
  for (const l of text.slice(start, end).split('\n')) {
    const folder = folders.find((d) => l.startsWith(`- ${d}: `) || (l.startsWith(`- ${d} (`) && /^\(.+\): /.test(l.slice(d.length + 3))));
    if (folder !== undefined) {
      const rest = l.slice(folder.length + 2);
      // A skill whose frontmatter name differs from its folder is listed as
      // `folder (name)`: the folder is the name it is invoked by.
      const shown = /^ \((.+?)\): ([\s\S]*)$/.exec(rest);
      if (shown) entries.push({ name: folder, displayName: shown[1], description: shown[2] });
      else entries.push({ name: folder, description: rest.slice(2) });
      continue;
    }
    const m = /^- ([^:\n]+): ([\s\S]*)$/.exec(l);
    const shown = m && /^(\S+) \((.+)\)$/.exec(m[1]);
    if (m) entries.push({ name: shown ? shown[1] : m[1], ...(shown ? { displayName: shown[2] } : {}), description: m[2] });
    else if (entries.length) entries[entries.length - 1].description += '\n' + l;
    else fail(`claude skills list opens with an unexpected line: ${l}`);
  }
  // The fixture's SKILL.md files: <skills dir>/<folder>/SKILL.md, the folder naming the skill.
  const ours = f.tree.filter((e) => /(^|\/)\.claude\/skills\/[^/]+\/SKILL\.md$/.test(e.path)).map((e) => ({
    path: e.path,
    folder: e.path.split('/').slice(-2)[0],
    description: frontmatterField(readFileSync(join(root, ...e.path.split('/')), 'utf8'), 'description'),
    body: bodyFirstLine(readFileSync(join(root, ...e.path.split('/')), 'utf8')),
    fm: (/^---\n([\s\S]*?)\n---/.exec(plainLines(readFileSync(join(root, ...e.path.split('/')), 'utf8'))) ?? [null, null])[1],
  }));
  return entries.map((s) => {
    const same = ours.filter((o) => o.folder === s.name);
    const hits = same.filter((o) => o.description === s.description || (o.description === null && o.body === s.description));
    if (hits.length > 1) fail(`claude lists ${s.name} (${JSON.stringify(s.description)}), which ${hits.length} fixture skills could be: ${hits.map((h) => h.path).join(', ')}`);
    if (hits.length === 1) return { name: s.name, description: s.description, path: hits[0].path };
    // A description in another YAML form (quoted, folded, a block): the one
    // skill of that folder whose frontmatter holds the listed words in
    // order, else the folder's only skill.
    const words = (t) => t.replace(/["'|>\\]/g, ' ').split(/\s+/).filter(Boolean).join(' ');
    const loose = same.filter((o) => o.fm !== null && words(o.fm).includes(words(s.description).slice(0, 60)));
    if (loose.length === 1 || (loose.length === 0 && same.length === 1)) return { name: s.name, description: s.description, path: (loose[0] ?? same[0]).path };
    if (same.length) fail(`claude lists ${s.name} with a description no fixture SKILL.md of that folder has: ${JSON.stringify(s.description)}`);
    // A bundled skill's text is Claude Code's, not copied here: a digest
    // still shows a change in a re-recording.
    const digest = createHash('sha256').update(s.description).digest('hex').slice(0, 16);
    return { name: s.name, description: `(bundled, not copied: sha256 ${digest})`, path: `(bundled)/${s.name}`, system: true };
  });
}

/** A SKILL.md's text without a leading BOM and with CRLF line ends read as LF. */
function plainLines(text) {
  return text.replace(/^\ufeff/, '').replace(/\r\n/g, '\n');
}

/**
 * A one-line `key: value` of a SKILL.md frontmatter (the fixtures' plain
 * form); of a key written twice, the last (as YAML readers that accept it
 * take it).
 */
function frontmatterField(text, key) {
  const m = /^---\n([\s\S]*?)\n---\n/.exec(plainLines(text));
  if (!m) return null;
  let found = null;
  for (const l of m[1].split('\n')) if (l.startsWith(`${key}: `)) found = l.slice(key.length + 2);
  return found;
}

/** The first non-blank line of a SKILL.md's body (what some peers describe a skill by when its description is no text). */
function bodyFirstLine(text) {
  const m = /^---\n[\s\S]*?\n---\n([\s\S]*)$/.exec(plainLines(text));
  if (!m) return null;
  return m[1].split('\n').map((l) => l.trim()).find((l) => l !== '') ?? null;
}

/** For each access (a Read call), the memory reminders after its result. */
function claudeOnAccess(f, root, cwd, last) {
  const msgs = last.messages;
  return f.accesses.map((access, n) => {
    const at = msgs.findIndex((m) => m.role === 'user' && Array.isArray(m.content) && m.content.some((c) => c.type === 'tool_result' && c.tool_use_id === `toolu_${n}`));
    if (at < 0) fail(`claude's last request has no result for the Read of ${access}`);
    const parts = msgs[at].content;
    const after = parts.slice(parts.findIndex((c) => c.type === 'tool_result' && c.tool_use_id === `toolu_${n}`) + 1);
    const blocks = [];
    for (const c of after) {
      if (c.type === 'tool_result') break;
      if (c.type !== 'text' || !c.text.includes(`Contents of ${root}/`)) continue;
      const head = '<system-reminder>\n';
      // Some reminders end with a line break after the closing tag.
      const text = c.text.endsWith(`${CLAUDE_REMINDER_TAIL}\n`) ? c.text.slice(0, -1) : c.text;
      if (!text.startsWith(head) || !text.endsWith(CLAUDE_REMINDER_TAIL)) fail(`claude on-access reminder for ${access} not framed as expected: ${JSON.stringify(c.text.slice(0, 120))} … ${JSON.stringify(c.text.slice(-160))}`);
      blocks.push(...claudeBlocks(f, root, text.slice(head.length, -CLAUDE_REMINDER_TAIL.length), false, `on-access (${access})`));
    }
    return { access, instructions: claudeImportTree(f, root, cwd, blocks) };
  });
}

// ------------------------------------------------------------------ entry

// Last, so every top-level const above is initialized before use.
if (process.argv[2] === '--gemini-child') {
  await geminiChild(JSON.parse(readFileSync(process.argv[3], 'utf8')));
} else {
  try {
    await main(parseArgs(process.argv.slice(2)));
  } catch (e) {
    if (e instanceof RecordError) {
      console.error(`record.mjs: ${e.message}`);
      process.exit(1);
    }
    throw e;
  }
}
