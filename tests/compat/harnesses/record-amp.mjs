#!/usr/bin/env node
// Runs the REAL Amp CLI's own guidance discovery (npm package
// `@sourcegraph/amp`, now a shim over `@ampcode/cli`) on every case of
// amp.json (next to this file) and prints what it found, in the shape of each
// case's `expect`.
//
//   node tests/compat/harnesses/record-amp.mjs [--bin PATH] [--cases FILE]
//        [--only NAME[,NAME...]] [--out FILE] [--timeout SECONDS] [--jobs N]
//        [--check] [--keep] [--dump DIR] [--quiet]
//
// --bin: the native `amp` program (@ampcode/cli-linux-x64/amp, or the
//   hard link npm places at @ampcode/cli/bin/amp.exe); by default $AMP_BIN,
//   else ${XDG_CACHE_HOME:-~/.cache}/lisa-context-peers/amp@<PINNED>/
//   node_modules/.bin/amp, else `amp` on PATH.
// --out: also write the observations as JSON (version, date, one entry per case).
// --check: exit 1 when an observation differs from the case's `expect`.
// --keep: leave the temporary trees (their paths are printed).
// --dump DIR: write what the driver printed for each case as DIR/<case>.json.
// --jobs N: cases run side by side (default: the CPU count, at most 4).
//
// Why not `amp -x hi` against a fake server, as OpenCode is recorded: Amp's
// CLI does not build the system prompt. It is an "executor" for a thread
// that lives on ampcode.com: after `getUserInfo` (an HTTP RPC) it connects
// to the server's thread actor and sends it an `executor_guidance_snapshot`
// (the instruction files it found, with their text); the server writes the
// prompt, and each tool result carries the files that tool found
// (`discoveredGuidanceFiles`). Faking that actor protocol is out of reach, so
// the recorder runs the program's own code instead, on the program's own
// runtime:
// - the CLI is a Bun single-file executable; its JavaScript is the `.bun`
//   ELF section, stored as UTF-16LE from `// @bun` to the first NUL. The
//   recorder copies it out and changes two places (both must be found
//   exactly once, which ties the recorder to PINNED): the call of the CLI's
//   entry (`WRe()`) becomes a call of a small driver appended to the file,
//   and the loading of the bundled keyring addon (not in the copy) goes;
// - the driver, in the case's cwd, calls the very functions the CLI uses:
//   `che` and `Wpe` (the environment snapshot an `amp -x` executor sends),
//   then `Vpe` (which runs the guidance discovery `uIt` and sends the
//   snapshot: the driver's transport keeps it), then for each of the case's
//   `accesses` the built-in `Read` tool (`cGe`, i.e. `dGe`: read the file,
//   then `tM`, the discovery on access) with the context an executor gives
//   its tools (dir = the cwd, an empty thread, one set of files already
//   found for the session);
// - it runs as `BUN_BE_BUN=1 amp driver.js` (the executable acting as the
//   Bun it embeds), with HOME the tree's home/, no XDG variable (so
//   ~/.config is the user's config folder), no AMP_* variable, and no
//   network use (the functions read files and run `git symbolic-ref`).
// Every file is checked: it must lie inside the fixture (Amp also walks
// above the cwd up to, not including, `/`, `/home` or `/Users`, and reads
// /etc/ampcode/AGENTS.md: a file there is an error), and its text must be
// the file's (Amp sends it trimmed, without YAML frontmatter). A run past
// --timeout (60 s; the process group is killed) is an error.
//
// What the server then does with the files (their order in the prompt) is
// not visible here; `expect` gives them in the order Amp sends them.

import { spawn, spawnSync } from 'node:child_process';
import {
  closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, readSync, realpathSync, rmSync,
  symlinkSync, writeFileSync,
} from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { basename, dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const PINNED = '0.0.1790142911-g7618fb';

class RecordError extends Error {}
const fail = (msg) => { throw new RecordError(msg); };

function parseArgs(argv) {
  const o = { bin: null, cases: join(here, 'amp.json'), only: null, out: null, timeout: 60, jobs: Math.max(1, Math.min(4, availableParallelism())), check: false, keep: false, dump: null, quiet: false };
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
    else if (a === '--keep') o.keep = true;
    else if (a === '--dump') o.dump = val();
    else if (a === '--quiet') o.quiet = true;
    else if (a === '-h' || a === '--help') {
      const lines = readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n');
      console.log(lines.slice(1, lines.findIndex((l) => l.startsWith('// Why not')) - 1).map((l) => l.replace(/^\/\/ ?/, '')).join('\n'));
      process.exit(0);
    } else fail(`unknown argument ${a}`);
  }
  if (!(o.timeout > 0)) fail('--timeout must be a positive number of seconds');
  if (!(Number.isInteger(o.jobs) && o.jobs > 0)) fail('--jobs must be a positive integer');
  return o;
}

function findBin(given) {
  if (given) {
    if (!existsSync(given)) fail(`no such program: ${given}`);
    return realpathSync(given);
  }
  if (process.env.AMP_BIN) return realpathSync(process.env.AMP_BIN);
  const cache = process.env.XDG_CACHE_HOME || join(process.env.HOME || tmpdir(), '.cache');
  const pinned = join(cache, 'lisa-context-peers', `amp@${PINNED}`, 'node_modules', '.bin', 'amp');
  if (existsSync(pinned)) return realpathSync(pinned);
  const onPath = spawnSync('sh', ['-c', 'command -v amp'], { encoding: 'utf8' });
  if (onPath.status === 0 && onPath.stdout.trim()) return realpathSync(onPath.stdout.trim());
  fail(`no amp program: pass --bin, or install it with: npm install --prefix ${dirname(dirname(dirname(pinned)))} @sourcegraph/amp@${PINNED}`);
}

function baseEnv(home) {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8', HOME: home, GIT_CONFIG_NOSYSTEM: '1' };
}

function version(bin) {
  const scratch = mkdtempSync(join(tmpdir(), 'lisa-amp-version-'));
  try {
    const v = spawnSync(bin, ['--version'], { encoding: 'utf8', timeout: 60_000, cwd: scratch, env: { ...baseEnv(scratch), AMP_SKIP_UPDATE_CHECK: '1' } });
    const m = /^(\d+\.\d+\.\d+\S*)/.exec(v.stdout ?? '');
    if (v.status !== 0 || !m) fail(`\`${bin} --version\` said: ${v.stdout}${v.stderr}`);
    return m[1];
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

// ------------------------------------------------------------------ the driver

/** The JavaScript of a Bun single-file executable: its `.bun` section, UTF-16LE. */
function bundledSource(bin) {
  const fd = openSync(bin, 'r');
  try {
    const read = (off, len) => { const b = Buffer.alloc(len); readSync(fd, b, 0, len, off); return b; };
    const eh = read(0, 64);
    if (eh.toString('latin1', 0, 4) !== '\x7fELF' || eh[4] !== 2 || eh[5] !== 1) fail(`${bin} is not a 64-bit little-endian ELF program`);
    const shoff = Number(eh.readBigUInt64LE(0x28));
    const shentsize = eh.readUInt16LE(0x3a);
    const shnum = eh.readUInt16LE(0x3c);
    const shstrndx = eh.readUInt16LE(0x3e);
    const sh = (i) => {
      const b = read(shoff + i * shentsize, shentsize);
      return { name: b.readUInt32LE(0), offset: Number(b.readBigUInt64LE(0x18)), size: Number(b.readBigUInt64LE(0x20)) };
    };
    const strtab = sh(shstrndx);
    const names = read(strtab.offset, strtab.size);
    let bun = null;
    for (let i = 0; i < shnum; i++) {
      const s = sh(i);
      if (names.toString('latin1', s.name, names.indexOf(0, s.name)) === '.bun') bun = s;
    }
    if (!bun) fail(`${bin} has no .bun section: not a Bun single-file executable`);
    const sec = read(bun.offset, bun.size);
    const start = sec.indexOf(Buffer.from('// @bun\n', 'utf16le'));
    if (start < 0 || start % 2) fail(`${bin}: no UTF-16 \`// @bun\` module in its .bun section`);
    let end = start;
    while (end + 1 < sec.length && (sec[end] || sec[end + 1])) end += 2;
    return sec.toString('utf16le', start, end);
  } finally {
    closeSync(fd);
  }
}

// The two places changed in the bundle of PINNED (minified names).
const ENTRY = 'IOe();WRe().catch(';
const KEYRING = 'var dOe=DOe()?cq():Dq();globalThis.__AMP_KEYRING_ENTRY_CLASS__=dOe.Entry;';
// What the driver calls, as in the bundle of PINNED: each must be defined.
const USED = ['async function che(', 'function Wpe(', 'async function Vpe(', 'async function uIt(', 'async function tM(', 'function dGe(', 'cGe=dGe(', 'function N$(', 'ml=process.env.XDG_CONFIG_HOME?'];

const DRIVER = String.raw`
async function __lisaAmpDriver(){
  const spec=JSON.parse(process.env.LISA_AMP_SPEC);
  const cwd=process.cwd();
  const log={info(){},warn(){},error(){},debug(){},getChild(){return log}};
  // What kg() (the CLI's config service) gives the guidance code: the
  // workspace root (process.cwd() for amp -x) and the user config folder.
  const configService={workspaceRoot:re.of(Ot.file(cwd)),userConfigDir:ml,getLatest:async()=>({settings:{},secrets:{getToken:async()=>{}}})};
  const env=Wpe(await che(void 0,cwd,void 0));
  const sent=[];
  await Vpe({sendExecutorGuidanceSnapshot:async(m)=>{sent.push(m)}},configService,env,log,void 0,void 0,new AbortController().signal);
  const startup=sent.flatMap((m)=>m.files.map((f)=>({uri:f.uri,content:f.content})));
  const ctx={dir:Ot.file(cwd),thread:{id:CS(),created:Date.now(),v:0,messages:[]},discoveredGuidanceFileURIs:new Set,configService};
  const accesses=[];
  for(const p of spec.accesses){
    const r=await N$(cGe({args:{path:p}},ctx));
    accesses.push({path:p,status:r.status,absolutePath:r.result?.absolutePath,error:r.error?.message,files:(r.result?.discoveredGuidanceFiles??[]).map((f)=>({uri:f.uri,content:f.content}))});
  }
  process.stdout.write("\n@@lisa-amp@@"+JSON.stringify({env,userConfigDir:sent[0]?.userConfigDir,snapshots:sent.length,startup,accesses})+"\n");
  process.exit(0);
}
`;

function driverSource(bin) {
  let src = bundledSource(bin);
  const once = (s) => {
    const n = src.split(s).length - 1;
    if (n !== 1) fail(`the bundle of ${bin} holds \`${s}\` ${n} times, not once: the recorder knows the bundle of ${PINNED} only`);
  };
  for (const s of [ENTRY, KEYRING, ...USED]) once(s);
  src = src.replace(ENTRY, 'IOe();__lisaAmpDriver().catch(').replace(KEYRING, '');
  return src + DRIVER;
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

// ------------------------------------------------------------------ one case

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
    let err = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { err += d; });
    let timedOut = false;
    const killGroup = () => { try { process.kill(-child.pid, 'SIGKILL'); } catch { /* already gone */ } };
    const timer = setTimeout(() => { timedOut = true; killGroup(); }, seconds * 1000);
    child.on('error', (e) => { clearTimeout(timer); ok({ code: null, out: '', err: e.message, ms: Date.now() - started, timedOut }); });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      killGroup();
      live.delete(child.pid);
      ok({ code, signal, out, err, ms: Date.now() - started, timedOut });
    });
  });
}

/** Amp's own reading of a guidance file (its `Yft`): YAML frontmatter off, trimmed. */
function ampText(text) {
  const m = /^---\s*\n([\s\S]*?)\n---\s*\n([\s\S]*)$/.exec(text);
  return (m ? m[2] ?? '' : text).trim();
}

function filesOf(c, root, files, where) {
  return files.map((f) => {
    let abs;
    try { abs = fileURLToPath(f.uri); } catch { fail(`${c.name}: ${where} names ${f.uri}, not a file URI`); }
    if (abs !== root && !abs.startsWith(root + sep)) fail(`${c.name}: ${where} names a file outside the fixture: ${abs}`);
    let body;
    try { body = readFileSync(abs, 'utf8'); } catch (e) { fail(`${c.name}: ${where} names ${abs}, which cannot be read: ${e.message}`); }
    if (f.content !== ampText(body)) fail(`${c.name}: ${where} gives ${abs} a text that is not the file's: ${JSON.stringify(f.content?.slice(0, 120))}`);
    return relative(root, abs).split(sep).join('/');
  });
}

async function recordCase(ctx, c) {
  const root = realpathSync(mkdtempSync(join(tmpdir(), `lisa-amp-${c.name}-`)));
  inUse.add(root);
  const accesses = (c.expect.accesses ?? []).map((a) => a.path);
  try {
    writeTree(root, c);
    const cwd = join(root, ...c.cwd.split('/'));
    const env = { ...baseEnv(join(root, 'home')), BUN_BE_BUN: '1', LISA_AMP_SPEC: JSON.stringify({ accesses: accesses.map((p) => join(root, ...p.split('/'))) }) };
    const run = await runProgram(ctx.bin, [ctx.driver], cwd, env, ctx.timeout);
    if (run.timedOut) fail(`${c.name}: amp still running after ${ctx.timeout} s (killed)`);
    const at = run.out.lastIndexOf('\n@@lisa-amp@@');
    if (run.code !== 0 || at < 0) fail(`${c.name}: the driver exited with ${run.signal ?? run.code}: ${(run.out + run.err).slice(-2000)}`);
    const got = JSON.parse(run.out.slice(at + '\n@@lisa-amp@@'.length));
    if (ctx.dump) writeFileSync(join(ctx.dump, `${c.name}.json`), JSON.stringify(got, null, 2) + '\n');
    if (got.env?.workingDirectory !== `file://${cwd}`) fail(`${c.name}: the environment's working directory is ${got.env?.workingDirectory}, not the cwd`);
    if (got.userConfigDir !== `file://${join(root, 'home', '.config')}`) fail(`${c.name}: Amp's user config folder is ${got.userConfigDir}, not ~/.config`);
    const observed = { instructions: filesOf(c, root, got.startup, 'the guidance snapshot') };
    if (c.expect.accesses) {
      observed.accesses = got.accesses.map((a, i) => {
        if (a.status !== 'done') fail(`${c.name}: the Read of ${accesses[i]} failed: ${a.error}`);
        return { path: accesses[i], instructions: filesOf(c, root, a.files, `the Read of ${accesses[i]}`) };
      });
    }
    return { observed, ms: run.ms, root };
  } finally {
    inUse.delete(root);
    if (!ctx.keep) rmSync(root, { recursive: true, force: true });
  }
}

// ------------------------------------------------------------------ main

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const bin = findBin(opts.bin);
  const ver = version(bin);
  const file = JSON.parse(readFileSync(opts.cases, 'utf8'));
  // Cases with a `skills` expectation were read from the program's source,
  // not recorded: this recorder does not observe skills.
  let cases = file.cases.filter((c) => !c.expect.skills);
  if (opts.only) {
    const unknown = opts.only.filter((n) => !cases.some((c) => c.name === n));
    if (unknown.length) fail(`no such case: ${unknown.join(', ')}`);
    cases = cases.filter((c) => opts.only.includes(c.name));
  }
  if (!opts.quiet) console.log(`amp ${ver} (${bin}), ${cases.length} cases`);
  if (ver !== PINNED) fail(`amp ${ver} is not ${PINNED}, the one whose bundle the recorder knows`);
  const work = mkdtempSync(join(tmpdir(), 'lisa-amp-driver-'));
  const driver = join(work, 'driver.js');
  writeFileSync(driver, driverSource(bin));
  keepFolders = opts.keep;
  if (opts.dump) mkdirSync(opts.dump, { recursive: true });
  const ctx = { bin, driver, timeout: opts.timeout, keep: opts.keep, dump: opts.dump };
  const results = new Array(cases.length);
  let next = 0;
  const started = Date.now();
  const worker = async () => {
    while (next < cases.length) {
      const i = next++;
      try {
        results[i] = await recordCase(ctx, cases[i]);
      } catch (e) {
        if (!(e instanceof RecordError)) throw e;
        results[i] = { error: e.message };
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(opts.jobs, cases.length) }, worker));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  let differ = 0;
  let errors = 0;
  cases.forEach((c, i) => {
    const r = results[i];
    if (r.error) {
      errors++;
      console.log(`ERROR  ${r.error}`);
      return;
    }
    const ok = same(r.observed, c.expect);
    if (!ok) differ++;
    const note = ok ? 'matches expect' : `DIFFERS from expect ${JSON.stringify(c.expect)}`;
    const ours = c.ours ? (same(r.observed, c.ours) ? '; = ours' : '') : '';
    if (!opts.quiet || !ok) console.log(`${ok ? 'same' : 'DIFF'}   ${c.name.padEnd(28)} ${(r.ms / 1000).toFixed(1)} s  ${JSON.stringify(r.observed)}\n       ${note}${ours}${opts.keep ? `\n       tree: ${r.root}` : ''}`);
  });
  if (!opts.quiet) console.log(`${cases.length} cases in ${((Date.now() - started) / 1000).toFixed(1)} s: ${cases.length - differ - errors} as expected, ${differ} different, ${errors} errors`);
  if (opts.out) {
    const out = {
      peer: 'amp',
      version: ver,
      recorded: new Date().toISOString().slice(0, 10),
      cases: cases.map((c, i) => (results[i].error ? { name: c.name, error: results[i].error } : { name: c.name, observed: results[i].observed })),
    };
    writeFileSync(opts.out, JSON.stringify(out, null, 2) + '\n');
  }
  if (errors) process.exit(2);
  if (opts.check && differ) process.exit(1);
}

main().catch((e) => {
  console.error(e instanceof RecordError ? `record-amp: ${e.message}` : e);
  process.exit(2);
});
