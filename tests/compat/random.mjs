#!/usr/bin/env node
// Writes seeded random fixtures for the generative differential (issue 29).
//
//   node tests/compat/random.mjs --seed S --count N --out DIR [--peer codex|gemini|claude-code|both|all] [--from I]
//
// Writes DIR/rand-<S>-<i>.json for i in [I, I+N) in the format of README.md
// ("Fixture format"), plus a `features` list naming the intended-difference
// and pending classes of tests/compat/intended.json the tree carries. The
// same seed gives byte-identical files, and tree i does not depend on N
// (each tree has its own generator, seeded from S and i).
//
// Every file opens with a tag line naming it (SKILL.md: with its
// frontmatter, the tag line opens the body), except files meant to be blank;
// no FIFO; no `..` in tree paths (link targets may hold them).

import { mkdirSync, writeFileSync } from 'node:fs';
import { join, posix } from 'node:path';

// ---------------------------------------------------------------- PRNG

/** mulberry32: a small 32-bit generator; deterministic for a given seed. */
function mulberry32(a) {
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One generator per tree, from the run's seed and the tree's index. */
function treeRng(seed, i) {
  let h = (seed ^ Math.imul(i + 1, 0x9e3779b1)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
  const r = mulberry32((h ^ (h >>> 16)) >>> 0);
  const R = {
    f: r,
    int: (a, b) => a + Math.floor(r() * (b - a + 1)),
    chance: (p) => r() < p,
    pick: (xs) => xs[Math.floor(r() * xs.length)],
    /** Picks from [[weight, value], ...]. */
    weighted: (pairs) => {
      const total = pairs.reduce((s, [w]) => s + w, 0);
      let x = r() * total;
      for (const [w, v] of pairs) { if ((x -= w) < 0) return v; }
      return pairs[pairs.length - 1][1];
    },
  };
  return R;
}

// ---------------------------------------------------------------- vocabulary

const PLAIN_DIRS = ['a', 'b', 'src', 'pkg', 'lib', 'app', 'docs', 'tools', 'core', 'web'];
const ODD_DIRS = [
  'my dir', 'two  spaces', 'caf\u00e9', 'cafe\u0301', '\u65e5\u672c\u8a9e', '\uff53\uff52\uff43',
  '\u{1d49c}pp', '\u{1f4e6}pkg', '\u00dcn\u00ef', 'a.b', '-dash', '#hash', "it's", '\ufb01le',
  '\u2168', '\uff5a', '\ue000priv', 'Src', 'SRC', 'tab\tname',
];
const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet'];
const UNI_WORDS = ['caf\u00e9', 'na\u00efve', 'se\u00f1or', '\u00fcber', '\u65e5\u672c', '\u{1d49c}lpha', '\uff46\uff55\uff4c\uff4c'];
// Whitespace atoms, by weight: U+0085 and U+FEFF are whitespace to one
// peer and not the other (pending classes), so they are rare.
const WS_ATOMS = [[6, ' '], [3, '  '], [3, '\t'], [6, '\n'], [3, '\r\n'], [2, '\u00a0'], [0.5, '\u0085'], [0.5, '\ufeff'], [1, '\u3000'], [1, '\u2028']];
const EXTRA_PLAIN = ['TEAM.md', 'NOTES.md', 'AAA.md', 'agents.md', 'AGENTS.MD', 'Agents.md', '\uff21\uff27\uff25\uff2e\uff34\uff33.md', 'notes 2.md', '\u30ce\u30fc\u30c8.md', '\u{1d4a9}otes.md', 'AGENTS.md', 'GEMINI.md', 'gemini.md'];
const EXTRA_ODD = ['docs/IN.md', '../UP.md', '.', ''];
const MARKER_SETS = [[['.git'], 10], [['.hg'], 2], [['.git', '.hg'], 2], [[], 1], [['.project-root'], 1], [['.git', 'package.json'], 1]];

// ---------------------------------------------------------------- one tree

const UNION_WS = /^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]*/u;
const UNION_WS_END = /[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]*$/u;

function generate(seed, index, peerChoice) {
  const R = treeRng(seed, index);
  const name = `rand-${seed}-${index}`;
  const features = new Set();
  let bareGit = false;
  let codexAboveCwd = false;
  const entries = [];
  const files = new Set(); // paths of files and links
  const dirs = new Set(); // explicit or implied directories

  const parents = (p) => { const parts = p.split('/'); return parts.slice(1).map((_, i) => parts.slice(0, i + 1).join('/')); };
  const canPlace = (p, isDir) => {
    if (files.has(p) || (!isDir && dirs.has(p))) return false;
    return parents(p).every((d) => !files.has(d));
  };
  const add = (e) => {
    if (!canPlace(e.path, !!e.dir)) return false;
    entries.push(e);
    parents(e.path).forEach((d) => dirs.add(d));
    if (e.dir) dirs.add(e.path); else files.add(e.path);
    return true;
  };

  // Peers. Claude Code's trees have a grammar of their own (claudeTree):
  // its files and folders are not Codex's or Gemini's.
  if (peerChoice === 'claude-code' || (peerChoice === 'all' && R.chance(0.3))) return claudeTree(R, seed, index);
  let peers = peerChoice === 'both' || peerChoice === 'all' ? R.weighted([[4, ['codex', 'gemini']], [3, ['codex']], [3, ['gemini']]]) : [peerChoice];
  const forCodex = () => peers.includes('codex');
  const forGemini = () => peers.includes('gemini');
  const accessesWanted = forGemini() && R.chance(0.12);
  if (accessesWanted) peers = ['gemini'];

  // Settings.
  const settings = {};
  if (R.chance(0.3)) {
    const extras = [];
    for (let k = R.int(1, 3); k > 0; k--) extras.push(R.chance(0.04) ? R.pick(EXTRA_ODD) : R.pick(EXTRA_PLAIN));
    settings.extraNames = extras;
  }
  if (R.chance(0.3)) settings.markers = R.weighted(MARKER_SETS.map(([m, w]) => [w, m]));
  if (forCodex() && R.chance(0.18)) settings.maxBytes = R.weighted([[1, 0], [2, 1], [2, 20], [3, 64], [3, 150], [3, 400], [3, 1000], [2, 4096], [1, 32768], [1, 100000]]);
  const markers = settings.markers ?? ['.git'];
  const extraNames = settings.extraNames ?? [];

  // The folder chain from repo to the cwd.
  const dirName = () => (R.chance(0.2) ? R.pick(ODD_DIRS) : R.pick(PLAIN_DIRS));
  const depth = R.weighted([[2, 0], [3, 1], [3, 2], [2, 3], [1, 4]]);
  const chain = ['repo'];
  for (let d = 0; d < depth; d++) chain.push(`${chain[chain.length - 1]}/${dirName()}`);
  const cwd = chain[chain.length - 1];

  // Markers: usually at the repo, sometimes lower too, sometimes none.
  const markerName = () => (markers.length && R.chance(0.85) ? R.pick(markers) : R.pick(['.git', '.hg']));
  const placeMarker = (level) => {
    const m = markerName();
    if (R.chance(0.25)) add({ path: `${level}/${m}`, text: `gitdir: ../.git/modules/x\n` });
    else if (add({ path: `${level}/${m}`, dir: true }) && m === '.git') {
      // A real repository's .git holds HEAD; an empty one is not a
      // repository to Codex's skill loader (it then reads only the cwd's
      // .codex/skills).
      if (R.chance(0.85)) add({ path: `${level}/.git/HEAD`, text: 'ref: refs/heads/main\n' });
      else bareGit = true;
    }
  };
  if (R.chance(0.8)) placeMarker('repo');
  if (depth > 0 && R.chance(0.15)) placeMarker(R.pick(chain.slice(1)));

  // Whether instruction bodies carry non-ASCII text.
  const uniBodies = R.chance(0.2);
  const word = () => (uniBodies && R.chance(0.3) ? R.pick(UNI_WORDS) : R.pick(WORDS));
  const line = () => Array.from({ length: R.int(2, 8) }, word).join(' ');
  const body = (nl = '\n') => Array.from({ length: R.int(1, 4) }, line).join(nl) + nl;
  // Lines ending in LF, CRLF or a lone CR, mixed in one file.
  const mixedEndings = () => Array.from({ length: R.int(2, 5) }, () => line() + R.weighted([[3, '\n'], [3, '\r\n'], [1, '\r']])).join('');
  const wsRun = () => Array.from({ length: R.int(1, 4) }, () => R.weighted(WS_ATOMS)).join('');

  /** An instruction file's entry of a random kind. */
  const instruction = (path, { gemini = false } = {}) => {
    const tag = `[${path}]\n`;
    const kind = R.weighted([[55, 'doc'], [7, 'crlf'], [4, 'bom'], [7, 'trail'], [3, 'lead'], [11, 'blank'], [6, 'big'], [gemini ? 9 : 0, 'imports']]);
    switch (kind) {
      case 'doc': return { path, text: tag + body() };
      case 'crlf': return { path, text: tag + (R.chance(0.3) ? mixedEndings() : body('\r\n')) };
      case 'bom': return { path, text: '\ufeff' + tag + body() };
      case 'trail': return { path, text: tag + body().replace(/\n$/, '') + wsRun() };
      case 'lead': return { path, text: wsRun() + tag + body() };
      case 'blank': return { path, text: R.chance(0.2) ? '' : wsRun() };
      case 'big': return { path, fill: { head: tag + line() + '\n', byte: R.pick(['x', ' ', '\n', '.']), size: R.weighted([[3, 2000], [3, 20000], [1, 33000], [1, 40000], [1, 70000]]) } };
      case 'imports': return { path, text: tag + importLines(path) };
      default: throw new Error(kind);
    }
  };

  /** Gemini `@` imports, creating (most of) the files they name. */
  const importLines = (path) => {
    const folder = path.split('/').slice(0, -1).join('/');
    const out = [line()];
    for (let k = R.int(1, 3); k > 0; k--) {
      const kind = R.weighted([[4, 'sibling'], [2, 'sub'], [2, 'up'], [2, 'missing'], [1, 'code'], [1, 'self'], [1, 'percent'], [1, 'outside']]);
      if (kind === 'sibling') {
        const n = R.pick(['notes.md', 'shared.md', 'more notes.md', 'caf\u00e9.md']);
        add({ path: `${folder}/${n}`, text: `[${folder}/${n}]\n${line()}\n` });
        // A name with a space ends the token at the space (`@more`: missing).
        out.push(`See @${n} for more.`);
      } else if (kind === 'sub') {
        add({ path: `${folder}/inc/part.md`, text: `[${folder}/inc/part.md]\n${line()}\n` });
        out.push(`@./inc/part.md`);
      } else if (kind === 'up') {
        const up = folder.split('/').slice(0, -1).join('/');
        if (up) add({ path: `${up}/up.md`, text: `[${up}/up.md]\n${line()}\n` });
        out.push(`@../up.md`);
      } else if (kind === 'missing') out.push(`@missing-${R.int(1, 9)}.md`);
      else if (kind === 'code') out.push('Use `@notes.md` literally.');
      else if (kind === 'self') out.push(`@${path.split('/').pop()}`);
      else if (kind === 'percent') {
        features.add('percent-import');
        out.push(R.pick(['@my%20notes.md', '@sub/%2e%2e/notes.md']));
      } else out.push('@../../../outside/notes.md');
    }
    return out.join('\n') + '\n';
  };

  // Instruction files along the chain, off it and below the cwd.
  const codexNames = ['AGENTS.override.md', 'AGENTS.md', ...extraNames.filter((n) => n && !n.includes('/') && n !== '.' && n !== '..')];
  const geminiNames = ['GEMINI.md', ...extraNames.filter((n) => n && !n.includes('/') && n !== '.' && n !== '..')];
  const levelFiles = (level) => {
    if (forCodex()) {
      if (R.chance(0.12)) add(instruction(`${level}/AGENTS.override.md`));
      if (R.chance(0.6)) add(instruction(`${level}/AGENTS.md`));
      if (R.chance(0.06)) add(instruction(`${level}/agents.md`));
    }
    if (forGemini()) {
      if (R.chance(0.6)) add(instruction(`${level}/GEMINI.md`, { gemini: true }));
      if (R.chance(0.05)) add(instruction(`${level}/gemini.md`, { gemini: true }));
    }
    for (const n of new Set(extraNames)) {
      if (n && !n.includes('/') && n !== '.' && n !== '..' && R.chance(0.4)) add(instruction(`${level}/${n}`, { gemini: forGemini() }));
    }
    // A folder named like an instruction file is passed over.
    if (R.chance(0.04)) add({ path: `${level}/${forCodex() ? 'AGENTS.md' : 'GEMINI.md'}`, dir: true });
  };
  for (const level of chain) levelFiles(level);
  if (R.chance(0.35)) levelFiles(`${R.pick(chain)}/${dirName()}-side`);
  for (let k = R.weighted([[5, 0], [3, 1], [2, 2]]); k > 0; k--) {
    let d = `${cwd}/${dirName()}`;
    if (R.chance(0.4)) d += `/${dirName()}`;
    levelFiles(d);
  }
  // Home files.
  if (forCodex()) {
    if (R.chance(0.2)) add(instruction('home/.codex/AGENTS.override.md'));
    if (R.chance(0.5)) add(instruction('home/.codex/AGENTS.md'));
  }
  if (forGemini()) {
    if (R.chance(0.5)) add(instruction('home/.gemini/GEMINI.md', { gemini: true }));
    for (const n of geminiNames.slice(1)) if (R.chance(0.3)) add(instruction(`home/.gemini/${n}`, { gemini: true }));
  }

  // The project root as a loader sees it: the nearest marker folder at or
  // above the cwd (within repo), else the cwd.
  const isMarkerHere = (level) => markers.some((m) => entries.some((e) => e.path === `${level}/${m}`));
  const projectRoot = [...chain].reverse().find(isMarkerHere) ?? cwd;
  const under = (p, d) => p === d || p.startsWith(d + '/');
  const lexical = (from, target) => {
    const parts = from.split('/').slice(0, -1);
    for (const c of target.split('/')) {
      if (c === '..') parts.pop(); else if (c !== '.' && c !== '') parts.push(c);
    }
    return parts.join('/');
  };
  const relTarget = (from, to) => {
    const a = from.split('/').slice(0, -1);
    const b = to.split('/');
    let i = 0;
    while (i < a.length && i < b.length && a[i] === b[i]) i++;
    return [...a.slice(i).map(() => '..'), ...b.slice(i)].join('/');
  };

  // Links: an instruction file linked inside the root, leaving it, dangling.
  const linkKinds = R.chance(0.14) ? R.int(1, 2) : 0;
  for (let k = 0; k < linkKinds; k++) {
    const level = R.pick(chain);
    const n = forCodex() && (!forGemini() || R.chance(0.5)) ? R.pick(codexNames.slice(1)) : R.pick(geminiNames);
    const at = `${level}/${n}`;
    const kind = R.weighted([[4, 'inside'], [3, 'outside'], [1, 'dangling'], [1, 'home']]);
    let target;
    if (kind === 'inside') {
      const t = `${projectRoot}/shared/notes.md`;
      add({ path: t, text: `[${t}]\n${line()}\n` });
      target = relTarget(at, t);
    } else if (kind === 'outside') {
      const t = `outside/notes-${k}.md`;
      add({ path: t, text: `[${t}]\n${line()}\n` });
      target = relTarget(at, t);
    } else if (kind === 'home') {
      const t = 'home/notes.md';
      add({ path: t, text: `[${t}]\n${line()}\n` });
      target = relTarget(at, t);
    } else target = './no-such-file.md';
    if (add({ path: at, symlink: target }) && kind !== 'dangling' && !under(lexical(at, target), projectRoot)) features.add('link-leaves-root');
  }
  // A home file linked out of its folder.
  if (R.chance(0.03)) {
    const t = `repo/shared-home.md`;
    add({ path: t, text: `[${t}]\n${line()}\n` });
    const at = forCodex() ? 'home/.codex/AGENTS.md' : 'home/.gemini/GEMINI.md';
    if (add({ path: at, symlink: relTarget(at, t) })) features.add('link-leaves-root');
  }

  // ------------------------------------------------------------ skills
  const homeSources = [];
  const projectSources = [];
  if (forCodex()) {
    homeSources.push('home/.codex/skills', 'home/.agents/skills');
    projectSources.push(`${cwd}/.codex/skills`);
    for (const level of chain) if (under(level, projectRoot) || level === projectRoot) projectSources.push(`${level}/.agents/skills`);
  }
  if (forGemini()) {
    homeSources.push('home/.gemini/skills', 'home/.agents/skills');
    projectSources.push(`${cwd}/.gemini/skills`, `${cwd}/.agents/skills`);
  }
  // Codex reads the `.codex/skills` of every level from the project root
  // to the cwd (each level's `.codex` is a project config layer, codex-rs
  // config loader load_project_layers; skill roots from every project
  // layer, core-skills loader skill_roots_from_layer_stack_inner), the
  // cwd's alone under a root `.git` folder with no HEAD (recorded:
  // skills-codex-bare-git). The draws below pick among projectSources as
  // they always did (so a seed keeps its trees); a stray `.codex/skills`
  // on those levels counts as a project source only for the features.
  const rootGit = entries.find((e) => e.path === `${projectRoot}/.git`);
  const rootBare = !!rootGit?.dir && !entries.some((e) => e.path === `${projectRoot}/.git/HEAD`);
  const codexLevels = forCodex() && !rootBare
    ? chain.filter((l) => under(l, projectRoot)).map((l) => `${l}/.codex/skills`) : [];
  const isProjectSource = (s) => projectSources.includes(s) || codexLevels.includes(s);
  // Folders no peer reads (or, but for the levels above, Codex reads only at
  // the cwd): never listed.
  const strayLevel = R.pick(chain);
  const straySources = [`${strayLevel}/.gemini/skills`, `${strayLevel}/.agents/skills`, `${strayLevel}/.codex/skills`];
  const skillCount = R.weighted([[3, 0], [3, 1], [3, 2], [2, 3], [1, 5]]);
  const usedNames = [];
  const placed = []; // { source, name (effective guess), home }
  for (let k = 0; k < skillCount; k++) {
    const home = R.chance(0.4);
    let source = R.chance(0.1) ? R.pick(straySources) : R.pick(home ? homeSources : projectSources);
    if (!source) continue;
    if (source.endsWith('/.codex/skills') && !source.startsWith('home/') && source !== `${cwd}/.codex/skills` && forCodex()) codexAboveCwd = true;
    const folder = R.chance(0.15) ? R.pick(['my skill', 'caf\u00e9', '\u{1d49c}-tool', 'Tool']) : `skill-${k}`;
    const layout = R.weighted([[80, 'folder'], [4, 'root'], [8, 'group'], [3, 'hidden'], [3, 'link-md'], [1.5, 'link-dir']]);
    let dirPath = `${source}/${folder}`;
    if (layout === 'root') dirPath = source;
    else if (layout === 'group') dirPath = `${source}/group/${folder}`;
    else if (layout === 'hidden') dirPath = `${source}/.hidden-${k}`;
    let nameValue = R.chance(0.1) && usedNames.length ? R.pick(usedNames) : `tool-${index % 7}-${k}`;
    const fm = frontmatter(R, nameValue, features, `${dirPath}/SKILL.md`);
    const effective = fm.name ?? dirPath.split('/').pop();
    usedNames.push(effective);
    if (layout === 'link-md') {
      features.add('skill-md-symlink');
      const real = `${source}/real-${k}.md`;
      add({ path: real, text: fm.text });
      add({ path: `${dirPath}/SKILL.md`, symlink: `../real-${k}.md` });
    } else if (layout === 'link-dir') {
      const leave = R.chance(0.5);
      const realDir = leave ? `outside/skills/${folder}` : `${projectRoot}/skill-src/${folder}`;
      add({ path: `${realDir}/SKILL.md`, text: fm.text.replace(`[${dirPath}/SKILL.md]`, `[${realDir}/SKILL.md]`) });
      if (add({ path: dirPath, symlink: relTarget(dirPath, realDir) })) features.add('skill-link-leaves-root');
    } else add({ path: `${dirPath}/SKILL.md`, text: fm.text });
    if (homeSources.includes(source) || isProjectSource(source)) placed.push({ name: effective, source, home: homeSources.includes(source) });
  }
  // Two skills of one name in one folder: which one Gemini keeps follows
  // the order its walk returns them in, which is not stable.
  const bySource = new Set();
  for (const p of placed) {
    const k = `${p.source}\n${p.name}`;
    if (bySource.has(k)) features.add('same-name-same-source');
    bySource.add(k);
  }
  const homeNames = new Set(placed.filter((p) => p.home).map((p) => p.name));
  if (placed.some((p) => !p.home && homeNames.has(p.name))) features.add('home-skill-shadows-project');

  // Accesses (Gemini only).
  let accesses;
  if (accessesWanted) {
    accesses = [];
    for (let k = R.int(1, 3); k > 0; k--) {
      const kind = R.weighted([[4, 'below'], [2, 'new'], [1, 'dotdot'], [1, 'outside'], [1, 'dir']]);
      const sub = entries.map((e) => e.path).filter((p) => under(p, cwd) && p !== cwd);
      if (kind === 'below' && sub.length) accesses.push(R.pick(sub).split('/').slice(0, -1).join('/') + '/main.ts');
      else if (kind === 'new') accesses.push(`${cwd}/${dirName()}/new/file.ts`);
      else if (kind === 'dotdot') accesses.push(`${cwd}/x/../${dirName()}/f.ts`);
      else if (kind === 'outside') accesses.push(R.pick(['outside/f.ts', 'home/f.ts', 'repo/../outside/f.ts']));
      else {
        const d = `${cwd}/${dirName()}`;
        add({ path: d, dir: true });
        accesses.push(d);
      }
    }
  }

  // ------------------------------------------------------------ features of the whole tree
  if (bareGit && codexAboveCwd) features.add('codex-bare-git-dir');
  if (extraNames.some((n) => n.includes('/') || n === '.' || n === '..')) features.add('non-plain-extra-name');
  if (settings.maxBytes === 0) features.add('budget-zero');
  const texts = entries.filter((e) => typeof e.text === 'string' && !e.path.endsWith('SKILL.md'));
  for (const e of texts) {
    const t = e.text.startsWith('\ufeff[') ? e.text.slice(1) : e.text;
    const ends = (UNION_WS.exec(t)?.[0] ?? '') + (UNION_WS_END.exec(t)?.[0] ?? '');
    if (ends.includes('\ufeff')) features.add('ws-feff');
    if (ends.includes('\u0085')) features.add('ws-nel');
  }
  // Gemini sorts found paths by UTF-16 code units.
  const gPaths = entries.filter((e) => !e.dir && geminiNames.includes(e.path.split('/').pop()) && e.path.startsWith('repo/')).map((e) => e.path);
  const utf16 = [...gPaths].sort();
  const bytes = [...gPaths].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
  if (utf16.join('\n') !== bytes.join('\n')) features.add('sort-utf16');
  // A Codex budget cut can fall inside a character.
  if (forCodex()) {
    const project = entries.filter((e) => !e.dir && e.path.startsWith('repo/') && codexNames.includes(e.path.split('/').pop()));
    const size = (e) => (e.fill ? e.fill.size : Buffer.byteLength(e.text ?? '[' + e.path + ']'));
    // A budget at an exact boundary: the bytes of the files Codex reads on
    // the chain (the first of its names at each level from the project
    // root), alone or summed, give or take a byte or two.
    if (settings.maxBytes === undefined && R.chance(0.12)) {
      const onChain = [];
      for (const level of chain) {
        if (!under(level, projectRoot)) continue;
        const first = codexNames.map((n) => entries.find((e) => e.path === `${level}/${n}` && (typeof e.text === 'string' || e.fill))).find(Boolean);
        if (first) onChain.push(size(first));
      }
      if (onChain.length) {
        const upTo = R.int(1, onChain.length);
        const sum = onChain.slice(0, upTo).reduce((a, b) => a + b, 0);
        settings.maxBytes = Math.max(1, sum + R.pick([-2, -1, 0, 0, 1, 2]));
        features.add('budget-boundary');
      }
    }
    const budget = settings.maxBytes ?? 32768;
    const total = project.reduce((s, e) => s + size(e) + 2, 0);
    const nonAscii = project.some((e) => /[^\x00-\x7f]/.test(e.text ?? e.fill?.head ?? e.path) || /[^\x00-\x7f]/.test(e.path));
    if (budget > 0 && total > budget && nonAscii) features.add('cut-mid-char');
    // A cut inside a file's trailing whitespace.
    const wsEnd = project.some((e) => (e.fill ? /\s/.test(e.fill.byte) : /\s$/u.test(e.text)));
    if (budget > 0 && total > budget && wsEnd) features.add('cut-in-trailing-ws');
  }

  const f = {
    name,
    about: `random tree ${index} of seed ${seed} (tests/compat/random.mjs)`,
    peers,
    features: [...features].sort(),
    settings,
    tree: entries,
    cwd,
    ...(accesses ? { accesses } : {}),
  };
  return f;
}

// ---------------------------------------------------------------- Claude Code's trees

/**
 * A tree for Claude Code alone: CLAUDE.md, .claude/CLAUDE.md,
 * CLAUDE.local.md, AGENTS.md and .claude/rules/*.md along the chain, beside
 * it and below the cwd (read on access), the home's ~/.claude files, `@`
 * imports (relative, `@~/`, missing, in code, cycles), skills in
 * ~/.claude/skills and .claude/skills at any level, links in and out, nested
 * repositories, `.git` files and no repository at all.
 */
function claudeTree(R, seed, index) {
  const name = `rand-${seed}-${index}`;
  const features = new Set();
  const entries = [];
  const files = new Set();
  const dirs = new Set();
  const parents = (p) => { const parts = p.split('/'); return parts.slice(1).map((_, i) => parts.slice(0, i + 1).join('/')); };
  const add = (e) => {
    if (files.has(e.path) || (!e.dir && dirs.has(e.path)) || parents(e.path).some((d) => files.has(d))) return false;
    entries.push(e);
    parents(e.path).forEach((d) => dirs.add(d));
    if (e.dir) dirs.add(e.path); else files.add(e.path);
    return true;
  };
  const dirName = () => {
    const d = R.chance(0.15) ? R.pick(ODD_DIRS.filter((x) => !x.includes('\t'))) : R.pick(PLAIN_DIRS);
    // A private-use character in a path (shown in tags and body lines):
    // Claude Code lists it in a description as a space.
    if (/\p{Co}/u.test(d)) features.add('private-use-char');
    return d;
  };
  const depth = R.weighted([[2, 0], [3, 1], [3, 2], [2, 3], [1, 4]]);
  const chain = ['repo'];
  for (let d = 0; d < depth; d++) chain.push(`${chain[chain.length - 1]}/${dirName()}`);
  const cwd = chain[chain.length - 1];

  // Repositories: usually one at repo, sometimes none, sometimes a nested
  // one (a `.git` folder or a `.git` file) lower on the chain.
  const gitAt = (level) => {
    if (R.chance(0.2)) add({ path: `${level}/.git`, text: 'gitdir: ../.git/modules/x\n' });
    else if (add({ path: `${level}/.git`, dir: true }) && R.chance(0.85)) add({ path: `${level}/.git/HEAD`, text: 'ref: refs/heads/main\n' });
  };
  let repository = false;
  if (R.chance(0.8)) { gitAt('repo'); repository = true; }
  if (depth > 0 && R.chance(0.2)) {
    gitAt(R.pick(chain.slice(1)));
    repository = true;
    // A nested repository: Claude Code reads the rules and AGENTS.md of
    // the folders above its root (ancestor-files, fallback-unless), not
    // their skills.
    features.add('claude-nested-repository');
  }
  // No repository: Claude Code reads .claude/skills, .claude/rules and
  // AGENTS.md of every folder above the cwd up to the home
  // (instructions.compat.unmarked-levels).
  if (!repository) features.add('claude-no-repository');

  const word = () => R.pick(R.chance(0.1) ? UNI_WORDS : WORDS);
  const line = () => Array.from({ length: R.int(2, 7) }, word).join(' ');
  const body = (nl = '\n') => Array.from({ length: R.int(1, 3) }, line).join(nl) + nl;
  const folderOf = (p) => p.split('/').slice(0, -1).join('/');
  const under = (p, d) => p === d || p.startsWith(d + '/');

  /** Import lines for a file at `path`, creating (most of) what they name. */
  const importLines = (path, { home = false } = {}) => {
    const folder = folderOf(path);
    // An import in a file above the cwd resolves outside the cwd, where
    // Claude Code refuses it whether or not the file exists.
    if (!home && !under(folder, cwd)) features.add('claude-import-above-cwd');
    const out = [];
    for (let k = R.int(1, 3); k > 0; k--) {
      const kind = R.weighted([[4, 'sibling'], [2, 'sub'], [2, 'up'], [2, 'missing'], [1, 'code'], [1, 'self'], [1, 'tilde'], [1, 'chain']]);
      if (kind === 'sibling') {
        const n = R.pick(['notes.md', 'shared.md', 'caf\u00e9.md']);
        add({ path: `${folder}/${n}`, text: `[${folder}/${n}]\n${line()}\n` });
        out.push(R.chance(0.5) ? `See @${n} for more.` : `@./${n}`);
        if (home) features.add('claude-home-imports');
      } else if (kind === 'sub') {
        add({ path: `${folder}/inc/part.md`, text: `[${folder}/inc/part.md]\n${line()}\n` });
        out.push('@inc/part.md');
        if (home) features.add('claude-home-imports');
      } else if (kind === 'up') {
        const up = folderOf(folder);
        if (up && up !== 'home') add({ path: `${up}/up.md`, text: `[${up}/up.md]\n${line()}\n` });
        out.push('@../up.md');
        if (home) features.add('claude-home-imports');
      } else if (kind === 'missing') out.push(`@missing-${R.int(1, 9)}.md`);
      else if (kind === 'code') out.push('Use `@notes.md` literally.');
      else if (kind === 'self') {
        out.push(`@${path.split('/').pop()}`);
        features.add('claude-import-cycle');
      } else if (kind === 'tilde') {
        add({ path: 'home/notes.md', text: '[home/notes.md]\n' + line() + '\n' });
        out.push('@~/notes.md');
        features.add('claude-home-imports');
      } else {
        // A chain of imports (a -> b -> c ...), deeper than Claude's limit
        // now and then, sometimes back to the first.
        const n = R.int(2, 6);
        for (let j = 0; j < n; j++) {
          const back = j + 1 === n && R.chance(0.3);
          if (back) features.add('claude-import-cycle');
          const next = j + 1 < n ? `\n@chain-${j + 1}.md` : (back ? '\n@chain-0.md' : '');
          add({ path: `${folder}/chain-${j}.md`, text: `[${folder}/chain-${j}.md]\n${line()}${next}\n` });
        }
        out.push('@chain-0.md');
        if (home) features.add('claude-home-imports');
      }
    }
    return out.join('\n') + '\n';
  };

  /** An instruction file of a random shape. */
  const instruction = (path, opts = {}) => {
    const tag = `[${path}]\n`;
    const kind = R.weighted([[50, 'doc'], [6, 'crlf'], [4, 'bom'], [5, 'trail'], [8, 'blank'], [3, 'big'], [14, 'imports']]);
    switch (kind) {
      case 'doc': return { path, text: tag + body() };
      case 'crlf': return { path, text: tag + body('\r\n') };
      case 'bom': return { path, text: '\ufeff' + tag + body() };
      case 'trail': return { path, text: tag + body() + R.pick(['  \n\n', '\t\n', '\n\n\n']) };
      case 'blank': return { path, text: R.pick(['', '\n', '  \n\t\n']) };
      case 'big': return { path, fill: { head: tag + line() + '\n', byte: R.pick(['x', ' ', '\n']), size: R.pick([2000, 20000, 50000]) } };
      case 'imports': return { path, text: tag + line() + '\n' + importLines(path, opts) };
      default: throw new Error(kind);
    }
  };
  /** A rule file of .claude/rules: unscoped, or scoped by `paths`. */
  const rule = (path) => {
    const tag = `[${path}]\n`;
    // Loaded on access, Claude Code puts CLAUDE.local.md before a folder's
    // rules; lisa-context puts the rules first.
    features.add('claude-rule-file');
    if (R.chance(0.7)) return { path, text: tag + body() };
    features.add('claude-scoped-rule');
    return { path, text: `---\npaths: ${R.pick(['"**/*.ts"', '"src/**"', '["*.md"]'])}\n---\n${tag}${body()}` };
  };
  const levelFiles = (level) => {
    if (R.chance(0.5)) add(instruction(`${level}/CLAUDE.md`));
    if (R.chance(0.12)) add(instruction(`${level}/.claude/CLAUDE.md`));
    if (R.chance(0.12)) add(instruction(`${level}/CLAUDE.local.md`));
    if (R.chance(0.25)) add(instruction(`${level}/AGENTS.md`));
    if (R.chance(0.1)) add(rule(`${level}/.claude/rules/${R.pick(['style', 'tests', 'deep/more'])}.md`));
    if (R.chance(0.03)) add({ path: `${level}/CLAUDE.md`, dir: true });
  };
  for (const level of chain) levelFiles(level);
  if (R.chance(0.3)) levelFiles(`${R.pick(chain)}/${dirName()}-side`);
  // An AGENTS.md on the chain: Claude Code reads it beside a blank CLAUDE.md
  // or a folder of that name too.
  if (chain.some((l) => files.has(`${l}/AGENTS.md`))) features.add('claude-agents-md');
  const below = [];
  for (let k = R.weighted([[5, 0], [3, 1], [2, 2]]); k > 0; k--) {
    let d = `${cwd}/${dirName()}`;
    if (R.chance(0.4)) d += `/${dirName()}`;
    levelFiles(d);
    below.push(d);
  }
  // The home's own files.
  if (R.chance(0.5)) add(instruction('home/.claude/CLAUDE.md', { home: true }));
  if (R.chance(0.1)) add(rule('home/.claude/rules/mine.md'));

  // Links: an instruction file linked inside the repository, out of it, dangling.
  const relTarget = (from, to) => {
    const a = from.split('/').slice(0, -1);
    const b = to.split('/');
    let i = 0;
    while (i < a.length && i < b.length && a[i] === b[i]) i++;
    return [...a.slice(i).map(() => '..'), ...b.slice(i)].join('/');
  };
  if (R.chance(0.12)) {
    const at = `${R.pick(chain)}/${R.pick(['CLAUDE.md', 'CLAUDE.local.md', 'AGENTS.md'])}`;
    const kind = R.weighted([[3, 'inside'], [3, 'outside'], [1, 'dangling']]);
    let target = './no-such-file.md';
    if (kind !== 'dangling') {
      const t = kind === 'inside' ? 'repo/shared/notes.md' : 'outside/notes.md';
      add({ path: t, text: `[${t}]\n${line()}\n` });
      target = relTarget(at, t);
    }
    // Whether the link leaves lisa-context's root for it: the nearest
    // marker's folder at or above the cwd (the cwd with none) for a file at
    // or below it; the file's own folder above it (each folder above the
    // root is its own sandbox).
    const folder = at.split('/').slice(0, -1).join('/');
    const root = [...chain].reverse().find((l) => files.has(`${l}/.git`) || dirs.has(`${l}/.git`)) ?? cwd;
    const own = under(folder, root) ? root : folder;
    const lands = posix.normalize(`${folder}/${target}`);
    if (add({ path: at, symlink: target }) && kind !== 'dangling' && !under(lands, own)) features.add('link-leaves-root');
  }

  // Skills: the home's and the project's at any level of the chain.
  const sources = ['home/.claude/skills', ...chain.map((l) => `${l}/.claude/skills`)];
  const usedNames = [];
  for (let k = R.weighted([[3, 0], [3, 1], [3, 2], [2, 3], [1, 5]]); k > 0; k--) {
    const source = R.pick(sources);
    const odd = R.chance(0.15);
    const folder = odd ? R.pick(['my skill', 'caf\u00e9', 'Tool', 'x_y']) : `skill-${k}`;
    // A folder name outside [a-z0-9-]: Claude Code lists some of them.
    if (odd) features.add('claude-folder-name');
    const dirPath = R.chance(0.06) ? `${source}/group/${folder}` : `${source}/${folder}`;
    const nameValue = R.chance(0.1) && usedNames.length ? R.pick(usedNames) : `tool-${index % 7}-${k}`;
    usedNames.push(nameValue);
    const fm = frontmatter(R, nameValue, features, `${dirPath}/SKILL.md`);
    // No description Claude Code takes as text (none, not a string, or
    // frontmatter that is not YAML): it describes the skill by its body.
    if (['missing', 'empty', 'number', 'tabblock', 'tabcont', 'colon'].includes(fm.descKind)) features.add('claude-description-from-body');
    // A tab or a line break inside a description, or spaces at its end.
    if (['tabs', 'trailing', 'block'].includes(fm.descKind)) features.add('claude-desc-whitespace');
    if (R.chance(0.04)) {
      const t = `outside/skills/${folder}`;
      add({ path: `${t}/SKILL.md`, text: fm.text.replace(`[${dirPath}/SKILL.md]`, `[${t}/SKILL.md]`) });
      if (add({ path: dirPath, symlink: relTarget(dirPath, t) })) features.add('skill-link-leaves-root');
    } else add({ path: `${dirPath}/SKILL.md`, text: fm.text });
  }

  // Accesses: files a tool reads below the cwd (Claude then reads the
  // instruction files on the way to them).
  let accesses;
  if (below.length && R.chance(0.3)) accesses = below.map((d) => `${d}/main.ts`);

  return {
    name,
    about: `random tree ${index} of seed ${seed} (tests/compat/random.mjs, Claude Code's grammar)`,
    peers: ['claude-code'],
    features: [...features].sort(),
    settings: {},
    tree: entries,
    cwd,
    ...(accesses ? { accesses } : {}),
  };
}

// ---------------------------------------------------------------- skill frontmatter

/** A SKILL.md text; returns its text and the name a reader would take (null: none / not text). */
function frontmatter(R, nameValue, features, path) {
  const lines = [];
  let name = nameValue;
  const nameKind = R.weighted([[60, 'plain'], [8, 'dq'], [3, 'sq'], [5, 'uni'], [1.5, 'number'], [1, 'bool'], [4, 'missing'], [0.7, 'empty'], [1, 'special'], [2, 'long'], [2, 'spaces']]);
  switch (nameKind) {
    case 'plain': lines.push(`name: ${nameValue}`); break;
    case 'dq': lines.push(`name: "${nameValue}"`); break;
    case 'sq': name = `${nameValue}'s`; lines.push(`name: '${nameValue}''s'`); break;
    case 'uni': name = `${nameValue}-${R.pick(['caf\u00e9', '\u65e5\u672c', '\u{1d49c}', '\uff54\uff4f\uff4f\uff4c', 'e\u0301'])}`; lines.push(`name: ${name}`); break;
    case 'number': name = R.pick(['123', '1.5', '0x1F', '1e3', '007']); lines.push(`name: ${name}`); features.add('yaml-non-string'); break;
    case 'bool':
      name = R.pick(['true', 'false', 'null', '~']);
      lines.push(`name: ${name}`);
      features.add('yaml-non-string');
      // A null name: Codex takes the folder's name.
      if (name === 'null' || name === '~') features.add('name-null');
      break;
    case 'missing': name = null; break;
    case 'empty': name = ''; lines.push('name: ""'); features.add('empty-skill-field'); break;
    case 'special': name = `ns/${nameValue}*x`; lines.push(`name: "${name}"`); features.add('name-rewritten'); break;
    case 'long': name = `${nameValue}-${'x'.repeat(R.pick([50, 60, 70]))}`; lines.push(`name: ${name}`); break;
    case 'spaces': name = `${nameValue} two words`; lines.push(`name: ${name}`); break;
    default: throw new Error(nameKind);
  }
  const w = () => R.pick(WORDS);
  const sentence = () => Array.from({ length: R.int(2, 7) }, w).join(' ');
  const descKind = R.weighted([[50, 'plain'], [5, 'dq'], [3, 'sq'], [12, 'block'], [2, 'tabblock'], [1, 'tabcont'], [4, 'multiline'], [3, 'tabs'], [3, 'long'], [0.7, 'empty'], [3, 'missing'], [1, 'number'], [2, 'colon'], [4, 'uni'], [3, 'trailing']]);
  const desc = [];
  switch (descKind) {
    case 'plain': desc.push(`description: ${sentence()}`); break;
    case 'dq': desc.push(`description: "${sentence()} \\"quoted\\" and a \\\\ slash"`); break;
    case 'sq': desc.push(`description: '${sentence()} it''s'`); break;
    case 'block': {
      // Clip and keep leave a final line break (an intended class for Gemini).
      const ind = R.weighted([[4, '|-'], [4, '>-'], [1, '|'], [1, '>'], [0.5, '|+'], [0.5, '>+']]);
      desc.push(`description: ${ind}`);
      for (let k = R.int(1, 3); k > 0; k--) desc.push(`  ${sentence()}`);
      if (ind.endsWith('+') && R.chance(0.5)) {
        desc.push('');
        // A kept block ending in a blank line: Gemini's YAML text stops
        // before the last line break ahead of the closing fence.
        features.add('desc-keep-blank');
      }
      if (!ind.endsWith('-')) features.add('desc-trailing-newline');
      break;
    }
    // Not valid YAML (tabs indent nothing): each peer has its own fallback.
    case 'tabblock': desc.push(`description: ${R.pick(['|', '>'])}`, `\t${sentence()}`, `\t${sentence()}`); features.add('yaml-invalid'); break;
    case 'tabcont': desc.push(`description: ${sentence()}`, `\t${sentence()}`); features.add('yaml-invalid'); break;
    case 'multiline': desc.push(`description: ${sentence()}`, `  ${sentence()}`, `  ${sentence()}`); break;
    case 'tabs': desc.push(`description: "${w()}\\t${w()}  ${w()}"`); break;
    case 'long': desc.push(`description: ${Array.from({ length: R.pick([180, 200, 260]) }, w).join(' ')}`); break;
    case 'empty': desc.push('description: ""'); features.add('empty-skill-field'); break;
    case 'missing': break;
    case 'number': desc.push(`description: ${R.pick(['42', '3.14', 'true'])}`); features.add('yaml-non-string'); break;
    case 'colon': desc.push(`description: uses: ${w()}: twice`); features.add('yaml-invalid'); break;
    case 'uni': desc.push(`description: ${R.pick(UNI_WORDS)} ${sentence()} \u{1f680}`); break;
    case 'trailing': desc.push(`description: "${sentence()}  "`); break;
    default: throw new Error(descKind);
  }
  // Gemini's line fallback (the YAML refused, or a description that is not
  // a string) keeps a double-quoted name's quotes, then turns
  // each `"` into `-` (the name-rewritten class).
  if (nameKind === 'dq' && ['tabblock', 'tabcont', 'colon', 'number'].includes(descKind)) features.add('name-rewritten');
  let fm = R.chance(0.3) ? [...desc, ...lines] : [...lines, ...desc];
  if (R.chance(0.15)) fm.push(R.pick(['license: MIT', 'metadata:\n  owner: team\n  tags: [a, b]', 'allowed-tools:\n  - shell', 'version: 2']));
  if (R.chance(0.05)) fm.unshift('# a comment');
  let open = '---';
  let close = '---';
  if (R.chance(0.015)) { open = '--- '; features.add('fm-delim-trailing-space'); }
  if (R.chance(0.015)) { close = '---  '; features.add('fm-delim-trailing-space'); }
  let text = [open, ...fm, close, `[${path}]`, 'Steps go here.'].join('\n') + '\n';
  if (R.chance(0.06)) text = text.replace(/\n/g, '\r\n');
  if (R.chance(0.02)) { text = '\ufeff' + text; features.add('fm-bom'); }
  return { text, name, descKind };
}

// ---------------------------------------------------------------- main

function parseArgs(argv) {
  const o = { seed: null, count: 10, out: null, peer: 'both', from: 0 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const val = () => { const v = argv[++i]; if (v === undefined) throw new Error(`${a} needs a value`); return v; };
    if (a === '--seed') o.seed = Number(val());
    else if (a === '--count') o.count = Number(val());
    else if (a === '--from') o.from = Number(val());
    else if (a === '--out') o.out = val();
    else if (a === '--peer') o.peer = val();
    else throw new Error(`unknown argument ${a}`);
  }
  if (!Number.isInteger(o.seed) || o.seed < 0 || o.seed > 0xffffffff) throw new Error('--seed must be an integer in [0, 2^32)');
  if (!o.out) throw new Error('--out DIR is required');
  if (!['codex', 'gemini', 'claude-code', 'both', 'all'].includes(o.peer)) throw new Error('--peer must be codex, gemini, claude-code, both or all');
  return o;
}

export { generate };

if (import.meta.url === `file://${process.argv[1]}`) {
  const o = parseArgs(process.argv.slice(2));
  mkdirSync(o.out, { recursive: true });
  for (let i = o.from; i < o.from + o.count; i++) {
    const f = generate(o.seed, i, o.peer);
    writeFileSync(join(o.out, `${f.name}.json`), JSON.stringify(f, null, 2) + '\n');
  }
  console.log(`random.mjs: wrote ${o.count} fixtures (seed ${o.seed}) into ${o.out}`);
}
