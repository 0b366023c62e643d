// The Node package (bindings/node) on the demo: two sessions through the
// JSON-lines client (`lisa-context serve` in a child process), then the
// same through the in-process binding.
//
//   cargo build && (cd bindings/node && npm ci && npm run build)
//   node examples/serve-client.mjs
//
// The client starts target/debug/lisa-context, or the binary named by
// LISA_CONTEXT_BIN (e.g. after `cargo install`).
import path from "node:path";
import { Client, Loader, LisaContextError } from "../bindings/node/dist/index.js";

const demo = path.resolve("examples/demo");
const home = path.join(demo, "home");
const root = path.join(demo, "repo");
const sessions = [root, path.join(root, "packages", "api")];

const client = new Client({ bin: process.env.LISA_CONTEXT_BIN ?? "target/debug/lisa-context", home });
const loader = new Loader({ home });
try {
  for (const source of [client, loader]) {
    console.log(`== ${source.constructor.name} (protocol ${(await source.hello()).protocol})`);
    const snapshots = await Promise.all(sessions.map((cwd) => source.snapshot(cwd, { root })));
    for (const s of snapshots) {
      console.log(`cwd ${s.cwd} (fingerprint ${s.fingerprint})`);
      for (const f of s.instructionFiles) {
        console.log(`  ${f.origin.padEnd(7)} ${f.path} (${f.includedBytes} bytes)`);
      }
    }
    const api = snapshots[1];
    const newer = await source.refresh(api.cwd, api.fingerprint, { root });
    console.log(`second session changed since its snapshot: ${newer !== null}`);
    try {
      await source.skill(api.cwd, "no-such-skill", { root });
    } catch (e) {
      if (!(e instanceof LisaContextError)) throw e;
      console.log(`skill lookup failed as expected: ${e.code}`);
    }
  }
} finally {
  await client.close();
}
