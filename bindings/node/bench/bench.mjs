// Per-call cost of `fingerprint` and `snapshot` on one fixture, in one run:
// through the Rust library, through this package's binding, and through the
// JSON-lines client (release `lisa-context serve`), on a warm cache (nothing
// changed: the per-turn check). The criterion bench `benches/binding.rs`
// writes the fixture and measures the library in its own process (before
// and after, for reference); the table compares the three paths in this
// process, in interleaved rounds (the library through the native loader's
// blocking `measureBlocking`, which only this script uses), medians.
//
//   npm run build && npm run bench      (from bindings/node; needs cargo)
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { Client, Loader } from "../dist/index.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, "../../..");
const dir = mkdtempSync(path.join(tmpdir(), "lisa-bench-"));

// The library's figures, from the criterion bench (which writes the
// fixture on its first run). It runs before and after the Node
// measurements, and the mean of the two is used: the machine's load may
// drift during the run.
function cargoBench() {
  console.error("== cargo bench --bench binding (the library on the fixture)");
  return execFileSync("cargo", ["bench", "--bench", "binding"], {
    cwd: repoRoot,
    env: { ...process.env, LISA_BENCH_DIR: dir },
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
    maxBuffer: 64 << 20,
  });
}
const runs = [];
function readRust(text) {
  const figures = {};
  for (const m of text.matchAll(/^PERCALL rust (\S+) ([\d.]+)$/gm)) figures[m[1]] = Number(m[2]);
  runs.push(figures);
}
const out = cargoBench();
readRust(out);
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
// The library in this process, on the calling thread (for this benchmark
// only): a loader of its own, set up like the binding's.
const nativeModule = createRequire(import.meta.url)("../native.cjs");
const inProcess = new nativeModule.NativeLoader({ home });
// Warm the caches (and the JIT).
for (let i = 0; i < 500; i++) {
  await loader.snapshot(cwd);
  await client.snapshot(cwd);
  inProcess.measureBlocking("snapshot", cwd, 1);
}
// Interleaved rounds: each round measures every path once, so a change in
// the machine's load hits them all alike; the medians are reported.
const rounds = 11;
const calls = 1000;
const paths = {
  "rust fingerprint": async () => inProcess.measureBlocking("fingerprint", cwd, calls),
  "binding fingerprint": () => perCall(1, calls, () => loader.fingerprint(cwd)),
  "client fingerprint": () => perCall(1, calls, () => client.fingerprint(cwd)),
  "rust snapshot": async () => inProcess.measureBlocking("snapshot", cwd, calls),
  "binding snapshot": () => perCall(1, calls, () => loader.snapshot(cwd)),
  "client snapshot": () => perCall(1, calls, () => client.snapshot(cwd)),
};
const samples = Object.fromEntries(Object.keys(paths).map((k) => [k, []]));
for (let r = 0; r < rounds; r++) {
  for (const [name, measure] of Object.entries(paths)) samples[name].push(await measure());
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const node = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v)]));
if (node["rust fingerprint"] < 0 || node["rust snapshot"] < 0) throw new Error("a library call failed");
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
readRust(cargoBench());
rmSync(dir, { recursive: true, force: true });
const rust = {};
for (const key of Object.keys(runs[0])) {
  rust[key] = runs.reduce((sum, r) => sum + (r[key] ?? 0), 0) / runs.length;
}
console.log(
  `Rust runs (before, after): ${runs.map((r) => `fingerprint ${r.fingerprint} µs, snapshot ${r.snapshot} µs`).join("; ")}`,
);

const f = (x) => (x === undefined ? "—" : `${x.toFixed(1)} µs`);
const ratio = (a, b) => (a && b ? `${(a / b).toFixed(2)}×` : "—");
console.log(`fixture: 12-level chain, 25 skills (${shape}); warm cache, nothing changed`);
console.log(
  `criterion (cargo bench --bench binding, separate process, before and after): fingerprint ${f(rust.fingerprint)}, snapshot ${f(rust.snapshot)}, snapshot + JSON ${f(rust["snapshot+json"])}`,
);
console.log("| call | Rust library (in process) | binding | JSON-lines client | binding / Rust | client / Rust |");
console.log("|---|---|---|---|---|---|");
for (const op of ["fingerprint", "snapshot"]) {
  const [r, b, c] = [node[`rust ${op}`], node[`binding ${op}`], node[`client ${op}`]];
  console.log(`| ${op} | ${f(r)} | ${f(b)} | ${f(c)} | ${ratio(b, r)} | ${ratio(c, r)} |`);
}
console.log(
  `| fingerprint, 100 in flight (per call) | — | ${f(node["binding fingerprint x100"])} | ${f(node["client fingerprint x100"])} | | |`,
);
const within = node["binding fingerprint"] / node["rust fingerprint"];
console.log(`binding fingerprint within 1.5× of Rust: ${within <= 1.5 ? "yes" : "no"} (${within.toFixed(2)}×)`);
