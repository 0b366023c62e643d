/**
 * lisa-context for Node: the project-context section of an AI agent's
 * system prompt.
 *
 * - `Loader`: the Rust library in this process (napi-rs), async.
 * - `Client`: a typed client of `lisa-context serve` in a child process.
 *
 * Both implement `ContextSource` and throw `LisaContextError` with the
 * documented codes. The data types are generated from the JSON Schemas the
 * Rust types produce (`schema/`).
 */
export { Loader, type LoaderOptions } from "./loader.js";
export { Client, type ClientOptions, type RequestOptions, type ResponseBody } from "./client.js";
export { LisaContextError, type ClientErrorCode, type LisaContextErrorCode } from "./errors.js";
export type { ContextSource, PlaceOptions } from "./source.js";
export type * from "./generated/protocol.js";
