"""lisa-context for deepagents (and any LangChain v1 agent): a middleware.

    from deepagents import create_deep_agent
    from deepagents.backends import FilesystemBackend
    from lisa_context import Loader
    from lisa_context.adapters.deepagents import LisaContextMiddleware

    backend = FilesystemBackend(root_dir=repo, virtual_mode=True)
    agent = create_deep_agent(
        model=model,
        backend=backend,
        middleware=[LisaContextMiddleware(Loader(), cwd=repo, backend=backend)],
    )

The extension point is LangChain's `AgentMiddleware`, which
`create_deep_agent(middleware=...)` and `langchain.agents.create_agent`
take:

- `wrap_model_call` / `awrap_model_call` run around every model call. The
  middleware asks the loader for `refresh` there (one `stat` per examined
  path), rebuilds the section only when its fingerprint moved, and appends
  the section to the request's system message (after the caller's
  `system_prompt`, before what later middleware such as deepagents'
  `SkillsMiddleware` and `MemoryMiddleware` add). The section is never
  written into the conversation state, so a rebuilt one replaces the old
  one in the very next call.
- `wrap_tool_call` / `awrap_tool_call` see each tool call and its result.
  With on-access loading configured, a call to one of deepagents'
  filesystem tools (`ls`, `read_file`, `write_file`, `edit_file`, `delete`,
  `glob`, `grep`) that names a path through `file_path` or `path` gets the
  text of `Loader.access` appended to its `ToolMessage`: the instruction
  files between the cwd and that path, each once per conversation.

Limits, by what deepagents does:

- deepagents' default backend (`StateBackend`) keeps files in the graph's
  state, not on disk: those paths have nothing to do with the `AGENTS.md`
  files on disk, so on-access loading is off unless the middleware is
  given a `FilesystemBackend` (whose `root_dir`/`virtual_mode` map a tool's
  path to the disk as the backend itself does) or a `resolve_path`
  function (for a `CompositeBackend`, a sandbox that mirrors a checkout,
  ...). A sandbox's `execute` tool runs shell commands whose paths cannot be
  seen, so it loads nothing.
- On-access loading needs a policy with `instructions.on-access = true`
  (the shipped `gemini` and `claude-code` have it; lisa's default does
  not, and then `access` loads nothing and tool results are left as they
  are).
- "Once per conversation" follows the LangGraph `thread_id` of the run
  (`config={"configurable": {"thread_id": ...}}`); without one it follows
  the id of the conversation's first message, and without that either each
  call is its own session (a file may then be shown again, never missed).
- deepagents' subagents (the `task` tool) are built with their own
  middleware lists and do not inherit this one: pass a
  `LisaContextMiddleware` in a `SubAgent`'s `middleware` to give it the
  section.
"""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from pathlib import Path
from typing import Any, Awaitable, Callable, Collection, Optional, Sequence, Union

from deepagents.backends.filesystem import FilesystemBackend
from deepagents.backends.utils import validate_path
from langchain.agents.middleware import (
    AgentMiddleware,
    AgentState,
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
    ToolCallRequest,
)
from langchain_core.messages import AIMessage, SystemMessage, ToolMessage
from langgraph.types import Command

from .._loader import Loader, PathArg
from .._types import Snapshot
from ._common import DEFAULT_PATH_ARGS, PathResolver, ProjectSection, join_text, named_paths

__all__ = ["FILESYSTEM_TOOLS", "LisaContextMiddleware", "filesystem_backend_resolver"]

FILESYSTEM_TOOLS: "frozenset[str]" = frozenset(
    {"ls", "read_file", "write_file", "edit_file", "delete", "glob", "grep"}
)
"""The deepagents filesystem tools whose path arguments name files."""

ToolResult = Union[ToolMessage, Command[Any]]
ModelResult = Union[ModelResponse[Any], AIMessage, ExtendedModelResponse[Any]]


def filesystem_backend_resolver(backend: FilesystemBackend) -> PathResolver:
    """Maps a filesystem tool's path to the disk as deepagents does: the tool
    normalizes it (`validate_path`: a leading `/`, no `..` or `~`, which
    load nothing), then under `virtual_mode` the backend takes it below its
    `root_dir`, and otherwise as the absolute path it now is."""
    base = Path(backend.cwd)
    virtual = bool(backend.virtual_mode)

    def resolve(path: str) -> Optional[str]:
        try:
            normalized = validate_path(path)
        except ValueError:
            return None
        return str(base / normalized.lstrip("/")) if virtual else normalized

    return resolve


class LisaContextMiddleware(AgentMiddleware[AgentState[Any], Any, Any]):
    """Puts lisa-context's section for `cwd` into every model call's system
    message, rebuilt when its fingerprint moves; with `backend` (a
    `FilesystemBackend`) or `resolve_path`, appends what a filesystem tool's
    path loads on access to that tool's result.

    - `loader`: the `lisa_context.Loader` (its policy decides what loads).
    - `cwd`, `root`, `home`: as `Loader.snapshot` takes them.
    - `backend`: the agent's `FilesystemBackend`, to map tool paths to disk.
    - `resolve_path`: a path as the tool got it to a path on disk (absolute,
      or relative to `cwd`) or `None`; wins over `backend`.
    - `access_tools`: the tools whose paths load on access (default
      `FILESYSTEM_TOOLS`); `path_args`: their arguments read as paths.
    - `session`: a fixed on-access session name instead of the thread's.
    """

    def __init__(
        self,
        loader: Loader,
        cwd: PathArg,
        *,
        root: Optional[PathArg] = None,
        home: Optional[PathArg] = None,
        backend: Optional[FilesystemBackend] = None,
        resolve_path: Optional[PathResolver] = None,
        access_tools: Collection[str] = FILESYSTEM_TOOLS,
        path_args: Sequence[str] = DEFAULT_PATH_ARGS,
        session: Optional[str] = None,
    ) -> None:
        super().__init__()
        self.section = ProjectSection(loader, cwd, root, home)
        if resolve_path is None and backend is not None:
            resolve_path = filesystem_backend_resolver(backend)
        self.resolve_path = resolve_path
        self.access_tools = frozenset(access_tools)
        self.path_args = tuple(path_args)
        self.session = session

    @property
    def snapshot(self) -> Optional[Snapshot]:
        """The snapshot whose section the last model call received."""
        return self.section.snapshot

    # -- the system prompt -------------------------------------------------

    def _with_section(self, request: ModelRequest[Any], prompt: str) -> ModelRequest[Any]:
        if prompt == "":
            return request
        system = request.system_message
        message: SystemMessage
        if system is None:
            message = SystemMessage(content=prompt)
        elif isinstance(system.content, str):
            message = SystemMessage(content=join_text(system.content, prompt))
        else:
            blocks: list[Union[str, dict[Any, Any]]] = list(system.content)
            blocks.append({"type": "text", "text": prompt})
            message = SystemMessage(content=blocks)
        return request.override(system_message=message)

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResult:
        """Appends the current section to the system message."""
        return handler(self._with_section(request, self.section.current().prompt))

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResult:
        """As `wrap_model_call`, the loader called in a worker thread."""
        snapshot = await asyncio.to_thread(self.section.current)
        return await handler(self._with_section(request, snapshot.prompt))

    # -- on access ---------------------------------------------------------

    def _session(self, request: ToolCallRequest) -> str:
        if self.session is not None:
            return self.session
        runtime = getattr(request, "runtime", None)
        config = getattr(runtime, "config", None) or {}
        thread = (config.get("configurable") or {}).get("thread_id")
        if thread is not None:
            return f"deepagents:thread:{thread}"
        state = request.state
        messages = state.get("messages") if isinstance(state, dict) else None
        first = getattr(messages[0], "id", None) if messages else None
        if first is not None:
            return f"deepagents:message:{first}"
        return f"deepagents:call:{uuid.uuid4()}"

    def _touched(self, request: ToolCallRequest) -> str:
        """The on-access text for the paths this tool call names."""
        if self.resolve_path is None or request.tool_call["name"] not in self.access_tools:
            return ""
        session = self._session(request)
        text = ""
        for given in named_paths(request.tool_call["args"], self.path_args):
            path = self.resolve_path(given)
            if path is not None:
                text = join_text(text, self.section.touched(path, session))
        return text

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolResult],
    ) -> ToolResult:
        """Runs the tool, then appends what its path loads on access."""
        result = handler(request)
        return _append(result, request.tool_call.get("id"), self._touched(request))

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolResult]],
    ) -> ToolResult:
        """As `wrap_tool_call`, the loader called in a worker thread."""
        result = await handler(request)
        text = await asyncio.to_thread(self._touched, request)
        return _append(result, request.tool_call.get("id"), text)


def _append_to_message(message: ToolMessage, text: str) -> ToolMessage:
    if message.status == "error":
        return message
    content = message.content
    if isinstance(content, str):
        new: Union[str, list[Union[str, dict[Any, Any]]]] = join_text(content, text)
    else:
        new = [*content, {"type": "text", "text": text}]
    return message.model_copy(update={"content": new})


def _append(result: ToolResult, call_id: Optional[str], text: str) -> ToolResult:
    """`result` with `text` after the tool's own output: in its
    `ToolMessage`, or in the one a `Command` carries for this call."""
    if text == "":
        return result
    if isinstance(result, ToolMessage):
        return _append_to_message(result, text)
    update = result.update
    if isinstance(update, dict) and isinstance(update.get("messages"), list):
        messages = [
            _append_to_message(m, text)
            if isinstance(m, ToolMessage) and m.tool_call_id == call_id
            else m
            for m in update["messages"]
        ]
        return dataclasses.replace(result, update={**update, "messages": messages})
    return result
