// The JSON-lines client: `Client` over `lisa-context serve` in a child process.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";

import { Client, LisaContextError } from "../dist/index.js";
import { BIN, world, write, assertSchema } from "./helpers.mjs";

async function rejectsWith(promise, code) {
  await assert.rejects(promise, (e) => {
    assert.ok(e instanceof LisaContextError, `a LisaContextError: ${e}`);
    assert.equal(e.code, code, e.message);
    return true;
  });
}

function client(w, options = {}) {
  const env = { ...process.env };
  delete env.LISA_HOME;
  return new Client({ bin: BIN, home: w.home, env, ...options });
}

test("hello, and two sessions in different cwds", async (t) => {
  const w = world();
  const c = client(w);
  t.after(async () => {
    await c.close();
    w.cleanup();
  });
  const hello = await c.hello();
  assertSchema("Hello", hello);
  assert.equal(hello.protocol, 1);
  const [api, lib] = await Promise.all([c.snapshot(w.api), c.snapshot(w.lib)]);
  for (const s of [api, lib]) assertSchema("snapshot", s);
  assert.deepEqual(
    api.instructionFiles.map((f) => f.path),
    [path.join(w.home, "AGENTS.md"), path.join(w.app, "AGENTS.md"), path.join(w.api, "AGENTS.md")],
  );
  assert.deepEqual(
    lib.instructionFiles.map((f) => f.path),
    [path.join(w.home, "AGENTS.md"), path.join(w.lib, "CLAUDE.md")],
  );
  assert.equal(await c.fingerprint(w.api), api.fingerprint);
  const rooted = await c.snapshot(w.api, { root: w.app });
  assert.deepEqual(rooted.instructionFiles, api.instructionFiles);
  assert.equal(await c.fingerprint(w.api, { root: w.app }), rooted.fingerprint);
  // The raw request, as the schema describes the response.
  const raw = await c.request("fingerprint", { cwd: w.lib, future: "ignored" });
  assertSchema("response", { id: 0, ...raw });
  assert.equal(raw.fingerprint, lib.fingerprint);
});

test("refresh after an edit, and a skill lookup", async (t) => {
  const w = world();
  const c = client(w);
  t.after(async () => {
    await c.close();
    w.cleanup();
  });
  const first = await c.snapshot(w.api);
  assert.equal(await c.refresh(w.api, first.fingerprint), null);
  write(path.join(w.app, "AGENTS.md"), "app: use tabs, and spaces in YAML");
  const newer = await c.refresh(w.api, first.fingerprint);
  assert.ok(newer);
  assertSchema("snapshot", newer);
  assert.ok(newer.prompt.includes("spaces in YAML"));
  assert.equal(await c.refresh(w.api, newer.fingerprint), null);

  const skill = await c.skill(w.api, "deploy");
  assertSchema("SkillFile", skill);
  assert.equal(skill.path, path.join(w.app, ".agents/skills/deploy/SKILL.md"));
  assert.equal((await c.skill(w.lib, "release")).origin, "home");
  assertSchema("TrustStatus", await c.trustStatus(w.api));
  assertSchema("TrustDiff", await c.trustDiff(w.api));
});

test("a rule by name over the server", async (t) => {
  const w = world();
  write(
    path.join(w.app, ".cursor", "rules", "db.mdc"),
    "---\ndescription: Database conventions\nalwaysApply: false\n---\nUse migrations.\n",
  );
  const c = client(w, { policy: "cursor" });
  t.after(async () => {
    await c.close();
    w.cleanup();
  });
  const rule = await c.rule(w.app, "db");
  assertSchema("RuleText", rule);
  assert.equal(rule.content, "Use migrations.");
  await rejectsWith(c.rule(w.app, "dbb"), "rule-not-found");
});

test("every error code the server sends, and the client's own", async (t) => {
  const w = world();
  const c = client(w);
  t.after(async () => {
    await c.close();
    w.cleanup();
  });
  await rejectsWith(c.request("snapshot", {}), "bad-request");
  await rejectsWith(c.request("frobnicate", { cwd: w.app }), "unknown-op");
  await rejectsWith(c.snapshot(path.join(w.base, "missing")), "bad-cwd");
  await rejectsWith(c.snapshot("relative/dir"), "relative-cwd");
  await rejectsWith(c.snapshot(w.app, { root: w.api }), "root-outside");
  await rejectsWith(c.skill(w.app, "../x"), "invalid-skill-name");
  await rejectsWith(c.skill(w.lib, "deploy"), "skill-not-found");
  await rejectsWith(c.fingerprint("/" + "x".repeat(1 << 20)), "line-too-long");
  writeFileSync(path.join(w.home, "context-trust.json"), "{ not json");
  await rejectsWith(c.trustStatus(w.app), "trust-store-invalid");

  const policy = path.join(w.base, "team.toml");
  write(policy, 'version = 1\n[trust]\nsymlinks = "sometimes"\n');
  const bad = client(w, { policy });
  await rejectsWith(bad.snapshot(w.app), "policy-invalid");
  await bad.close();

  const empty = path.join(w.base, "empty");
  mkdirSync(empty);
  const env = { ...process.env, HOME: empty };
  delete env.LISA_HOME;
  const homeless = new Client({ bin: BIN, env });
  assert.equal((await homeless.trustStatus(w.app)).store, null);
  await homeless.close();

  // Out of file descriptors (a server started under `ulimit -n 5`).
  const starved = new Client({
    bin: "/bin/sh",
    args: ["-c", 'ulimit -n 5; exec "$0" "$@"', BIN],
    home: w.home,
    jobs: 1,
  });
  await rejectsWith(starved.snapshot(w.app), "resource-exhausted");
  await starved.close();

  const missing = new Client({ bin: path.join(w.base, "no-such-binary") });
  await rejectsWith(missing.hello(), "spawn-failed");
  await rejectsWith(missing.hello(), "spawn-failed");

  const closed = client(w);
  await closed.hello();
  await closed.close();
  await rejectsWith(closed.hello(), "closed");
});

test("a timeout rejects one request; the late answer is dropped", async (t) => {
  const w = world();
  const c = client(w);
  t.after(async () => {
    await c.close();
    w.cleanup();
  });
  await c.hello();
  process.kill(c.pid, "SIGSTOP");
  await rejectsWith(c.fingerprint(w.app, { timeoutMs: 100 }), "timeout");
  assert.equal(c.pending, 0);
  process.kill(c.pid, "SIGCONT");
  assert.match(await c.fingerprint(w.app), /^[0-9a-f]{32}$/);
});

test("a server killed mid-request rejects every pending request; the next one restarts it", async (t) => {
  const w = world();
  const c = client(w);
  t.after(async () => {
    await c.close();
    w.cleanup();
  });
  const before = await c.fingerprint(w.api);
  const pid = c.pid;
  // Stopped, it reads nothing: these are pending for sure when it dies.
  process.kill(pid, "SIGSTOP");
  const pending = [c.snapshot(w.api), c.fingerprint(w.lib), c.skill(w.app, "deploy")];
  assert.equal(c.pending, 3);
  process.kill(pid, "SIGKILL");
  for (const p of pending) await rejectsWith(p, "server-exited");
  assert.equal(c.pending, 0);
  assert.equal(c.pid, undefined);
  // On demand: the next request starts a new server.
  assert.equal(await c.fingerprint(w.api), before);
  assert.notEqual(c.pid, pid);
  // And an explicit restart.
  const second = c.pid;
  const inflight = c.snapshot(w.lib);
  await c.restart();
  await inflight.then(
    (s) => assertSchema("snapshot", s),
    (e) => assert.equal(e.code, "server-exited"),
  );
  assert.notEqual(c.pid, second);
  assert.equal(await c.fingerprint(w.api), before);
});

test("1,000 concurrent requests over three sessions", async (t) => {
  const w = world();
  const c = client(w);
  t.after(async () => {
    await c.close();
    w.cleanup();
  });
  const cwds = [w.app, w.api, w.lib];
  const expected = await Promise.all(cwds.map((cwd) => c.fingerprint(cwd)));
  const answers = await Promise.all(
    Array.from({ length: 1000 }, (_, i) => {
      const cwd = cwds[i % 3];
      switch (i % 4) {
        case 0:
          return c.snapshot(cwd).then((s) => s.fingerprint);
        case 1:
          return c.refresh(cwd, "").then((s) => s.fingerprint);
        default:
          return c.fingerprint(cwd);
      }
    }),
  );
  answers.forEach((fp, i) => assert.equal(fp, expected[i % 3], `request ${i}`));
  assert.equal(c.pending, 0);
});

test("an idle client does not keep Node running", async () => {
  const { execFile } = await import("node:child_process");
  const index = new URL("../dist/index.js", import.meta.url).href;
  const script = `
    import { Client } from ${JSON.stringify(index)};
    const c = new Client({ bin: ${JSON.stringify(BIN)}, args: ["--no-home-policy"] });
    console.log((await c.hello()).protocol);
  `;
  const out = await new Promise((resolve, reject) => {
    execFile(process.execPath, ["--input-type=module", "-e", script], { timeout: 10_000 }, (e, stdout) =>
      e ? reject(e) : resolve(stdout),
    );
  });
  assert.equal(out.trim(), "1");
});

test("access over the server, once per named session", async (t) => {
  const w = world();
  write(path.join(w.api, "src", "AGENTS.md"), "src: small modules");
  const policy = path.join(w.base, "on-access.toml");
  write(policy, "version = 1\n[instructions]\non-access = true\n");
  const c = client(w, { policy });
  t.after(async () => {
    await c.close();
    w.cleanup();
  });
  const first = await c.access(w.api, "src/main.ts", { session: "s1" });
  assertSchema("Access", first);
  assert.deepEqual(first.instructionFiles.map((f) => f.path), [path.join(w.api, "src", "AGENTS.md")]);
  assert.deepEqual((await c.access(w.api, "src", { session: "s1" })).instructionFiles, []);
  assert.equal((await c.access(w.api, "src", { session: "s2" })).instructionFiles.length, 1);
  await rejectsWith(c.access(w.api, "/etc/passwd"), "access-outside-root");
});

test("a client error carries the server's help, available names and policy problems", async (t) => {
  const w = world();
  t.after(w.cleanup);
  const client = new Client({ bin: BIN, home: w.home });
  t.after(() => client.close());
  await assert.rejects(client.skill(w.app, "deplo"), (e) => {
    assert.ok(e instanceof LisaContextError);
    assert.equal(e.code, "skill-not-found");
    assert.match(e.help, /did you mean `deploy`/);
    assert.deepEqual(e.available, ["deploy", "release"]);
    return true;
  });
  write(path.join(w.home, "context-policy.toml"), 'version = 1\n[trust]\nproject = "pin"\n');
  await assert.rejects(client.snapshot(w.app), (e) => {
    assert.equal(e.code, "policy-invalid");
    assert.equal(e.problems.length, 1);
    assert.equal(e.problems[0].key, "trust.project");
    assert.equal(e.problems[0].line, 3);
    return true;
  });
});
