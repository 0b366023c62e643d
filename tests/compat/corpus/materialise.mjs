#!/usr/bin/env node
// Writes a corpus case's tree into a folder, exactly as it was recorded:
//
//   node tests/compat/corpus/materialise.mjs cases/<name>.json DIR
//
// DIR (created; must be empty or absent) receives home/ and repo/ (always)
// and every entry in order: `dir` (an empty folder), `text` (UTF-8, written
// exactly), `fill` (`head`, then `byte` repeated up to `size` bytes),
// `symlink` (a link with that target, as given). Parents are created as
// needed, and so is the `cwd` folder. A `.git` entry is written as it is
// given (an empty folder, or a file); record-peers.mjs, record-opencode.mjs
// and record-amp.mjs made each `repo/.git` folder a real repository with
// `git init`, which a harness that asks git needs (pass --git-init).
// It prints the absolute cwd.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

const args = process.argv.slice(2);
const gitInit = args.includes('--git-init');
const [file, dir] = args.filter((a) => a !== '--git-init');
if (!file || !dir) {
  console.error('usage: materialise.mjs [--git-init] CASE.json DIR');
  process.exit(2);
}
const c = JSON.parse(readFileSync(file, 'utf8'));
if (existsSync(dir) && readdirSync(dir).length) {
  console.error(`${dir} is not empty`);
  process.exit(2);
}
mkdirSync(join(dir, 'home'), { recursive: true });
mkdirSync(join(dir, 'repo'), { recursive: true });
for (const e of c.tree) {
  if (e.path.startsWith('/') || e.path.split('/').includes('..')) throw new Error(`${e.path} leaves the root`);
  const p = join(dir, ...e.path.split('/'));
  mkdirSync(dirname(p), { recursive: true });
  if (e.dir) {
    if (gitInit && basename(p) === '.git') {
      const g = spawnSync('git', ['-c', 'init.defaultBranch=main', 'init', '-q', dirname(p)], { encoding: 'utf8' });
      if (g.status !== 0) throw new Error(`git init ${dirname(p)}: ${g.stderr}`);
    } else mkdirSync(p, { recursive: true });
  } else if (e.symlink !== undefined) symlinkSync(e.symlink, p);
  else if (e.fill) {
    const head = Buffer.from(e.fill.head ?? '', 'utf8');
    const buf = Buffer.alloc(Math.max(e.fill.size, head.length), e.fill.byte);
    head.copy(buf);
    writeFileSync(p, buf);
  } else writeFileSync(p, e.text);
}
const cwd = join(dir, ...c.cwd.split('/'));
mkdirSync(cwd, { recursive: true });
console.log(realpathSync(cwd));
