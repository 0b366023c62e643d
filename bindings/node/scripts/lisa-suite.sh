#!/usr/bin/env bash
# Runs Lisa's own loader tests, unchanged, against `lisa-context/lisa`.
#
#   scripts/lisa-suite.sh LISA_GIT [OVERLAY.toml]
#
# LISA_GIT is a clone of oratis/LISA (a work tree or a bare repository);
# the test files are taken from commit $LISA_REV (default 6c210d7, the
# commit whose API lisa-context/lisa follows). In a scratch directory the
# script puts Lisa's src/instructions/chain.test.ts and
# src/skills/discovery.test.ts beside two one-line modules, chain.js and
# discovery.js, that re-export lisa-context/lisa, installs tsx and this
# package (built: `npm run build` first), and runs the two files with
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
git -C "$lisa" show "$rev:src/instructions/chain.test.ts" >"$scratch/chain.test.ts"
git -C "$lisa" show "$rev:src/skills/discovery.test.ts" >"$scratch/discovery.test.ts"
echo 'export * from "lisa-context/lisa";' >"$scratch/chain.js"
echo 'export * from "lisa-context/lisa";' >"$scratch/discovery.js"
echo '{ "name": "lisa-suite", "private": true, "type": "module" }' >"$scratch/package.json"
(cd "$scratch" && npm install --no-audit --no-fund --loglevel=error tsx@4.23.15 "$here" >/dev/null)
cd "$scratch"
LISA_CONTEXT_POLICY="$overlay" node --import tsx --test chain.test.ts discovery.test.ts
