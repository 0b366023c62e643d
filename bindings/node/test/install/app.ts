// A user's program, type-checked with `tsc --strict` and run by .ci/node in
// a fresh project where only the packed tarballs are installed (the main
// package and this platform's), with no `lisa-context` on PATH: `Client`
// must find the executable the platform package carries.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { Client, Loader, LisaContextError, type Snapshot } from "lisa-context";
import {
  discoverSkills,
  findProjectRoot,
  loadInstructionChain,
  renderInstructionChain,
  type InstructionChain,
  type SkillDiscovery,
} from "lisa-context/lisa";

function write(file: string, text: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
}

const base = mkdtempSync(path.join(tmpdir(), "lisa-install-"));
try {
  const home = path.join(base, "home");
  const repo = path.join(base, "repo");
  const api = path.join(repo, "packages", "api");
  write(path.join(home, "AGENTS.md"), "home: answer briefly");
  write(path.join(home, "skills", "release", "SKILL.md"), "---\nname: release\ndescription: cut a release\n---\nSteps.\n");
  mkdirSync(path.join(repo, ".git"), { recursive: true });
  write(path.join(repo, "AGENTS.md"), "repo: use tabs");
  write(path.join(api, "AGENTS.md"), "api: JSON errors");

  // The in-process binding.
  const loader = new Loader({ home });
  const snapshot: Snapshot = await loader.snapshot(api);
  assert.deepEqual(
    snapshot.instructionFiles.map((b) => b.origin),
    ["home", "project", "project"],
  );
  assert.equal(await loader.fingerprint(api), snapshot.fingerprint);
  assert.equal(await loader.refresh(api, snapshot.fingerprint), null);
  assert.match((await loader.skill(api, "release")).content, /cut a release/);
  try {
    await loader.skill(api, "no-such");
    assert.fail("a missing skill is an error");
  } catch (e) {
    assert.ok(e instanceof LisaContextError && e.code === "skill-not-found");
  }

  // The client, with the executable of the platform package.
  const client = new Client({ home });
  try {
    const served = await client.snapshot(api);
    assert.equal(served.fingerprint, snapshot.fingerprint);
    assert.equal(served.prompt, snapshot.prompt);
  } finally {
    await client.close();
  }

  // Lisa's own API.
  process.env.LISA_HOME = home;
  assert.equal(await findProjectRoot(api), repo);
  const chain: InstructionChain = await loadInstructionChain(api);
  assert.deepEqual(chain.files.map((f) => f.content), ["home: answer briefly", "repo: use tabs", "api: JSON errors"]);
  assert.ok(renderInstructionChain(chain).includes("api: JSON errors"));
  const skills: SkillDiscovery = await discoverSkills(repo);
  assert.deepEqual(skills.skills.map((s) => s.frontmatter.name), ["release"]);

  console.log(`installed package: Loader, Client and lisa-context/lisa agree (${snapshot.fingerprint})`);
} finally {
  rmSync(base, { recursive: true, force: true });
}
