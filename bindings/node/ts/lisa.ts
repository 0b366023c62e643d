/**
 * `lisa-context/lisa`: Lisa's own loader API (oratis/LISA,
 * `src/instructions/chain.ts` and `src/skills/discovery.ts` as of 6c210d7),
 * the same names, signatures and types, answered by the in-process binding
 * under the policy instead of by reading the disk directly.
 *
 * What maps how:
 *
 * - The home is read at call time, as Lisa does: `$LISA_HOME`, else
 *   `~/.lisa`. Lisa's cloud build reads the home `AGENTS.md` from the global
 *   home (`lisaGlobalHome()`) and skills from the active one (`lisaHome()`
 *   in Lisa's `src/paths.ts`: `homeScope.getStore()`, the
 *   `AsyncLocalStorage` a signed-in request runs in, else the global home).
 *   That scope is Lisa's own object, out of this module's reach, so the
 *   swap passes the function once: `useSkillsHome(lisaHome)` in Lisa's
 *   `src/skills/discovery.ts` beside `export * from "lisa-context/lisa"`
 *   (the block the README gives, run as written by
 *   `test/lisa-swap.test.mjs`). It is called at every call, in the caller's
 *   async context, so each request reads its own user's home. Each
 *   distinct home gets its own loader (and cache), kept while in use.
 * - What is written: the loader's own files (the nonce key
 *   `context-nonce.key`, the frontmatter memo `context-frontmatter.memo`;
 *   the trust store `context-trust.json` only when approvals are made) go
 *   to the state root, `roots.state`: under Lisa's policy the home itself,
 *   so every per-user home gets them, unless `$LISA_CONTEXT_STATE` (read at
 *   call time too) names an absolute folder of the operator's, which then
 *   holds them, one folder per home.
 * - The policy is the built-in one (Lisa's), the home's
 *   `context-policy.toml` over it, and `$LISA_CONTEXT_POLICY` (a policy file,
 *   or a shipped policy's name) over both, read at call time too.
 * - `renderInstructionChain` and `skillSources` are synchronous, as in Lisa:
 *   the first returns the section the chain was loaded with (its wording is
 *   the policy's `[templates]`), the second reads the policy's
 *   `[[skills.sources]]`.
 * - Fingerprints are this library's: opaque strings that move exactly when
 *   what the loader would show moves (content, by default; set
 *   `fingerprint.include-mtime = true` for Lisa's rule that a touch counts).
 */

import { mkdtempSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";

import { LisaContextError, type LisaContextErrorCode } from "./errors.js";
import type { Snapshot } from "./generated/protocol.js";
import { envPolicy, policyOptions } from "./policy-env.js";
import type * as Native from "../native.cjs";
import { native } from "./native.js";

/** Filenames honoured at each level, in read order (the built-in policy's `instructions.level-files`). */
export const INSTRUCTION_FILENAMES = ["AGENTS.md", "CLAUDE.md"] as const;

/** Total budget across all loaded files, in UTF-8 bytes (the built-in policy's `instructions.budget-bytes`). */
export const INSTRUCTION_BUDGET_BYTES = 32 * 1024;

export interface InstructionFile {
  /** Absolute path it was read from. */
  path: string;
  /** Trimmed contents, possibly truncated (see `truncated`). */
  content: string;
  /** Home-level files are the user's own; project-level arrive via cwd. */
  scope: "home" | "project";
  truncated: boolean;
}

export interface InstructionChain {
  files: InstructionFile[];
  /** Files skipped because an earlier file had the same content. */
  deduped: string[];
  /** True when the budget cut the chain short. */
  budgetExhausted: boolean;
}

/** A skill's frontmatter, as Lisa's `SkillFrontmatter`. */
export interface SkillFrontmatter {
  name: string;
  description: string;
  version?: string;
  tags?: string[];
}

/** A skill, as Lisa's `Skill`. */
export interface Skill {
  frontmatter: SkillFrontmatter;
  /** The text after the frontmatter. */
  body: string;
  /** The absolute path of its `SKILL.md`. */
  path: string;
}

export interface SkillSource {
  dir: string;
  rank: number;
  scope: "home" | "project";
}

export interface DiscoveredSkill extends Skill {
  scope: "home" | "project";
  /** Directory it was discovered under. */
  source: string;
}

export interface SkillDiscovery {
  skills: DiscoveredSkill[];
  /** Project skills dropped because a skill of a lower rank owns the name. */
  shadowed: Array<{ name: string; path: string }>;
}

/** The two fields Lisa's `PromptSnapshot` takes from the loader, with what they come from. */
export interface PromptContext {
  /** `PromptSnapshot.instructionFiles`: the kept files' paths, outermost first. */
  instructionFiles: string[];
  /** `PromptSnapshot.shadowedProjectSkills`: the names of the project skills shadowed. */
  shadowedProjectSkills: string[];
  chain: InstructionChain;
  discovery: SkillDiscovery;
  /** One fingerprint for both (the instruction chain's and the skills'). */
  fingerprint: string;
}

// ---------------------------------------------------------------------------
// Loaders, one per home and policy, read at call time.

/** Lisa's `lisaGlobalHome()`: `$LISA_HOME`, else `~/.lisa`. */
function globalHome(): string {
  return process.env.LISA_HOME ?? path.join(os.homedir(), ".lisa");
}

let skillsHome: () => string = globalHome;

/**
 * Where `discoverSkills`, `skillSources`, `skillSourcesFingerprint` and
 * `promptContext` read home skills from: a function called at each call,
 * in the caller's async context (Lisa's `lisaHome`, which answers the
 * user's home inside a cloud request's `homeScope` and the global home
 * outside one). `undefined` restores the default, the global home
 * (`$LISA_HOME`, else `~/.lisa`).
 */
export function useSkillsHome(resolve: (() => string) | undefined): void {
  skillsHome = resolve ?? globalHome;
}

/** Loaders kept, most recently used last. */
const loaders = new Map<string, Native.NativeLoader>();
const MAX_LOADERS = 64;

function isDirectory(dir: string): boolean {
  try {
    return statSync(dir).isDirectory();
  } catch {
    return false;
  }
}

/**
 * The loader for `home` under the policy `$LISA_CONTEXT_POLICY` names now,
 * keeping its own files where `$LISA_CONTEXT_STATE` says now (the shipped
 * policies' first `roots.state` candidate, read by the native loader from
 * the process's environment when it is made). A home that is not a
 * directory is no home (Lisa reads nothing from it).
 */
function loaderFor(home: string): Native.NativeLoader {
  const present = isDirectory(home);
  const policy = envPolicy();
  const state = process.env.LISA_CONTEXT_STATE ?? "";
  const key = JSON.stringify([present ? path.resolve(home) : "", policy, state]);
  let loader = loaders.get(key);
  if (loader) {
    loaders.delete(key);
  } else {
    try {
      loader = new native.NativeLoader({
        // No home: the policy's candidates would find `$LISA_HOME` again, so
        // name a home that holds nothing instead of none.
        home: present ? path.resolve(home) : emptyHome(),
        ...policyOptions(policy),
      });
    } catch (e) {
      throw asError(e);
    }
    if (loaders.size >= MAX_LOADERS) {
      const oldest = loaders.keys().next().value;
      if (oldest !== undefined) loaders.delete(oldest);
    }
  }
  loaders.set(key, loader);
  return loader;
}

let empty: string | undefined;

/** An empty folder of this process's own, standing for a missing home. */
function emptyHome(): string {
  if (empty === undefined || !isDirectory(empty)) {
    empty = mkdtempSync(path.join(os.tmpdir(), "lisa-context-no-home-"));
  }
  return empty;
}

function asError(e: unknown): unknown {
  if (!(e instanceof Error)) return e;
  try {
    const body = JSON.parse(e.message) as { code?: unknown; message?: unknown };
    if (typeof body.code === "string" && typeof body.message === "string") {
      return new LisaContextError(body.code as LisaContextErrorCode, body.message, { cause: e });
    }
  } catch {
    // Not ours.
  }
  return e;
}

function unwrap(outcome: Native.Outcome): string {
  if (outcome.code != null) {
    throw new LisaContextError(outcome.code as LisaContextErrorCode, outcome.message ?? outcome.code);
  }
  return outcome.value ?? "null";
}

/** What `NativeLoader.lisa` answers. */
interface View {
  snapshot: Snapshot;
  texts: string[];
  instructions: string;
  skillFiles: Record<string, string>;
}

async function view(loader: Native.NativeLoader, cwd: string, root?: string): Promise<View> {
  return JSON.parse(unwrap(await loader.lisa(path.resolve(cwd), root))) as View;
}

async function fingerprintOf(loader: Native.NativeLoader, cwd: string, root?: string): Promise<string> {
  return unwrap(await loader.fingerprint(path.resolve(cwd), root));
}

function scopeOf(origin: string): "home" | "project" {
  return origin === "home" ? "home" : "project";
}

// ---------------------------------------------------------------------------
// src/instructions/chain.ts

/** The section each chain was loaded with, for `renderInstructionChain`. */
const sections = new WeakMap<InstructionChain, { files: InstructionFile[]; count: number; text: string }>();

/**
 * The nearest ancestor of `cwd` holding a repository marker (`.git` under
 * Lisa's policy; another user's is ignored), or `cwd` itself when there is
 * none.
 */
export async function findProjectRoot(cwd: string): Promise<string> {
  try {
    return (await view(loaderFor(globalHome()), cwd)).snapshot.repoRoot;
  } catch (e) {
    // A cwd that cannot be examined has no marker above it that counts.
    if (e instanceof LisaContextError && (e.code === "bad-cwd" || e.code === "relative-cwd")) {
      return path.resolve(cwd);
    }
    throw e;
  }
}

function chainOf(v: View): InstructionChain {
  const files = v.snapshot.instructionFiles.map((b, i) => ({
    path: b.path,
    content: v.texts[i] ?? "",
    scope: scopeOf(b.origin),
    truncated: b.truncated,
  }));
  const chain: InstructionChain = {
    files,
    deduped: v.snapshot.deduped.map((d) => d.path),
    budgetExhausted: v.snapshot.budget.exhausted,
  };
  sections.set(chain, { files, count: files.length, text: v.instructions });
  return chain;
}

/** The home's instruction files, then the project's from its root down to `cwd`, under the policy. */
export async function loadInstructionChain(cwd: string): Promise<InstructionChain> {
  return chainOf(await view(loaderFor(globalHome()), cwd));
}

/**
 * The chain as a prompt section, or "" when it holds no file. Synchronous:
 * the section was rendered (nonce-framed, hidden text treated, the policy's
 * wording) when the chain was loaded. A chain not returned by
 * `loadInstructionChain`, or whose `files` were replaced, cannot be rendered
 * here and throws `bad-request`.
 */
export function renderInstructionChain(chain: InstructionChain): string {
  if (chain.files.length === 0) return "";
  const loaded = sections.get(chain);
  if (!loaded || loaded.files !== chain.files || loaded.count !== chain.files.length) {
    throw new LisaContextError(
      "bad-request",
      "renderInstructionChain renders a chain as loadInstructionChain returned it",
    );
  }
  return loaded.text;
}

/** Moves when anything the chain for `cwd` (or the skills it sits beside) would show moves. */
export async function instructionChainFingerprint(cwd: string): Promise<string> {
  return fingerprintOf(loaderFor(globalHome()), cwd);
}

// ---------------------------------------------------------------------------
// src/skills/discovery.ts

/** The folders scanned for skills, in rank order (the policy's `[[skills.sources]]`, resolved). */
export function skillSources(projectRoot: string): SkillSource[] {
  const loader = loaderFor(skillsHome());
  let text: string;
  try {
    text = loader.skillSources(path.resolve(projectRoot));
  } catch (e) {
    throw asError(e);
  }
  const sources = JSON.parse(text) as Array<{ dir: string; rank: number; scope: string }>;
  return sources.map((s) => ({ dir: s.dir, rank: s.rank, scope: scopeOf(s.scope) }));
}

/** The text after a `SKILL.md`'s frontmatter (Lisa's `parseFrontmatter` body). */
function bodyOf(content: string): string {
  const text = content.startsWith("\uFEFF") ? content.slice(1) : content;
  if (!text.startsWith("---")) return text;
  const end = text.indexOf("\n---", 3);
  if (end < 0) return "";
  const rest = text.slice(end + 4);
  const eol = rest.indexOf("\n");
  return eol < 0 ? "" : rest.slice(eol + 1).replace(/^\r?\n/, "");
}

function discoveryOf(v: View): SkillDiscovery {
  const skills: DiscoveredSkill[] = v.snapshot.skills.map((s) => {
    const frontmatter: SkillFrontmatter = { name: s.name, description: s.description };
    if (s.frontmatter.version != null) frontmatter.version = s.frontmatter.version;
    const tags = s.frontmatter.tags ?? [];
    if (tags.length > 0) frontmatter.tags = [...tags];
    return {
      frontmatter,
      body: bodyOf(v.skillFiles[s.name] ?? ""),
      path: s.path,
      scope: scopeOf(s.origin),
      source: path.dirname(path.dirname(s.path)),
    };
  });
  skills.sort((a, b) => a.frontmatter.name.localeCompare(b.frontmatter.name));
  return {
    skills,
    shadowed: v.snapshot.shadowedProjectSkills.map((s) => ({ name: s.name, path: s.path })),
  };
}

/** The skills for a project root: the lowest rank claims a name (home skills first, under Lisa's policy). */
export async function discoverSkills(projectRoot: string): Promise<SkillDiscovery> {
  const root = path.resolve(projectRoot);
  return discoveryOf(await view(loaderFor(skillsHome()), root, root));
}

/** Moves when anything the skills for `projectRoot` (or its root's instruction files) would show moves. */
export async function skillSourcesFingerprint(projectRoot: string): Promise<string> {
  const root = path.resolve(projectRoot);
  return fingerprintOf(loaderFor(skillsHome()), root, root);
}

// ---------------------------------------------------------------------------
// src/prompt.ts's share, in one call

/**
 * What Lisa's `buildSystemPromptSnapshot` takes from the loader for `cwd`,
 * from one build: the chain, the skills of its project root, the two
 * `PromptSnapshot` fields, and a fingerprint covering both. (When skills
 * come from another home than instruction files, two builds.)
 */
export async function promptContext(cwd: string): Promise<PromptContext> {
  const chainHome = globalHome();
  const v = await view(loaderFor(chainHome), cwd);
  const root = v.snapshot.repoRoot;
  const sameHome = path.resolve(skillsHome()) === path.resolve(chainHome);
  const skillsView = sameHome && root === v.snapshot.cwd ? v : await view(loaderFor(skillsHome()), root, root);
  const chain = chainOf(v);
  const discovery = discoveryOf(skillsView);
  return {
    instructionFiles: chain.files.map((f) => f.path),
    shadowedProjectSkills: discovery.shadowed.map((s) => s.name),
    chain,
    discovery,
    fingerprint:
      skillsView === v ? v.snapshot.fingerprint : `${v.snapshot.fingerprint}:${skillsView.snapshot.fingerprint}`,
  };
}
