"""The project context of the bundled demo, the way a Python harness uses
it: build the section once, then each turn ask whether it still holds.

    python examples/snapshot.py [REPO_ROOT_OF_LISA_CONTEXT]
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

from lisa_context import LisaContextError, Loader, Snapshot


def system_prompt(base: str, snapshot: Snapshot) -> str:
    return f"{base}\n\n{snapshot.prompt}"


def main(argv: List[str]) -> int:
    checkout = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parents[3]
    demo = checkout / "examples" / "demo"
    cwd = demo / "repo" / "packages" / "api"
    loader = Loader(home=demo / "home")
    try:
        snapshot = loader.snapshot(cwd)
    except LisaContextError as e:
        print(f"lisa-context: {e.code}: {e.message}", file=sys.stderr)
        return 1
    prompt = system_prompt("You are a careful coding agent.", snapshot)
    files: List[str] = [Path(b.path).relative_to(demo).as_posix() for b in snapshot.instruction_files]
    skills: List[str] = [s.name for s in snapshot.skills]
    print(f"{len(prompt)} characters of system prompt")
    print("instruction files:", ", ".join(files))
    print("skills:", ", ".join(skills))
    # The next turn: the cheap check (a stat per examined path).
    fresh: Optional[Snapshot] = loader.refresh(cwd, snapshot.fingerprint)
    print("changed since:", "no" if fresh is None else "yes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
