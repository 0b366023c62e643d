// Per-call cost of `fingerprint` and `snapshot` on one fixture, in one run:
// through the Rust library (criterion bench `benches/binding.rs`, which
// writes the fixture), through this package's binding, and through the
// JSON-lines client (release `lisa-context serve`). Each figure is the median
// of interleaved rounds of sequential awaited calls on a warm cache (nothing
// changed: the per-turn check).
//
//   npm run build && npm run bench      (from bindings/node; needs cargo)
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { Client, Loader } from "../dist/index.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, "../../..");
const dir = mkdtempSync(path.join(tmpdir(), "lisa-bench-"));

console.error("== cargo bench --bench binding (writes the fixture, measures the library)");
const out = execFileSync("cargo", ["bench", "--bench", "binding"], {
  cwd: repoRoot,
  env: { ...process.env, LISA_BENCH_DIR: dir },
  encoding: "utf8",
  stdio: ["ignore", "pipe", "inherit"],
  maxBuffer: 64 << 20,
});
const rust = {};
for (const m of out.matchAll(/^PERCALL rust (\S+) ([\d.]+)$/gm)) rust[m[1]] = Number(m[2]);
const fixture = /^FIXTURE home=(\S+) cwd=(\S+)$/m.exec(out);
const shape = /^SNAPSHOT (.*)$/m.exec(out)?.[1] ?? "";
if (!fixture) throw new Error(`no FIXTURE line in:\n${out}`);
const [, home, cwd] = fixture;

async function perCall(rounds, calls, f) {
  const samples = [];
  for (let r = 0; r < rounds; r++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < calls; i++) await f();
    samples.push(Number(process.hrtime.bigint() - start) / 1e3 / calls);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)];
}

const loader = new Loader({ home });
const env = { ...process.env };
delete env.LISA_HOME;
const client = new Client({ bin: path.join(repoRoot, "target/release/lisa-context"), home, env });
// Warm both caches (and the JIT).
for (let i = 0; i < 500; i++) {
  await loader.snapshot(cwd);
  await client.snapshot(cwd);
}
const rounds = 9;
const calls = 1000;
const node = {};
for (const [name, f] of [
  ["binding fingerprint", () => loader.fingerprint(cwd)],
  ["client fingerprint", () => client.fingerprint(cwd)],
  ["binding snapshot", () => loader.snapshot(cwd)],
  ["client snapshot", () => client.snapshot(cwd)],
]) {
  node[name] = await perCall(rounds, calls, f);
}
// Many sessions at once: 100 requests in flight, cost per call.
async function inFlight(f, n = 100, total = 5000) {
  const start = process.hrtime.bigint();
  for (let done = 0; done < total; done += n) {
    await Promise.all(Array.from({ length: n }, f));
  }
  return Number(process.hrtime.bigint() - start) / 1e3 / total;
}
node["binding fingerprint x100"] = await inFlight(() => loader.fingerprint(cwd));
node["client fingerprint x100"] = await inFlight(() => client.fingerprint(cwd));
await client.close();
rmSync(dir, { recursive: true, force: true });

const f = (x) => (x === undefined ? "—" : `${x.toFixed(1)} µs`);
const ratio = (a, b) => (a && b ? `${(a / b).toFixed(2)}×` : "—");
console.log(`fixture: 12-level chain, 25 skills (${shape})`);
console.log("| call | Rust library | binding | JSON-lines client | binding / Rust | client / Rust |");
console.log("|---|---|---|---|---|---|");
console.log(
  `| fingerprint (warm) | ${f(rust.fingerprint)} | ${f(node["binding fingerprint"])} | ${f(node["client fingerprint"])} | ${ratio(node["binding fingerprint"], rust.fingerprint)} | ${ratio(node["client fingerprint"], rust.fingerprint)} |`,
);
console.log(
  `| snapshot (warm) | ${f(rust.snapshot)} (${f(rust["snapshot+json"])} with JSON) | ${f(node["binding snapshot"])} | ${f(node["client snapshot"])} | ${ratio(node["binding snapshot"], rust.snapshot)} | ${ratio(node["client snapshot"], rust.snapshot)} |`,
);
console.log(
  `| fingerprint, 100 in flight (per call) | — | ${f(node["binding fingerprint x100"])} | ${f(node["client fingerprint x100"])} | | |`,
);
const within = node["binding fingerprint"] / rust.fingerprint;
console.log(`binding fingerprint within 1.5× of Rust: ${within <= 1.5 ? "yes" : "no"} (${within.toFixed(2)}×)`);
