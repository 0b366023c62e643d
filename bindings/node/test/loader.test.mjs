// The in-process binding: `Loader` (napi-rs), through the package's API.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";

import { Loader, LisaContextError } from "../dist/index.js";
import { world, write, addSkill, assertSchema } from "./helpers.mjs";

async function rejectsWith(promise, code) {
  await assert.rejects(promise, (e) => {
    assert.ok(e instanceof LisaContextError, `a LisaContextError: ${e}`);
    assert.equal(e.code, code, e.message);
    assert.ok(e.message.length > 0);
    return true;
  });
}

test("hello says what the build speaks", () => {
  const hello = Loader.hello();
  assertSchema("Hello", hello);
  assert.equal(hello.protocol, 1);
  assert.ok(hello.ops.includes("snapshot"));
  assert.ok(hello.policies.includes("lisa"));
});

test("two sessions in different cwds, concurrently, from one loader", async (t) => {
  const w = world();
  t.after(w.cleanup);
  const loader = new Loader({ home: w.home });
  const [api, lib] = await Promise.all([loader.snapshot(w.api), loader.snapshot(w.lib)]);
  for (const s of [api, lib]) assertSchema("snapshot", s);
  assert.deepEqual(
    api.instructionFiles.map((f) => f.path),
    [path.join(w.home, "AGENTS.md"), path.join(w.app, "AGENTS.md"), path.join(w.api, "AGENTS.md")],
  );
  assert.deepEqual(
    lib.instructionFiles.map((f) => f.path),
    [path.join(w.home, "AGENTS.md"), path.join(w.lib, "CLAUDE.md")],
  );
  assert.equal(api.repoRoot, w.app);
  assert.equal(lib.repoRoot, w.lib);
  assert.ok(api.prompt.includes("deploy the app"));
  assert.ok(!lib.prompt.includes("deploy the app"));
  assert.equal(await loader.fingerprint(w.api), api.fingerprint);
  assert.notEqual(api.fingerprint, lib.fingerprint);
  // The explicit root.
  const rooted = await loader.snapshot(w.api, { root: w.app });
  assert.equal(rooted.repoRoot, w.app);
  assert.deepEqual(rooted.instructionFiles, api.instructionFiles);
  assert.equal(await loader.fingerprint(w.api, { root: w.app }), rooted.fingerprint);
  assert.equal(loader.cachedEntries >= 2, true);
});

test("refresh after an edit hands over the new snapshot, then nothing", async (t) => {
  const w = world();
  t.after(w.cleanup);
  const loader = new Loader({ home: w.home });
  const first = await loader.snapshot(w.api);
  assert.equal(await loader.refresh(w.api, first.fingerprint), null);
  write(path.join(w.app, "AGENTS.md"), "app: use tabs, and spaces in YAML");
  const newer = await loader.refresh(w.api, first.fingerprint);
  assert.ok(newer, "the edit is seen");
  assertSchema("snapshot", newer);
  assert.notEqual(newer.fingerprint, first.fingerprint);
  assert.ok(newer.prompt.includes("spaces in YAML"));
  assert.equal(await loader.refresh(w.api, newer.fingerprint), null);
  // The other session is unaffected.
  const lib = await loader.snapshot(w.lib);
  assert.equal(await loader.refresh(w.lib, lib.fingerprint), null);
});

test("skill lookup finds the winner for the cwd", async (t) => {
  const w = world();
  t.after(w.cleanup);
  const loader = new Loader({ home: w.home });
  const deploy = await loader.skill(w.api, "deploy");
  assertSchema("SkillFile", deploy);
  assert.equal(deploy.origin, "project");
  assert.equal(deploy.path, path.join(w.app, ".agents/skills/deploy/SKILL.md"));
  assert.ok(deploy.content.includes("deploy the app"));
  const release = await loader.skill(w.lib, "release");
  assert.equal(release.origin, "home");
  await rejectsWith(loader.skill(w.lib, "deploy"), "skill-not-found");
});

test("a listed rule is served by name, framed with the session's nonce", async (t) => {
  const w = world();
  t.after(w.cleanup);
  write(
    path.join(w.app, ".cursor", "rules", "db.mdc"),
    "---\ndescription: Database conventions\nalwaysApply: false\n---\nUse migrations.\n",
  );
  write(path.join(w.app, "AGENTS.md"), "app notes");
  const loader = new Loader({ home: w.home, basePolicy: "cursor" });
  const snapshot = await loader.snapshot(w.app);
  assert.deepEqual(
    snapshot.rules.map((r) => [r.name, r.mode]),
    [["db", "listed"]],
  );
  assert.ok(!snapshot.prompt.includes("Use migrations."));
  const rule = await loader.rule(w.app, "db");
  assertSchema("RuleText", rule);
  assert.equal(rule.content, "Use migrations.");
  assert.equal(rule.mode, "listed");
  const nonce = rule.prompt.slice(3, 19);
  assert.ok(snapshot.prompt.includes(`<<<${nonce} `), rule.prompt);
  await rejectsWith(loader.rule(w.app, "nope"), "rule-not-found");
});

test("trust status and diff", async (t) => {
  const w = world();
  t.after(w.cleanup);
  const pinned = path.join(w.base, "pinned.toml");
  write(pinned, 'version = 1\n[trust]\nproject = "pinned"\n');
  const loader = new Loader({ home: w.home, policy: pinned });
  const status = await loader.trustStatus(w.api);
  assertSchema("TrustStatus", status);
  assert.ok(status.items.length >= 2);
  assert.ok(status.items.every((i) => i.state === "new"));
  const diff = await loader.trustDiff(w.api);
  assertSchema("TrustDiff", diff);
  assert.ok(diff.items.every((i) => i.diff.includes("+")));
  const snapshot = await loader.snapshot(w.api);
  assert.ok(snapshot.unapproved.length >= 2);
});

test("every error code the binding can meet", async (t) => {
  const w = world();
  t.after(w.cleanup);
  const loader = new Loader({ home: w.home });
  await rejectsWith(loader.snapshot(path.join(w.base, "missing")), "bad-cwd");
  await rejectsWith(loader.fingerprint(path.join(w.app, "AGENTS.md")), "bad-cwd");
  await rejectsWith(loader.snapshot("relative/dir"), "relative-cwd");
  await rejectsWith(loader.snapshot(w.app, { root: w.api }), "root-outside");
  await rejectsWith(loader.skill(w.app, "../x"), "invalid-skill-name");
  await rejectsWith(loader.skill(w.app, "no-such"), "skill-not-found");

  // An invalid policy: every call fails until the file is fixed.
  const policy = path.join(w.base, "team.toml");
  write(policy, 'version = 1\n[trust]\nsymlinks = "sometimes"\n');
  const watched = new Loader({ home: w.home, policy });
  await rejectsWith(watched.snapshot(w.app), "policy-invalid");
  await rejectsWith(watched.refresh(w.app, ""), "policy-invalid");
  write(policy, 'version = 1\n[trust]\nsymlinks = "never"\n');
  assertSchema("snapshot", await watched.snapshot(w.app));

  // Trust: a broken store, and no home.
  writeFileSync(path.join(w.home, "context-trust.json"), "{ not json");
  await rejectsWith(loader.trustStatus(w.app), "trust-store-invalid");
  // No home: none given, `$LISA_HOME` unset and no `~/.lisa`.
  const empty = path.join(w.base, "empty");
  mkdirSync(empty);
  const saved = { HOME: process.env.HOME, LISA_HOME: process.env.LISA_HOME };
  process.env.HOME = empty;
  delete process.env.LISA_HOME;
  let homeless;
  try {
    homeless = new Loader();
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
  // Read-only, trust needs no home: no store (`trust-unavailable` is for
  // approving, which is not offered here).
  assert.equal((await homeless.trustStatus(w.app)).store, null);

  // A home that is not a directory: the constructor throws.
  assert.throws(
    () => new Loader({ home: path.join(w.app, "AGENTS.md") }),
    (e) => e instanceof LisaContextError && e.code === "bad-home",
  );
});

test("errors carry the fields serve writes: help, available, problems", async (t) => {
  const w = world();
  t.after(w.cleanup);
  const loader = new Loader({ home: w.home });
  // skill-not-found: the names available and the advice, as serve gives them.
  const missing = await loader.skill(w.app, "deploi").then(
    () => assert.fail("resolved"),
    (e) => e,
  );
  assert.ok(missing instanceof LisaContextError);
  assert.equal(missing.code, "skill-not-found");
  assert.deepEqual(missing.available, ["deploy", "release"]);
  assert.match(missing.help ?? "", /deploy/);
  // policy-invalid: each problem with its file, line, column and key.
  const policy = path.join(w.base, "team.toml");
  write(policy, 'version = 1\n[trust]\nsymlinks = "sometimes"\n');
  const broken = await new Loader({ home: w.home, policy }).snapshot(w.app).then(
    () => assert.fail("resolved"),
    (e) => e,
  );
  assert.equal(broken.code, "policy-invalid");
  assert.ok(Array.isArray(broken.problems) && broken.problems.length === 1, String(broken.problems));
  assert.equal(broken.problems[0].key, "trust.symlinks");
  assert.equal(broken.problems[0].line, 3);
});

test("1,000 concurrent requests over three sessions", async (t) => {
  const w = world();
  t.after(w.cleanup);
  const loader = new Loader({ home: w.home });
  const cwds = [w.app, w.api, w.lib];
  const expected = await Promise.all(cwds.map((c) => loader.fingerprint(c)));
  const answers = await Promise.all(
    Array.from({ length: 1000 }, (_, i) => {
      const cwd = cwds[i % 3];
      switch (i % 4) {
        case 0:
          return loader.snapshot(cwd).then((s) => s.fingerprint);
        case 1:
          return loader.refresh(cwd, "").then((s) => s.fingerprint);
        default:
          return loader.fingerprint(cwd);
      }
    }),
  );
  answers.forEach((fp, i) => assert.equal(fp, expected[i % 3], `request ${i}`));
});

test("a skill added while the loader runs", async (t) => {
  const w = world();
  t.after(w.cleanup);
  const loader = new Loader({ home: w.home });
  await rejectsWith(loader.skill(w.api, "rollback"), "skill-not-found");
  addSkill(path.join(w.app, ".agents", "skills"), "rollback", "undo a deploy");
  const skill = await loader.skill(w.api, "rollback");
  assert.ok(skill.content.includes("undo a deploy"));
  rmSync(path.join(w.app, ".agents", "skills", "rollback"), { recursive: true });
  await rejectsWith(loader.skill(w.api, "rollback"), "skill-not-found");
});

test("access loads the files below the cwd once per session", async (t) => {
  const w = world();
  t.after(w.cleanup);
  write(path.join(w.api, "src", "AGENTS.md"), "src: small modules");
  const policy = path.join(w.base, "on-access.toml");
  write(policy, "version = 1\n[instructions]\non-access = true\n");
  const loader = new Loader({ home: w.home, policy });
  const first = await loader.access(w.api, path.join(w.api, "src", "main.ts"));
  assertSchema("Access", first);
  assert.deepEqual(first.instructionFiles.map((f) => f.path), [path.join(w.api, "src", "AGENTS.md")]);
  assert.ok(first.prompt.includes("src: small modules"));
  const again = await loader.access(w.api, path.join(w.api, "src"));
  assert.deepEqual(again.instructionFiles, []);
  // Another session is given the file again.
  const other = await loader.access(w.api, path.join(w.api, "src"), { session: "b" });
  assert.equal(other.instructionFiles.length, 1);
  await rejectsWith(loader.access(w.api, path.join(w.base, "elsewhere")), "access-outside-root");
});

test("a shipped policy by name", async (t) => {
  const w = world();
  t.after(w.cleanup);
  write(path.join(w.app, "GEMINI.md"), "gemini: read me");
  const loader = new Loader({ home: w.home, basePolicy: "gemini" });
  const snap = await loader.snapshot(w.api);
  assert.ok(snap.instructionFiles.some((f) => f.path === path.join(w.app, "GEMINI.md")));
});

test("an unknown shipped policy name is refused at once", () => {
  assert.throws(() => new Loader({ basePolicy: "codx" }), (e) => {
    assert.ok(e instanceof LisaContextError);
    assert.equal(e.code, "unknown-policy");
    return true;
  });
});
