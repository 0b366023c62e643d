"""lisa-context for Python: the project-context section of an AI agent's
system prompt (the `AGENTS.md` chain and the skills, under a declared
policy, read through a sandbox), built in this process by the Rust library.

    from lisa_context import Loader

    loader = Loader()
    snapshot = loader.snapshot("/path/to/repo/src")
    system_prompt = base_prompt + snapshot.prompt

`Loader` mirrors the Node package's `Loader` (options and methods in
snake_case); the answers are the dataclasses of `lisa_context.types`,
generated from the same JSON Schemas as the Node types; every failure is a
`LisaContextError` with a documented `code`.
"""

from __future__ import annotations

from ._errors import LisaContextError
from ._loader import MAX_HOMES, Loader, PathArg
from ._types import (
    Access,
    Block,
    Budget,
    ErrorCode,
    Hello,
    Origin,
    Reason,
    Skill,
    SkillFile,
    Skipped,
    Snapshot,
    TrustDiff,
    TrustStatus,
)
from . import types

__all__ = [
    "Access",
    "Block",
    "Budget",
    "ErrorCode",
    "Hello",
    "LisaContextError",
    "Loader",
    "MAX_HOMES",
    "Origin",
    "PathArg",
    "Reason",
    "Skill",
    "SkillFile",
    "Skipped",
    "Snapshot",
    "TrustDiff",
    "TrustStatus",
    "types",
]
