#!/usr/bin/env node
// Derives the conformance corpus (this folder) from the recorded evidence:
//
//   node tests/compat/corpus/build.mjs          # rewrite cases/ and answers/
//   node tests/compat/corpus/build.mjs --check  # exit 1 if they are not what
//                                               # this script would write
//
// Sources (nothing else is read, nothing is invented):
// - tests/compat/fixtures/<name>.json and tests/compat/expected/<peer>/<name>.json
//   (Codex, Gemini CLI, Claude Code, recorded by record.mjs): the case is the
//   fixture less its `peers` list; the answer is the recording, verbatim;
// - tests/compat/harnesses/<policy>.json whose cases are recordings of the
//   real program (OpenCode, Amp, and those with a `recorded` object: Copilot
//   CLI, Continue CLI, Cline): case `<policy>--<case>`, its tree with every
//   file's text written out as the recorder wrote it, and an answer holding
//   only the keys the recorder observed (`instructions` as paths, with
//   `includedBytes` where recorded; `skills` as SKILL.md paths, with name and
//   description where recorded; `onAccess` where accesses were recorded);
// - tests/compat/corpus/extra/<peer>/<name>.json: answers recorded by
//   record-peers.mjs --fixtures on the fixtures (copied verbatim).
// Output: two-space JSON with a final newline, keys in a fixed order.

import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const compat = dirname(here);
const check = process.argv.includes('--check');

const read = (p) => JSON.parse(readFileSync(p, 'utf8'));
const json = (v) => JSON.stringify(v, null, 2) + '\n';
const list = (d, ext = '.json') => (existsSync(d) ? readdirSync(d).filter((f) => f.endsWith(ext)).sort() : []);

/** Harness files whose `expect` is a recording, with the keys it holds. */
function recordedHarness(h) {
  if (h.recorded) return { program: h.recorded.program, keys: h.recorded.keys, tagged: true };
  if (h.policy === 'opencode') return { program: 'opencode 1.18.33', keys: ['instructions', 'accesses', 'skills'], tagged: false };
  if (h.policy === 'amp') return { program: 'amp 0.0.1790142911-g7618fb', keys: ['instructions', 'accesses'], tagged: false };
  return null;
}

/** A harness case's file text as its recorder wrote it. */
function textAsRecorded(e, tagged) {
  const tag = `[${e.path}]`;
  let text = e.text ?? `${tag}\n`;
  if (tagged && text.trim() !== '' && !text.includes(tag)) text = `${text}${text.endsWith('\n') ? '' : '\n'}${tag}\n`;
  return text;
}

function derive() {
  const files = new Map(); // path relative to here -> text
  for (const f of list(join(compat, 'fixtures'))) {
    const { peers: _peers, ...fx } = read(join(compat, 'fixtures', f));
    files.set(`cases/${fx.name}.json`, json({ name: fx.name, source: `tests/compat/fixtures/${f}`, ...fx }));
  }
  for (const peer of readdirSync(join(compat, 'expected')).sort()) {
    for (const f of list(join(compat, 'expected', peer))) {
      files.set(`answers/${peer}/${f}`, readFileSync(join(compat, 'expected', peer, f), 'utf8'));
    }
  }
  for (const f of list(join(compat, 'harnesses'))) {
    const h = read(join(compat, 'harnesses', f));
    const rec = recordedHarness(h);
    if (!rec) continue;
    const [program, version] = rec.program.split(' ');
    for (const c of h.cases) {
      const name = `${h.policy}--${c.name}`;
      // Skill cases Amp's recorder skips hold docs answers: not in the corpus.
      if (!rec.keys.includes('skills') && c.expect.skills) continue;
      const tree = c.tree.map((e) => (e.dir ? { path: e.path, dir: true }
        : e.symlink !== undefined ? { path: e.path, symlink: e.symlink }
          : { path: e.path, text: textAsRecorded(e, rec.tagged) }));
      const kase = { name, source: `tests/compat/harnesses/${f}#${c.name}`, about: c.about, tree, cwd: c.cwd };
      if (rec.keys.includes('accesses') && c.expect.accesses) kase.accesses = c.expect.accesses.map((a) => a.path);
      files.set(`cases/${name}.json`, json(kase));
      const bytes = c.expect.includedBytes ?? {};
      const answer = {
        peer: h.policy, program, version, fixture: name,
        instructions: c.expect.instructions.map((path) => (path in bytes ? { path, includedBytes: bytes[path] } : { path })),
      };
      if (rec.keys.includes('skills') && c.expect.skills) {
        // Paths alone, sorted; or (recorded with them) names and
        // descriptions, sorted by name then path.
        const shown = c.expect.skills.filter((k) => typeof k !== 'string');
        answer.skills = shown.length
          ? shown.map((k) => ({ name: k.name, path: k.path, description: k.description }))
            .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
          : [...c.expect.skills].sort().map((path) => ({ path }));
      }
      if (rec.keys.includes('accesses') && c.expect.accesses) {
        answer.onAccess = c.expect.accesses.map((a) => ({ access: a.path, instructions: a.instructions.map((path) => ({ path })) }));
      }
      files.set(`answers/${h.policy}/${name}.json`, json(answer));
    }
  }
  for (const peer of existsSync(join(here, 'extra')) ? readdirSync(join(here, 'extra')).sort() : []) {
    for (const f of list(join(here, 'extra', peer))) {
      if (!files.has(`cases/${f}`)) throw new Error(`extra/${peer}/${f}: no such case`);
      files.set(`answers/${peer}/${f}`, readFileSync(join(here, 'extra', peer, f), 'utf8'));
    }
  }
  return files;
}

function onDisk() {
  const files = new Map();
  for (const top of ['cases', 'answers']) {
    const walk = (rel) => {
      const abs = join(here, rel);
      if (!existsSync(abs)) return;
      for (const e of readdirSync(abs, { withFileTypes: true })) {
        if (e.isDirectory()) walk(`${rel}/${e.name}`);
        else files.set(`${rel}/${e.name}`, readFileSync(join(abs, e.name), 'utf8'));
      }
    };
    walk(top);
  }
  return files;
}

const want = derive();
if (check) {
  const have = onDisk();
  const bad = [];
  for (const [p, t] of want) if (have.get(p) !== t) bad.push(`${have.has(p) ? 'differs' : 'missing'}: ${p}`);
  for (const p of have.keys()) if (!want.has(p)) bad.push(`not derived from any recording: ${p}`);
  if (bad.length) {
    console.error(`the corpus is not in step with the recordings (run node tests/compat/corpus/build.mjs):\n${bad.slice(0, 40).join('\n')}`);
    process.exit(1);
  }
  const cases = [...want.keys()].filter((p) => p.startsWith('cases/')).length;
  console.log(`corpus in step: ${cases} cases, ${want.size - cases} answers`);
} else {
  rmSync(join(here, 'cases'), { recursive: true, force: true });
  rmSync(join(here, 'answers'), { recursive: true, force: true });
  for (const [p, t] of want) {
    mkdirSync(dirname(join(here, p)), { recursive: true });
    writeFileSync(join(here, p), t);
  }
  console.log(`wrote ${want.size} files`);
}
