"""The deepagents adapter in a real deep agent (deepagents.create_deep_agent)
driven by an offline chat model that records what it was sent."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Callable, List, Optional, Sequence

import pytest

pytest.importorskip("deepagents")

from deepagents import create_deep_agent
from deepagents.backends import FilesystemBackend
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.types import Command
from pydantic import Field

from conftest import Tree, write
from lisa_context import Loader
from lisa_context.adapters.deepagents import LisaContextMiddleware, _append

Reply = Callable[[List[BaseMessage]], AIMessage]


class ScriptedModel(BaseChatModel):
    """An offline chat model: each call records the messages it was sent and
    answers with the next scripted reply."""

    replies: List[Reply]
    received: List[List[BaseMessage]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _generate(
        self,
        messages: List[BaseMessage],
        stop: Optional[List[str]] = None,
        run_manager: Optional[CallbackManagerForLLMRun] = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.received.append(list(messages))
        reply = self.replies.pop(0)(list(messages))
        return ChatResult(generations=[ChatGeneration(message=reply)])

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> "ScriptedModel":
        return self

    def system(self, call: int) -> str:
        """The system message's text in the `call`th model call."""
        first = self.received[call][0]
        assert isinstance(first, SystemMessage)
        return first.text

    def tool_results(self, call: int) -> List[str]:
        return [m.text for m in self.received[call] if isinstance(m, ToolMessage)]


def say(text: str) -> Reply:
    return lambda messages: AIMessage(content=text)


def call_tool(name: str, call_id: str, **args: Any) -> Reply:
    return lambda messages: AIMessage(
        content="", tool_calls=[{"name": name, "args": args, "id": call_id, "type": "tool_call"}]
    )


def on_access_policy(tmp_path: Path) -> Path:
    """lisa's own policy with on-access loading turned on."""
    return write(tmp_path / "on-access.toml", "version = 1\n[instructions]\non-access = true\n")


def thread(name: str) -> Any:
    return {"configurable": {"thread_id": name}}


def test_section_in_system_prompt_rebuilt_when_agents_md_changes(tree: Tree) -> None:
    model = ScriptedModel(replies=[say("one"), say("two"), say("three")])
    lisa = LisaContextMiddleware(Loader(home=tree.home, home_policy=False), tree.repo)
    agent = create_deep_agent(model=model, system_prompt="You are the test agent.", middleware=[lisa])

    agent.invoke({"messages": [HumanMessage("hello")]})
    first = model.system(0)
    assert first.startswith("You are the test agent.")
    for text in ("# Project context", "home rules: be brief", "repo rules: run the tests"):
        assert text in first
    assert "sub rules" not in first  # sub/ is below the cwd: not in the chain

    # Between two turns the repository's AGENTS.md changes (another length).
    write(tree.repo / "AGENTS.md", "repo rules: run the tests, then the linter\n")
    agent.invoke({"messages": [HumanMessage("again")]})
    second = model.system(1)
    assert "repo rules: run the tests, then the linter" in second
    assert second.count("repo rules") == 1
    assert lisa.section.builds == 2

    # Nothing moved: the next call reuses the snapshot.
    agent.invoke({"messages": [HumanMessage("and again")]})
    assert model.system(2) == second
    assert lisa.section.builds == 2


def test_rebuilt_between_two_model_calls_of_one_run(tree: Tree) -> None:
    """Every model call checks the fingerprint, not only each invoke."""

    def edit_then_call(messages: List[BaseMessage]) -> AIMessage:
        write(tree.repo / "AGENTS.md", "repo rules: changed during the run\n")
        return call_tool("ls", "c1", path="/")(messages)

    model = ScriptedModel(replies=[edit_then_call, say("done")])
    lisa = LisaContextMiddleware(Loader(home=tree.home, home_policy=False), tree.repo)
    agent = create_deep_agent(model=model, middleware=[lisa])
    agent.invoke({"messages": [HumanMessage("go")]})
    assert "repo rules: run the tests" in model.system(0)
    assert "repo rules: changed during the run" in model.system(1)
    assert "run the tests" not in model.system(1)


def test_on_access_appends_sub_agents_md_once(tree: Tree, tmp_path: Path) -> None:
    model = ScriptedModel(
        replies=[
            call_tool("read_file", "c1", file_path="/sub/file.txt"),
            call_tool("read_file", "c2", file_path="/sub/file.txt"),
            say("done"),
        ]
    )
    backend = FilesystemBackend(root_dir=tree.repo, virtual_mode=True)
    loader = Loader(home=tree.home, home_policy=False, policy=on_access_policy(tmp_path))
    lisa = LisaContextMiddleware(loader, tree.repo, backend=backend)
    agent = create_deep_agent(model=model, backend=backend, middleware=[lisa])
    agent.invoke({"messages": [HumanMessage("read it")]}, config=thread("t1"))

    assert "sub rules" not in model.system(0)
    results = model.tool_results(2)
    assert len(results) == 2
    assert "data" in results[0] and "sub rules: keep sub tidy" in results[0]
    assert str(tree.sub / "AGENTS.md") in results[0]
    assert "data" in results[1] and "sub rules" not in results[1]  # once per session

    # Another thread is another session: it gets the file again.
    model.replies = [call_tool("read_file", "c3", file_path="/sub/file.txt"), say("done")]
    agent.invoke({"messages": [HumanMessage("read it")]}, config=thread("t2"))
    assert "sub rules: keep sub tidy" in model.tool_results(4)[0]


def test_on_access_async_under_the_gemini_policy(tree: Tree) -> None:
    path = str(tree.sub / "file.txt")  # the real path: the backend is not virtual
    model = ScriptedModel(replies=[call_tool("read_file", "c1", file_path=path), say("done")])
    backend = FilesystemBackend(root_dir=tree.repo, virtual_mode=False)
    loader = Loader(home=tree.home, home_policy=False, base_policy="gemini")
    lisa = LisaContextMiddleware(loader, tree.repo, backend=backend)
    agent = create_deep_agent(model=model, backend=backend, middleware=[lisa])
    asyncio.run(agent.ainvoke({"messages": [HumanMessage("read it")]}, config=thread("t1")))

    assert "gemini root rules" in model.system(0)
    (result,) = model.tool_results(1)
    assert "data" in result and "gemini sub rules" in result


def test_no_on_access_with_the_default_state_backend(tree: Tree, tmp_path: Path) -> None:
    """deepagents' default backend keeps files in the graph's state, not on
    disk: the middleware has no disk path to load for, and says nothing."""
    model = ScriptedModel(
        replies=[
            call_tool("write_file", "c1", file_path="/sub/file.txt", content="x"),
            call_tool("read_file", "c2", file_path="/sub/file.txt"),
            say("done"),
        ]
    )
    loader = Loader(home=tree.home, home_policy=False, policy=on_access_policy(tmp_path))
    lisa = LisaContextMiddleware(loader, tree.repo)
    agent = create_deep_agent(model=model, middleware=[lisa])
    agent.invoke({"messages": [HumanMessage("go")]}, config=thread("t1"))
    results = model.tool_results(2)
    assert len(results) == 2
    assert not any("sub rules" in r for r in results)
    assert "repo rules: run the tests" in model.system(2)


def test_no_on_access_under_lisas_default_policy(tree: Tree) -> None:
    """lisa's own policy has `instructions.on-access = false`: the tool's
    result is left as the tool made it."""
    model = ScriptedModel(replies=[call_tool("read_file", "c1", file_path="/sub/file.txt"), say("done")])
    backend = FilesystemBackend(root_dir=tree.repo, virtual_mode=True)
    lisa = LisaContextMiddleware(Loader(home=tree.home, home_policy=False), tree.repo, backend=backend)
    agent = create_deep_agent(model=model, backend=backend, middleware=[lisa])
    agent.invoke({"messages": [HumanMessage("go")]}, config=thread("t1"))
    (result,) = model.tool_results(1)
    assert "data" in result and "sub rules" not in result and "<<<" not in result


def test_a_path_outside_the_repository_loads_nothing(tree: Tree, tmp_path: Path) -> None:
    outside = write(tmp_path / "elsewhere" / "notes.txt", "outside\n")
    model = ScriptedModel(replies=[call_tool("read_file", "c1", file_path=str(outside)), say("done")])
    backend = FilesystemBackend(root_dir=tree.repo, virtual_mode=False)
    loader = Loader(home=tree.home, home_policy=False, policy=on_access_policy(tmp_path))
    lisa = LisaContextMiddleware(loader, tree.repo, backend=backend)
    agent = create_deep_agent(model=model, backend=backend, middleware=[lisa])
    agent.invoke({"messages": [HumanMessage("go")]}, config=thread("t1"))
    (result,) = model.tool_results(1)
    assert "outside" in result and "<<<" not in result


def test_append_reaches_the_tool_message_a_command_carries() -> None:
    message = ToolMessage(content="file written", tool_call_id="c1")
    other = ToolMessage(content="other", tool_call_id="c2")
    command: Command[Any] = Command(update={"files": {}, "messages": [message, other]})
    out = _append(command, "c1", "loaded text")
    assert isinstance(out, Command) and isinstance(out.update, dict)
    texts = [m.text for m in out.update["messages"]]
    assert texts == ["file written\n\nloaded text", "other"]
    assert out.update["files"] == {}
    error = ToolMessage(content="no such file", tool_call_id="c1", status="error")
    assert _append(error, "c1", "loaded text") is error
