import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { createInterface } from "node:readline";

import { LisaContextError } from "./errors.js";
import { defaultBin } from "./platform.js";
import type {
  Access,
  ErrorCode,
  PolicyProblem,
  Hello,
  RuleText,
  SkillFile,
  Snapshot,
  TrustDiff,
  TrustStatus,
} from "./generated/protocol.js";
import type { ContextSource, PlaceOptions } from "./source.js";

/** How to start `lisa-context serve` (every field optional). */
export interface ClientOptions {
  /**
   * The binary (default: the one in this platform's package,
   * `lisa-context-<platform>`, installed with this one; else `lisa-context`
   * found on `PATH`).
   */
  bin?: string;
  /** `--home DIR`. */
  home?: string;
  /** `--policy FILE`. */
  policy?: string;
  /** `--jobs N`: worker threads (default: the number of cores). */
  jobs?: number;
  /**
   * `serve --homes-under DIR`: the server also answers calls naming a
   * `home` below DIR (each a real directory there that the user owns).
   */
  homesUnder?: string;
  /** More arguments, before `serve` (e.g. `["--no-home-policy"]`). */
  args?: string[];
  /** The server's environment (default: this process's). */
  env?: NodeJS.ProcessEnv;
  /** Milliseconds a request may wait for its answer (default 30,000; 0: no limit). */
  timeoutMs?: number;
}

/** Per-request options. */
export interface RequestOptions {
  /** Milliseconds to wait for the answer (default: the client's `timeoutMs`). */
  timeoutMs?: number;
}

/** The fields of a response other than `id`. */
export type ResponseBody = Record<string, unknown>;

interface Pending {
  resolve(body: ResponseBody): void;
  reject(error: LisaContextError): void;
  timer?: NodeJS.Timeout;
}

/** The server's request line limit (1 MiB). */
const MAX_LINE = 1 << 20;

/**
 * A typed client of `lisa-context serve` (JSON lines over a child
 * process): for when a crash must not take the calling server down, or
 * the files are read under another user. Responses are matched by id;
 * every request has a timeout; when the process exits or fails, every
 * pending request is rejected (`server-exited`), and the next request
 * starts a new process (or call `restart()`).
 */
export class Client implements ContextSource {
  readonly #options: ClientOptions;
  #child: ChildProcessWithoutNullStreams | undefined;
  #pending = new Map<number, Pending>();
  #nextId = 1;
  #closed = false;
  /** The server `restart()` is stopping. */
  #stopping: ChildProcessWithoutNullStreams | undefined;
  #stderr = "";

  /**
   * Throws `LisaContextError` (`bad-request`) when `jobs` is not a whole
   * number from 1 to 1024 or `timeoutMs` not one from 0 to 2^31 - 1 (the
   * longest timer Node keeps).
   */
  constructor(options: ClientOptions = {}) {
    checkWhole("jobs", options.jobs, 1, 1024);
    checkWhole("timeoutMs", options.timeoutMs, 0, MAX_TIMEOUT_MS);
    this.#options = options;
  }

  /** The server's process id, while it runs. */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** Requests waiting for their answer. */
  get pending(): number {
    return this.#pending.size;
  }

  /** Starts the server if it is not running (requests do this themselves). */
  start(): void {
    if (this.#closed) throw new LisaContextError("closed", "the client is closed");
    if (this.#child) return;
    const o = this.#options;
    const args = [...(o.args ?? [])];
    if (o.home !== undefined) args.push("--home", o.home);
    if (o.policy !== undefined) args.push("--policy", o.policy);
    args.push("serve");
    if (o.jobs !== undefined) args.push("--jobs", String(o.jobs));
    if (o.homesUnder !== undefined) args.push("--homes-under", o.homesUnder);
    const child = spawn(o.bin ?? defaultBin(), args, {
      stdio: ["pipe", "pipe", "pipe"],
      env: o.env ?? process.env,
    });
    this.#child = child;
    this.#stderr = "";
    this.#hold(child, false);
    child.stdin.on("error", () => {
      // A closed pipe shows as the process's exit.
    });
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => {
      this.#stderr = (this.#stderr + chunk).slice(-4096);
    });
    createInterface({ input: child.stdout, crlfDelay: Infinity }).on("line", (line) =>
      this.#onLine(line),
    );
    child.on("error", (e: NodeJS.ErrnoException) => {
      const code = e.code === "ENOENT" || e.code === "EACCES" ? "spawn-failed" : "server-exited";
      this.#lost(child, new LisaContextError(code, `lisa-context serve: ${e.message}`, { cause: e }));
    });
    child.on("exit", (status, signal) => {
      const how = signal ? `was killed by ${signal}` : `exited with status ${status}`;
      const tail = this.#stderr.trim();
      this.#lost(
        child,
        new LisaContextError("server-exited", `lisa-context serve ${how}${tail ? `: ${tail}` : ""}`),
      );
    });
  }

  /** Stops the server (pending requests are rejected) and starts a new one. */
  async restart(): Promise<void> {
    const child = this.#child;
    if (child) {
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      // Waiting for the exit must keep Node running, idle or not (a last
      // answer may still come in and leave nothing pending).
      this.#stopping = child;
      this.#hold(child, true);
      child.kill("SIGKILL");
      await exited;
      this.#stopping = undefined;
    }
    this.start();
  }

  /**
   * Ends the server's input and waits for it to exit (it answers what it
   * has read first). Later requests reject with `closed`.
   */
  async close(): Promise<void> {
    this.#closed = true;
    const child = this.#child;
    if (!child) return;
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    this.#hold(child, true);
    child.stdin.end();
    await exited;
  }

  /**
   * An idle server does not keep Node running (a client left open does not
   * stop the program from exiting); one with requests pending does.
   */
  #hold(child: ChildProcessWithoutNullStreams, on: boolean): void {
    for (const handle of [child, child.stdin, child.stdout, child.stderr] as Array<{
      ref?: () => void;
      unref?: () => void;
    }>) {
      if (on) handle.ref?.();
      else handle.unref?.();
    }
  }

  /**
   * Sends one request and resolves with its response's fields (other than
   * `id`); an error response rejects with its code.
   */
  request(op: string, fields: Record<string, unknown> = {}, options: RequestOptions = {}): Promise<ResponseBody> {
    return new Promise<ResponseBody>((resolve, reject) => {
      try {
        this.start();
      } catch (e) {
        reject(e);
        return;
      }
      const child = this.#child;
      if (!child) {
        reject(new LisaContextError("server-exited", "lisa-context serve is not running"));
        return;
      }
      const id = this.#nextId++;
      const line = JSON.stringify({ ...fields, id, op }) + "\n";
      if (Buffer.byteLength(line) > MAX_LINE + 1) {
        reject(new LisaContextError("line-too-long", `request lines are limited to ${MAX_LINE} bytes`));
        return;
      }
      const pending: Pending = { resolve, reject };
      checkWhole("timeoutMs", options.timeoutMs, 0, MAX_TIMEOUT_MS);
      const timeoutMs = options.timeoutMs ?? this.#options.timeoutMs ?? 30_000;
      if (timeoutMs > 0) {
        pending.timer = setTimeout(() => {
          if (this.#pending.delete(id)) {
            this.#idle();
            reject(new LisaContextError("timeout", `no answer to ${op} within ${timeoutMs} ms`));
          }
        }, timeoutMs);
      }
      this.#pending.set(id, pending);
      if (this.#pending.size === 1) this.#hold(child, true);
      child.stdin.write(line);
    });
  }

  async hello(options?: RequestOptions): Promise<Hello> {
    return (await this.request("hello", {}, options)).hello as Hello;
  }

  async snapshot(cwd: string, options: PlaceOptions & RequestOptions = {}): Promise<Snapshot> {
    return (await this.request("snapshot", place(cwd, options), options)).snapshot as Snapshot;
  }

  async fingerprint(cwd: string, options: PlaceOptions & RequestOptions = {}): Promise<string> {
    return (await this.request("fingerprint", place(cwd, options), options)).fingerprint as string;
  }

  async refresh(
    cwd: string,
    fingerprint: string,
    options: PlaceOptions & RequestOptions = {},
  ): Promise<Snapshot | null> {
    const body = await this.request("refresh", { ...place(cwd, options), fingerprint }, options);
    return body.changed ? (body.snapshot as Snapshot) : null;
  }

  async skill(cwd: string, name: string, options: PlaceOptions & RequestOptions = {}): Promise<SkillFile> {
    return (await this.request("skill", { ...place(cwd, options), name }, options)).skill as SkillFile;
  }

  async rule(cwd: string, name: string, options: PlaceOptions & RequestOptions = {}): Promise<RuleText> {
    return (await this.request("rule", { ...place(cwd, options), name }, options)).rule as RuleText;
  }

  async trustStatus(cwd: string, options: PlaceOptions & RequestOptions = {}): Promise<TrustStatus> {
    return (await this.request("trust-status", place(cwd, options), options)).trust as TrustStatus;
  }

  async trustDiff(cwd: string, options: PlaceOptions & RequestOptions = {}): Promise<TrustDiff> {
    return (await this.request("trust-diff", place(cwd, options), options)).trustDiff as TrustDiff;
  }

  /** What touching `path` adds to a session (see `Loader.access`). */
  async access(
    cwd: string,
    path: string,
    options: PlaceOptions & RequestOptions & { session?: string } = {},
  ): Promise<Access> {
    const body = { ...place(cwd, options), path, ...(options.session ? { session: options.session } : {}) };
    return (await this.request("access", body, options)).access as Access;
  }

  #onLine(line: string): void {
    let response: unknown;
    try {
      response = JSON.parse(line);
    } catch {
      response = undefined;
    }
    if (typeof response !== "object" || response === null) {
      // Not ours to match: fail everything rather than leave it hanging.
      this.#rejectAll(new LisaContextError("bad-response", `not a JSON object: ${line.slice(0, 200)}`));
      return;
    }
    const { id, ...body } = response as { id?: unknown } & ResponseBody;
    if (typeof id !== "number") return; // An id-less error (the client never sends one).
    const pending = this.#pending.get(id);
    if (!pending) return; // Timed out already.
    this.#pending.delete(id);
    this.#idle();
    if (pending.timer) clearTimeout(pending.timer);
    const error = body.error as
      | { code?: string; message?: string; help?: string; available?: string[]; problems?: PolicyProblem[] }
      | undefined;
    if (error) {
      pending.reject(
        new LisaContextError((error.code ?? "bad-response") as ErrorCode, error.message ?? "", {
          help: error.help,
          available: error.available,
          problems: error.problems,
        }),
      );
    } else {
      pending.resolve(body);
    }
  }

  /** Lets Node exit once nothing is pending (unless closing). */
  #idle(): void {
    const child = this.#child;
    if (this.#pending.size === 0 && child && !this.#closed && child !== this.#stopping) {
      this.#hold(child, false);
    }
  }

  #lost(child: ChildProcessWithoutNullStreams, error: LisaContextError): void {
    if (this.#child !== child) return;
    this.#child = undefined;
    this.#rejectAll(error);
  }

  #rejectAll(error: LisaContextError): void {
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const p of pending) {
      if (p.timer) clearTimeout(p.timer);
      p.reject(error);
    }
  }
}

function place(cwd: string, options: PlaceOptions): Record<string, unknown> {
  const fields: Record<string, unknown> = { cwd };
  if (options.root !== undefined) fields.root = options.root;
  if (options.home !== undefined) fields.home = options.home;
  return fields;
}

/** The longest delay `setTimeout` keeps (a longer one fires at once). */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/** A numeric option: absent, or a whole number in `min..=max`. */
function checkWhole(name: string, value: number | undefined, min: number, max: number): void {
  if (value === undefined) return;
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new LisaContextError("bad-request", `\`${name}\` must be a whole number from ${min} to ${max}, not ${value}`);
  }
}
