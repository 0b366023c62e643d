// Times Gemini CLI's own context loader in process (npm
// @google/gemini-cli-core): its memory refresh (what
// MemoryContextManager.refresh does: global and environment memory paths,
// dedup by file identity, read, concatenate), with AGENTS.md and CLAUDE.md
// as its context file names, and its skill discovery
// (SkillManager.discoverSkills, which reads .agents/skills in the
// workspace). Run from the peers cache dir (where node_modules is), with
// HOME set to the fixture's home. Prints the median of N runs in ms, and
// what it found.
//
// usage: node gemini.mjs CWD REPO_ROOT [N]
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import path from 'node:path';

// Resolved from the working directory (the peers cache), not from here.
const require = createRequire(path.join(process.cwd(), 'x.js'));
const core = await import(pathToFileURL(require.resolve('@google/gemini-cli-core')).href);
const {
  getGlobalMemoryPaths,
  getEnvironmentMemoryPaths,
  deduplicatePathsByFileIdentity,
  readGeminiMdFiles,
  categorizeAndConcatenate,
  setGeminiMdFilename,
  SkillManager,
  Storage,
} = core;

const [cwd, repo, nArg] = process.argv.slice(2);
const n = Number(nArg ?? 20);
setGeminiMdFilename(['AGENTS.md', 'CLAUDE.md']);

async function once() {
  const [global, project] = await Promise.all([
    getGlobalMemoryPaths(),
    getEnvironmentMemoryPaths([cwd], ['.git']),
  ]);
  const all = Array.from(new Set([...global, ...project]));
  const { paths } = await deduplicatePathsByFileIdentity(all);
  const contents = await readGeminiMdFiles(paths, 'tree', ['.git']);
  const map = new Map(contents.map((c) => [c.filePath, c]));
  const memory = categorizeAndConcatenate(
    { global, extension: [], project, userProjectMemory: [] },
    map,
  );
  const skills = new SkillManager();
  await skills.discoverSkills(new Storage(repo), [], true);
  return { files: paths.length, memory: memory, skills: skills.getAllSkills().length };
}

const first = await once();
const times = [];
for (let i = 0; i < n; i++) {
  const t = process.hrtime.bigint();
  await once();
  times.push(Number(process.hrtime.bigint() - t) / 1e6);
}
times.sort((a, b) => a - b);
const bytes = JSON.stringify(first.memory).length;
console.log(`${times[Math.floor(times.length / 2)].toFixed(3)} files=${first.files} skills=${first.skills} memory_bytes=${bytes}`);
