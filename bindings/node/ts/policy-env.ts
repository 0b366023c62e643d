import path from "node:path";

/**
 * The loader options a `--policy` value stands for, by the command line's
 * rule: a bare word (letters, digits, `-`, `_`) names a shipped policy that
 * replaces the built-in one; anything else is a policy file laid over the
 * built-in and home policies (a relative path is taken from the process's
 * cwd). "" stands for nothing.
 */
export function policyOptions(value: string): { policy?: string; basePolicy?: string } {
  if (value === "") return {};
  if (/^[A-Za-z0-9_-]+$/.test(value)) return { basePolicy: value };
  return { policy: path.resolve(value) };
}

/** `$LISA_CONTEXT_POLICY`, the default of every front end's `--policy` (unset or empty: none). */
export function envPolicy(): string {
  return process.env.LISA_CONTEXT_POLICY ?? "";
}
