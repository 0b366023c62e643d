// Copies the committed JSON Schemas and the licenses into the package
// (npm pack, npm publish).
import { cp } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const pkg = path.resolve(here, "..");
const repo = path.resolve(pkg, "../..");
await cp(path.join(repo, "schema"), path.join(pkg, "schema"), { recursive: true });
for (const license of ["LICENSE-MIT", "LICENSE-APACHE"]) {
  await cp(path.join(repo, license), path.join(pkg, license));
}
