#!/usr/bin/env node
// Writes the differential-test fixtures into tests/compat/fixtures/*.json.
//
// Every fixture is a small, deterministic tree (see README.md for the format).
// Edit this file, not the JSON: `node tests/compat/gen-fixtures.mjs` rewrites
// the whole folder (stale fixtures are removed) and prints what it wrote.
//
// No FIFOs: Gemini CLI blocks forever reading one, so a FIFO fixture could not
// be recorded. Nothing here needs root.

import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const outDir = join(here, 'fixtures');

const BOTH = ['codex', 'gemini'];
const CODEX = ['codex'];
const GEMINI = ['gemini'];

// ---------------------------------------------------------------- entries

/** A directory (also used for markers such as `.git`). */
const dir = (path) => ({ path, dir: true });

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
  });
}

fixture({
  name: 'basic-chain',
  about: 'global file plus one instruction file per level from the .git root down to the cwd',
  peers: BOTH,
  tree: [
    doc('home/.codex/AGENTS.md', 'Global Codex notes.'),
    doc('home/.gemini/GEMINI.md', 'Global Gemini notes.'),
    dir('repo/.git'),
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
    dir('repo/.git'),
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
    dir('repo/.git'),
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
    dir('repo/.git'),
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
    dir('repo/.git'),
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
    dir('repo/.git'),
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
    dir('repo/.git'),
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
    dir('repo/.git'),
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
    dir('repo/.git'),
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
    dir('repo/.git'),
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
    dir('repo/.git'),
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
    tree: [dir('repo/.git'), raw(path, text), raw('repo/GEMINI.md', text.replace(path, 'repo/GEMINI.md'))],
    cwd: 'repo',
  });
}

fixture({
  name: 'markers-empty',
  about: 'an empty marker list: the cwd alone, even inside a .git repository',
  peers: BOTH,
  settings: { markers: [] },
  tree: [
    dir('repo/.git'),
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
    dir('repo/pkg/.git'),
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
    dir('repo/.git'),
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
    dir('repo/.git'),
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
    dir('repo/.git'),
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
    dir('repo/.git'),
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
    dir('repo/.git'),
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
    dir('repo/.git'),
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
      dir('repo/.git'),
      ...sources.map((s) => skill(`${s}/deploy/SKILL.md`, 'deploy', `deploy, from ${s}`)),
      ...sources.map((s, i) => skill(`${s}/only-${i}/SKILL.md`, `only-${i}`, `unique to ${s}`)),
    ],
    cwd: 'repo/a/b',
  });
  fixture({
    name: 'skills-cwd-codex-dir',
    about: 'the cwd has its own .codex/skills and .gemini/skills; the root has .codex/skills too',
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
    dir('repo/.git'),
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
      dir('repo/.git'),
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
    dir('repo/.git'),
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
    dir('repo/.git'),
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
    dir('repo/.git'),
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

// ---------------------------------------------------------------- write

for (const f of fixtures) {
  for (const e of f.tree) {
    if (e.path.split('/').includes('..') || e.path.startsWith('/')) throw new Error(`${f.name}: bad path ${e.path}`);
  }
}

mkdirSync(outDir, { recursive: true });
for (const old of readdirSync(outDir)) if (old.endsWith('.json')) rmSync(join(outDir, old));
for (const f of fixtures) {
  writeFileSync(join(outDir, `${f.name}.json`), JSON.stringify(f, null, 2) + '\n');
}
console.log(`wrote ${fixtures.length} fixtures to ${outDir}`);
for (const f of fixtures) console.log(`  ${f.name.padEnd(22)} [${f.peers.join(',')}] ${f.about}`);
