import type { Access, Hello, RuleText, SkillFile, Snapshot, TrustDiff, TrustStatus } from "./generated/protocol.js";

/** Where a session works: the repository root, when the caller knows it. */
export interface PlaceOptions {
  /** The repository root (it must contain the cwd); default: found from the markers. */
  root?: string;
  /**
   * The home root this call is about (absolute); default: the source's own.
   * A `Loader` keeps one native loader per home named (its own policy,
   * nonce key, trust store and memo). A `Client`'s server serves it only
   * when started with `--homes-under DIR` and the home is below DIR
   * (`home-refused` otherwise).
   */
  home?: string;
}

/**
 * What both the in-process `Loader` and the JSON-lines `Client` offer, so a
 * server can switch between them. Every method rejects with a
 * `LisaContextError`.
 */
export interface ContextSource {
  /** What this build speaks: protocol version, crate version, ops, policies, error codes. */
  hello(): Promise<Hello>;
  /** The snapshot for a session's cwd (absolute). */
  snapshot(cwd: string, options?: PlaceOptions): Promise<Snapshot>;
  /** The fingerprint alone: one `stat` per examined path when nothing changed. */
  fingerprint(cwd: string, options?: PlaceOptions): Promise<string>;
  /** `null` when `fingerprint` still holds, else the new snapshot. */
  refresh(cwd: string, fingerprint: string, options?: PlaceOptions): Promise<Snapshot | null>;
  /** The `SKILL.md` of the skill that wins `name` for the cwd. */
  skill(cwd: string, name: string, options?: PlaceOptions): Promise<SkillFile>;
  /**
   * The body of the rule named `name` (`listed` or `manual`), read now as a
   * chain file is, and framed with the session's nonce (`prompt`).
   */
  rule(cwd: string, name: string, options?: PlaceOptions): Promise<RuleText>;
  /** The cwd's project items and their approvals (read-only). */
  trustStatus(cwd: string, options?: PlaceOptions): Promise<TrustStatus>;
  /** The pending project items, each with its diff (read-only). */
  trustDiff(cwd: string, options?: PlaceOptions): Promise<TrustDiff>;
  /** What touching `path` adds to a session (each file once per session). */
  access(cwd: string, path: string, options?: PlaceOptions & { session?: string }): Promise<Access>;
}
