"""The layer check (see .ci/layers and ARCHITECTURE.md).

Reads every module of the library under src/ (and the command line under
src/cli/, which sees the library through `lisa_context::`), drops comments,
string literals and `#[cfg(test)]` items, and collects every module path in
the code that is left: `use` trees (braces expanded), paths inside
expressions, types and macro calls (`crate::`, `super::`, `self::`, a child
module's name, `lisa_context::`). Each path is resolved to the module that
defines the item, following `use` and `pub use` re-exports module by module.

It then fails on:

* an arrow between two top-level modules that the layer table in
  ARCHITECTURE.md does not allow (a module may import only modules of a
  lower layer; two modules of one layer never import each other);
* a cycle among the files of the library (inside a folder too);
* a path in the library that goes through the `lib.rs` facade (an item
  re-exported at the crate root, named as `crate::Item`);
* a `mod.rs` (or `lib.rs`) that holds more than `mod`, `use` and
  `pub use` lines and its own docs.

`--graph` prints the arrows between top-level modules instead.
"""

import os
import re
import sys
from collections import defaultdict

ROOT = os.path.normpath(os.environ.get("LAYERS_ROOT") or os.path.join(os.path.dirname(__file__), ".."))
SRC = os.path.join(ROOT, "src")
TABLE = os.path.join(ROOT, "ARCHITECTURE.md")

# ---------------------------------------------------------------- lexing


def strip(text):
    """The source with comments and the contents of string and char
    literals blanked (newlines kept, so line numbers stay)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        nxt = text[i + 1] if i + 1 < n else ""
        if c == "/" and nxt == "/":
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
            continue
        if c == "/" and nxt == "*":
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
            continue
        m = re.match(r'(?:b|c)?r(#*)"', text[i:i + 260]) if c in "brc" else None
        if m and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            end = '"' + m.group(1)
            j = text.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            out.append('""' + re.sub(r"[^\n]", "", text[i:j]))
            i = j
            continue
        if c == '"' or (c in "bc" and nxt == '"' and not (i and (text[i - 1].isalnum() or text[i - 1] == "_"))):
            j = i + (2 if c != '"' else 1)
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            body = text[i + 1:j]
            # A path written as a string (serde's `with = "crate::x::y"`)
            # is still an arrow: it stays, without its quotes.
            if re.fullmatch(r"(?:crate|super|self)(?:::[A-Za-z_][A-Za-z0-9_]*)+", body):
                out.append(" " + body + " ")
            else:
                out.append('""' + re.sub(r"[^\n]", "", text[i:j + 1]))
            i = j + 1
            continue
        if c == "'":
            m = re.match(r"'(?:\\(?:x[0-9a-fA-F]{2}|u\{[0-9a-fA-F]+\}|.)|[^\\'])'", text[i:i + 16])
            if m:
                out.append("' '")
                i += m.end()
                continue
        out.append(c)
        i += 1
    return "".join(out)


def matching(text, i, open_="{", close="}"):
    """Index just past the bracket that closes the one at `i`."""
    depth = 0
    for j in range(i, len(text)):
        if text[j] == open_:
            depth += 1
        elif text[j] == close:
            depth -= 1
            if depth == 0:
                return j + 1
    return len(text)


def item_end(text, i):
    """Index just past the item starting at `i`: its `;` or its braces."""
    j = i
    while j < len(text):
        if text[j] == ";":
            return j + 1
        if text[j] == "{":
            k = matching(text, j)
            # `mod x { }`, `fn f() { }`, `impl X { }`: the braces end it.
            # A `struct S { } ` too; a `static X: T = T { };` goes on.
            rest = text[k:k + 40].lstrip()
            head = text[i:j]
            if re.search(r"\b(static|const|let)\b", head) and "=" in head:
                j = k
                continue
            return k + (1 if rest.startswith(";") else 0)
        j += 1
    return len(text)


TEST_ATTR = re.compile(r"#\[cfg\((?:test|all\(test[^\]]*|any\(test[^\]]*)\)\]")


def drop_test_items(text):
    """Blanks every item under `#[cfg(test)]` (keeping newlines)."""
    while True:
        m = TEST_ATTR.search(text)
        if not m:
            return text
        j = m.end()
        # Further attributes before the item.
        while True:
            k = re.match(r"\s*#\[", text[j:])
            if not k:
                break
            j = matching(text, j + k.end() - 1, "[", "]")
        end = item_end(text, j)
        text = text[:m.start()] + re.sub(r"[^\n]", " ", text[m.start():end]) + text[end:]


# ---------------------------------------------------------------- modules


class Module:
    def __init__(self, path, file, crate):
        self.path = path  # ("skills", "frontmatter")
        self.file = file
        self.crate = crate  # "lib" or "bin"
        self.children = set()
        self.imports = {}  # local name -> absolute path (tuple)
        self.globs = []  # absolute module paths
        self.refs = []  # (line, absolute path)
        self.code = ""


def module_files():
    found = {}
    for base, _dirs, files in os.walk(SRC):
        for name in files:
            if not name.endswith(".rs"):
                continue
            full = os.path.join(base, name)
            rel = os.path.relpath(full, SRC)[:-3].split(os.sep)
            if rel == ["main"]:
                continue
            if rel[-1] in ("mod", "lib"):
                rel = rel[:-1]
            found[tuple(rel)] = full
    return found


IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


def expand_use(tree):
    """`a::{b, c::{d as e, self}, f::*}` -> [(path, alias)]: alias is the
    name the import binds, None for a glob."""
    toks = re.findall(IDENT + r"|::|[{},*]", tree)
    pos = [0]

    def peek():
        return toks[pos[0]] if pos[0] < len(toks) else None

    def take():
        pos[0] += 1
        return toks[pos[0] - 1]

    results = []

    def tree_at(prefix):
        segs = list(prefix)
        while True:
            t = peek()
            if t is None:
                return
            if t == "::":
                take()
                continue
            if t == "{":
                take()
                while peek() not in (None, "}"):
                    tree_at(segs)
                    if peek() == ",":
                        take()
                if peek() == "}":
                    take()
                return
            if t == "*":
                take()
                results.append((segs, None))
                return
            if t in (",", "}"):
                return
            take()
            if t == "as":
                alias = take() if peek() not in (None, ",", "}") else None
                results.append((segs, alias if alias != "_" else "_"))
                segs = None
                return
            segs = segs + [t]
            if peek() not in ("::",):
                if peek() == "as":
                    continue
                if segs[-1] == "self":
                    segs = segs[:-1]
                results.append((segs, segs[-1] if segs else None))
                return

    tree_at([])
    # `x as y`: replace the entry pushed for `x`.
    return [(s, a) for s, a in results if s is not None]


def absolute(mod, segs):
    """An absolute module path (a tuple under the crate root) for the path
    `segs` written in `mod`, or None for a path into another crate."""
    if not segs:
        return None
    head = segs[0]
    if head == "crate":
        return tuple(segs[1:])
    if head == "lisa_context" and mod.crate == "bin":
        return tuple(segs[1:])
    if head == "super":
        base = list(mod.path)
        while segs and segs[0] == "super":
            base = base[:-1]
            segs = segs[1:]
        return tuple(base) + tuple(segs)
    if head == "self":
        return tuple(mod.path) + tuple(segs[1:])
    if head in mod.children:
        return tuple(mod.path) + tuple(segs)
    if head in mod.imports and len(segs) > 1:
        return mod.imports[head] + tuple(segs[1:])
    return None


def split_inline(mods, mod):
    """Makes each inline `mod x { ... }` of `mod` a module of its own (its
    paths are relative to it), blanking it in the parent."""
    code = mod.code
    while True:
        m = re.search(r"(?:^|\n)\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(" + IDENT + r")\s*\{", code)
        if not m:
            break
        brace = m.end() - 1
        end = matching(code, brace)
        inner = Module(mod.path + (m.group(1),), mod.file, mod.crate)
        # Keep line numbers: the inner code keeps the text before it blank.
        inner.code = re.sub(r"[^\n]", " ", code[:brace + 1]) + code[brace + 1:end - 1]
        mod.children.add(m.group(1))
        mods[inner.path] = inner
        split_inline(mods, inner)
        code = code[:m.start()] + re.sub(r"[^\n]", " ", code[m.start():end]) + code[end:]
    mod.code = code


def parse(mods):
    for mod in list(mods.values()):
        raw = open(mod.file, encoding="utf-8").read()
        mod.code = drop_test_items(strip(raw))
        split_inline(mods, mod)
    for mod in mods.values():
        code = mod.code
        for m in re.finditer(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(" + IDENT + r")\s*;", code, re.M):
            mod.children.add(m.group(1))
    for mod in mods.values():
        code = mod.code
        mod.uses = []
        for m in re.finditer(r"(?:^|[;{}\s])(pub(?:\([^)]*\))?\s+)?use\s+([^;]*);", code):
            line = code.count("\n", 0, m.start()) + 1
            for segs, alias in expand_use(m.group(2)):
                mod.uses.append((line, segs, alias, bool(m.group(1))))
        # Use paths may name an import made in the same module; resolve in
        # two passes.
        for _ in range(2):
            for line, segs, alias, _pub in mod.uses:
                target = absolute(mod, segs)
                if target is None:
                    continue
                if alias is None:
                    if target not in mod.globs:
                        mod.globs.append(target)
                else:
                    mod.imports[alias] = target
    for mod in mods.values():
        code = mod.code
        for line, segs, alias, _pub in mod.uses:
            target = absolute(mod, segs)
            if target is not None:
                mod.refs.append((line, target, "use"))
        # Paths anywhere else in the code.
        no_use = re.sub(r"(?:^|(?<=[;{}\s]))(?:pub(?:\([^)]*\))?\s+)?use\s+[^;]*;",
                        lambda m: re.sub(r"[^\n]", " ", m.group(0)), code)
        for m in re.finditer(r"(?<![A-Za-z0-9_:])(" + IDENT + r")((?:\s*::\s*" + IDENT + r")+)", no_use):
            segs = [m.group(1)] + [s for s in re.split(r"\s*::\s*", m.group(2)) if s]
            if segs[0] not in ("crate", "super", "self", "lisa_context") and segs[0] not in mod.children:
                continue
            target = absolute(mod, segs)
            if target is not None:
                line = no_use.count("\n", 0, m.start()) + 1
                mod.refs.append((line, target, "path"))


def resolve(mods, path, seen=None):
    """The module that defines the item at `path` (following re-exports),
    and whether the way went through the crate root's re-exports."""
    seen = seen or set()
    if path in seen:
        return None, False
    seen.add(path)
    # Longest module prefix.
    for k in range(len(path), -1, -1):
        prefix = tuple(path[:k])
        if prefix in mods:
            break
    else:
        return None, False
    rest = path[k:]
    if not rest:
        return prefix, False
    mod = mods[prefix]
    name = rest[0]
    if name in mod.imports:
        target = mod.imports[name] + tuple(rest[1:])
        got, facade = resolve(mods, target, seen)
        if got is None:
            return prefix, False
        return got, facade or prefix == ()
    for g in mod.globs:
        cand = g + tuple(rest)
        for kk in range(len(cand), -1, -1):
            if tuple(cand[:kk]) in mods:
                break
        inner = mods.get(tuple(cand[:kk]))
        if inner is not None and len(cand) > kk and defines(inner, cand[kk]):
            got, facade = resolve(mods, cand, seen)
            if got is not None:
                return got, facade or prefix == ()
    return prefix, False


def defines(mod, name):
    return bool(re.search(
        r"\b(?:fn|struct|enum|trait|type|const|static|mod|union|macro_rules!)\s+" + re.escape(name) + r"\b",
        mod.code)) or name in mod.imports


# ---------------------------------------------------------------- the table


def read_table():
    """{top-level module: layer} from the table between the markers in
    ARCHITECTURE.md."""
    text = open(TABLE, encoding="utf-8").read()
    m = re.search(r"<!-- layers:begin -->(.*?)<!-- layers:end -->", text, re.S)
    if not m:
        sys.exit(f"{TABLE}: no layer table between <!-- layers:begin --> and <!-- layers:end -->")
    layers = {}
    for row in m.group(1).splitlines():
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        if len(cells) < 2 or not cells[0].isdigit():
            continue
        for name in re.findall(r"`([a-z_]+)`", cells[1]):
            if name in layers:
                sys.exit(f"{TABLE}: `{name}` is in two layers")
            layers[name] = int(cells[0])
    return layers


def top(path):
    return path[0] if path else "(root)"


def main():
    files = module_files()
    mods = {}
    for path, file in files.items():
        crate = "bin" if path[:1] == ("cli",) else "lib"
        mods[path] = Module(path, file, crate)
    parse(mods)

    arrows = defaultdict(list)  # (from file module, to file module) -> [(line, how)]
    facade = []
    for mod in mods.values():
        for line, target, how in mod.refs:
            got, through_root = resolve(mods, target)
            if got is None or got == mod.path:
                continue
            # A module's own children are below it (checked by the cycle
            # rule); the crate root's `mod` lines are not arrows.
            if mod.path == ():
                continue
            if through_root and mod.crate == "lib":
                facade.append((mod, line, target))
            arrows[(mod.path, got)].append((line, how))

    def name(path):
        return "::".join(path) or "lib"

    def where(mod_path, line):
        return f"{os.path.relpath(mods[mod_path].file, ROOT)}:{line}"

    if "--graph" in sys.argv:
        edges = defaultdict(set)
        for (a, b), lines in arrows.items():
            if top(a) != top(b):
                edges[(top(a), top(b))].add(where(a, lines[0][0]))
        for (a, b) in sorted(edges):
            print(f"{a} -> {b}   ({', '.join(sorted(edges[(a, b)])[:3])})")
        return 0

    problems = []
    layers = read_table()
    tops = {top(p) for p in mods if p}
    for t in sorted(tops - set(layers)):
        problems.append(f"src/{t}: a top-level module the layer table in ARCHITECTURE.md does not list")
    for t in sorted(set(layers) - tops):
        problems.append(f"ARCHITECTURE.md: the layer table lists `{t}`, which is not a top-level module")
    for (a, b), lines in sorted(arrows.items()):
        ta, tb = top(a), top(b)
        if ta == tb or ta not in layers or tb not in layers:
            continue
        if layers[tb] >= layers[ta]:
            kind = "sideways (same layer)" if layers[tb] == layers[ta] else "upward"
            problems.append(
                f"{where(a, lines[0][0])}: {name(a)} (layer {layers[ta]}) imports {name(b)} "
                f"(layer {layers[tb]}): {kind}")
    for mod, line, target in facade:
        problems.append(
            f"{where(mod.path, line)}: {name(mod.path)} names crate::{'::'.join(target)} through "
            f"the lib.rs facade; name the module that defines it")

    # Cycles among files (Tarjan).
    graph = defaultdict(set)
    for (a, b) in arrows:
        graph[a].add(b)
    index, low, stack, on, sccs = {}, {}, [], set(), []
    counter = [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                sccs.append(comp)

    sys.setrecursionlimit(10000)
    for v in sorted(mods):
        if v not in index:
            strong(v)
    for comp in sccs:
        members = sorted(comp)
        detail = []
        for a in members:
            for b in members:
                if (a, b) in arrows:
                    detail.append(f"{name(a)} -> {name(b)} ({where(a, arrows[(a, b)][0][0])})")
        problems.append("an import cycle among " + ", ".join(name(m) for m in members) + ":\n      "
                        + "\n      ".join(detail))

    # A mod.rs holds `mod` and `use` lines only.
    for path, mod in sorted(mods.items()):
        if not mod.file.endswith(("mod.rs", "lib.rs")):
            continue
        body = re.sub(r"#!?\[(?:[^\[\]]|\[[^\]]*\])*\]", "", mod.code)
        body = re.sub(r"\bcompile_error!\s*\([^;]*\)\s*;", "", body)
        body = re.sub(r"(?:pub(?:\([^)]*\))?\s+)?(?:use|mod)\s+[^;{]*(?:\{[^;]*\})?[^;]*;", "", body)
        if body.strip():
            line = next(i + 1 for i, l in enumerate(body.splitlines()) if l.strip())
            problems.append(f"{where(path, line)}: {name(path)} holds code; a mod.rs holds `mod` and `use` lines")

    if problems:
        for p in problems:
            print("layers: " + p)
        print(f"layers check FAILED: {len(problems)} problem(s)")
        return 1
    print(f"layers check ok: {len(mods)} modules, {len(arrows)} arrows, no cycle, every arrow points down the table")
    return 0


if __name__ == "__main__":
    sys.exit(main())
