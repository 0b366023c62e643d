"""lisa-context for pydantic-ai: a capability.

    from pydantic_ai import Agent
    from lisa_context import Loader
    from lisa_context.adapters.pydantic_ai import LisaContext

    agent = Agent(model, capabilities=[LisaContext(Loader(), "/work/app")])

The extension point is pydantic-ai's capability (`AbstractCapability`, what
`Agent(capabilities=...)` and `agent.run(capabilities=...)` take), whose
hooks do both halves:

- `get_instructions` returns a function of the run context, which
  pydantic-ai evaluates for every model request (not once per run). It asks
  the loader for `refresh` (one `stat` per examined path) and rebuilds the
  section only when the fingerprint moved. The section is part of the
  request's instructions, not of the message history: a rebuilt section
  replaces the old one in the next request, also within a run (between a
  tool call and the model's next turn).
- `after_tool_execute` sees every function tool's validated arguments and
  result. A call whose arguments name a path (`path`, `file_path`, or the
  names given) gets the text of `Loader.access` after its result: the
  instruction files between the cwd and that path, each once per
  conversation (pydantic-ai's `conversation_id`, which carries over to
  runs continuing the same `message_history`). A `str` result gets the
  text appended; a `ToolReturn` gets it in its `content`; any other result
  is wrapped as `ToolReturn(result, content=text)`, which pydantic-ai sends
  as a separate user part after the tool's return (it cannot be put inside
  a structured return value).

Limits:

- On-access loading needs a policy with `instructions.on-access = true`
  (the shipped `gemini` and `claude-code` have it; lisa's default does not,
  and then no result is changed).
- Only function tools are seen: a provider's native tools (web search, code
  execution) and MCP servers' own file access run outside this hook; a tool
  that takes a path under another argument name needs `path_args`, one
  that works on another machine or a virtual filesystem needs
  `resolve_path` (return `None` for paths with no place on this disk).
- "Once per conversation" is the loader's memory: if the history is cut or
  summarized so that a tool result carrying a file is dropped, the file is
  not shown again in that conversation.
"""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, Awaitable, Callable, Collection, Optional, Sequence

from pydantic_ai import RunContext, ToolReturn
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import ToolCallPart
from pydantic_ai.tools import AgentDepsT, ToolDefinition

from .._loader import Loader, PathArg
from .._types import Snapshot
from ._common import DEFAULT_PATH_ARGS, PathResolver, ProjectSection, join_text, named_paths

__all__ = ["LisaContext"]


@dataclass
class LisaContext(AbstractCapability[AgentDepsT]):
    """Puts lisa-context's section for `cwd` into the instructions of every
    model request, rebuilt when its fingerprint moves, and appends what a
    tool call's path loads on access to that tool's result.

    - `loader`: the `lisa_context.Loader` (its policy decides what loads).
    - `cwd`, `root`, `home`: as `Loader.snapshot` takes them.
    - `on_access`: whether tool calls load on access (default true; the
      policy must also have `instructions.on-access`).
    - `path_args`: the tool arguments read as paths (default `file_path`,
      `path`); `access_tools`: the only tools whose paths load (default:
      any tool).
    - `resolve_path`: a path as the tool got it to a path on disk (absolute,
      or relative to `cwd`) or `None`; by default the path itself.
    """

    loader: Loader
    cwd: PathArg
    _: KW_ONLY
    root: Optional[PathArg] = None
    home: Optional[PathArg] = None
    on_access: bool = True
    path_args: Sequence[str] = DEFAULT_PATH_ARGS
    access_tools: Optional[Collection[str]] = None
    resolve_path: Optional[PathResolver] = None
    id: Optional[str] = "lisa_context"
    section: ProjectSection = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.section = ProjectSection(self.loader, self.cwd, self.root, self.home)

    @property
    def snapshot(self) -> Optional[Snapshot]:
        """The snapshot whose section the last model request received."""
        return self.section.snapshot

    def get_instructions(self) -> Callable[[RunContext[AgentDepsT]], Awaitable[Optional[str]]]:
        """The section, as a function pydantic-ai calls for every request."""
        return self._instructions

    async def _instructions(self, ctx: RunContext[AgentDepsT]) -> Optional[str]:
        snapshot = await asyncio.to_thread(self.section.current)
        return snapshot.prompt or None

    def _touched(self, args: dict[str, Any], session: str) -> str:
        text = ""
        for given in named_paths(args, self.path_args):
            path = given if self.resolve_path is None else self.resolve_path(given)
            if path is not None:
                text = join_text(text, self.section.touched(path, session))
        return text

    async def after_tool_execute(
        self,
        ctx: RunContext[AgentDepsT],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: dict[str, Any],
        result: Any,
    ) -> Any:
        """The tool's result with what its path loads on access after it."""
        if not self.on_access:
            return result
        if self.access_tools is not None and call.tool_name not in self.access_tools:
            return result
        session = f"pydantic-ai:{ctx.conversation_id or ctx.run_id or ''}"
        text = await asyncio.to_thread(self._touched, args, session)
        if text == "":
            return result
        return _with_text(result, text)


def _with_text(result: Any, text: str) -> Any:
    """`result` with `text` after it, in a form pydantic-ai sends on."""
    if isinstance(result, str):
        return join_text(result, text)
    if isinstance(result, ToolReturn):
        content = result.content
        if content is None:
            return dataclasses.replace(result, content=text)
        if isinstance(content, str):
            return dataclasses.replace(result, content=join_text(content, text))
        return dataclasses.replace(result, content=[*content, text])
    return ToolReturn(result, content=text)
