import type { ErrorCode, PolicyProblem } from "./generated/protocol.js";

/**
 * Codes only the JSON-lines client produces (the server never sends them):
 * `timeout` (no answer within the request's timeout), `server-exited` (the
 * process exited or was killed with the request pending), `spawn-failed`
 * (the binary could not be started), `closed` (a request after `close()`),
 * `bad-response` (a line from the server that is not a JSON object).
 */
export type ClientErrorCode =
  | "timeout"
  | "server-exited"
  | "spawn-failed"
  | "closed"
  | "bad-response";

/** Every code a `LisaContextError` may carry. */
export type LisaContextErrorCode = ErrorCode | ClientErrorCode;

/**
 * The one exception type of this package, thrown by the binding and by the
 * client alike. `code` is one of the documented, stable words (the server's
 * `error.code`, see `ErrorCode`, or a `ClientErrorCode`); `message` is for
 * a person.
 */
export class LisaContextError extends Error {
  readonly code: LisaContextErrorCode;
  /** What to do about it, when there is something to say (the server's `help`). */
  readonly help?: string;
  /** For `skill-not-found`: the skills available from the cwd. */
  readonly available?: string[];
  /** For `policy-invalid` (from the client): each problem, with its file, line, column and key. */
  readonly problems?: PolicyProblem[];

  constructor(
    code: LisaContextErrorCode,
    message: string,
    options?: { cause?: unknown; help?: string; available?: string[]; problems?: PolicyProblem[] },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "LisaContextError";
    this.code = code;
    if (options?.help !== undefined) this.help = options.help;
    if (options?.available !== undefined) this.available = options.available;
    if (options?.problems !== undefined) this.problems = options.problems;
  }
}
