// A small Node client for `lisa-context serve`: starts the server, asks for
// two sessions' snapshots, and prints the instruction files each one sees.
//
//   cargo build && node examples/serve-client.mjs
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import path from "node:path";

const bin = process.env.LISA_CONTEXT_BIN ?? "target/debug/lisa-context";
const demo = path.resolve("examples/demo");
const server = spawn(bin, ["--home", path.join(demo, "home"), "serve"], {
  stdio: ["pipe", "pipe", "inherit"],
});

const pending = new Map();
let nextId = 1;
createInterface({ input: server.stdout }).on("line", (line) => {
  const response = JSON.parse(line);
  const resolve = pending.get(response.id);
  pending.delete(response.id);
  if (resolve) resolve(response);
});

function request(op, fields) {
  const id = nextId++;
  server.stdin.write(JSON.stringify({ id, op, ...fields }) + "\n");
  return new Promise((resolve) => pending.set(id, resolve));
}

const root = path.join(demo, "repo");
const sessions = [root, path.join(root, "packages", "api")];
const answers = await Promise.all(
  sessions.map((cwd) => request("snapshot", { cwd, root })),
);
for (const [i, answer] of answers.entries()) {
  if (answer.error) {
    console.log(`session ${i + 1}: error ${answer.error.code}: ${answer.error.message}`);
    continue;
  }
  const s = answer.snapshot;
  console.log(`session ${i + 1}: cwd ${s.cwd} (fingerprint ${s.fingerprint})`);
  for (const f of s.instructionFiles) {
    console.log(`  ${f.origin.padEnd(7)} ${f.path} (${f.includedBytes} bytes)`);
  }
}
const check = await request("refresh", {
  cwd: sessions[1],
  root,
  fingerprint: answers[1].snapshot?.fingerprint ?? "",
});
console.log(`second session changed since its snapshot: ${check.changed}`);
server.stdin.end();
