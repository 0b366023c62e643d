#!/usr/bin/env node
// Compares the answers record-peers.mjs recorded on the compat fixtures
// (tests/compat/corpus/extra/<peer>/*.json) with `lisa-context snapshot
// --policy <peer>` on the same trees, and prints the match rate:
//
//   node tests/compat/harnesses/compare-peers.mjs [--bin target/debug/lisa-context] [--peer NAME] [--verbose]
//
// Compared: the instruction files' paths in order, and the skills' SKILL.md
// paths (sorted). Byte counts are not compared (the programs recorded have
// no budget that the fixtures reach). A peer without a shipped policy
// (qwen, droid) is compared with none: its answers are only listed.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const top = join(here, '..', '..', '..');
const corpus = join(here, '..', 'corpus');
const args = process.argv.slice(2);
const opt = (k) => { const i = args.indexOf(k); return i >= 0 ? args[i + 1] : null; };
const bin = opt('--bin') ?? join(top, 'target', 'debug', 'lisa-context');
const only = opt('--peer');
const verbose = args.includes('--verbose');
if (!existsSync(bin)) { console.error(`no ${bin}: cargo build first, or pass --bin`); process.exit(2); }
const policies = new Set(readdirSync(join(top, 'policies')).map((f) => f.replace(/\.toml$/, '')));
const extra = join(corpus, 'extra');
let failed = false;
for (const peer of readdirSync(extra).sort()) {
  if (only && peer !== only) continue;
  if (!policies.has(peer)) { console.log(`${peer}: no shipped policy; ${readdirSync(join(extra, peer)).length} answers recorded`); continue; }
  let same = 0;
  let total = 0;
  const diffs = [];
  for (const f of readdirSync(join(extra, peer)).sort()) {
    const answer = JSON.parse(readFileSync(join(extra, peer, f), 'utf8'));
    const root = mkdtempSync(join(tmpdir(), 'lisa-cmp-'));
    try {
      const m = spawnSync('node', [join(corpus, 'materialise.mjs'), join(corpus, 'cases', f), root], { encoding: 'utf8' });
      if (m.status !== 0) throw new Error(m.stderr);
      const cwd = m.stdout.trim();
      const r = spawnSync(bin, ['snapshot', '--policy', peer, '--cwd', cwd, '--format', 'json'], {
        encoding: 'utf8', env: { PATH: process.env.PATH, HOME: join(root, 'home'), LANG: 'C.UTF-8' },
      });
      const rel = (p) => (p.startsWith(`${root}/`) ? p.slice(root.length + 1) : p);
      let ours;
      if (r.status !== 0) ours = { error: (r.stderr || r.stdout).trim().split('\n')[0] };
      else {
        const s = JSON.parse(r.stdout);
        ours = { instructions: s.instructionFiles.map((b) => rel(b.path)), skills: s.skills.map((k) => rel(k.path)).sort() };
      }
      const theirs = { instructions: answer.instructions.map((i) => i.path), skills: answer.skills.map((k) => k.path).sort() };
      total++;
      if (JSON.stringify(ours) === JSON.stringify(theirs)) same++;
      else diffs.push(`  ${answer.fixture}\n    ${peer}: ${JSON.stringify(theirs)}\n    ours: ${JSON.stringify(ours)}`);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }
  console.log(`${peer}: ${same} of ${total} fixtures the same (${total ? Math.round((100 * same) / total) : 0} %)`);
  if (verbose && diffs.length) console.log(diffs.join('\n'));
  if (same !== total) failed = true;
}
process.exit(failed && args.includes('--check') ? 1 : 0);
