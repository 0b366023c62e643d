"""Drives `lisa-context mcp` with the official Python SDK client (`mcp`:
ClientSession over stdio_client) over a tree built here, and checks what a
host checks: the skills extension is declared, every listed skill is one of
the tree's winners, every file's digest and size match the file on disk
(hashed here), resources/read gives those bytes, and what is not a listed
file is -32602.

    python tests/mcp/client.py /path/to/lisa-context

Exit 0 when every check holds.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

import mcp
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.types import Request

ANY: TypeAdapter[dict[str, Any]] = TypeAdapter(dict[str, Any])


def sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def skill(name: str, description: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: {description}\nlicense: MIT\n---\n{body}\n"


def build(base: Path) -> dict[str, Path]:
    home, repo = base / "home", base / "repo"
    (repo / ".git").mkdir(parents=True)

    def write(rel: str, content: str | bytes) -> None:
        p = base / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            p.write_bytes(content)
        else:
            p.write_text(content)

    write("repo/AGENTS.md", "Use tabs.\n")
    write("home/skills/notes/SKILL.md", skill("notes", "Take notes.", "See ref/a.md."))
    write("home/skills/notes/ref/a.md", "# A\n")
    write("home/skills/notes/img.bin", bytes([0, 200, 13, 10, 255]))
    write("repo/.agents/skills/notes/SKILL.md", skill("notes", "Shadowed.", "x"))
    write("repo/.agents/skills/deploy/SKILL.md", skill("deploy", "Deploy.", "Go."))
    os.symlink("/etc/passwd", repo / ".agents/skills/deploy/passwd")
    os.mkfifo(repo / ".agents/skills/deploy/pipe")
    return {
        "home/notes": home / "skills/notes",
        "project/deploy": repo / ".agents/skills/deploy",
    }


async def request(session: ClientSession, method: str, params: dict[str, Any]) -> dict[str, Any]:
    return await session.send_request(Request[dict[str, Any], str](method=method, params=params), ANY)


async def main(binary: str) -> int:
    checks = 0
    with tempfile.TemporaryDirectory(prefix="lisa-mcp-py-") as tmp:
        base = Path(tmp)
        folders = build(base)
        params = StdioServerParameters(
            command=binary,
            args=["--home", str(base / "home"), "mcp", "--cwd", str(base / "repo")],
            env={"PATH": os.environ.get("PATH", ""), "HOME": str(base / "userhome")},
        )
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                caps = init.capabilities.model_dump(by_alias=True, exclude_none=True)
                assert caps.get("resources") is not None, caps
                ext = (caps.get("extensions") or {}).get("io.modelcontextprotocol/skills")
                assert ext == {"directoryRead": True}, caps
                checks += 2

                entries: list[dict[str, Any]] = []
                cursor: str | None = None
                while True:
                    page = await request(session, "skills/list", {"cursor": cursor} if cursor else {})
                    entries += page["skills"]
                    cursor = page.get("nextCursor")
                    if not cursor:
                        break
                uris = sorted(e["uri"] for e in entries)
                assert uris == ["skill://home/notes/SKILL.md", "skill://project/deploy/SKILL.md"], uris
                checks += 1

                for entry in entries:
                    key = entry["uri"][len("skill://") : -len("/SKILL.md")]
                    folder = folders[key]
                    on_disk = {
                        p.relative_to(folder).as_posix(): p.read_bytes()
                        for p in folder.rglob("*")
                        if p.is_file() and not p.is_symlink()
                    }
                    listed = {r["uri"][len(f"skill://{key}/") :]: r for r in entry["resources"]}
                    assert sorted(listed) == sorted(on_disk), (listed, on_disk)
                    checks += 1
                    for rel, data in on_disk.items():
                        r = listed[rel]
                        assert r["digest"] == sha256(data) and r["size"] == len(data), r
                        read_result = await session.read_resource(r["uri"])
                        content = read_result.contents[0]
                        text = getattr(content, "text", None)
                        got = text.encode() if text is not None else base64.b64decode(content.blob)
                        assert sha256(got) == r["digest"], r["uri"]
                        checks += 2
                    got_entry = await request(session, "skills/get", {"uri": entry["uri"]})
                    assert got_entry["skill"] == entry
                    checks += 1

                for uri in [
                    "skill://project/deploy/passwd",
                    "skill://project/deploy/pipe",
                    "skill://project/deploy/%2e%2e/%2e%2e/AGENTS.md",
                    "skill://project/notes/SKILL.md",
                ]:
                    try:
                        await session.read_resource(uri)
                    except mcp.MCPError as e:
                        assert e.error.code == -32602, (uri, e.error)
                        checks += 1
                    else:
                        raise AssertionError(f"{uri} was served")

                prompt = await session.get_prompt("project-context")
                assert "Use tabs." in prompt.messages[0].content.text
                checks += 1
    print(f"mcp (Python SDK {mcp_version()}): {checks} checks passed")
    return 0


def mcp_version() -> str:
    from importlib.metadata import version

    return version("mcp")


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1])))
