#!/usr/bin/env bash
# Runs Lisa's own loader tests, unchanged, against `lisa-context/lisa`.
#
#   scripts/lisa-suite.sh LISA_GIT [OVERLAY.toml]
#
# LISA_GIT is a clone of oratis/LISA (a work tree or a bare repository);
# the test files are taken from commit $LISA_REV (default 6c210d7, the
# commit whose API lisa-context/lisa follows). In a scratch directory laid
# out as Lisa's tree, the script puts Lisa's src/paths.ts (its home seam,
# `lisaHome` and the cloud's `homeScope`), src/instructions/chain.test.ts
# and src/skills/discovery.test.ts beside the swap exactly as the READMEs
# give it (src/instructions/chain.ts and src/skills/discovery.ts, written by
# scripts/lisa-swap.mjs from the marked blocks), installs tsx and this
# package (built: `npm run build` first), and runs the two test files with
# node --test, as Lisa's `npm test` does. OVERLAY.toml, when given, is laid
# over the built-in and home policies through $LISA_CONTEXT_POLICY (e.g.
# Lisa's own wording in [templates] and `fingerprint.include-mtime = true`).
# Nothing of Lisa's is kept: the scratch directory is removed at the end.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
lisa="${1:?usage: scripts/lisa-suite.sh LISA_GIT [OVERLAY.toml]}"
overlay="${2:-}"
rev="${LISA_REV:-6c210d7}"
[ -z "$overlay" ] || overlay="$(cd "$(dirname "$overlay")" && pwd)/$(basename "$overlay")"

scratch="$(mktemp -d "${TMPDIR:-/tmp}/lisa-suite.XXXXXX")"
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/src/instructions" "$scratch/src/skills"
for f in src/paths.ts src/instructions/chain.test.ts src/skills/discovery.test.ts; do
  git -C "$lisa" show "$rev:$f" >"$scratch/$f"
done
node "$here/scripts/lisa-swap.mjs" "$scratch" >/dev/null
echo '{ "name": "lisa-suite", "private": true, "type": "module" }' >"$scratch/package.json"
(cd "$scratch" && npm install --no-audit --no-fund --loglevel=error tsx@4.23.15 "$here" >/dev/null)
cd "$scratch"
LISA_CONTEXT_POLICY="$overlay" node --import tsx --test src/instructions/chain.test.ts src/skills/discovery.test.ts
