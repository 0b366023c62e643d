#!/usr/bin/env node
// The generative differential (issue 29): random trees, recorded with the
// real programs, compared with lisa-context under the compat policies.
//
//   node tests/compat/differential.mjs [--seed S] [--count N] [--peer codex|gemini|claude-code|both|all]
//        [--work DIR] [--bin PATH] [--shrink] [--shrink-steps N] [--shrink-max N]
//        [--shrink-pending] [--found DIR] [--no-fail] [--rates FILE] [--no-record]
//
// 1. writes N trees (tests/compat/random.mjs; seed S, a fresh one by default,
//    printed) into WORK/fixtures;
// 2. records them (tests/compat/record.mjs --keep-going) into WORK/<peer>/;
// 3. runs compat::random_trees_load_what_the_real_programs_load from the
//    test binary (PATH, else found with `cargo test --locked --test it
//    --no-run --message-format=json`) with LISA_COMPAT_RANDOM=WORK, prints
//    the report (also WORK/report.json);
// 4. with --shrink: for each new mismatch (and pending ones with
//    --shrink-pending), at most --shrink-max (default 12), two per kind of
//    difference, greedily removes tree entries, settings and accesses while
//    the same parts still differ (re-recording and comparing each batch of
//    candidates; at most --shrink-steps batches, default 40) and writes the
//    small fixture, its recording and its difference into --found (default
//    WORK/found): fixtures/<name>.json, <peer>/<name>.json, diff/<name>.json,
//    so LISA_COMPAT_RANDOM=FOUND compares them again.
// 5. with --rates FILE (tests/compat/rates.json): writes the run's rates
//    into the file's `random` part (seed, count, date, and per peer the
//    version recorded, the counts of the report and the differences by
//    class), leaving its `fixtures` part; the pages render from that file
//    (tests/it/compat.rs, pages_show_the_rates_of_the_generated_file).
// --no-record: steps 1 and 2 are skipped: the trees and recordings already
// in WORK (same --seed and --count) are compared again, e.g. after a fix.
// Exit 1 when a tree differs outside every intended and pending class
// (unless --no-fail), 2 on a usage or tool failure.

import { spawnSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generate } from './random.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = join(here, '..', '..');
const TEST = 'compat::random_trees_load_what_the_real_programs_load';

function parseArgs(argv) {
  const o = { seed: null, count: 50, peer: 'both', work: null, bin: null, shrink: false, shrinkSteps: 40, shrinkMax: 12, shrinkPending: false, found: null, fail: true, rates: null, record: true };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const val = () => { const v = argv[++i]; if (v === undefined) usage(`${a} needs a value`); return v; };
    if (a === '--seed') o.seed = Number(val());
    else if (a === '--count') o.count = Number(val());
    else if (a === '--peer') o.peer = val();
    else if (a === '--work') o.work = val();
    else if (a === '--bin') o.bin = val();
    else if (a === '--shrink') o.shrink = true;
    else if (a === '--shrink-steps') o.shrinkSteps = Number(val());
    else if (a === '--shrink-max') o.shrinkMax = Number(val());
    else if (a === '--shrink-pending') o.shrinkPending = true;
    else if (a === '--found') o.found = val();
    else if (a === '--no-fail') o.fail = false;
    else if (a === '--rates') o.rates = val();
    else if (a === '--no-record') o.record = false;
    else usage(`unknown argument ${a}`);
  }
  if (o.seed === null) o.seed = randomInt(0, 2 ** 32 - 1);
  if (!Number.isInteger(o.seed) || o.seed < 0 || o.seed >= 2 ** 32) usage('--seed must be an integer in [0, 2^32)');
  if (!['codex', 'gemini', 'claude-code', 'both', 'all'].includes(o.peer)) usage('--peer must be codex, gemini, claude-code, both or all');
  return o;
}

function usage(msg) {
  console.error(`differential.mjs: ${msg}`);
  process.exit(2);
}

/** The `it` test binary, built by cargo if needed. */
function testBinary() {
  const run = spawnSync('cargo', ['test', '--locked', '--test', 'it', '--no-run', '--message-format=json'], {
    cwd: repoRoot, encoding: 'utf8', maxBuffer: 256 << 20, stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (run.status !== 0) usage('cargo test --no-run failed');
  for (const line of run.stdout.split('\n')) {
    if (!line.startsWith('{')) continue;
    const m = JSON.parse(line);
    if (m.reason === 'compiler-artifact' && m.target?.name === 'it' && m.executable) return m.executable;
  }
  usage('no `it` test executable in cargo\'s output');
}

function writeFixtures(dir, fixtures) {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const f of fixtures) writeFileSync(join(dir, `${f.name}.json`), JSON.stringify(f, null, 2) + '\n');
}

function record(work, peer) {
  const run = spawnSync(process.execPath, [join(here, 'record.mjs'), '--fixtures', join(work, 'fixtures'), '--out', work, '--peer', peer, '--keep-going', '--quiet'], {
    cwd: repoRoot, encoding: 'utf8', maxBuffer: 64 << 20,
  });
  if (run.status !== 0) usage(`record.mjs failed:\n${run.stdout}${run.stderr}`);
  return run.stdout;
}

function compare(bin, work) {
  const run = spawnSync(bin, [TEST, '--exact', '--nocapture', '--test-threads', '1'], {
    cwd: repoRoot, encoding: 'utf8', maxBuffer: 256 << 20,
    env: { ...process.env, LISA_COMPAT_RANDOM: work, LISA_COMPAT_RANDOM_REPORT: join(work, 'report.json') },
  });
  if (!existsSync(join(work, 'report.json'))) usage(`the comparator wrote no report:\n${run.stdout}${run.stderr}`);
  return JSON.parse(readFileSync(join(work, 'report.json'), 'utf8'));
}

/** What differs, in short: per part, the items only the program has and only we have. */
function diffOf(m) {
  if (!m.got || m.got.Err !== undefined) return { error: m.got?.Err };
  const ours = m.got.Ok;
  const out = {};
  for (const key of ['instructions', 'skills', 'on_access']) {
    const a = new Set(m.expected[key].map((x) => JSON.stringify(x)));
    const b = new Set(ours[key].map((x) => JSON.stringify(x)));
    const theirsOnly = [...a].filter((x) => !b.has(x));
    const oursOnly = [...b].filter((x) => !a.has(x));
    if (theirsOnly.length || oursOnly.length) out[key] = { theirsOnly, oursOnly };
    else if (JSON.stringify(m.expected[key]) !== JSON.stringify(ours[key])) out[key] = { order: true };
  }
  return out;
}

/** A kind of difference: peer, parts, which side has more (for grouping). */
function shapeOf(m) {
  const d = diffOf(m);
  return `${m.peer} ${Object.entries(d).map(([k, v]) => (k === 'error' ? 'error' : `${k}:${v.order ? 'order' : `${v.theirsOnly.length ? 'T' : ''}${v.oursOnly.length ? 'O' : ''}`}`)).join(' ')}`;
}

function printReport(report) {
  for (const [peer, s] of Object.entries(report.peers)) {
    if (s.trees === 0) continue;
    const pct = (n) => (s.recorded ? `${((100 * n) / s.recorded).toFixed(1)}%` : '-');
    console.log(`${peer}: ${s.trees} trees, ${s.recorded} recorded (${s.unrecorded} not); raw ${s.rawMatches} (${pct(s.rawMatches)}), net of intended ${s.netMatches} (${pct(s.netMatches)}), net of pending too ${s.netMatches + s.pendingMismatches} (${pct(s.netMatches + s.pendingMismatches)}); ${s.pendingMismatches} pending, ${s.mismatches} new`);
  }
  const byClass = {};
  for (const m of report.mismatches) {
    const k = `${m.peer} ${m.kind} ${m.class ?? '-'}`;
    byClass[k] = (byClass[k] ?? 0) + 1;
  }
  for (const [k, n] of Object.entries(byClass).sort()) console.log(`  ${String(n).padStart(4)}  ${k}`);
  for (const m of report.mismatches.filter((x) => x.kind === 'new')) {
    console.log(`NEW ${m.peer} ${m.fixture} [${m.features.join(', ')}] ${shapeOf(m)}`);
    console.log(`    ${JSON.stringify(diffOf(m)).slice(0, 400)}`);
  }
  const reasons = {};
  for (const u of report.unrecorded) {
    const k = `${u.peer}: ${u.reason.replace(/^\S+ on \S+: /, '').replace(/\d+/g, 'N').slice(0, 90)}`;
    reasons[k] = (reasons[k] ?? 0) + 1;
  }
  for (const [k, n] of Object.entries(reasons).sort()) console.log(`  not recorded ${n}x  ${k}`);
}

// ---------------------------------------------------------------- shrinking

/** The removable parts of a fixture. */
function units(f) {
  const out = f.tree.map((_, i) => ({ tree: i }));
  for (const k of Object.keys(f.settings)) out.push({ setting: k });
  (f.settings.extraNames ?? []).forEach((_, i) => out.push({ extra: i }));
  (f.accesses ?? []).forEach((_, i) => out.push({ access: i }));
  return out;
}

function without(f, removed) {
  const g = structuredClone(f);
  const trees = new Set(removed.filter((u) => 'tree' in u).map((u) => u.tree));
  const extras = new Set(removed.filter((u) => 'extra' in u).map((u) => u.extra));
  const accesses = new Set(removed.filter((u) => 'access' in u).map((u) => u.access));
  g.tree = f.tree.filter((_, i) => !trees.has(i));
  if (g.settings.extraNames) g.settings.extraNames = f.settings.extraNames.filter((_, i) => !extras.has(i));
  for (const u of removed) if ('setting' in u) delete g.settings[u.setting];
  if (f.accesses) {
    g.accesses = f.accesses.filter((_, i) => !accesses.has(i));
    if (g.accesses.length === 0) delete g.accesses;
  }
  return g;
}

/** Shrinks `f` while `peer` still differs in the same way (kind and parts). */
function shrink(bin, base, f, m, steps) {
  const want = `${m.kind} ${m.sections.join(',')}`;
  let cur = { ...structuredClone(f), peers: [m.peer] };
  let chunk = Math.max(1, Math.ceil(units(cur).length / 2));
  let batches = 0;
  let last = null;
  while (batches < steps) {
    const us = units(cur);
    if (us.length === 0) break;
    chunk = Math.min(chunk, us.length);
    const cands = [];
    for (let i = 0; i < us.length && cands.length < 24; i += chunk) cands.push(without(cur, us.slice(i, i + chunk)));
    const work = join(base, `step-${batches}`);
    const named = cands.map((c, i) => ({ ...c, name: `${f.name}-s${i}` }));
    writeFixtures(join(work, 'fixtures'), named);
    record(work, m.peer);
    const report = compare(bin, work);
    batches++;
    const hit = named.findIndex((c) => report.mismatches.some((x) => x.fixture === c.name && x.peer === m.peer && `${x.kind} ${x.sections.join(',')}` === want));
    if (hit >= 0) {
      cur = { ...cands[hit], name: f.name };
      last = { work, name: named[hit].name, entry: report.mismatches.find((x) => x.fixture === named[hit].name && x.peer === m.peer) };
    } else if (chunk > 1) chunk = Math.ceil(chunk / 2);
    else break;
    if (last === null || hit < 0) rmSync(work, { recursive: true, force: true });
  }
  return { fixture: cur, last, batches };
}

/** The version a peer's recordings in the work folder carry (one for all). */
function recordedVersion(peer) {
  const folder = join(work, peer);
  if (!existsSync(folder)) return null;
  const versions = new Set();
  for (const name of readdirSync(folder).filter((n) => n.endsWith('.json'))) {
    versions.add(JSON.parse(readFileSync(join(folder, name), 'utf8')).version);
  }
  if (versions.size > 1) usage(`${peer}: recordings of several versions: ${[...versions].join(', ')}`);
  return [...versions][0] ?? null;
}

/** Writes the run's rates into `file`'s `random` part. */
function writeRates(file, report) {
  const rates = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : { fixtures: {} };
  const peers = {};
  for (const [peer, s] of Object.entries(report.peers)) {
    if (s.trees === 0) continue;
    const classes = {};
    for (const m of report.mismatches.filter((x) => x.peer === peer)) {
      for (const c of (m.class ?? 'none').split('+')) classes[c] = (classes[c] ?? 0) + 1;
    }
    peers[peer] = {
      seed: o.seed, count: o.count, date: new Date().toISOString().slice(0, 10),
      version: recordedVersion(peer),
      trees: s.trees, recorded: s.recorded, rawMatches: s.rawMatches, netMatches: s.netMatches,
      pendingMismatches: s.pendingMismatches, mismatches: s.mismatches,
      classes: Object.fromEntries(Object.entries(classes).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
    };
  }
  // A run replaces the rates of the peers it drew trees for and keeps the
  // others' (each peer's entry names its own run: seed, count, date).
  rates.random = { peers: { ...(rates.random?.peers ?? {}), ...peers } };
  // Keys sorted at every level, as the Rust side writes the file.
  const sorted = (v) => (v && typeof v === 'object' && !Array.isArray(v)
    ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sorted(v[k])])) : v);
  writeFileSync(file, JSON.stringify(sorted(rates), null, 2) + '\n');
  console.log(`differential: rates written to ${file} (render the pages: LISA_COMPAT_RATES=write cargo test --test it compat)`);
}

// ---------------------------------------------------------------- main

const o = parseArgs(process.argv.slice(2));
const work = o.work ?? mkdtempSync(join(tmpdir(), 'lisa-differential-'));
mkdirSync(work, { recursive: true });
const bin = o.bin ?? testBinary();
const started = Date.now();
console.log(`differential: seed ${o.seed}, ${o.count} trees, peer ${o.peer}, work ${work}`);
const fixtures = Array.from({ length: o.count }, (_, i) => generate(o.seed, i, o.peer));
if (o.record) {
  writeFixtures(join(work, 'fixtures'), fixtures);
  process.stdout.write(record(work, o.peer));
} else if (!existsSync(join(work, 'fixtures'))) {
  usage(`--no-record: ${join(work, 'fixtures')} does not exist`);
}
const report = compare(bin, work);
printReport(report);
console.log(`differential: generated, recorded and compared in ${((Date.now() - started) / 1000).toFixed(1)} s (seed ${o.seed})`);

if (o.shrink) {
  const found = o.found ?? join(work, 'found');
  mkdirSync(found, { recursive: true });
  const perShape = {};
  const todo = report.mismatches.filter((m) => m.kind === 'new' || (o.shrinkPending && m.kind === 'pending')).filter((m) => {
    const k = shapeOf(m);
    perShape[k] = (perShape[k] ?? 0) + 1;
    return perShape[k] <= 2;
  }).slice(0, o.shrinkMax);
  for (const m of todo) {
    const f = fixtures.find((x) => x.name === m.fixture);
    const t0 = Date.now();
    const { fixture, last, batches } = shrink(bin, join(work, 'shrink', `${m.peer}-${m.fixture}`), f, m, o.shrinkSteps);
    const name = `${m.fixture}-${m.peer}`;
    const out = { ...fixture, name, about: `shrunk from ${m.fixture} (seed ${o.seed}) by differential.mjs: ${m.peer} differs in ${m.sections.join(', ')}` };
    mkdirSync(join(found, 'fixtures'), { recursive: true });
    mkdirSync(join(found, 'diff'), { recursive: true });
    writeFileSync(join(found, 'fixtures', `${name}.json`), JSON.stringify(out, null, 2) + '\n');
    mkdirSync(join(found, m.peer), { recursive: true });
    if (last) {
      const rec = JSON.parse(readFileSync(join(last.work, m.peer, `${last.name}.json`), 'utf8'));
      rec.fixture = name;
      writeFileSync(join(found, m.peer, `${name}.json`), JSON.stringify(rec, null, 2) + '\n');
      writeFileSync(join(found, 'diff', `${name}.json`), JSON.stringify({ kind: last.entry.kind, class: last.entry.class, sections: last.entry.sections, diff: diffOf(last.entry) }, null, 2) + '\n');
    } else {
      copyFileSync(join(work, m.peer, `${m.fixture}.json`), join(found, m.peer, `${name}.json`));
      writeFileSync(join(found, 'diff', `${name}.json`), JSON.stringify({ kind: m.kind, class: m.class, sections: m.sections, diff: diffOf(m) }, null, 2) + '\n');
    }
    console.log(`shrunk ${m.peer} ${m.fixture}: ${f.tree.length} -> ${fixture.tree.length} entries in ${batches} batches (${((Date.now() - t0) / 1000).toFixed(0)} s): ${join(found, 'fixtures', `${name}.json`)}`);
  }
}

if (o.rates) writeRates(o.rates, report);

const fresh = Object.values(report.peers).reduce((s, p) => s + p.mismatches, 0);
if (fresh > 0 && o.fail) {
  console.log(`differential: ${fresh} tree(s) differ outside every intended and pending class (seed ${o.seed}); rerun with --seed ${o.seed} --shrink`);
  process.exit(1);
}
