// Copies the committed JSON Schemas into the package (npm pack, publish).
import { cp } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
await cp(path.resolve(here, "../../../schema"), path.resolve(here, "../schema"), {
  recursive: true,
});
