// The swap of Lisa's loader, exactly as the READMEs give it (issue 49, item
// 10): the marked blocks, written as Lisa's src/instructions/chain.ts and
// src/skills/discovery.ts into a scratch copy of Lisa's layout, compiled
// with TypeScript under `strict` against the package's types (resolved
// through node_modules, as in Lisa), and run as Lisa's cloud build runs
// them: one process, requests of several users each inside Lisa's
// `homeScope`. Each user sees their own home skills, never another's nor the
// operator's; outside a scope the global home's, as Lisa shows them. With
// LISA_CONTEXT_STATE set, nothing is written in any home.
//
// Lisa's `src/paths.ts` (its home seam) is taken from a clone when
// LISA_GIT names one (at LISA_REV, default 6c210d7), else a stand-in with
// the same four functions: `homeScope` (an AsyncLocalStorage),
// `lisaGlobalHome()` ($LISA_HOME, else ~/.lisa), `lisaHome()` (the scope's
// home, else the global one) and `homeForUid(uid)` (<global>/users/<uid>).
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

import ts from "typescript";

import { documentedSwap } from "../scripts/lisa-swap.mjs";
import { write, addSkill } from "./helpers.mjs";

const pkg = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

const STAND_IN_PATHS = `import { AsyncLocalStorage } from "node:async_hooks";
import os from "node:os";
import path from "node:path";

export const homeScope = new AsyncLocalStorage<string>();

export function lisaGlobalHome(): string {
  return process.env.LISA_HOME ?? path.join(os.homedir(), ".lisa");
}

export function lisaHome(): string {
  return homeScope.getStore() ?? lisaGlobalHome();
}

export function homeForUid(uid: string): string {
  return path.join(lisaGlobalHome(), "users", uid);
}
`;

/** Lisa's src/paths.ts from LISA_GIT, else the stand-in. */
function pathsSource() {
  const clone = process.env.LISA_GIT;
  if (!clone) return STAND_IN_PATHS;
  const rev = process.env.LISA_REV ?? "6c210d7";
  return execFileSync("git", ["-C", clone, "show", `${rev}:src/paths.ts`], { encoding: "utf8" });
}

/**
 * A scratch copy of Lisa's layout holding src/paths.ts and the swap,
 * compiled to dist/ (type errors fail the test); the modules, imported.
 */
async function buildLisa() {
  const dir = mkdtempSync(path.join(tmpdir(), "lisa-swap-"));
  writeFileSync(path.join(dir, "package.json"), '{ "name": "lisa", "private": true, "type": "module" }\n');
  mkdirSync(path.join(dir, "node_modules"));
  symlinkSync(pkg, path.join(dir, "node_modules", "lisa-context"), "dir");
  write(path.join(dir, "src", "paths.ts"), pathsSource());
  const files = [path.join(dir, "src", "paths.ts")];
  const swap = documentedSwap();
  assert.deepEqual(
    swap.map(([rel]) => rel),
    ["src/instructions/chain.ts", "src/skills/discovery.ts"],
    "the swap is Lisa's two loader files",
  );
  for (const [rel, text] of swap) {
    write(path.join(dir, rel), text);
    files.push(path.join(dir, rel));
  }
  const program = ts.createProgram(files, {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    esModuleInterop: true,
    skipLibCheck: true,
    rootDir: path.join(dir, "src"),
    outDir: path.join(dir, "dist"),
    types: ["node"],
    typeRoots: [path.join(pkg, "node_modules", "@types")],
    noEmitOnError: true,
  });
  const emitted = program.emit();
  const problems = [...ts.getPreEmitDiagnostics(program), ...emitted.diagnostics].map((d) =>
    ts.flattenDiagnosticMessageText(d.messageText, "\n"),
  );
  assert.deepEqual(problems, [], "the documented swap compiles under strict");
  const load = (rel) => import(pathToFileURL(path.join(dir, "dist", rel)).href);
  return {
    dir,
    paths: await load("paths.js"),
    chain: await load("instructions/chain.js"),
    discovery: await load("skills/discovery.js"),
  };
}

const lisa = await buildLisa();
process.on("exit", () => rmSync(lisa.dir, { recursive: true, force: true }));

/**
 * The global home (the operator's notes and skill) with two users' homes
 * below it (`users/<uid>`, each with a skill of its own), and a repository
 * with a project skill named like ada's and one of its own.
 */
function cloud() {
  const base = mkdtempSync(path.join(tmpdir(), "lisa-cloud-"));
  const global = path.join(base, "global");
  const repo = path.join(base, "repo");
  write(path.join(global, "AGENTS.md"), "the operator's notes");
  addSkill(path.join(global, "skills"), "ops-runbook", "the operator's own");
  addSkill(path.join(global, "users", "ada", "skills"), "ada-notes", "ada's own");
  addSkill(path.join(global, "users", "bob", "skills"), "bob-notes", "bob's own");
  mkdirSync(path.join(repo, ".git"), { recursive: true });
  write(path.join(repo, "AGENTS.md"), "repo rule");
  addSkill(path.join(repo, ".agents", "skills"), "ada-notes", "the repository's ada-notes");
  addSkill(path.join(repo, ".lisa", "skills"), "build", "build it");
  return { base, global, repo, cleanup: () => rmSync(base, { recursive: true, force: true }) };
}

/** Runs `body` with environment variables set (`undefined`: unset), then restores them. */
async function withEnv(vars, body) {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  for (const [k, v] of Object.entries(vars)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  try {
    return await body();
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

/** `[scope, name]` of each skill found. */
function shown(discovery) {
  return discovery.skills.map((s) => [s.scope, s.frontmatter.name]);
}

/** What one user's request asks of the swapped loader. */
async function request(w) {
  const { findProjectRoot, loadInstructionChain } = lisa.chain;
  const { discoverSkills, skillSources, skillSourcesFingerprint } = lisa.discovery;
  const root = await findProjectRoot(path.join(w.repo));
  // Another request's turn may come between two awaits.
  await new Promise((r) => setImmediate(r));
  const discovery = await discoverSkills(root);
  const chain = await loadInstructionChain(root);
  return {
    skills: shown(discovery),
    shadowed: discovery.shadowed.map((s) => s.path),
    homeSource: skillSources(root).find((s) => s.scope === "home")?.dir,
    homeFiles: chain.files.filter((f) => f.scope === "home").map((f) => f.content),
    fingerprint: await skillSourcesFingerprint(root),
  };
}

/** Every path below `dir`, relative, sorted. */
function treeOf(dir) {
  const out = [];
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      out.push(path.relative(dir, p));
      if (e.isDirectory()) walk(p);
    }
  };
  walk(dir);
  return out.sort();
}

test("the documented swap: each user's own home skills, from one process", async (t) => {
  const w = cloud();
  t.after(w.cleanup);
  const { homeScope, homeForUid } = lisa.paths;
  await withEnv({ LISA_HOME: w.global, LISA_CONTEXT_STATE: undefined }, async () => {
    const [ada, bob, carl, ada2] = await Promise.all([
      homeScope.run(homeForUid("ada"), () => request(w)),
      homeScope.run(homeForUid("bob"), () => request(w)),
      // A user with no home yet: no home skills, not the operator's.
      homeScope.run(homeForUid("carl"), () => request(w)),
      homeScope.run(homeForUid("ada"), () => request(w)),
    ]);
    const outside = await request(w);

    assert.deepEqual(ada.skills, [
      ["home", "ada-notes"],
      ["project", "build"],
    ]);
    // Lisa's rule, per user: ada's own skill shadows the repository's.
    assert.deepEqual(ada.shadowed, [path.join(w.repo, ".agents", "skills", "ada-notes", "SKILL.md")]);
    assert.equal(ada.homeSource, path.join(homeForUid("ada"), "skills"));
    assert.deepEqual(ada2, ada, "the same user, the same answer");

    assert.deepEqual(bob.skills, [
      ["project", "ada-notes"],
      ["home", "bob-notes"],
      ["project", "build"],
    ]);
    assert.deepEqual(bob.shadowed, []);
    assert.equal(bob.homeSource, path.join(homeForUid("bob"), "skills"));

    assert.deepEqual(carl.skills, [
      ["project", "ada-notes"],
      ["project", "build"],
    ]);

    // Outside any scope Lisa reads the global home: the operator's skill.
    assert.deepEqual(outside.skills, [
      ["project", "ada-notes"],
      ["project", "build"],
      ["home", "ops-runbook"],
    ]);
    assert.equal(outside.homeSource, path.join(w.global, "skills"));

    // Home instruction files stay the global home's, as in Lisa's cloud build.
    for (const r of [ada, bob, carl, outside]) assert.deepEqual(r.homeFiles, ["the operator's notes"]);
    assert.equal(new Set([ada, bob, carl, outside].map((r) => r.fingerprint)).size, 4);

    // What the swap writes, as the READMEs say: the nonce key and the
    // frontmatter memo, in each home read (the global one, each user's).
    for (const home of [w.global, homeForUid("ada"), homeForUid("bob")]) {
      const added = readdirSync(home).filter((n) => n.startsWith("context-"));
      assert.deepEqual(added.sort(), ["context-frontmatter.memo", "context-nonce.key"], home);
    }
  });
});

test("LISA_CONTEXT_STATE: the swap writes nothing in any home", async (t) => {
  const w = cloud();
  t.after(w.cleanup);
  const { homeScope, homeForUid } = lisa.paths;
  const state = path.join(w.base, "operator-state");
  const before = treeOf(w.global);
  await withEnv({ LISA_HOME: w.global, LISA_CONTEXT_STATE: state }, async () => {
    const [ada, bob] = await Promise.all([
      homeScope.run(homeForUid("ada"), () => request(w)),
      homeScope.run(homeForUid("bob"), () => request(w)),
    ]);
    await request(w);
    assert.deepEqual(ada.skills, [
      ["home", "ada-notes"],
      ["project", "build"],
    ]);
    assert.deepEqual(
      bob.skills.filter(([scope]) => scope === "home"),
      [["home", "bob-notes"]],
    );
  });
  assert.deepEqual(treeOf(w.global), before, "nothing is written in the global home or a user's");
  // One private folder per home read: the global home, ada's, bob's.
  const folders = readdirSync(state);
  assert.equal(folders.length, 3, String(folders));
  for (const f of folders) {
    assert.ok(readdirSync(path.join(state, f)).includes("context-nonce.key"), f);
    assert.equal(statSync(path.join(state, f)).mode & 0o777, 0o700, f);
  }
});
