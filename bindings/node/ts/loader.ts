import { mkdtempSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";

import { LisaContextError, type LisaContextErrorCode } from "./errors.js";
import type {
  Access,
  Hello,
  PolicyProblem,
  RuleText,
  SkillFile,
  Snapshot,
  TrustDiff,
  TrustStatus,
} from "./generated/protocol.js";
import { envPolicy, policyOptions } from "./policy-env.js";
import type { ContextSource, PlaceOptions } from "./source.js";
import type * as Native from "../native.cjs";
import { native } from "./native.js";

/** How to set up a `Loader` (every field optional). */
export interface LoaderOptions {
  /** The home root (default: the policy's candidates: `$LISA_HOME`, then `~/.lisa`). */
  home?: string;
  /**
   * A policy file laid over the built-in and home policies (`--policy FILE`),
   * watched. Default, when neither this nor `basePolicy` is given:
   * `$LISA_CONTEXT_POLICY` at construction, read as `--policy` reads it (a
   * bare word names a shipped policy, anything else is a file).
   */
  policy?: string;
  /** A shipped policy by name (`lisa`, `codex`, `gemini`, `claude-code`) in the built-in one's place (`--policy NAME`). */
  basePolicy?: string;
  /** Whether to read the home's `context-policy.toml` (default true). */
  homePolicy?: boolean;
  /** Most snapshots kept in the cache (default 256). */
  capacity?: number;
  /** Most bytes of snapshots kept (default 256 MiB; from 65,536 to 2^40): least recently used go first. */
  cacheBytes?: number;
}

function unwrap(outcome: Native.Outcome): string | undefined {
  if (outcome.code != null) {
    const report = outcome.error == null ? undefined : parseReport(outcome.error);
    if (report) throw reportError(report);
    throw new LisaContextError(outcome.code as LisaContextErrorCode, outcome.message ?? outcome.code);
  }
  return outcome.value ?? undefined;
}

/** The library's error report: the same fields `serve` writes as `error`. */
interface Report {
  code: LisaContextErrorCode;
  message: string;
  help?: string;
  available?: string[];
  problems?: PolicyProblem[];
}

function parseReport(text: string): Report | undefined {
  try {
    const body = JSON.parse(text) as Partial<Report>;
    if (typeof body.code === "string" && typeof body.message === "string") return body as Report;
  } catch {
    // Not a report.
  }
  return undefined;
}

function reportError(report: Report, cause?: unknown): LisaContextError {
  return new LisaContextError(report.code, report.message, {
    ...(cause === undefined ? {} : { cause }),
    ...(report.help === undefined ? {} : { help: report.help }),
    ...(report.available === undefined ? {} : { available: report.available }),
    ...(report.problems === undefined ? {} : { problems: report.problems }),
  });
}

function json<T>(outcome: Native.Outcome): T {
  return JSON.parse(unwrap(outcome) ?? "null") as T;
}

/**
 * The library in this process: one loader serves any number of sessions
 * (cwds) concurrently, from one cache. Every call does its file work on
 * libuv's thread pool; the event loop never waits on the disk.
 */
export class Loader implements ContextSource {
  readonly #native: Native.NativeLoader;
  /** The options this loader was made with (the policy as resolved). */
  readonly #options: LoaderOptions;
  /** Loaders for the homes calls named, most recently used last. */
  readonly #homes = new Map<string, Native.NativeLoader>();

  /**
   * Reads the policy files once (later calls watch them). An invalid policy
   * does not throw here: every call then fails with `policy-invalid` until
   * the file is fixed. Throws `LisaContextError` (`bad-home`) when `home` is
   * not a directory.
   */
  constructor(options: LoaderOptions = {}) {
    try {
      const fromEnv = options.policy === undefined && options.basePolicy === undefined;
      this.#options = fromEnv ? { ...options, ...policyOptions(envPolicy()) } : { ...options };
      this.#native = new native.NativeLoader(this.#options);
    } catch (e) {
      const body = parseNativeThrow(e);
      if (body) throw reportError(body, e);
      throw e;
    }
  }

  /**
   * A cwd for a session with no project: home files and home skills only
   * (a daemon, a chat channel, a heartbeat, which work in no repository).
   * It is an empty folder of this process's own (mode 0700, under the
   * temporary directory), created on first use; pass it as the cwd of any
   * method. It is its own root, so no repository above it is read.
   */
  static noProject(): string {
    if (noProjectDir === undefined || !isDirectory(noProjectDir)) {
      noProjectDir = mkdtempSync(path.join(os.tmpdir(), "lisa-context-no-project-"));
    }
    return noProjectDir;
  }

  /** What this build speaks (no disk access). */
  static hello(): Hello {
    return JSON.parse(native.hello()) as Hello;
  }

  async hello(): Promise<Hello> {
    return Loader.hello();
  }

  async snapshot(cwd: string, options: PlaceOptions = {}): Promise<Snapshot> {
    return json<Snapshot>(await this.#for(options).snapshot(cwd, rootFor(cwd, options)));
  }

  async fingerprint(cwd: string, options: PlaceOptions = {}): Promise<string> {
    return unwrap(await this.#for(options).fingerprint(cwd, rootFor(cwd, options))) ?? "";
  }

  async refresh(cwd: string, fingerprint: string, options: PlaceOptions = {}): Promise<Snapshot | null> {
    return json<Snapshot | null>(await this.#for(options).refresh(cwd, fingerprint, rootFor(cwd, options)));
  }

  async skill(cwd: string, name: string, options: PlaceOptions = {}): Promise<SkillFile> {
    return json<SkillFile>(await this.#for(options).skill(cwd, name, rootFor(cwd, options)));
  }

  /**
   * The text of the rule named `name` (a `listed` rule the agent asks for,
   * a `manual` one the user names), read now under the policy's rules and
   * framed with the session's nonce (`prompt`).
   */
  async rule(cwd: string, name: string, options: PlaceOptions = {}): Promise<RuleText> {
    return json<RuleText>(await this.#for(options).rule(cwd, name, rootFor(cwd, options)));
  }

  async trustStatus(cwd: string, options: PlaceOptions = {}): Promise<TrustStatus> {
    return json<TrustStatus>(await this.#for(options).trustStatus(cwd, options.root));
  }

  async trustDiff(cwd: string, options: PlaceOptions = {}): Promise<TrustDiff> {
    return json<TrustDiff>(await this.#for(options).trustDiff(cwd, options.root));
  }

  /**
   * What touching `path` adds to the session `options.session` (default:
   * one session per cwd and root) in `cwd`: the instruction files below the
   * cwd down to `path` and the scoped rules it matches, each once per
   * session, under a policy with on-access loading.
   */
  async access(cwd: string, path: string, options: PlaceOptions & { session?: string } = {}): Promise<Access> {
    return json<Access>(await this.#for(options).access(cwd, path, options.session ?? "", options.root));
  }

  /**
   * The native loader for `options.home` (the own one when absent): one per
   * home, made with this loader's options, at most `MAX_HOMES` kept; all of
   * them share the own loader's cache (its bounds), each text once, and one
   * budget of open directories.
   */
  #for(options: PlaceOptions): Native.NativeLoader {
    const home = options.home;
    if (home === undefined) return this.#native;
    const key = path.resolve(home);
    let loader = this.#homes.get(key);
    if (loader) {
      this.#homes.delete(key);
    } else {
      try {
        loader = this.#native.forHome(key);
      } catch (e) {
        const body = parseNativeThrow(e);
        if (body) throw reportError(body, e);
        throw e;
      }
      if (this.#homes.size >= MAX_HOMES) {
        const oldest = this.#homes.keys().next().value;
        if (oldest !== undefined) this.#homes.delete(oldest);
      }
    }
    this.#homes.set(key, loader);
    return loader;
  }

  /** Snapshots in the cache. */
  get cachedEntries(): number {
    return this.#native.cachedEntries;
  }
}

let noProjectDir: string | undefined;

/** The most homes a `Loader` keeps a native loader for (least recently used dropped). */
const MAX_HOMES = 1024;

function isDirectory(dir: string): boolean {
  try {
    return statSync(dir).isDirectory();
  } catch {
    return false;
  }
}

/** The root to name: the one given, or for `Loader.noProject()` the folder itself. */
function rootFor(cwd: string, options: PlaceOptions): string | undefined {
  return options.root ?? (noProjectDir !== undefined && cwd === noProjectDir ? cwd : undefined);
}

function parseNativeThrow(e: unknown): Report | undefined {
  // Not ours: rethrown as it is.
  if (!(e instanceof Error)) return undefined;
  return parseReport(e.message);
}
