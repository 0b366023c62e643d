import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const require = createRequire(import.meta.url);

/**
 * This machine's platform as napi-rs names its packages (`linux-x64-gnu`,
 * `darwin-arm64`, ...): what `lisa-context-<platform>` must exist for.
 */
export function platformName(): string {
  const { platform, arch } = process;
  if (platform === "linux") {
    const header = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)
      ?.header;
    return `linux-${arch}-${header?.glibcVersionRuntime ? "gnu" : "musl"}`;
  }
  return `${platform}-${arch}`;
}

/** The platforms a package is published for (package.json's `napi.targets`). */
export const PLATFORMS = [
  "linux-x64-gnu",
  "linux-arm64-gnu",
  "linux-x64-musl",
  "linux-arm64-musl",
  "darwin-x64",
  "darwin-arm64",
] as const;

/**
 * The `lisa-context` executable `Client` starts when given no `bin`: the one
 * in this platform's package (`lisa-context-<platform>`), else the one a
 * source build put in npm/<platform>/ beside this package, else
 * `lisa-context` on PATH.
 */
export function defaultBin(): string {
  const name = platformName();
  try {
    const manifest = require.resolve(`lisa-context-${name}/package.json`);
    const exe = path.join(path.dirname(manifest), "lisa-context");
    if (existsSync(exe)) return exe;
  } catch {
    // Not installed: a source build, or another platform.
  }
  const here = path.dirname(fileURLToPath(import.meta.url));
  const local = path.resolve(here, "..", "npm", name, "lisa-context");
  if (existsSync(local)) return local;
  return "lisa-context";
}
