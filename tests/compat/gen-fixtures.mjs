#!/usr/bin/env node
// Writes the differential-test fixtures into tests/compat/fixtures/*.json.
//
// Every fixture is a small, deterministic tree (see README.md for the format).
// Edit this file, not the JSON: `node tests/compat/gen-fixtures.mjs` rewrites
// the whole folder (stale fixtures are removed) and prints what it wrote.
//
// No FIFOs: Gemini CLI blocks forever reading one, so a FIFO fixture could not
// be recorded. Nothing here needs root.

import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const outDir = join(here, 'fixtures');

const BOTH = ['codex', 'gemini'];
const CODEX = ['codex'];
const GEMINI = ['gemini'];
/** Claude Code cannot run here: its answers are written from its documentation. */
const CLAUDE = ['claude-code'];

// ---------------------------------------------------------------- entries

/** A directory (also used for markers such as `.git`). */
const dir = (path) => ({ path, dir: true });

/**
 * A git repository's `.git` folder at `at`, with the `HEAD` file every real
 * repository has: Codex reads the `.codex/skills` of the levels between the
 * project root and the cwd only when the root's `.git` is a repository (or a
 * `.git` file); an empty `.git` folder counts as a marker for instruction
 * files but not for skills (see skills-cwd-codex-dir).
 */
const git = (at) => [dir(`${at}/.git`), raw(`${at}/.git/HEAD`, 'ref: refs/heads/main\n')];

/** An instruction file: a tag line naming the file, then `body` lines. */
function doc(path, ...body) {
  const lines = [`[${path}]`, ...body];
  return { path, text: lines.join('\n') + '\n' };
}

/** A file with exactly this text (no tag line added). */
const raw = (path, text) => ({ path, text });

/** A large file: a tag line, then `byte` until the file is `size` bytes. */
const big = (path, size, byte = 'x') => ({ path, fill: { head: `[${path}]\n`, byte, size } });

/** A symbolic link; `target` is written as given. */
const link = (path, target) => ({ path, symlink: target });

/**
 * A skill folder's SKILL.md. `fm` is the frontmatter as lines (already YAML);
 * the body carries the tag line, since the file must open with `---`.
 */
function skillFile(path, fm, body = 'Steps go here.') {
  const text = ['---', ...fm, '---', `[${path}]`, body].join('\n') + '\n';
  return { path, text };
}

/** The common case: a skill with a plain name and description. */
const skill = (path, name, description) =>
  skillFile(path, [`name: ${name}`, `description: ${description}`]);

/** A deterministic ASCII sentence of exactly `n` characters. */
function prose(n, seed = 'word') {
  const words = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel'];
  let out = seed;
  let i = 0;
  while (out.length < n) out += ' ' + words[i++ % words.length];
  out = out.slice(0, n);
  // YAML drops a trailing space from a plain scalar: end on a letter.
  return out.endsWith(' ') ? out.slice(0, -1) + 'x' : out;
}

// ---------------------------------------------------------------- fixtures

const fixtures = [];
function fixture(f) {
  if (fixtures.some((g) => g.name === f.name)) throw new Error(`duplicate fixture ${f.name}`);
  fixtures.push({
    name: f.name,
    about: f.about,
    peers: f.peers,
    settings: f.settings ?? {},
    tree: f.tree,
    cwd: f.cwd,
    ...(f.accesses ? { accesses: f.accesses } : {}),
  });
}

fixture({
  name: 'basic-chain',
  about: 'global file plus one instruction file per level from the .git root down to the cwd',
  peers: BOTH,
  tree: [
    doc('home/.codex/AGENTS.md', 'Global Codex notes.'),
    doc('home/.gemini/GEMINI.md', 'Global Gemini notes.'),
    ...git('repo'),
    doc('repo/AGENTS.md', 'Root conventions.'),
    doc('repo/GEMINI.md', 'Root conventions.'),
    doc('repo/a/AGENTS.md', 'Level a.'),
    doc('repo/a/GEMINI.md', 'Level a.'),
    doc('repo/a/b/AGENTS.md', 'Level b, the cwd.'),
    doc('repo/a/b/GEMINI.md', 'Level b, the cwd.'),
    doc('repo/a/b/c/AGENTS.md', 'Below the cwd: not loaded at startup.'),
    doc('repo/a/b/c/GEMINI.md', 'Below the cwd: not loaded at startup.'),
    doc('AGENTS.md', 'Above the root (fixture root): never loaded.'),
    doc('GEMINI.md', 'Above the root (fixture root): never loaded.'),
  ],
  cwd: 'repo/a/b',
});

fixture({
  name: 'override-first',
  about: 'AGENTS.override.md beats AGENTS.md in its own directory only; one file per directory for Codex',
  peers: BOTH,
  tree: [
    ...git('repo'),
    doc('repo/AGENTS.override.md', 'Root override.'),
    doc('repo/AGENTS.md', 'Root plain: hidden behind the override.'),
    doc('repo/a/AGENTS.md', 'Level a plain (no override here).'),
    doc('repo/a/GEMINI.md', 'Level a Gemini file.'),
  ],
  cwd: 'repo/a',
});

fixture({
  name: 'fallback-names',
  about: 'extra names: Codex takes the first existing name per directory, Gemini reads every name everywhere',
  peers: BOTH,
  settings: { extraNames: ['TEAM.md', 'NOTES.md'] },
  tree: [
    doc('home/.codex/TEAM.md', 'Not a Codex home name: ignored.'),
    doc('home/.gemini/GEMINI.md', 'Gemini global.'),
    doc('home/.gemini/TEAM.md', 'Gemini global TEAM.'),
    ...git('repo'),
    doc('repo/TEAM.md', 'Root TEAM only.'),
    doc('repo/a/NOTES.md', 'Level a NOTES.'),
    doc('repo/a/TEAM.md', 'Level a TEAM: listed before NOTES.'),
    doc('repo/a/b/AGENTS.md', 'Level b AGENTS beats the extras.'),
    doc('repo/a/b/NOTES.md', 'Level b NOTES.'),
    doc('repo/a/b/GEMINI.md', 'Level b GEMINI.'),
  ],
  cwd: 'repo/a/b',
});

fixture({
  name: 'extra-names-odd',
  about: 'extra names that are not plain names: empty, a parent reference, a subfolder path, a repeat of AGENTS.md',
  peers: BOTH,
  settings: { extraNames: ['', '../UP.md', 'docs/IN.md', 'AGENTS.md', 'TEAM.md'] },
  tree: [
    doc('UP.md', 'Above the repository: reachable from the root as ../UP.md.'),
    ...git('repo'),
    doc('repo/UP.md', 'Root UP: reachable from level a as ../UP.md.'),
    doc('repo/a/docs/IN.md', 'Level a docs/IN.md.'),
    doc('repo/a/TEAM.md', 'Level a TEAM.'),
    doc('repo/TEAM.md', 'Root TEAM.'),
  ],
  cwd: 'repo/a',
});

fixture({
  name: 'blank-override',
  about: 'a blank winner still takes its directory slot (Codex); blank files add nothing (Gemini)',
  peers: BOTH,
  settings: { extraNames: ['TEAM.md'] },
  tree: [
    ...git('repo'),
    raw('repo/AGENTS.override.md', '\n   \n\t\n'),
    doc('repo/AGENTS.md', 'Root plain: lost behind the blank override.'),
    raw('repo/GEMINI.md', '  \n\n'),
    doc('repo/TEAM.md', 'Root TEAM.'),
    raw('repo/a/AGENTS.md', ''),
    doc('repo/a/TEAM.md', 'Level a TEAM: lost behind the empty AGENTS.md.'),
    doc('repo/a/GEMINI.md', 'Level a GEMINI.'),
  ],
  cwd: 'repo/a',
});

fixture({
  name: 'home-override-blank',
  about: 'home file: first non-empty of AGENTS.override.md and AGENTS.md (the blank override is skipped)',
  peers: BOTH,
  tree: [
    raw('home/.codex/AGENTS.override.md', ' \n\n'),
    doc('home/.codex/AGENTS.md', 'Codex home plain.', '', ''),
    raw('home/.gemini/GEMINI.md', '\n\n'),
    ...git('repo'),
    doc('repo/AGENTS.md', 'Root.'),
    doc('repo/GEMINI.md', 'Root.'),
  ],
  cwd: 'repo',
});

fixture({
  name: 'home-override-wins',
  about: 'home AGENTS.override.md, when not blank, replaces home AGENTS.md',
  peers: CODEX,
  tree: [
    doc('home/.codex/AGENTS.override.md', 'Codex home override.'),
    doc('home/.codex/AGENTS.md', 'Codex home plain: hidden.'),
    ...git('repo'),
    doc('repo/AGENTS.md', 'Root.'),
  ],
  cwd: 'repo',
});

fixture({
  name: 'budget-big-global',
  about: 'a 40000-byte global file is outside the project budget (Codex); Gemini has no budget',
  peers: BOTH,
  tree: [
    big('home/.codex/AGENTS.md', 40000),
    big('home/.gemini/GEMINI.md', 40000),
    ...git('repo'),
    doc('repo/AGENTS.md', 'Root, still loaded.'),
    doc('repo/GEMINI.md', 'Root, still loaded.'),
  ],
  cwd: 'repo',
});

fixture({
  name: 'budget-cut',
  about: 'project budget of 300 bytes: the root file fits, the next is cut mid-file, the cwd file is dropped',
  peers: BOTH,
  settings: { maxBytes: 300 },
  tree: [
    doc('home/.codex/AGENTS.md', 'Global: outside the budget.'),
    ...git('repo'),
    big('repo/AGENTS.md', 200, 'r'),
    big('repo/GEMINI.md', 200, 'r'),
    big('repo/a/AGENTS.md', 250, 'a'),
    big('repo/a/GEMINI.md', 250, 'a'),
    doc('repo/a/b/AGENTS.md', 'Level b: nothing left for it.'),
    doc('repo/a/b/GEMINI.md', 'Level b: Gemini has no budget.'),
  ],
  cwd: 'repo/a/b',
});

fixture({
  name: 'budget-large-project',
  about: 'default budget (32768): a 40000-byte root project file is cut at exactly 32768 bytes',
  peers: BOTH,
  tree: [
    ...git('repo'),
    big('repo/AGENTS.md', 40000, 'p'),
    big('repo/GEMINI.md', 40000, 'p'),
    doc('repo/a/AGENTS.md', 'Level a: budget already spent.'),
    doc('repo/a/GEMINI.md', 'Level a.'),
  ],
  cwd: 'repo/a',
});

fixture({
  name: 'budget-blank-free',
  about: 'a blank project file takes its slot but spends no budget; the next file still fits',
  peers: CODEX,
  settings: { maxBytes: 120 },
  tree: [
    ...git('repo'),
    raw('repo/AGENTS.md', '\n'.repeat(100)),
    big('repo/a/AGENTS.md', 100, 'a'),
  ],
  cwd: 'repo/a',
});

// The cut falls after the first byte of a two-byte character (U+00E9). A
// two-byte character is used on purpose: the lossy decoding shows one U+FFFD
// whatever the number of bytes kept, and only with two bytes is that number
// certain (one).
{
  const path = 'repo/AGENTS.md';
  const text = `[${path}]\n` + 'caf\u00e9 '.repeat(20) + '\n';
  const head = Buffer.byteLength(`[${path}]\n` + 'caf\u00e9 '.repeat(3) + 'caf', 'utf8');
  fixture({
    name: 'unicode-cut-midchar',
    about: 'the project budget ends inside a two-byte UTF-8 character',
    peers: BOTH,
    settings: { maxBytes: head + 1 },
    tree: [...git('repo'), raw(path, text), raw('repo/GEMINI.md', text.replace(path, 'repo/GEMINI.md'))],
    cwd: 'repo',
  });
}

fixture({
  name: 'markers-empty',
  about: 'an empty marker list: the cwd alone, even inside a .git repository',
  peers: BOTH,
  settings: { markers: [] },
  tree: [
    ...git('repo'),
    doc('repo/AGENTS.md', 'Root: not read.'),
    doc('repo/GEMINI.md', 'Root: not read.'),
    doc('repo/a/AGENTS.md', 'The cwd.'),
    doc('repo/a/GEMINI.md', 'The cwd.'),
  ],
  cwd: 'repo/a',
});

fixture({
  name: 'markers-none-found',
  about: 'no marker anywhere above the cwd: the cwd alone',
  peers: BOTH,
  tree: [
    doc('repo/AGENTS.md', 'Root: not read.'),
    doc('repo/GEMINI.md', 'Root: not read.'),
    doc('repo/a/AGENTS.md', 'Middle: not read.'),
    doc('repo/a/GEMINI.md', 'Middle: not read.'),
    doc('repo/a/b/AGENTS.md', 'The cwd.'),
    doc('repo/a/b/GEMINI.md', 'The cwd.'),
  ],
  cwd: 'repo/a/b',
});

fixture({
  name: 'markers-custom',
  about: 'custom markers: the nearest directory holding any of them (a file counts) is the root',
  peers: BOTH,
  settings: { markers: ['.hg', 'ROOT.marker'] },
  tree: [
    dir('repo/.hg'),
    doc('repo/AGENTS.md', 'Repo: above the nearest marker.'),
    doc('repo/GEMINI.md', 'Repo: above the nearest marker.'),
    raw('repo/pkg/ROOT.marker', ''),
    ...git('repo/pkg'),
    doc('repo/pkg/AGENTS.md', 'Package root (file marker).'),
    doc('repo/pkg/GEMINI.md', 'Package root (file marker).'),
    doc('repo/pkg/src/AGENTS.md', 'The cwd.'),
    doc('repo/pkg/src/GEMINI.md', 'The cwd.'),
  ],
  cwd: 'repo/pkg/src',
});

fixture({
  name: 'nested-git',
  about: 'a nested .git (a file, as in a submodule) makes the inner directory the root',
  peers: BOTH,
  tree: [
    ...git('repo'),
    doc('repo/AGENTS.md', 'Outer repository: above the nested root.'),
    doc('repo/GEMINI.md', 'Outer repository: above the nested root.'),
    raw('repo/vendor/lib/.git', 'gitdir: ../../.git/modules/lib\n'),
    doc('repo/vendor/lib/AGENTS.md', 'Nested root.'),
    doc('repo/vendor/lib/GEMINI.md', 'Nested root.'),
    doc('repo/vendor/lib/src/AGENTS.md', 'The cwd.'),
    doc('repo/vendor/lib/src/GEMINI.md', 'The cwd.'),
  ],
  cwd: 'repo/vendor/lib/src',
});

fixture({
  name: 'dir-named-like-file',
  about: 'directories named AGENTS.override.md / AGENTS.md / GEMINI.md are not files: the next name is used',
  peers: BOTH,
  settings: { extraNames: ['TEAM.md'] },
  tree: [
    ...git('repo'),
    dir('repo/AGENTS.override.md'),
    doc('repo/AGENTS.md', 'Root plain: the override is a directory.'),
    dir('repo/GEMINI.md'),
    doc('repo/TEAM.md', 'Root TEAM.'),
    dir('repo/a/AGENTS.md'),
    doc('repo/a/TEAM.md', 'Level a TEAM: AGENTS.md is a directory.'),
    dir('repo/a/GEMINI.md/inner'),
  ],
  cwd: 'repo/a',
});

fixture({
  name: 'sorted-order',
  about: 'Gemini sorts every found path as a string (a child directory can come before its parent)',
  peers: BOTH,
  settings: { extraNames: ['AAA.md', 'zz.md'] },
  tree: [
    ...git('repo'),
    doc('repo/GEMINI.md', 'Root GEMINI.'),
    doc('repo/zz.md', 'Root zz.'),
    doc('repo/AAA.md', 'Root AAA.'),
    doc('repo/AGENTS.md', 'Root AGENTS.'),
    doc('repo/Alpha/GEMINI.md', 'Alpha GEMINI (the cwd).'),
    doc('repo/Alpha/zz.md', 'Alpha zz.'),
    doc('repo/Alpha/AAA.md', 'Alpha AAA: behind AGENTS.md for Codex.'),
    doc('repo/Alpha/AGENTS.md', 'Alpha AGENTS.'),
  ],
  cwd: 'repo/Alpha',
});

fixture({
  name: 'deep-chain',
  about: 'nine levels from the root to the cwd, one file at each level (order and no per-level loss)',
  peers: BOTH,
  tree: [
    ...git('repo'),
    ...['', 'l1/', 'l1/l2/', 'l1/l2/l3/', 'l1/l2/l3/l4/', 'l1/l2/l3/l4/l5/', 'l1/l2/l3/l4/l5/l6/',
      'l1/l2/l3/l4/l5/l6/l7/', 'l1/l2/l3/l4/l5/l6/l7/l8/']
      .flatMap((p, i) => [doc(`repo/${p}AGENTS.md`, `Level ${i}.`), doc(`repo/${p}GEMINI.md`, `Level ${i}.`)]),
  ],
  cwd: 'repo/l1/l2/l3/l4/l5/l6/l7/l8',
});

fixture({
  name: 'links',
  about: 'links followed, inside and out of the repository; a dangling link is passed over',
  peers: BOTH,
  settings: { extraNames: ['TEAM.md'] },
  tree: [
    doc('outside/notes.md', 'Outside the repository, reached through a link.'),
    ...git('repo'),
    doc('repo/shared/conventions.md', 'Shared text inside the repository.'),
    link('repo/AGENTS.md', '../outside/notes.md'),
    link('repo/GEMINI.md', '../outside/notes.md'),
    link('repo/a/AGENTS.md', '../shared/conventions.md'),
    link('repo/a/GEMINI.md', '../shared/conventions.md'),
    link('repo/a/b/AGENTS.md', 'missing.md'),
    link('repo/a/b/GEMINI.md', 'missing.md'),
    doc('repo/a/b/TEAM.md', 'Level b TEAM: used since AGENTS.md dangles.'),
  ],
  cwd: 'repo/a/b',
});

fixture({
  name: 'same-file-twice',
  about: 'one file reached from two levels through a link: Codex loads it twice, Gemini once (inode dedup)',
  peers: BOTH,
  tree: [
    doc('home/.gemini/GEMINI.md', 'Gemini global.'),
    ...git('repo'),
    doc('repo/AGENTS.md', 'Root, also linked from level a.'),
    doc('repo/GEMINI.md', 'Root, also linked from level a.'),
    link('repo/a/AGENTS.md', '../AGENTS.md'),
    link('repo/a/GEMINI.md', '../GEMINI.md'),
    link('repo/a/b/GEMINI.md', '../../../home/.gemini/GEMINI.md'),
  ],
  cwd: 'repo/a/b',
});

// ---------------------------------------------------------------- skills

// The same name from every source either program knows, one description
// per source so the recording shows which copy each program lists.
{
  const sources = [
    'home/.codex/skills',
    'home/.agents/skills',
    'home/.gemini/skills',
    'repo/.agents/skills',
    'repo/.codex/skills',
    'repo/.gemini/skills',
    'repo/a/.agents/skills',
    'repo/a/.codex/skills',
    'repo/a/.gemini/skills',
    'repo/a/b/.agents/skills',
    'repo/a/b/.gemini/skills',
  ];
  fixture({
    name: 'skills-sources',
    about: 'one skill name in every user and project source at several levels (cwd has no .codex)',
    peers: BOTH,
    tree: [
      ...git('repo'),
      ...sources.map((s) => skill(`${s}/deploy/SKILL.md`, 'deploy', `deploy, from ${s}`)),
      ...sources.map((s, i) => skill(`${s}/only-${i}/SKILL.md`, `only-${i}`, `unique to ${s}`)),
    ],
    cwd: 'repo/a/b',
  });
  fixture({
    name: 'skills-cwd-codex-dir',
    about: 'the cwd has its own .codex/skills and .gemini/skills; the root has .codex/skills too, and its .git is an empty folder (no repository: Codex reads the cwd\'s .codex/skills only)',
    peers: BOTH,
    tree: [
      dir('repo/.git'),
      skill('repo/.codex/skills/build/SKILL.md', 'build', 'build, from the root .codex'),
      skill('repo/a/.codex/skills/build/SKILL.md', 'build', 'build, from the cwd .codex'),
      skill('repo/a/.gemini/skills/build/SKILL.md', 'build', 'build, from the cwd .gemini'),
      skill('repo/a/.agents/skills/lint/SKILL.md', 'lint', 'lint, from the cwd .agents'),
      skill('repo/a/.gemini/skills/lint/SKILL.md', 'lint', 'lint, from the cwd .gemini'),
    ],
    cwd: 'repo/a',
  });
}

fixture({
  name: 'skills-depth',
  about: 'skill files from 0 to 8 folders deep, dot folders, and a SKILL.md right in the skills folder',
  peers: BOTH,
  tree: [
    ...git('repo'),
    skill('repo/.agents/skills/SKILL.md', 'top-level', 'SKILL.md directly in the skills folder'),
    ...[1, 2, 3, 4, 5, 6, 7, 8].map((d) => {
      const folders = Array.from({ length: d }, (_, i) => `d${i + 1}`).join('/');
      return skill(`repo/.agents/skills/${folders}/SKILL.md`, `depth-${d}`, `${d} folders deep`);
    }),
    skill('repo/.agents/skills/.hidden/SKILL.md', 'hidden', 'in a dot folder'),
    skill('repo/.agents/skills/group/.cache/x/SKILL.md', 'dot-inside', 'below a dot folder'),
    skill('repo/.agents/skills/node_modules/pkg/SKILL.md', 'in-node-modules', 'inside node_modules'),
    skill('home/.agents/skills/tools/fmt/SKILL.md', 'fmt', 'two deep in the user folder'),
    skill('home/.gemini/skills/tools/fmt2/SKILL.md', 'fmt2', 'two deep in the Gemini user folder'),
  ],
  cwd: 'repo',
});

{
  const n64 = 'n' + 'a'.repeat(62) + 'z';
  const n65 = 'n' + 'a'.repeat(63) + 'z';
  fixture({
    name: 'skills-names',
    about: 'names at and past 64 characters, missing or empty names, odd characters, quoting',
    peers: BOTH,
    tree: [
      ...git('repo'),
      skill(`repo/.agents/skills/n64/SKILL.md`, n64, 'a name of exactly 64 characters'),
      skill(`repo/.agents/skills/n65/SKILL.md`, n65, 'a name of 65 characters'),
      skillFile('repo/.agents/skills/from-folder/SKILL.md', ['description: no name field']),
      skillFile('repo/.agents/skills/empty-name/SKILL.md', ['name: ""', 'description: an empty name']),
      skill('repo/.agents/skills/mixed/SKILL.md', 'Mixed Case Name', 'spaces and capitals in the name'),
      skill('repo/.agents/skills/odd/SKILL.md', 'ns/tool*x', 'slash and star in the name'),
      skillFile('repo/.agents/skills/quoted/SKILL.md', ['name: "quoted-name"', "description: 'single quoted'"]),
      skill('repo/.agents/skills/mismatch/SKILL.md', 'other-name', 'name differs from the folder'),
      raw('repo/.agents/skills/no-front/SKILL.md', '[repo/.agents/skills/no-front/SKILL.md]\nNo frontmatter at all.\n'),
      skillFile('repo/.agents/skills/no-desc/SKILL.md', ['name: no-desc']),
      skillFile('repo/.agents/skills/empty-desc/SKILL.md', ['name: empty-desc', 'description: ""']),
      skillFile('repo/.agents/skills/bad-yaml/SKILL.md', ['name: bad-yaml', 'description: uses: a colon: twice']),
    ],
    cwd: 'repo',
  });
}

fixture({
  name: 'skills-descriptions',
  about: 'descriptions at 1024 characters, past it, multi-line YAML, and extra fields',
  peers: BOTH,
  tree: [
    ...git('repo'),
    skill('repo/.agents/skills/d1024/SKILL.md', 'd1024', prose(1024, 'exact')),
    skill('repo/.agents/skills/d1025/SKILL.md', 'd1025', prose(1025, 'over')),
    skill('repo/.agents/skills/d1500/SKILL.md', 'd1500', prose(1500, 'long')),
    skillFile('repo/.agents/skills/folded/SKILL.md', [
      'name: folded',
      'description: >',
      '  first line of a folded',
      '  description, second line',
    ]),
    skillFile('repo/.agents/skills/literal/SKILL.md', [
      'name: literal',
      'description: |',
      '  line one',
      '  line two',
    ]),
    skillFile('repo/.agents/skills/spaces/SKILL.md', [
      'name: spaces',
      'description: "tab\\there,  two  spaces, trailing space "',
    ]),
    skillFile('repo/.agents/skills/extra/SKILL.md', [
      'name: extra',
      'description: has license and metadata',
      'license: MIT',
      'metadata:',
      '  owner: team',
    ]),
  ],
  cwd: 'repo',
});

fixture({
  name: 'skills-listing-budget',
  about: 'forty skills whose descriptions together pass the listing budget (Codex: 8,000 characters)',
  peers: CODEX,
  tree: [
    ...git('repo'),
    ...Array.from({ length: 40 }, (_, i) => {
      const n = String(i).padStart(2, '0');
      return skill(`repo/.agents/skills/s${n}/SKILL.md`, `s${n}`, prose(300 + 7 * i, `skill${n}`));
    }),
  ],
  cwd: 'repo',
});

fixture({
  name: 'skills-links',
  about: 'skill folders and SKILL.md files reached through links, one skill reachable twice',
  peers: BOTH,
  tree: [
    skill('outside/shared-skill/SKILL.md', 'shared', 'lives outside the repository'),
    ...git('repo'),
    link('repo/.agents/skills/shared', '../../../outside/shared-skill'),
    link('home/.agents/skills/shared-again', '../../../outside/shared-skill'),
    skill('repo/skill-src/real/SKILL.md', 'linked-file', 'SKILL.md itself is a link'),
    dir('repo/.agents/skills/linked-file'),
    link('repo/.agents/skills/linked-file/SKILL.md', '../../../skill-src/real/SKILL.md'),
    link('repo/.gemini/skills/shared', '../../../outside/shared-skill'),
    link('repo/.agents/skills/dangling', '../../nowhere'),
    skill('outside/solo-skill/SKILL.md', 'solo', 'outside, linked from the repository only'),
    link('repo/.agents/skills/solo', '../../../outside/solo-skill'),
    skill('outside/home-only/SKILL.md', 'home-solo', 'outside, linked from the user folder only'),
    link('home/.agents/skills/home-solo', '../../../outside/home-only'),
    skill('home/skill-src/real/SKILL.md', 'home-linked-file', 'a user SKILL.md that is itself a link'),
    dir('home/.agents/skills/home-linked-file'),
    link('home/.agents/skills/home-linked-file/SKILL.md', '../../../skill-src/real/SKILL.md'),
    skill('outside/twin/SKILL.md', 'twin', 'one folder linked from four sources'),
    link('repo/.codex/skills/twin', '../../../outside/twin'),
    link('home/.codex/skills/twin', '../../../outside/twin'),
    link('home/.gemini/skills/twin', '../../../outside/twin'),
    link('repo/.agents/skills/twin', '../../../outside/twin'),
  ],
  cwd: 'repo',
});

// ---------------------------------------------------------------- imports (Gemini)

// `@path` imports inside GEMINI.md files (Gemini CLI's memoryImportProcessor,
// "tree" format). Codex has no imports, so these are Gemini-only. Every file
// still opens with its tag line; an import sits after whitespace (a line
// start counts) so that Gemini's scanner sees it.

fixture({
  name: 'imports-basic',
  about: 'imports relative to the importing file: plain, nested folder, ./, ../ within the root, out and back in',
  peers: GEMINI,
  tree: [
    ...git('repo'),
    doc('repo/GEMINI.md', 'Read @notes.md first.', 'Style: @./docs/style.md', 'Nested: @docs/api/rules.md'),
    doc('repo/notes.md', 'Root notes, imported.'),
    doc('repo/docs/style.md', 'Style guide, imported with ./.'),
    doc('repo/docs/api/rules.md', 'API rules, two folders down.'),
    doc('repo/a/GEMINI.md', 'Shared: @../shared/common.md', 'Out and back in: @../../repo/shared/other.md'),
    doc('repo/shared/common.md', 'Common text, imported from level a with ../.'),
    doc('repo/shared/other.md', 'Other text, reached through ../../repo/.'),
  ],
  cwd: 'repo/a',
});

fixture({
  name: 'imports-nested',
  about: 'imports three deep, each relative to the file that holds it',
  peers: GEMINI,
  tree: [
    ...git('repo'),
    doc('repo/GEMINI.md', 'Top: @lib/one.md', 'After the import.'),
    doc('repo/lib/one.md', 'One, then @sub/two.md then more of one.'),
    doc('repo/lib/sub/two.md', 'Two: @../../three.md'),
    doc('repo/three.md', 'Three, the deepest.'),
  ],
  cwd: 'repo',
});

fixture({
  name: 'imports-depth',
  about: 'a chain of seven imports: the depth limit (5) leaves the rest of the chain unexpanded',
  peers: GEMINI,
  tree: [
    ...git('repo'),
    doc('repo/GEMINI.md', 'Chain start: @chain/c1.md'),
    ...[1, 2, 3, 4, 5, 6].map((i) => doc(`repo/chain/c${i}.md`, `Link ${i}: @c${i + 1}.md`)),
    doc('repo/chain/c7.md', 'Link 7, the end of the chain.'),
  ],
  cwd: 'repo',
});

fixture({
  name: 'imports-cycle',
  about: 'a two-file cycle (a, b, a), a three-file cycle, a file importing itself, GEMINI.md importing itself',
  peers: GEMINI,
  tree: [
    ...git('repo'),
    doc('repo/GEMINI.md', 'Pair: @cyc/a.md', 'Ring: @cyc/x.md', 'Self: @cyc/self.md', 'Me: @GEMINI.md'),
    doc('repo/cyc/a.md', 'A imports @b.md'),
    doc('repo/cyc/b.md', 'B imports @a.md'),
    doc('repo/cyc/x.md', 'X imports @y.md'),
    doc('repo/cyc/y.md', 'Y imports @z.md'),
    doc('repo/cyc/z.md', 'Z imports @./x.md'),
    doc('repo/cyc/self.md', 'Self imports @self.md'),
  ],
  cwd: 'repo',
});

fixture({
  name: 'imports-cycle-back',
  about: 'an imported file imports the GEMINI.md that imported it, and a link to itself',
  peers: GEMINI,
  tree: [
    ...git('repo'),
    doc('repo/GEMINI.md', 'Down: @sub/back.md', 'Alias: @sub/real.md'),
    doc('repo/sub/back.md', 'Back up: @../GEMINI.md'),
    doc('repo/sub/real.md', 'Real imports its alias @alias.md'),
    link('repo/sub/alias.md', 'real.md'),
  ],
  cwd: 'repo',
});

{
  const n = 50;
  const name = (i) => `r${String(i).padStart(2, '0')}.md`;
  fixture({
    name: 'imports-cycle-long',
    about: 'a ring of 50 files, each importing the next: the depth limit comes before the cycle',
    peers: GEMINI,
    tree: [
      ...git('repo'),
      doc('repo/GEMINI.md', `Ring: @ring/${name(1)}`),
      ...Array.from({ length: n }, (_, k) => doc(`repo/ring/${name(k + 1)}`, `Ring ${k + 1}: @${name(((k + 1) % n) + 1)}`)),
    ],
    cwd: 'repo',
  });
}

fixture({
  name: 'imports-escape',
  about: 'imports leaving the project root: ../, an absolute path, a link out (file and folder), URLs; a link inside is fine',
  peers: GEMINI,
  tree: [
    doc('outside/notes.md', 'Outside the repository.'),
    ...git('repo'),
    doc('repo/GEMINI.md',
      'Up: @../outside/notes.md',
      'Absolute: @/etc/passwd',
      'Link out: @link-out.md',
      'Folder link out: @linkdir/notes.md',
      'Link in: @link-in.md',
      'Web: @https://example.com/notes.md',
      'File URL: @file:///etc/passwd'),
    link('repo/link-out.md', '../outside/notes.md'),
    link('repo/linkdir', '../outside'),
    link('repo/link-in.md', 'docs/inside.md'),
    doc('repo/docs/inside.md', 'Inside, reached through a link.'),
  ],
  cwd: 'repo',
});

fixture({
  name: 'imports-home-from-project',
  about: 'a project file imports the home GEMINI.md (outside the project root)',
  peers: GEMINI,
  tree: [
    doc('home/.gemini/GEMINI.md', 'Gemini global.'),
    ...git('repo'),
    doc('repo/GEMINI.md', 'Home again: @../home/.gemini/GEMINI.md'),
  ],
  cwd: 'repo',
});

fixture({
  name: 'imports-from-home',
  about: 'imports in the home GEMINI.md: its own folder, a subfolder, its parent, the project',
  peers: GEMINI,
  tree: [
    doc('home/.gemini/GEMINI.md', 'Mine: @notes.md', 'Deeper: @more/extra.md', 'Parent: @../shared.md', 'Project: @../../repo/GEMINI.md'),
    doc('home/.gemini/notes.md', 'Home notes, beside the home file.'),
    doc('home/.gemini/more/extra.md', 'Home extra, one folder down.'),
    doc('home/shared.md', 'In $HOME, above ~/.gemini.'),
    ...git('repo'),
    doc('repo/GEMINI.md', 'Root.'),
  ],
  cwd: 'repo',
});

fixture({
  name: 'imports-missing',
  about: 'imports of a missing file, a file in a missing folder, a dangling link inside and one pointing out',
  peers: GEMINI,
  tree: [
    ...git('repo'),
    doc('repo/GEMINI.md', 'Gone: @nope.md', 'Gone folder: @no/such/file.md', 'Dangling: @dangling.md', 'Dangling out: @dangling-out.md', 'Still here.'),
    link('repo/dangling.md', 'missing-target.md'),
    link('repo/dangling-out.md', '../outside/missing.md'),
  ],
  cwd: 'repo',
});

fixture({
  name: 'imports-directory',
  about: 'imports naming a directory (with and without a trailing slash) and the current folder',
  peers: GEMINI,
  tree: [
    ...git('repo'),
    doc('repo/GEMINI.md', 'Folder: @docs', 'Slash: @docs/', 'Dot: @.'),
    doc('repo/docs/readme.md', 'In the imported folder: not read.'),
  ],
  cwd: 'repo',
});

fixture({
  name: 'imports-code',
  about: 'imports inside code spans and fences (left as written), and in what is not code to Gemini (~~~, indented)',
  peers: GEMINI,
  tree: [
    ...git('repo'),
    doc('repo/GEMINI.md',
      'Span: `@a.md` and `` @b.md `` stay.',
      'Live: @a.md',
      '```',
      '@a.md in a fence',
      '```',
      '```md',
      'tagged @b.md fence',
      '```',
      '````',
      '```',
      '@a.md in a four-backtick fence',
      '````',
      '~~~',
      '@a.md in a tilde fence',
      '~~~',
      '    @b.md in an indented block',
      "It`s a stray backtick, so @a.md is code up to the next one: `x` @b.md."),
    doc('repo/a.md', 'A.'),
    doc('repo/b.md', 'B.'),
  ],
  cwd: 'repo',
});

fixture({
  name: 'imports-prose',
  about: '@ in prose: @param, an email address, trailing punctuation, odd first characters, an HTML comment, a tab',
  peers: GEMINI,
  tree: [
    ...git('repo'),
    doc('repo/GEMINI.md',
      'Document every @param of a function.',
      'Mail user@example.com or team@notes.md for help.',
      'See @notes.md.',
      'Wrapped (@notes.md) is not after whitespace.',
      'Home tilde @~/notes.md, digit @1notes.md, underscore @_notes.md, lone @ sign, double @@notes.md.',
      '<!-- @notes.md -->',
      'Tab:\t@notes.md',
      'Plain @notes.md'),
    doc('repo/notes.md', 'Notes.'),
  ],
  cwd: 'repo',
});

{
  const n = 100;
  const part = (i) => `repo/parts/p${String(i).padStart(3, '0')}.md`;
  fixture({
    name: 'imports-fanout',
    about: 'one file importing 100 files',
    peers: GEMINI,
    tree: [
      ...git('repo'),
      doc('repo/GEMINI.md', ...Array.from({ length: n }, (_, i) => `- @${part(i).slice('repo/'.length)}`)),
      ...Array.from({ length: n }, (_, i) => doc(part(i), `Part ${i}.`)),
    ],
    cwd: 'repo',
  });
}

fixture({
  name: 'imports-repeated',
  about: 'one file imported twice by one file and again by another; a GEMINI.md imported that also loads on its own',
  peers: GEMINI,
  tree: [
    ...git('repo'),
    doc('repo/GEMINI.md', 'First: @shared.md', 'Second: @./shared.md', 'Level a file: @a/GEMINI.md'),
    doc('repo/shared.md', 'Shared text.'),
    doc('repo/a/GEMINI.md', 'Level a, the cwd: @../shared.md'),
  ],
  cwd: 'repo/a',
});

fixture({
  name: 'imports-root-per-file',
  about: 'no marker anywhere: the import root is the importing file\'s own folder',
  peers: GEMINI,
  tree: [
    doc('repo/up.md', 'Above the cwd.'),
    doc('repo/a/GEMINI.md', 'Below: @sub/x.md', 'Above: @../up.md'),
    doc('repo/a/sub/x.md', 'In a subfolder of the file.'),
  ],
  cwd: 'repo/a',
});

fixture({
  name: 'imports-only',
  about: 'files that hold nothing but an import (no tag line): at offset 0, of an empty file, of a blank file',
  peers: GEMINI,
  tree: [
    ...git('repo'),
    raw('repo/GEMINI.md', '@notes.md\n'),
    doc('repo/notes.md', 'Notes, the whole of the root file.'),
    raw('repo/a/GEMINI.md', '  @empty.md  \n'),
    raw('repo/a/empty.md', ''),
    raw('repo/a/b/GEMINI.md', '\t@blank.md\r\n'),
    raw('repo/a/b/blank.md', '\n  \n'),
  ],
  cwd: 'repo/a/b',
});

fixture({
  name: 'imports-root-markers',
  about: 'the import root follows the configured markers (a .git that is not a marker does not count)',
  peers: GEMINI,
  settings: { markers: ['ROOT.marker'] },
  tree: [
    raw('repo/ROOT.marker', ''),
    doc('repo/top.md', 'At the marker root, above the inner .git.'),
    ...git('repo/pkg'),
    doc('repo/pkg/GEMINI.md', 'Up to the marker root: @../top.md'),
  ],
  cwd: 'repo/pkg',
});

fixture({
  name: 'imports-odd-specs',
  about: 'specs with percent escapes (decoded for the root check only), a #fragment, a CRLF line end',
  peers: GEMINI,
  tree: [
    doc('outside/notes.md', 'Outside the repository.'),
    ...git('repo'),
    doc('repo/GEMINI.md',
      'Literal percent name: @my%20notes.md',
      'Escaped dots, no such folder: @sub/%2e%2e/notes.md',
      'Escaped dots out: @a/%2e%2e/%2e%2e/outside/notes.md',
      'Fragment: @notes.md#intro',
      'CRLF: @notes.md\r',
      'End.'),
    doc('repo/my%20notes.md', 'A file whose name holds %20.'),
    doc('repo/notes.md', 'Notes.'),
  ],
  cwd: 'repo',
});

// ---------------------------------------------------------------- on access (Gemini)

// `accesses`: paths a tool touches after the session starts, in order. The
// recorder hands each one, as an absolute path spelled as given, to Gemini's
// MemoryContextManager.discoverContext with the workspace folders as the
// trusted roots (what tools/jit-context.js does for read_file & co.).

{
  const tree = [
    ...git('repo'),
    doc('repo/GEMINI.md', 'Root, loaded at startup.'),
    doc('repo/a/GEMINI.md', 'Level a, below the cwd.'),
    doc('repo/a/b/GEMINI.md', 'Level b, two below the cwd.'),
    raw('repo/a/b/file.ts', 'export {};\n'),
  ];
  fixture({
    name: 'access-two-levels',
    about: 'touching a file two levels below the cwd, with GEMINI.md at every level',
    peers: GEMINI,
    tree,
    cwd: 'repo',
    accesses: ['repo/a/b/file.ts'],
  });
  fixture({
    name: 'access-twice',
    about: 'touching the same file twice, then a missing file beside it, then its folder',
    peers: GEMINI,
    tree,
    cwd: 'repo',
    accesses: ['repo/a/b/file.ts', 'repo/a/b/file.ts', 'repo/a/b/new.ts', 'repo/a/b'],
  });
}

{
  const tree = [
    ...git('repo'),
    doc('repo/GEMINI.md', 'Root.'),
    doc('repo/x/GEMINI.md', 'Subtree x.'),
    doc('repo/x/y/GEMINI.md', 'Subtree x/y.'),
    doc('repo/z/GEMINI.md', 'Subtree z.'),
    doc('repo/z/w/GEMINI.md', 'Subtree z/w.'),
  ];
  fixture({
    name: 'access-siblings-xz',
    about: 'two sibling subtrees touched x first; then a shallower path in x (nothing new)',
    peers: GEMINI,
    tree,
    cwd: 'repo',
    accesses: ['repo/x/y/f.ts', 'repo/z/w/f.ts', 'repo/x/f.ts'],
  });
  fixture({
    name: 'access-siblings-zx',
    about: 'the same subtrees touched z first, the shallow path in x before the deep one',
    peers: GEMINI,
    tree,
    cwd: 'repo',
    accesses: ['repo/z/w/f.ts', 'repo/x/f.ts', 'repo/x/y/f.ts'],
  });
}

fixture({
  name: 'access-outside',
  about: 'touching paths outside the cwd (beside it, above the project, in the home folder), in it, and below it',
  peers: GEMINI,
  tree: [
    doc('GEMINI.md', 'Fixture root, above the project.'),
    doc('outside/GEMINI.md', 'Outside the repository.'),
    doc('home/.gemini/GEMINI.md', 'Gemini global.'),
    doc('home/proj/GEMINI.md', 'In $HOME, not a project.'),
    ...git('repo'),
    doc('repo/GEMINI.md', 'Root.'),
    doc('repo/a/GEMINI.md', 'Level a, the cwd.'),
    doc('repo/b/GEMINI.md', 'Level b, beside the cwd.'),
    doc('repo/b/c/GEMINI.md', 'Below b.'),
    doc('repo/a/d/GEMINI.md', 'Below the cwd: the only file loaded on access.'),
  ],
  cwd: 'repo/a',
  accesses: ['outside/f.ts', 'repo/b/c/f.ts', 'home/proj/f.ts', 'repo/f.ts', 'repo/a/f.ts', 'repo/a/d/f.ts'],
});

fixture({
  name: 'access-dotdot',
  about: 'touched paths spelled with ..: one that stays below the cwd, one that leaves it, one that leaves and comes back',
  peers: GEMINI,
  tree: [
    doc('outside/GEMINI.md', 'Outside the repository.'),
    ...git('repo'),
    doc('repo/GEMINI.md', 'Root, the cwd.'),
    doc('repo/a/GEMINI.md', 'Level a.'),
    doc('repo/b/GEMINI.md', 'Level b.'),
    doc('repo/b/c/GEMINI.md', 'Level b/c.'),
  ],
  cwd: 'repo',
  accesses: ['repo/a/../b/c/f.ts', 'repo/../outside/f.ts', 'repo/a/../../repo/a/f.ts'],
});

fixture({
  name: 'access-imports',
  about: 'GEMINI.md files below the cwd with imports; one of them was already imported at startup',
  peers: GEMINI,
  tree: [
    ...git('repo'),
    doc('repo/GEMINI.md', 'Root imports a file below: @pkg/GEMINI.md'),
    doc('repo/pkg/GEMINI.md', 'Package: @docs/pkg-notes.md and @../shared.md and @../../outside.md'),
    doc('repo/pkg/docs/pkg-notes.md', 'Package notes.'),
    doc('repo/shared.md', 'Shared, at the root.'),
    doc('outside.md', 'Above the repository.'),
    doc('repo/pkg/mod/GEMINI.md', 'Module: @../../shared.md', '```', '@../docs/pkg-notes.md', '```'),
  ],
  cwd: 'repo',
  accesses: ['repo/pkg/mod/main.ts'],
});

fixture({
  name: 'access-nested-git',
  about: 'a nested repository below the cwd: the on-access walk goes through it; its imports use its own root',
  peers: GEMINI,
  tree: [
    ...git('repo'),
    doc('repo/GEMINI.md', 'Outer root, the cwd.'),
    doc('repo/shared.md', 'Outer shared.'),
    doc('repo/lib/GEMINI.md', 'Nested root: @../shared.md and @own.md'),
    raw('repo/lib/.git', 'gitdir: ../.git/modules/lib\n'),
    doc('repo/lib/own.md', 'Nested own file.'),
    doc('repo/lib/src/GEMINI.md', 'Nested src.'),
  ],
  cwd: 'repo',
  accesses: ['repo/lib/src/f.ts'],
});

fixture({
  name: 'access-names-order',
  about: 'extra names on access: order inside one folder, a blank file, a link to a file loaded at startup',
  peers: GEMINI,
  settings: { extraNames: ['TEAM.md', 'AAA.md'] },
  tree: [
    ...git('repo'),
    doc('repo/GEMINI.md', 'Root GEMINI.'),
    doc('repo/TEAM.md', 'Root TEAM.'),
    doc('repo/d/GEMINI.md', 'd GEMINI.'),
    doc('repo/d/TEAM.md', 'd TEAM.'),
    doc('repo/d/AAA.md', 'd AAA.'),
    raw('repo/d/e/GEMINI.md', '\n  \n'),
    doc('repo/d/e/TEAM.md', 'e TEAM.'),
    link('repo/d/e/AAA.md', '../../GEMINI.md'),
  ],
  cwd: 'repo',
  accesses: ['repo/d/e/f.ts'],
});

fixture({
  name: 'access-deep-missing',
  about: 'a touched path whose folders do not exist yet; a touched folder that does',
  peers: GEMINI,
  tree: [
    ...git('repo'),
    doc('repo/GEMINI.md', 'Root.'),
    doc('repo/a/GEMINI.md', 'Level a.'),
    doc('repo/a/b/GEMINI.md', 'Level a/b, an existing folder touched as such.'),
  ],
  cwd: 'repo',
  accesses: ['repo/a/new/deeper/f.ts', 'repo/a/b'],
});

// ---------------------------------------------------------- Claude Code
// Claude Code is closed source; record.mjs observes `claude -p` through the
// requests it sends to a fake Messages API on 127.0.0.1 (README.md, "Claude
// Code"). These fixtures were first written from its documentation.

fixture({
  name: 'claude-memory-order',
  about: 'home CLAUDE.md and rules, a folder above the repository, root and cwd levels, .claude/CLAUDE.md, unscoped and scoped rules, CLAUDE.local.md',
  peers: CLAUDE,
  tree: [
    doc('home/.claude/CLAUDE.md', 'User memory.'),
    doc('home/.claude/rules/style.md', 'User rule.'),
    doc('CLAUDE.md', 'Above the repository.'),
    dir('repo/.git'),
    doc('repo/CLAUDE.md', 'Project memory.'),
    doc('repo/.claude/CLAUDE.md', 'Project memory in .claude.'),
    doc('repo/.claude/rules/general.md', 'Unscoped project rule.'),
    raw('repo/.claude/rules/ts.md', '---\npaths:\n  - "src/**/*.ts"\n---\n[repo/.claude/rules/ts.md]\nTypeScript rule.\n'),
    doc('repo/CLAUDE.local.md', 'Local project memory.'),
    doc('repo/AGENTS.md', 'Not read: a CLAUDE.md exists.'),
    doc('repo/a/CLAUDE.md', 'Level a.'),
    doc('repo/a/b/CLAUDE.md', 'Below the cwd: on access only.'),
  ],
  cwd: 'repo/a',
  accesses: ['repo/a/b/file.py', 'repo/src/app/main.ts'],
});

fixture({
  name: 'claude-agents-fallback',
  about: 'no CLAUDE.md at or above the cwd: AGENTS.md is read instead',
  peers: CLAUDE,
  tree: [
    dir('repo/.git'),
    doc('repo/AGENTS.md', 'Root AGENTS.'),
    doc('repo/a/AGENTS.md', 'Level a AGENTS.'),
  ],
  cwd: 'repo/a',
});

fixture({
  name: 'claude-imports',
  about: 'imports four hops deep, a fifth left as written, one in a code span, one leaving the project',
  peers: CLAUDE,
  tree: [
    dir('repo/.git'),
    doc('repo/CLAUDE.md', 'See @docs/one.md and `@docs/code.md`.'),
    doc('repo/docs/one.md', 'One @two.md'),
    doc('repo/docs/two.md', 'Two @three.md'),
    doc('repo/docs/three.md', 'Three @four.md'),
    doc('repo/docs/four.md', 'Four @five.md'),
    doc('repo/docs/five.md', 'Five.'),
    doc('repo/docs/code.md', 'Never imported.'),
    doc('outside/secret.md', 'Outside the project.'),
    doc('repo/a/CLAUDE.md', 'Level a @../../outside/secret.md'),
  ],
  cwd: 'repo/a',
});

fixture({
  name: 'claude-large-and-skills',
  about: 'a CLAUDE.md over 4 MiB is skipped; personal skills win over project ones; project skills from the cwd up to the root',
  peers: CLAUDE,
  tree: [
    dir('repo/.git'),
    big('repo/CLAUDE.md', 5 * 1024 * 1024),
    doc('repo/a/CLAUDE.md', 'Level a.'),
    skill('home/.claude/skills/deploy/SKILL.md', 'deploy', 'personal deploy'),
    skill('repo/.claude/skills/deploy/SKILL.md', 'deploy', 'project deploy, shadowed'),
    skill('repo/.claude/skills/lint/SKILL.md', 'lint', 'root lint'),
    skill('repo/a/.claude/skills/lint/SKILL.md', 'lint', 'cwd lint, nearer'),
    skill('repo/a/.claude/skills/test/SKILL.md', 'test', 'cwd test'),
  ],
  cwd: 'repo/a',
});

// ------------------------------------------------- what counts as blank

fixture({
  name: 'blank-bom-codex',
  about: 'Codex trims with Rust str::trim: a file holding only a BOM is text (the home override wins its slot, a root file spends 3 bytes of the budget), a NEL-only file is blank',
  peers: CODEX,
  settings: { maxBytes: 64 },
  tree: [
    raw('home/.codex/AGENTS.override.md', '\uFEFF'),
    doc('home/.codex/AGENTS.md', 'Home AGENTS, behind the BOM-only override.'),
    ...git('repo'),
    raw('repo/AGENTS.md', '\uFEFF'),
    raw('repo/a/AGENTS.override.md', '\u0085\n'),
    doc('repo/a/AGENTS.md', 'Level a, behind a NEL-only override that takes the slot.'),
    doc('repo/a/b/AGENTS.md', 'Level b: the budget left after the BOM decides where this is cut.'),
  ],
  cwd: 'repo/a/b',
});

fixture({
  name: 'blank-nel-gemini',
  about: 'Gemini trims with JavaScript trim: U+FEFF and U+3000 are white space, U+0085 is not (a NEL-only file is shown)',
  peers: GEMINI,
  tree: [
    raw('home/.gemini/GEMINI.md', '\uFEFF\n'),
    ...git('repo'),
    raw('repo/GEMINI.md', '\u0085'),
    raw('repo/a/GEMINI.md', '\u00A0\u3000\n\t'),
    doc('repo/a/b/GEMINI.md', 'Level b.'),
  ],
  cwd: 'repo/a/b',
});

fixture({
  name: 'sorted-utf16',
  about: 'Gemini sorts paths by UTF-16 code units: a name beyond U+FFFF sorts before a fullwidth one',
  peers: GEMINI,
  settings: { extraNames: ['\uFF41.md', '\u{1F600}.md', 'z.md'] },
  tree: [
    ...git('repo'),
    doc('repo/GEMINI.md', 'Root GEMINI.'),
    doc('repo/\uFF41.md', 'Fullwidth a (U+FF41).'),
    doc('repo/\u{1F600}.md', 'An astral name (U+1F600).'),
    doc('repo/z.md', 'Plain z.'),
  ],
  cwd: 'repo',
});

fixture({
  name: 'budget-zero',
  about: 'project_doc_max_bytes = 0: no project file at all; the home file still goes in',
  peers: CODEX,
  settings: { maxBytes: 0 },
  tree: [
    doc('home/.codex/AGENTS.md', 'Home AGENTS.'),
    ...git('repo'),
    doc('repo/AGENTS.md', 'Root AGENTS.'),
    doc('repo/a/AGENTS.md', 'Level a.'),
  ],
  cwd: 'repo/a',
});

fixture({
  name: 'skills-frontmatter-edges',
  about: 'a BOM before the opening fence (with LF and CRLF), trailing blanks on the opening fence, numbers and booleans as name and description',
  peers: BOTH,
  tree: [
    ...git('repo'),
    raw('repo/.agents/skills/bom/SKILL.md', '\uFEFF---\nname: bom\ndescription: A BOM before the fence.\n---\n[repo/.agents/skills/bom/SKILL.md]\n'),
    raw('repo/.agents/skills/bom-crlf/SKILL.md', '\uFEFF---\r\nname: bom-crlf\r\ndescription: A BOM and CRLF lines.\r\n---\r\n[repo/.agents/skills/bom-crlf/SKILL.md]\r\n'),
    raw('repo/.agents/skills/crlf/SKILL.md', '---\r\nname: crlf\r\ndescription: CRLF lines, no BOM.\r\n---\r\n[repo/.agents/skills/crlf/SKILL.md]\r\n'),
    raw('repo/.agents/skills/open-spaces/SKILL.md', '---  \nname: open-spaces\ndescription: Two spaces after the opening fence.\n---\n[repo/.agents/skills/open-spaces/SKILL.md]\n'),
    raw('repo/.agents/skills/close-spaces/SKILL.md', '---\nname: close-spaces\ndescription: Two spaces after the closing fence.\n---  \n[repo/.agents/skills/close-spaces/SKILL.md]\n'),
    skillFile('repo/.agents/skills/numeric/SKILL.md', ['name: 123', 'description: 42']),
    skillFile('repo/.agents/skills/floats/SKILL.md', ['name: floats', 'description: 1.50']),
    skillFile('repo/.agents/skills/boolean/SKILL.md', ['name: boolean', 'description: true']),
    skillFile('repo/.agents/skills/hex/SKILL.md', ['name: hex', 'description: 0x1F']),
  ],
  cwd: 'repo',
});

fixture({
  name: 'skills-codex-retry-null',
  about: 'frontmatter that is not YAML, as Codex retries it: a value spelled as YAML null (`null`, `~`) stays null, so a null name gives the folder\'s name',
  peers: ['codex'],
  tree: [
    ...git('repo'),
    raw('repo/.agents/skills/null-name/SKILL.md', '---\nname: null\ndescription: uses: a: colon\n---\n[repo/.agents/skills/null-name/SKILL.md]\n'),
    raw('repo/.agents/skills/tilde-name/SKILL.md', '---\nname: ~\ndescription: uses: a: colon\n---\n[repo/.agents/skills/tilde-name/SKILL.md]\n'),
    raw('repo/.agents/skills/upper-null/SKILL.md', '---\nname: NULL\ndescription: uses: a: colon\n---\n[repo/.agents/skills/upper-null/SKILL.md]\n'),
    raw('repo/.agents/skills/title-null/SKILL.md', '---\nname: Null\ndescription: uses: a: colon\n---\n[repo/.agents/skills/title-null/SKILL.md]\n'),
    raw('repo/.agents/skills/null-comment/SKILL.md', '---\nname: null # none\ndescription: uses: a: colon\n---\n[repo/.agents/skills/null-comment/SKILL.md]\n'),
    raw('repo/.agents/skills/nullish/SKILL.md', '---\nname: nullish\ndescription: null\nother: x: y\n---\n[repo/.agents/skills/nullish/SKILL.md]\n'),
    raw('repo/.agents/skills/true-name/SKILL.md', '---\nname: true\ndescription: uses: a: colon\n---\n[repo/.agents/skills/true-name/SKILL.md]\n'),
  ],
  cwd: 'repo',
});

fixture({
  name: 'skills-codex-retry',
  about: 'frontmatter that is not YAML, as Codex retries it: each plain value taken as text, block scalars, nested maps and quoted values still YAML',
  peers: ['codex'],
  tree: [
    ...git('repo'),
    raw('repo/.agents/skills/colon-twice/SKILL.md', '---\nname: colon-twice\ndescription: uses: a colon: twice\n---\n[repo/.agents/skills/colon-twice/SKILL.md]\n'),
    raw('repo/.agents/skills/comment/SKILL.md', '---\nname: comment\ndescription: text # a comment: here\n---\n[repo/.agents/skills/comment/SKILL.md]\n'),
    raw('repo/.agents/skills/quoted-name/SKILL.md', '---\nname: \'it\'\'s\'\ndescription: uses: a: twice\n---\n[repo/.agents/skills/quoted-name/SKILL.md]\n'),
    raw('repo/.agents/skills/flow-start/SKILL.md', '---\nname: flow-start\ndescription: [a: b\n---\n[repo/.agents/skills/flow-start/SKILL.md]\n'),
    raw('repo/.agents/skills/brace-start/SKILL.md', '---\nname: brace-start\ndescription: {a: b}: c\n---\n[repo/.agents/skills/brace-start/SKILL.md]\n'),
    raw('repo/.agents/skills/dash-start/SKILL.md', '---\nname: dash-start\ndescription: - a: b\n---\n[repo/.agents/skills/dash-start/SKILL.md]\n'),
    raw('repo/.agents/skills/anchor-start/SKILL.md', '---\nname: anchor-start\ndescription: &x a: b\n---\n[repo/.agents/skills/anchor-start/SKILL.md]\n'),
    raw('repo/.agents/skills/tag-start/SKILL.md', '---\nname: tag-start\ndescription: !!int a: b\n---\n[repo/.agents/skills/tag-start/SKILL.md]\n'),
    raw('repo/.agents/skills/inner-quote/SKILL.md', '---\nname: inner-quote\ndescription: he said "x": y\n---\n[repo/.agents/skills/inner-quote/SKILL.md]\n'),
    raw('repo/.agents/skills/backslash/SKILL.md', '---\nname: backslash\ndescription: a\\\\n: b\n---\n[repo/.agents/skills/backslash/SKILL.md]\n'),
    raw('repo/.agents/skills/nested-map/SKILL.md', '---\nname: nested-map\ndescription: uses: a: twice\nmetadata:\n  short-description: nested: too\n---\n[repo/.agents/skills/nested-map/SKILL.md]\n'),
    raw('repo/.agents/skills/block-after/SKILL.md', '---\nname: block-after\ndescription: |\n  Use when: deploying\n  More: lines\nother: x: y\n---\n[repo/.agents/skills/block-after/SKILL.md]\n'),
    raw('repo/.agents/skills/tab-cont/SKILL.md', '---\nname: tab-cont\ndescription: one two: three\n	four five\n---\n[repo/.agents/skills/tab-cont/SKILL.md]\n'),
    raw('repo/.agents/skills/space-cont/SKILL.md', '---\nname: space-cont\ndescription: one two: three\n  four five\n---\n[repo/.agents/skills/space-cont/SKILL.md]\n'),
    raw('repo/.agents/skills/no-space/SKILL.md', '---\nname: no-space\ndescription: x: y\nbroken:z\n---\n[repo/.agents/skills/no-space/SKILL.md]\n'),
    raw('repo/.agents/skills/quoted-goes-on/SKILL.md', '---\nname: quoted-goes-on\ndescription: "a": b\n---\n[repo/.agents/skills/quoted-goes-on/SKILL.md]\n'),
    raw('repo/.agents/skills/unclosed/SKILL.md', '---\nname: unclosed\ndescription: \'open: quote\n---\n[repo/.agents/skills/unclosed/SKILL.md]\n'),
    raw('repo/.agents/skills/dup-retry/SKILL.md', '---\nname: dup-retry\ndescription: a: b\ndescription: c: d\n---\n[repo/.agents/skills/dup-retry/SKILL.md]\n'),
  ],
  cwd: 'repo',
});

fixture({
  name: 'skills-fallback-readers',
  about: 'what each peer does when its YAML reading fails or gives no string: tab-indented block scalar, duplicate keys, a number name beside a quoted description, an opening fence with a leading space',
  peers: BOTH,
  tree: [
    ...git('repo'),
    raw('repo/.agents/skills/tab-block/SKILL.md', '---\nname: tab-block\ndescription: |\n\tline one\n\tline two\n---\n[repo/.agents/skills/tab-block/SKILL.md]\n'),
    raw('repo/.agents/skills/dup/SKILL.md', '---\nname: dup\ndescription: first\ndescription: second\n---\n[repo/.agents/skills/dup/SKILL.md]\n'),
    raw('repo/.agents/skills/quoted/SKILL.md', '---\nname: 7\ndescription: "quoted text"\n---\n[repo/.agents/skills/quoted/SKILL.md]\n'),
    raw('repo/.agents/skills/lead-space/SKILL.md', ' ---\nname: lead-space\ndescription: A space before the opening fence.\n---\n[repo/.agents/skills/lead-space/SKILL.md]\n'),
    raw('repo/.agents/skills/four-dashes/SKILL.md', '---\nname: four-dashes\ndescription: Closed by a line of four dashes?\n----\nmore: text\n---\n[repo/.agents/skills/four-dashes/SKILL.md]\n'),
  ],
  cwd: 'repo',
});

// ---------------------------------------------------------------- write

// Issue 51: classes a third set of recorded trees found.
fixture({
  name: 'budget-bom-text-codex',
  about: 'a BOM before text, the budget ending inside the text: Codex budgets the raw bytes (the BOM is three of them)',
  peers: CODEX,
  settings: { maxBytes: 53 },
  tree: [
    ...git('repo'),
    raw('repo/AGENTS.md', '\uFEFF[repo/AGENTS.md]\n' + prose(120, 'bom') + '\n'),
  ],
  cwd: 'repo',
});

fixture({
  name: 'budget-bom-two-codex',
  about: 'a BOM file fits whole, the next file is cut by what is left: the BOM bytes count in the first',
  peers: CODEX,
  settings: { maxBytes: 90 },
  tree: [
    ...git('repo'),
    raw('repo/AGENTS.md', '\uFEFF[repo/AGENTS.md]\nRoot.\n'),
    raw('repo/a/AGENTS.md', '[repo/a/AGENTS.md]\n' + prose(200, 'level') + '\n'),
  ],
  cwd: 'repo/a',
});

fixture({
  name: 'budget-crlf-codex',
  about: 'CRLF text and a leading blank CRLF line, the budget ending inside the text: Codex budgets the raw bytes',
  peers: CODEX,
  settings: { maxBytes: 61 },
  tree: [
    ...git('repo'),
    raw('repo/AGENTS.md', '\r\n[repo/AGENTS.md]\r\nline one alpha\r\nline two bravo\r\nline three charlie\r\nline four delta\r\n'),
  ],
  cwd: 'repo',
});

fixture({
  name: 'budget-crlf-two-codex',
  about: 'a CRLF file with trailing blank lines fits whole, the next is cut by what is left',
  peers: CODEX,
  settings: { maxBytes: 80 },
  tree: [
    ...git('repo'),
    raw('repo/AGENTS.md', '[repo/AGENTS.md]\r\nRoot line.\r\n\r\n\r\n'),
    raw('repo/a/AGENTS.md', '[repo/a/AGENTS.md]\r\n' + prose(120, 'crlf') + '\r\n'),
  ],
  cwd: 'repo/a',
});

fixture({
  name: 'skills-claude-names',
  about: 'Claude Code: a name with upper-case letters (listed as `folder (name)`), a duplicated key (its last value)',
  peers: CLAUDE,
  tree: [
    dir('repo/.git'),
    doc('repo/CLAUDE.md', 'Root.'),
    skillFile('repo/.claude/skills/upper/SKILL.md', ['name: Upper-Case', 'description: An upper-case name.']),
    skillFile('repo/.claude/skills/dupkey/SKILL.md', ['name: dupkey', 'description: The first value.', 'description: The last value.']),
    skillFile('repo/.claude/skills/plain/SKILL.md', ['name: plain', 'description: A plain skill.']),
  ],
  cwd: 'repo',
});

fixture({
  name: 'skills-claude-description-fallback',
  about: 'Claude Code: a skill whose description is a list, or missing, is described by its body',
  peers: CLAUDE,
  tree: [
    dir('repo/.git'),
    doc('repo/CLAUDE.md', 'Root.'),
    skillFile('repo/.claude/skills/listdesc/SKILL.md', ['name: listdesc', 'description:', '  - first item', '  - second item'], 'Body first line.'),
    skillFile('repo/.claude/skills/nodesc/SKILL.md', ['name: nodesc'], 'Body of nodesc.\nSecond line of the paragraph.\n\nSecond paragraph.'),
    skillFile('repo/.claude/skills/plain/SKILL.md', ['name: plain', 'description: A plain skill.']),
  ],
  cwd: 'repo',
});

fixture({
  name: 'skills-claude-description-body-line',
  about: 'Claude Code: a description that is missing, blank, null, a map or YAML that does not parse is the body\'s first non-blank line, trimmed, a `#` heading mark taken off, cut to 97 characters and `...` past 100; a number or boolean is its JavaScript text',
  peers: CLAUDE,
  tree: [
    dir('repo/.git'),
    doc('repo/CLAUDE.md', 'Root.'),
    raw('repo/.claude/skills/heading/SKILL.md', '---\nname: heading\n---\n\n  \n  #   A heading  line  \nNext line.\n'),
    raw('repo/.claude/skills/nospace/SKILL.md', '---\nname: nospace\n---\n##NoSpace heading\n'),
    raw('repo/.claude/skills/hashonly/SKILL.md', '---\nname: hashonly\n---\n#   \nNext line.\n'),
    raw('repo/.claude/skills/longline/SKILL.md', `---\nname: longline\n---\n${'abcdefghij'.repeat(15)}\n`),
    raw('repo/.claude/skills/hundred/SKILL.md', `---\nname: hundred\n---\n${'0123456789'.repeat(10)}\n`),
    raw('repo/.claude/skills/blankdesc/SKILL.md', '---\nname: blankdesc\ndescription: "   "\n---\nBody of blankdesc.\n'),
    raw('repo/.claude/skills/nulldesc/SKILL.md', '---\nname: nulldesc\ndescription: null\n---\nBody of nulldesc.\n'),
    raw('repo/.claude/skills/tildedesc/SKILL.md', '---\nname: tildedesc\ndescription: ~\n---\nBody of tildedesc.\n'),
    raw('repo/.claude/skills/mapdesc/SKILL.md', '---\nname: mapdesc\ndescription:\n  a: b\n---\nBody of mapdesc.\n'),
    raw('repo/.claude/skills/notyaml/SKILL.md', '---\nname: notyaml\ndescription: |\n\tTab-indented block.\n---\nBody of notyaml.\n'),
    raw('repo/.claude/skills/tabline/SKILL.md', '---\nname: tabline\n---\n\tA\tline with\ttabs\t\n'),
    raw('repo/.claude/skills/crlfbody/SKILL.md', '---\r\nname: crlfbody\r\n---\r\n\r\n# CRLF heading\r\nNext.\r\n'),
    raw('repo/.claude/skills/emptybody/SKILL.md', '---\nname: emptybody\n---\n\n  \n'),
    raw('repo/.claude/skills/number/SKILL.md', '---\nname: number\ndescription: 42\n---\nBody of number.\n'),
    raw('repo/.claude/skills/float/SKILL.md', '---\nname: float\ndescription: 1.10\n---\nBody of float.\n'),
    raw('repo/.claude/skills/hex/SKILL.md', '---\nname: hex\ndescription: 0x1F\n---\nBody of hex.\n'),
    raw('repo/.claude/skills/exp/SKILL.md', '---\nname: exp\ndescription: 1e3\n---\nBody of exp.\n'),
    raw('repo/.claude/skills/bool/SKILL.md', '---\nname: bool\ndescription: false\n---\nBody of bool.\n'),
  ],
  cwd: 'repo',
});

fixture({
  name: 'skills-claude-yaml-retry',
  about: 'Claude Code: a frontmatter its YAML parser refuses is read again with each value holding a special character quoted (not on a CRLF line) and tabs opening a line made spaces; what that does not read is described by the body',
  peers: CLAUDE,
  tree: [
    dir('repo/.git'),
    doc('repo/CLAUDE.md', 'Root.'),
    raw('repo/.claude/skills/colon/SKILL.md', '---\nname: colon\ndescription: uses: two: colons\n---\nBody of colon.\n'),
    raw('repo/.claude/skills/crlfcolon/SKILL.md', '---\r\nname: crlfcolon\r\ndescription: uses: two: colons\r\n---\r\nBody of crlfcolon.\r\n'),
    raw('repo/.claude/skills/tabcont/SKILL.md', '---\nname: tabcont\ndescription: first words\n\tcontinued by a tab\nmetadata:\n  owner: team\n  tags: [a, b]\n---\nBody of tabcont.\n'),
    raw('repo/.claude/skills/tabblock/SKILL.md', '---\nname: tabblock\ndescription: >\n\tfolded by\n\ttabs\n---\nBody of tabblock.\n'),
    raw('repo/.claude/skills/crlftabblock/SKILL.md', '---\r\nname: crlftabblock\r\ndescription: >\r\n\tfolded by\r\n\ttabs\r\n---\r\nBody of crlftabblock.\r\n'),
    raw('repo/.claude/skills/unclosed/SKILL.md', '---\nname: unclosed\ndescription: [unclosed list\n---\nBody of unclosed.\n'),
    raw('repo/.claude/skills/hashval/SKILL.md', '---\nname: hashval\ndescription: before # after: too\n---\nBody of hashval.\n'),
    raw('repo/.claude/skills/quoteinside/SKILL.md', '---\nname: quoteinside\ndescription: say "hi": now\n---\nBody of quoteinside.\n'),
    raw('repo/.claude/skills/digitkey/SKILL.md', '---\nname: digitkey\nk1: a: b\ndescription: Digit key.\n---\nBody of digitkey.\n'),
    raw('repo/.claude/skills/listval/SKILL.md', '---\nname: listval\ntags: [a, b]\ndescription: a: b\n---\nBody of listval.\n'),
  ],
  cwd: 'repo',
});

fixture({
  name: 'skills-claude-folder-names',
  about: 'Claude Code: a skill folder\'s name need not be lower-case words: upper case, `_`, accents, a space or a colon inside are listed; a leading colon, two spaces, a trailing space or `<` are not',
  peers: CLAUDE,
  tree: [
    dir('repo/.git'),
    doc('repo/CLAUDE.md', 'Root.'),
    skill('repo/.claude/skills/Tool/SKILL.md', 'Tool', 'Upper-case folder.'),
    skill('repo/.claude/skills/x_y/SKILL.md', 'x_y', 'Underscore folder.'),
    skill('repo/.claude/skills/café/SKILL.md', 'café', 'Accented folder.'),
    skillFile('repo/.claude/skills/two words/SKILL.md', ['description: Spaced folder.']),
    skillFile('repo/.claude/skills/a:b/SKILL.md', ['description: Colon inside.']),
    skillFile('repo/.claude/skills/:lead/SKILL.md', ['description: Leading colon.']),
    skillFile('repo/.claude/skills/two  spaces/SKILL.md', ['description: Two spaces.']),
    skillFile('repo/.claude/skills/trail /SKILL.md', ['description: Trailing space.']),
    skillFile('repo/.claude/skills/a<b/SKILL.md', ['description: Angle bracket.']),
    skillFile('repo/.claude/skills/dots.in.name/SKILL.md', ['description: Dots.']),
    skillFile(`repo/.claude/skills/${'l'.repeat(100)}/SKILL.md`, ['description: A long folder name.']),
    skill('repo/.claude/skills/plain/SKILL.md', 'plain', 'A plain skill.'),
  ],
  cwd: 'repo',
});

fixture({
  name: 'claude-imports-home',
  about: 'Claude Code: @~/ imports, and imports from the user CLAUDE.md relative to its own folder',
  peers: CLAUDE,
  tree: [
    dir('repo/.git'),
    doc('home/.claude/CLAUDE.md', 'User memory @./rules.md and @~/notes.md'),
    doc('home/.claude/rules.md', 'User rules.'),
    doc('home/notes.md', 'Home notes.'),
    doc('repo/CLAUDE.md', 'Project @~/notes.md'),
  ],
  cwd: 'repo',
});

fixture({
  name: 'claude-imports-home-roots',
  about: 'Claude Code: the user CLAUDE.md imports wherever the cwd is (its folder, the home above it, @~/), each file once; a project file\'s @~/ import lies outside the cwd',
  peers: CLAUDE,
  tree: [
    dir('repo/.git'),
    doc('home/.claude/CLAUDE.md', 'Sub @inc/part.md and up @../up.md and gone @missing.md', 'Again @inc/part.md then @~/notes.md and @~/notes.md'),
    doc('home/.claude/inc/part.md', 'Part, back to @../CLAUDE.md'),
    doc('home/up.md', 'Up in the home.'),
    doc('home/notes.md', 'Notes, with @./more.md and @~/.claude/inc/part.md'),
    doc('home/more.md', 'More home notes.'),
    doc('repo/app/CLAUDE.md', 'Project @~/notes.md and @shared.md and @shared.md'),
    doc('repo/app/shared.md', 'Shared.'),
  ],
  cwd: 'repo/app',
});

fixture({
  name: 'claude-imports-home-outside',
  about: 'Claude Code: the user CLAUDE.md imports a file outside the user\'s home (read by Claude Code; refused here, outside every root)',
  peers: CLAUDE,
  tree: [
    dir('repo/.git'),
    doc('home/.claude/CLAUDE.md', 'User @../../outside/secret.md'),
    doc('outside/secret.md', 'Outside every root.'),
    doc('repo/CLAUDE.md', 'Project.'),
  ],
  cwd: 'repo',
});

fixture({
  name: 'claude-imports-home-into-repo',
  about: 'Claude Code: the user CLAUDE.md imports a file of the repository inside the home, by @~/ and by a relative path (read by Claude Code; refused here: the repository\'s bytes are not taken in as the user\'s)',
  peers: CLAUDE,
  tree: [
    doc('home/.claude/CLAUDE.md', 'User @~/proj/notes.md and @../proj/notes.md'),
    dir('home/proj/.git'),
    doc('home/proj/notes.md', 'Repository notes.'),
    doc('home/proj/CLAUDE.md', 'Project.'),
  ],
  cwd: 'home/proj',
});

fixture({
  name: 'claude-imports-tilde-cwd-home',
  about: 'Claude Code: with the cwd at the home, a project CLAUDE.md\'s @~/ import lies inside the cwd and is read',
  peers: CLAUDE,
  tree: [
    dir('home/.git'),
    doc('home/CLAUDE.md', 'Home project @~/notes.md and @~/../outside/other.md'),
    doc('home/notes.md', 'Notes in the cwd.'),
    doc('outside/other.md', 'Above the cwd.'),
  ],
  cwd: 'home',
});

fixture({
  name: 'claude-imports-above-cwd',
  about: 'Claude Code: imports in files above the cwd (the repository root, the folder above it) are refused outside the cwd whether or not the file exists, and read inside it',
  peers: CLAUDE,
  tree: [
    doc('repo/CLAUDE.md', 'Above the repository @missing.md @x/notes.md'),
    dir('repo/x/.git'),
    doc('repo/x/CLAUDE.md', 'Root @missing.md @notes.md @a/b/here.md'),
    doc('repo/x/notes.md', 'Root notes, outside the cwd.'),
    doc('repo/x/a/b/here.md', 'Inside the cwd.'),
  ],
  cwd: 'repo/x/a/b',
});

fixture({
  name: 'claude-agents-above-nested-repo',
  about: 'Claude Code: a folder holding only AGENTS.md above a nested repository whose levels hold CLAUDE.md, and one holding both names',
  peers: CLAUDE,
  tree: [
    dir('repo/.git'),
    doc('repo/AGENTS.md', 'Outer agents only.'),
    doc('repo/mid/AGENTS.md', 'Mid agents.'),
    doc('repo/mid/CLAUDE.md', 'Mid claude.'),
    dir('repo/mid/inner/.git'),
    doc('repo/mid/inner/CLAUDE.md', 'Inner claude.'),
  ],
  cwd: 'repo/mid/inner',
});

fixture({
  name: 'claude-agents-only-above-nested-repo',
  about: 'Claude Code: no CLAUDE.md anywhere; AGENTS.md in a folder above a nested repository and in the nested repository',
  peers: CLAUDE,
  tree: [
    dir('repo/.git'),
    doc('repo/AGENTS.md', 'Outer agents only.'),
    dir('repo/mid/inner/.git'),
    doc('repo/mid/inner/AGENTS.md', 'Inner agents.'),
  ],
  cwd: 'repo/mid/inner',
});

fixture({
  name: 'claude-unmarked-levels',
  about: 'Claude Code: no repository above the cwd: the rules, AGENTS.md and .claude/skills of every folder above it are read (instructions.compat.unmarked-levels); a blank CLAUDE.md keeps no AGENTS.md out (fallback-unless)',
  peers: CLAUDE,
  tree: [
    doc('repo/.claude/rules/outer.md', 'Outer rule.'),
    { path: 'repo/CLAUDE.md', text: ' \n\t\n' },
    doc('repo/AGENTS.md', 'Outer agents.'),
    skill('repo/.claude/skills/outer-skill/SKILL.md', 'outer-skill', 'the outer folder'),
    doc('repo/a/.claude/rules/mid.md', 'Middle rule.'),
    skill('repo/a/.claude/skills/mid-skill/SKILL.md', 'mid-skill', 'the middle folder'),
    doc('repo/a/b/AGENTS.md', 'Cwd agents.'),
  ],
  cwd: 'repo/a/b',
});

fixture({
  name: 'claude-rules-above-nested-repo',
  about: 'Claude Code: rules above a nested repository root are read (ancestor-files), its skills are not; a CLAUDE.local.md with text keeps AGENTS.md out',
  peers: CLAUDE,
  tree: [
    dir('repo/.git'),
    doc('repo/.claude/rules/outer.md', 'Outer rule.'),
    skill('repo/.claude/skills/outer-skill/SKILL.md', 'outer-skill', 'the outer repository'),
    doc('repo/mid/.claude/rules/mid.md', 'Middle rule.'),
    doc('repo/mid/AGENTS.md', 'Middle agents.'),
    dir('repo/mid/inner/.git'),
    doc('repo/mid/inner/CLAUDE.local.md', 'Inner local.'),
    doc('repo/mid/inner/AGENTS.md', 'Inner agents.'),
  ],
  cwd: 'repo/mid/inner',
});

fixture({
  name: 'claude-on-access-local-first',
  about: 'Claude Code: loaded on access, a folder\'s CLAUDE.local.md comes before its .claude/rules (instructions.compat.access-level-files)',
  peers: CLAUDE,
  tree: [
    dir('repo/.git'),
    doc('repo/CLAUDE.md', 'Root.'),
    doc('repo/pkg/CLAUDE.md', 'Package.'),
    doc('repo/pkg/CLAUDE.local.md', 'Package local.'),
    doc('repo/pkg/.claude/rules/style.md', 'Package rule.'),
  ],
  cwd: 'repo',
  accesses: ['repo/pkg/main.ts'],
});

fixture({
  name: 'skills-codex-bare-git',
  about: 'Codex: under an empty .git folder (a marker, no HEAD: no repository) which levels of .codex/skills and .agents/skills are read (skills.compat.levels-need-repository)',
  peers: CODEX,
  tree: [
    dir('repo/.git'),
    doc('repo/AGENTS.md', 'Root.'),
    skill('repo/.codex/skills/root-codex/SKILL.md', 'root-codex', 'root .codex'),
    skill('repo/.agents/skills/root-agents/SKILL.md', 'root-agents', 'root .agents'),
    skill('repo/a/.codex/skills/mid-codex/SKILL.md', 'mid-codex', 'middle .codex'),
    skill('repo/a/.agents/skills/mid-agents/SKILL.md', 'mid-agents', 'middle .agents'),
    skill('repo/a/b/.codex/skills/cwd-codex/SKILL.md', 'cwd-codex', 'cwd .codex'),
    skill('repo/a/b/.agents/skills/cwd-agents/SKILL.md', 'cwd-agents', 'cwd .agents'),
  ],
  cwd: 'repo/a/b',
});

fixture({
  name: 'skills-codex-head-git',
  about: 'Codex: the same tree as skills-codex-bare-git with a HEAD in .git: every level of .codex/skills and .agents/skills',
  peers: CODEX,
  tree: [
    ...git('repo'),
    doc('repo/AGENTS.md', 'Root.'),
    skill('repo/.codex/skills/root-codex/SKILL.md', 'root-codex', 'root .codex'),
    skill('repo/.agents/skills/root-agents/SKILL.md', 'root-agents', 'root .agents'),
    skill('repo/a/.codex/skills/mid-codex/SKILL.md', 'mid-codex', 'middle .codex'),
    skill('repo/a/.agents/skills/mid-agents/SKILL.md', 'mid-agents', 'middle .agents'),
    skill('repo/a/b/.codex/skills/cwd-codex/SKILL.md', 'cwd-codex', 'cwd .codex'),
    skill('repo/a/b/.agents/skills/cwd-agents/SKILL.md', 'cwd-agents', 'cwd .agents'),
  ],
  cwd: 'repo/a/b',
});

fixture({
  name: 'skills-gemini-keep-blank',
  about: 'Gemini: a `|+` or `>+` description block ending in blank lines before the closing `---`: its YAML text ends before the line break ahead of the fence, so one blank line fewer is kept',
  peers: GEMINI,
  tree: [
    ...git('repo'),
    raw('repo/.agents/skills/keep-one/SKILL.md', '---\nname: keep-one\ndescription: |+\n  kept block\n\n---\n[repo/.agents/skills/keep-one/SKILL.md]\n'),
    raw('repo/.agents/skills/keep-two/SKILL.md', '---\nname: keep-two\ndescription: |+\n  kept block\n\n\n---\n[repo/.agents/skills/keep-two/SKILL.md]\n'),
    raw('repo/.agents/skills/keep-none/SKILL.md', '---\nname: keep-none\ndescription: |+\n  kept block\n---\n[repo/.agents/skills/keep-none/SKILL.md]\n'),
    raw('repo/.agents/skills/fold-one/SKILL.md', '---\nname: fold-one\ndescription: >+\n  folded block\n\n---\n[repo/.agents/skills/fold-one/SKILL.md]\n'),
    raw('repo/.agents/skills/clip-one/SKILL.md', '---\nname: clip-one\ndescription: |\n  clipped block\n\n---\n[repo/.agents/skills/clip-one/SKILL.md]\n'),
    raw('repo/.agents/skills/crlf-keep/SKILL.md', '---\r\nname: crlf-keep\r\ndescription: |+\r\n  kept block\r\n\r\n---\r\n[repo/.agents/skills/crlf-keep/SKILL.md]\r\n'),
    raw('repo/.agents/skills/keep-then-key/SKILL.md', '---\nname: keep-then-key\ndescription: |+\n  kept block\n\nlicense: MIT\n\n---\n[repo/.agents/skills/keep-then-key/SKILL.md]\n'),
  ],
  cwd: 'repo',
});

fixture({
  name: 'skills-gemini-name-dashes',
  about: 'Gemini: each of `:\\/<>*?"|` in a skill name turned into `-` (skills.compat.name-dash-chars)',
  peers: GEMINI,
  tree: [
    ...git('repo'),
    skill('repo/.agents/skills/colon/SKILL.md', 'ns:colon', 'a colon in the name'),
    skill('repo/.agents/skills/back/SKILL.md', 'back\\slash', 'a backslash in the name'),
    skill('repo/.agents/skills/angle/SKILL.md', 'a<b>c', 'angle brackets in the name'),
    skill('repo/.agents/skills/ask/SKILL.md', 'what?now', 'a question mark in the name'),
    skill('repo/.agents/skills/pipe/SKILL.md', 'left|right', 'a pipe in the name'),
    skillFile('repo/.agents/skills/dq/SKILL.md', ['name: "say \\"hi\\""', 'description: an escaped double quote in the name']),
    skill('repo/.agents/skills/star/SKILL.md', 'many**stars', 'stars in the name'),
    skill('home/.gemini/skills/user/SKILL.md', 'user/tool', 'a slash in a user skill name'),
    skill('repo/.agents/skills/kept/SKILL.md', 'kept.name_ok+x', 'characters kept as written'),
  ],
  cwd: 'repo',
});

// Trees the generative differential found and shrank (tests/compat/found):
// regular fixtures from here on, recorded into expected/ like the others.
const foundDir = join(dirname(fileURLToPath(import.meta.url)), 'found', 'fixtures');
for (const file of readdirSync(foundDir).filter((n) => n.endsWith('.json')).sort()) {
  fixture(JSON.parse(readFileSync(join(foundDir, file), 'utf8')));
}

for (const f of fixtures) {
  for (const e of f.tree) {
    if (e.path.split('/').includes('..') || e.path.startsWith('/')) throw new Error(`${f.name}: bad path ${e.path}`);
  }
  // Touched paths may hold `..` (on purpose), never an absolute path.
  for (const a of f.accesses ?? []) {
    if (typeof a !== 'string' || a === '' || a.startsWith('/')) throw new Error(`${f.name}: bad access ${a}`);
  }
}

mkdirSync(outDir, { recursive: true });
for (const old of readdirSync(outDir)) if (old.endsWith('.json')) rmSync(join(outDir, old));
for (const f of fixtures) {
  writeFileSync(join(outDir, `${f.name}.json`), JSON.stringify(f, null, 2) + '\n');
}
console.log(`wrote ${fixtures.length} fixtures to ${outDir}`);
for (const f of fixtures) console.log(`  ${f.name.padEnd(22)} [${f.peers.join(',')}] ${f.about}`);
