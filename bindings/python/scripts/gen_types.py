"""Writes python/lisa_context/_types.py from the committed JSON Schema of the
protocol (../../schema/response.schema.json), so that every field of the
snapshot and of the other answers is declared once, in Rust, for the three
front ends (the command line's JSON, the Node types, these dataclasses).

    python scripts/gen_types.py           write the file
    python scripts/gen_types.py --check   fail if it is not up to date

Every definition becomes a frozen dataclass (an object) or a `Literal` alias
(a set of words), with the schema's descriptions as docstrings. Field names
are the JSON names in snake_case (`instructionFiles` -> `instruction_files`,
`from` -> `from_`). A schema construct this script does not know fails it:
the types are never silently looser than the schema.
"""

from __future__ import annotations

import json
import keyword
import re
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

HERE = Path(__file__).resolve().parent
SCHEMA = HERE.parent.parent.parent / "schema" / "response.schema.json"
OUT = HERE.parent / "python" / "lisa_context" / "_types.py"

SCALARS = {"string": "str", "integer": "int", "number": "float", "boolean": "bool"}


class Unknown(Exception):
    """A schema construct the generator does not translate."""


def snake(name: str) -> str:
    s = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()
    return s + "_" if keyword.iskeyword(s) else s


def is_enum(schema: Dict[str, Any]) -> bool:
    one = schema.get("oneOf")
    return isinstance(one, list) and all("const" in o and o.get("type") == "string" for o in one)


def ref_name(ref: str) -> str:
    prefix = "#/$defs/"
    if not ref.startswith(prefix):
        raise Unknown(f"a $ref outside $defs: {ref}")
    return ref[len(prefix):]


Conv = Optional[Callable[[str, int], str]]
"""How a JSON value becomes its Python one: given the expression of the JSON
value and the nesting depth (for the names of comprehension variables), the
expression of the Python value; `None` when it is the JSON value itself."""


def translate(schema: Dict[str, Any], defs: Dict[str, Any]) -> Tuple[str, Conv]:
    """The annotation of a value of `schema`, and how to convert it."""
    if "$ref" in schema:
        name = ref_name(schema["$ref"])
        if "properties" in defs[name]:
            return name, lambda e, _: f"{name}._from_json({e})"
        return name, None
    if "anyOf" in schema:
        arms = schema["anyOf"]
        rest = [a for a in arms if a != {"type": "null"}]
        if len(arms) == 2 and len(rest) == 1:
            ann, conv = translate(rest[0], defs)
            return f"Optional[{ann}]", optional(conv)
        raise Unknown(f"anyOf {arms}")
    kind = schema.get("type")
    if isinstance(kind, list):
        if set(kind) == {"null", "boolean", "number", "string", "array", "object"}:
            return "Any", None
        if len(kind) == 2 and "null" in kind:
            other = [k for k in kind if k != "null"][0]
            ann, conv = translate({**schema, "type": other}, defs)
            return f"Optional[{ann}]", optional(conv)
        raise Unknown(f"type {kind}")
    if kind in SCALARS:
        return SCALARS[kind], None
    if kind == "array":
        ann, item = translate(schema["items"], defs)
        if item is None:
            return f"List[{ann}]", lambda e, _: f"list({e})"
        return f"List[{ann}]", lambda e, n: f"[{item(f'x{n}', n + 1)} for x{n} in {e}]"
    if kind == "object" and "properties" not in schema:
        extra = schema.get("additionalProperties", True)
        ann, item = ("Any", None) if extra is True else translate(extra, defs)
        if item is None:
            return f"Dict[str, {ann}]", lambda e, _: f"dict({e})"
        return (
            f"Dict[str, {ann}]",
            lambda e, n: f"{{k{n}: {item(f'x{n}', n + 1)} for k{n}, x{n} in {e}.items()}}",
        )
    raise Unknown(json.dumps(schema)[:200])


def optional(conv: Conv) -> Conv:
    if conv is None:
        return None
    inner = conv
    return lambda e, n: f"None if {e} is None else {inner(e, n)}"


def doc(text: str, indent: str) -> List[str]:
    text = text.strip().replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    lines = text.splitlines() or [""]
    if len(lines) == 1:
        return [f'{indent}"""{lines[0]}"""']
    return [f'{indent}"""{lines[0]}'] + [f"{indent}{l}" if l else "" for l in lines[1:]] + [f'{indent}"""']


def dependencies_first(defs: Dict[str, Any]) -> List[str]:
    """The definitions in name order, each after those it refers to (an
    annotation then never names a class defined below it, where a builtin
    of the same name, `Warning`, would be taken instead)."""
    placed: List[str] = []
    seen: Set[str] = set()

    def refs(o: Any) -> List[str]:
        if isinstance(o, dict):
            own = [ref_name(o["$ref"])] if "$ref" in o else []
            return own + [r for v in o.values() for r in refs(v)]
        if isinstance(o, list):
            return [r for v in o for r in refs(v)]
        return []

    def place(name: str) -> None:
        if name in seen:
            return
        seen.add(name)
        for r in sorted(set(refs(defs[name]))):
            place(r)
        placed.append(name)

    for name in sorted(defs):
        place(name)
    return placed


def generate() -> str:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    defs: Dict[str, Any] = schema["$defs"]
    out: List[str] = [
        "# Generated by scripts/gen_types.py from schema/response.schema.json: do not edit.",
        "# The schema itself is generated from the Rust types (cargo test --test it schema::).",
        '"""The snapshot and the other answers of lisa-context, as typed dataclasses."""',
        "",
        "from __future__ import annotations",
        "",
        "from dataclasses import dataclass",
        "from typing import Any, Dict, List, Literal, Optional",
        "",
        "__all__ = [",
    ]
    out += [f'    "{name}",' for name in sorted(defs)]
    out += ["]", ""]
    for name in dependencies_first(defs):
        d = defs[name]
        out.append("")
        if is_enum(d):
            words = ", ".join(json.dumps(o["const"]) for o in d["oneOf"])
            out.append(f"{name} = Literal[{words}]")
            out += doc(d.get("description", name), "")
            continue
        if "properties" not in d:
            ann, _ = translate(d, defs)
            out.append(f"{name} = {ann}")
            out += doc(d.get("description", name), "")
            continue
        required = set(d.get("required", []))
        props = d["properties"]
        order = [p for p in props if p in required] + [p for p in props if p not in required]
        out += ["", "@dataclass(frozen=True)", f"class {name}:"]
        out += doc(d.get("description", name), "    ")
        out.append("")
        builds: List[str] = []
        for prop in order:
            ann, conv = translate(props[prop], defs)
            field = snake(prop)
            if prop in required:
                out.append(f"    {field}: {ann}")
                value = f"d[{json.dumps(prop)}]"
            else:
                if not ann.startswith("Optional[") and ann != "Any":
                    ann = f"Optional[{ann}]"
                    conv = optional(conv)
                out.append(f"    {field}: {ann} = None")
                value = f"d.get({json.dumps(prop)})"
            out += doc(props[prop].get("description", prop), "    ")
            if conv is None:
                builds.append(f"            {field}={value},")
            elif prop in required:
                builds.append(f"            {field}={conv(value, 0)},")
            else:
                # Tested through `get`, converted through `[]`: mypy
                # narrows the second to the value it knows is there.
                key = f"d[{json.dumps(prop)}]"
                inner = conv(key, 0).removeprefix(f"None if {key} is None else ")
                builds.append(f"            {field}=None if {value} is None else {inner},")
        out += [
            "",
            "    @classmethod",
            f"    def _from_json(cls, d: Dict[str, Any]) -> {name}:",
            '        """From the JSON object (fields this version does not know are ignored)."""',
            "        return cls(",
        ]
        out += builds
        out += ["        )"]
    return "\n".join(out) + "\n"


def main() -> int:
    text = generate()
    if "--check" in sys.argv[1:]:
        current = OUT.read_text(encoding="utf-8") if OUT.exists() else ""
        if current != text:
            print(f"{OUT} is not up to date: run python scripts/gen_types.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
