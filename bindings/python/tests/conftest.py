"""Real directory trees for the tests: a home and a repository."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass
class Tree:
    home: Path
    repo: Path
    sub: Path


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def tree(tmp_path: Path) -> Tree:
    """A home with an AGENTS.md and a skill; a repository (a `.git` folder)
    with an AGENTS.md at its root and one in `sub/`."""
    home = tmp_path / "home"
    repo = tmp_path / "repo"
    write(home / "AGENTS.md", "home rules: be brief\n")
    write(
        home / "skills" / "release" / "SKILL.md",
        "---\nname: release\ndescription: Cut a release.\n---\nSteps to release.\n",
    )
    (repo / ".git").mkdir(parents=True)
    write(repo / "AGENTS.md", "repo rules: run the tests\n")
    write(repo / "sub" / "AGENTS.md", "sub rules: keep sub tidy\n")
    write(repo / "sub" / "GEMINI.md", "gemini sub rules\n")
    write(repo / "GEMINI.md", "gemini root rules\n")
    write(repo / "sub" / "file.txt", "data\n")
    return Tree(home=home, repo=repo, sub=repo / "sub")
