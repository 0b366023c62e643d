// Lisa's server, as its long-lived surfaces would use lisa-context: several
// sessions, each with its own cwd, a fingerprint check every turn, a
// rebuild only when the fingerprint moves, a skill viewed by name, and a
// session with no project (a chat channel or a heartbeat).
//
//   npm install lisa-context tsx
//   npx tsx lisa-server.ts
//
// It builds its own tree in a temporary folder and asserts what it sees;
// .ci/node runs it from a fresh project where the packed package is
// installed.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { Loader, type Snapshot } from "lisa-context";

function write(file: string, text: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
}

/** One conversation: its cwd and the prompt section it last built. */
interface Session {
  id: string;
  cwd: string;
  section: Snapshot;
  rebuilds: number;
}

const base = mkdtempSync(path.join(tmpdir(), "lisa-server-"));
try {
  const home = path.join(base, "home");
  const repo = path.join(base, "repo");
  write(path.join(home, "AGENTS.md"), "Answer briefly.");
  write(
    path.join(home, "skills", "release", "SKILL.md"),
    "---\nname: release\ndescription: cut a release\n---\n1. Tag.\n2. Publish.\n",
  );
  mkdirSync(path.join(repo, ".git"), { recursive: true });
  write(path.join(repo, "AGENTS.md"), "Use tabs.");
  write(path.join(repo, "web", "AGENTS.md"), "React components only.");
  write(path.join(repo, "api", "AGENTS.md"), "Errors are JSON.");

  // One loader for the whole server: one cache, any number of sessions.
  const loader = new Loader({ home });
  const open = async (id: string, cwd: string): Promise<Session> => ({
    id,
    cwd,
    section: await loader.snapshot(cwd),
    rebuilds: 0,
  });
  const sessions = await Promise.all([
    open("web", path.join(repo, "web")),
    open("api", path.join(repo, "api")),
    open("channel", Loader.noProject()),
  ]);

  /** A turn: the fingerprint check, and a rebuild only when it moved. */
  const turn = async (s: Session): Promise<void> => {
    const next = await loader.refresh(s.cwd, s.section.fingerprint);
    if (next) {
      s.section = next;
      s.rebuilds += 1;
    }
  };

  for (let i = 0; i < 3; i += 1) await Promise.all(sessions.map(turn));
  assert.deepEqual(sessions.map((s) => s.rebuilds), [0, 0, 0], "nothing changed, nothing rebuilt");

  // An edit below one session's cwd moves that session only.
  write(path.join(repo, "api", "AGENTS.md"), "Errors are JSON, with a code.");
  for (let i = 0; i < 2; i += 1) await Promise.all(sessions.map(turn));
  assert.deepEqual(sessions.map((s) => s.rebuilds), [0, 1, 0]);
  assert.ok(sessions[1]!.section.prompt.includes("with a code"));

  // A home edit moves every session.
  write(path.join(home, "AGENTS.md"), "Answer briefly, in English.");
  await Promise.all(sessions.map(turn));
  assert.deepEqual(sessions.map((s) => s.rebuilds), [1, 2, 1]);

  // The session with no project sees the home only.
  const channel = sessions[2]!.section;
  assert.deepEqual(channel.instructionFiles.map((b) => b.origin), ["home"]);

  // A skill viewed by name, from any session.
  const skill = await loader.skill(sessions[0]!.cwd, "release");
  assert.match(skill.content, /Publish/);

  for (const s of sessions) {
    console.log(`${s.id.padEnd(8)} ${s.section.instructionFiles.length} files, ${s.rebuilds} rebuilds`);
  }
  console.log(`skill ${skill.name}: ${skill.path}`);
} finally {
  rmSync(base, { recursive: true, force: true });
}
