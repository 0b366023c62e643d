// The platform package's native parts, for the platform this runs on: the
// `lisa-context` executable (a release build of the repository's binary:
// `cargo build --release --locked --bin lisa-context`, for
// $CARGO_BUILD_TARGET when set, as `napi build` is), copied with the addon
// `npm run build:native` made into npm/<platform>/, so that `npm pack`
// there gives the package `npm install lisa-context` fetches for it.
//
//   node scripts/build-cli.mjs [--target TRIPLE]
import { execFileSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const pkg = path.resolve(here, "..");
const repo = path.resolve(pkg, "../..");

const at = process.argv.indexOf("--target");
const target = at > 0 ? process.argv[at + 1] : process.env.CARGO_BUILD_TARGET;
const host = execFileSync("rustc", ["-vV"], { encoding: "utf8" }).match(/^host: (.+)$/m)?.[1];
const triple = target || host;

/** The napi-rs platform name of a target triple (the npm/<name> folder). */
function platformOf(t) {
  const arch = t.startsWith("x86_64") ? "x64" : t.startsWith("aarch64") ? "arm64" : undefined;
  if (!arch) throw new Error(`no npm platform package for the target ${t}`);
  if (t.includes("apple-darwin")) return `darwin-${arch}`;
  if (t.includes("linux-gnu")) return `linux-${arch}-gnu`;
  if (t.includes("linux-musl")) return `linux-${arch}-musl`;
  throw new Error(`no npm platform package for the target ${t}`);
}

const platform = platformOf(triple);
const args = ["build", "--release", "--locked", "--bin", "lisa-context"];
if (target) args.push("--target", target);
execFileSync("cargo", args, { cwd: repo, stdio: "inherit" });

const targetDir = process.env.CARGO_TARGET_DIR
  ? path.resolve(repo, process.env.CARGO_TARGET_DIR)
  : path.join(repo, "target");
const exe = path.join(targetDir, target ? target : "", "release", "lisa-context");
const dir = path.join(pkg, "npm", platform);
copyFileSync(exe, path.join(dir, "lisa-context"));
chmodSync(path.join(dir, "lisa-context"), 0o755);
const addon = `lisa-context.${platform}.node`;
if (existsSync(path.join(pkg, addon))) {
  copyFileSync(path.join(pkg, addon), path.join(dir, addon));
} else {
  console.warn(`${addon} is not built (npm run build:native): npm/${platform} holds the executable only`);
}
console.log(`npm/${platform}: lisa-context${existsSync(path.join(dir, addon)) ? ` and ${addon}` : ""}`);
