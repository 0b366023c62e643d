import { createRequire } from "node:module";

import type * as Native from "../native.cjs";
import { PLATFORMS, platformName } from "./platform.js";

const require = createRequire(import.meta.url);

function load(): typeof Native {
  try {
    return require("../native.cjs") as typeof Native;
  } catch (e) {
    const name = platformName();
    const supported = (PLATFORMS as readonly string[]).includes(name);
    const why = supported
      ? `the package lisa-context-${name}, which holds it, is not installed (an install with --no-optional or --omit=optional, or a lockfile made on another platform: run npm install again on this machine)`
      : `no lisa-context-<platform> package is published for ${name}; the packages cover ${PLATFORMS.join(", ")} (Windows is not supported); on another platform, build from source (see the package README)`;
    throw new Error(`lisa-context: no native addon for this platform (${name}): ${why}`, { cause: e });
  }
}

/** The addon, loaded once. */
export const native: typeof Native = load();
