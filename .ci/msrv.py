"""Reads `cargo metadata` on stdin; fails when a dependency declares a newer
`rust-version` than lisa-context does (see .ci/msrv)."""

import json
import sys

meta = json.load(sys.stdin)
packages = {p["id"]: p for p in meta["packages"]}
root = next(p for p in meta["packages"] if p["name"] == "lisa-context")
nodes = {n["id"]: n for n in meta["resolve"]["nodes"]}


def version(text):
    parts = [int(x) for x in (text or "0").split(".")]
    return tuple(parts + [0] * (3 - len(parts)))


declared = root.get("rust_version")
if not declared:
    sys.exit("Cargo.toml declares no rust-version")


def reachable(kinds, start=None):
    """Packages reached from `start` (the root) through `kinds` of its own
    dependencies, then through normal and build dependencies."""
    start = start or root
    seen, stack = set(), [start["id"]]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        for dep in nodes[node]["deps"]:
            dep_kinds = [k["kind"] for k in dep["dep_kinds"]]
            allowed = kinds if node == start["id"] else (None, "build")
            if any(k in allowed for k in dep_kinds):
                stack.append(dep["pkg"])
    seen.discard(start["id"])
    return seen


failed = False
checks = [("build", (None, "build")), ("tests", (None, "build", "dev"))]
# The workspace's other members (the Node binding) hold the same MSRV.
members = [packages[m] for m in meta.get("workspace_members", []) if m != root["id"]]
for member in members:
    checks.append((member["name"], (None, "build", "dev")))
for label, kinds in checks:
    if label in ("build", "tests"):
        start = root
    else:
        start = next(p for p in members if p["name"] == label)
        if version(start.get("rust_version")) > version(declared):
            print("  %s declares Rust %s" % (label, start.get("rust_version")))
            failed = True
    ids = reachable(kinds, start)
    newest = packages[max(ids, key=lambda i: version(packages[i].get("rust_version")))]
    need = newest.get("rust_version") or "none"
    print("msrv (%s): declared %s; the newest need is %s (%s)" % (label, declared, need, newest["name"]))
    for i in sorted(ids, key=lambda i: packages[i]["name"]):
        p = packages[i]
        if version(p.get("rust_version")) > version(declared):
            print("  %s %s needs Rust %s" % (p["name"], p["version"], p["rust_version"]))
            failed = True
if failed:
    sys.exit("a dependency needs a newer Rust than Cargo.toml declares")
