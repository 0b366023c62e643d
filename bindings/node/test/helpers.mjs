// Fixtures and schema validation shared by the tests.
import { mkdtempSync, mkdirSync, writeFileSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import Ajv2020 from "ajv/dist/2020.js";

const here = path.dirname(fileURLToPath(import.meta.url));
export const repoRoot = path.resolve(here, "../../..");

/** The `lisa-context` binary the client tests start. */
export const BIN =
  process.env.LISA_CONTEXT_BIN ?? path.join(repoRoot, "target/debug/lisa-context");

export function write(file, text) {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
}

export function addSkill(dir, name, description) {
  write(
    path.join(dir, name, "SKILL.md"),
    `---\nname: ${name}\ndescription: ${description}\n---\n\n# ${name}\n\nSteps for ${name}.\n`,
  );
}

/**
 * A home and two repositories (as in tests/it/serve.rs):
 * home/ AGENTS.md, skills/release; app/ (marked) AGENTS.md,
 * packages/api/AGENTS.md, .agents/skills/deploy; lib/ (marked) CLAUDE.md,
 * .lisa/skills/publish.
 */
export function world() {
  const base = mkdtempSync(path.join(tmpdir(), "lisa-node-"));
  const home = path.join(base, "home");
  write(path.join(home, "AGENTS.md"), "home: answer briefly");
  addSkill(path.join(home, "skills"), "release", "cut a release");
  const app = path.join(base, "app");
  mkdirSync(path.join(app, ".git"), { recursive: true });
  write(path.join(app, "AGENTS.md"), "app: use tabs");
  const api = path.join(app, "packages", "api");
  write(path.join(api, "AGENTS.md"), "api: JSON errors");
  addSkill(path.join(app, ".agents", "skills"), "deploy", "deploy the app");
  const lib = path.join(base, "lib");
  mkdirSync(path.join(lib, ".git"), { recursive: true });
  write(path.join(lib, "CLAUDE.md"), "lib: no unsafe");
  addSkill(path.join(lib, ".lisa", "skills"), "publish", "publish the crate");
  return {
    base,
    home,
    app,
    api,
    lib,
    cleanup: () => rmSync(base, { recursive: true, force: true }),
  };
}

function loadSchema(name) {
  return JSON.parse(readFileSync(path.join(repoRoot, "schema", name), "utf8"));
}

const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
// schemars' integer formats.
for (const f of ["uint", "uint8", "uint16", "uint32", "uint64"]) {
  ajv.addFormat(f, { type: "number", validate: (x) => Number.isInteger(x) && x >= 0 });
}
for (const f of ["int", "int8", "int16", "int32", "int64"]) {
  ajv.addFormat(f, { type: "number", validate: (x) => Number.isInteger(x) });
}
const validators = {
  snapshot: ajv.compile(loadSchema("snapshot.schema.json")),
  response: ajv.compile(loadSchema("response.schema.json")),
};

/** A definition of the response schema (e.g. "SkillFile"), as a validator. */
function definition(name) {
  const { $defs, $schema } = loadSchema("response.schema.json");
  return ajv.compile({ $schema, $id: `def-${name}`, $defs, $ref: `#/$defs/${name}` });
}
const defs = {};

/** Asserts that `value` matches `kind`: "snapshot", "response", or a definition name. */
export function assertSchema(kind, value) {
  const validate = validators[kind] ?? (defs[kind] ??= definition(kind));
  if (!validate(value)) {
    throw new Error(
      `${kind} does not match the schema: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(value).slice(0, 500)}`,
    );
  }
}
