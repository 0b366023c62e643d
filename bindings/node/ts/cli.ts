#!/usr/bin/env node
// `npx lisa-context ...` (and `lisa-context` on PATH after `npm install -g
// lisa-context`): runs the executable this platform's package bundles with
// the arguments given, its standard streams the caller's, and exits as it
// does. This is what MCP hosts are configured with: `npx lisa-context mcp`.
import { spawnSync } from "node:child_process";

import { defaultBin } from "./platform.js";

const bin = defaultBin();
if (bin === "lisa-context") {
  // Not bundled for this platform: running `lisa-context` from PATH could
  // be this very script again.
  console.error(
    "lisa-context: this platform's package (lisa-context-<platform>) holds no executable; " +
      "install the binary with `cargo install --locked lisa-context`",
  );
  process.exit(1);
}
const run = spawnSync(bin, process.argv.slice(2), { stdio: "inherit" });
if (run.error) {
  console.error(`lisa-context: could not run ${bin}: ${run.error.message}`);
  process.exit(1);
}
process.exit(run.status ?? 1);
