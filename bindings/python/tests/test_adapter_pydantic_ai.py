"""The pydantic-ai adapter in a real pydantic-ai Agent driven by an offline
FunctionModel that records the instructions and messages it was sent."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import pytest

pytest.importorskip("pydantic_ai")

from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from conftest import Tree, write
from lisa_context import Loader
from lisa_context.adapters.pydantic_ai import LisaContext

Step = Callable[[List[ModelMessage]], ModelResponse]


class Script:
    """A FunctionModel's function: each request records what the model was
    sent and answers with the next scripted step."""

    def __init__(self, *steps: Step) -> None:
        self.steps = list(steps)
        self.instructions: List[Optional[str]] = []
        self.messages: List[List[ModelMessage]] = []

    def __call__(self, messages: List[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.instructions.append(info.instructions)
        self.messages.append(list(messages))
        return self.steps.pop(0)(messages)

    def model(self) -> FunctionModel:
        return FunctionModel(self)

    def sent(self, request: int) -> str:
        text = self.instructions[request]
        assert text is not None
        return text

    def tool_returns(self, request: int) -> List[str]:
        """The text of the tool returns the `request`th request carried, in
        order, each with the user parts that came with it."""
        out: List[str] = []
        for message in self.messages[request]:
            if not isinstance(message, ModelRequest):
                continue
            for part in message.parts:
                if isinstance(part, ToolReturnPart):
                    out.append(part.model_response_str())
                elif isinstance(part, UserPromptPart) and out and isinstance(part.content, str):
                    out[-1] += "\n" + part.content
        return out


def say(text: str) -> Step:
    return lambda messages: ModelResponse(parts=[TextPart(text)])


def call(tool: str, call_id: str, **args: Any) -> Step:
    return lambda messages: ModelResponse(parts=[ToolCallPart(tool, args, tool_call_id=call_id)])


def on_access_policy(tmp_path: Path) -> Path:
    """lisa's own policy with on-access loading turned on."""
    return write(tmp_path / "on-access.toml", "version = 1\n[instructions]\non-access = true\n")


def file_agent(script: Script, lisa: LisaContext[None], root: Path) -> Agent[None, str]:
    """An agent with a `read_file(path)` tool reading below `root`."""
    agent = Agent(script.model(), instructions="You are the test agent.", capabilities=[lisa])

    @agent.tool_plain
    def read_file(path: str) -> str:
        """Read a file."""
        target = Path(path) if Path(path).is_absolute() else root / path
        return target.read_text(encoding="utf-8")

    return agent


def test_section_in_instructions_rebuilt_when_agents_md_changes(tree: Tree) -> None:
    script = Script(say("one"), say("two"), say("three"))
    lisa: LisaContext[None] = LisaContext(Loader(home=tree.home, home_policy=False), tree.repo)
    agent = Agent(script.model(), instructions="You are the test agent.", capabilities=[lisa])

    first = agent.run_sync("hello")
    sent = script.sent(0)
    assert "You are the test agent." in sent
    for text in ("# Project context", "home rules: be brief", "repo rules: run the tests"):
        assert text in sent
    assert "sub rules" not in sent

    # Between two turns the repository's AGENTS.md changes (another length).
    write(tree.repo / "AGENTS.md", "repo rules: run the tests, then the linter\n")
    second = agent.run_sync("again", message_history=first.all_messages())
    assert "repo rules: run the tests, then the linter" in script.sent(1)
    assert script.sent(1).count("repo rules") == 1
    assert lisa.section.builds == 2

    # Nothing moved: the next request reuses the snapshot.
    agent.run_sync("and again", message_history=second.all_messages())
    assert script.sent(2) == script.sent(1)
    assert lisa.section.builds == 2


def test_rebuilt_between_two_requests_of_one_run(tree: Tree) -> None:
    """The instructions are evaluated for every model request, so a change
    made by a tool is seen by the model's very next turn."""
    script = Script(call("edit_rules", "c1"), say("done"))
    lisa: LisaContext[None] = LisaContext(Loader(home=tree.home, home_policy=False), tree.repo)
    agent = Agent(script.model(), capabilities=[lisa])

    @agent.tool_plain
    def edit_rules() -> str:
        """Rewrite the rules."""
        write(tree.repo / "AGENTS.md", "repo rules: changed during the run\n")
        return "edited"

    agent.run_sync("go")
    assert "repo rules: run the tests" in script.sent(0)
    assert "repo rules: changed during the run" in script.sent(1)
    assert "run the tests" not in script.sent(1)


def test_on_access_appends_sub_agents_md_once_per_conversation(tree: Tree, tmp_path: Path) -> None:
    script = Script(
        call("read_file", "c1", path="sub/file.txt"),
        call("read_file", "c2", path=str(tree.sub / "file.txt")),
        say("done"),
    )
    loader = Loader(home=tree.home, home_policy=False, policy=on_access_policy(tmp_path))
    lisa: LisaContext[None] = LisaContext(loader, tree.repo)
    agent = file_agent(script, lisa, tree.repo)

    first = agent.run_sync("read it twice")
    assert "sub rules" not in script.sent(0)
    one, two = script.tool_returns(2)
    assert one.startswith("data") and "sub rules: keep sub tidy" in one
    assert str(tree.sub / "AGENTS.md") in one
    assert two.startswith("data") and "sub rules" not in two  # once per session

    # The same conversation, continued: still not again.
    script.steps = [call("read_file", "c3", path="sub/file.txt"), say("done")]
    agent.run_sync("once more", message_history=first.all_messages())
    assert "sub rules" not in script.tool_returns(4)[-1]

    # A new conversation is a new session: the file comes again.
    script.steps = [call("read_file", "c4", path="sub/file.txt"), say("done")]
    agent.run_sync("fresh")
    assert "sub rules: keep sub tidy" in script.tool_returns(6)[-1]


def test_on_access_under_the_gemini_policy(tree: Tree) -> None:
    script = Script(call("open_file", "c1", file_path=str(tree.sub / "file.txt")), say("done"))
    loader = Loader(home=tree.home, home_policy=False, base_policy="gemini")
    lisa: LisaContext[None] = LisaContext(loader, tree.repo)
    agent = Agent(script.model(), capabilities=[lisa])

    @agent.tool_plain
    def open_file(file_path: str) -> str:
        """Open a file."""
        return Path(file_path).read_text(encoding="utf-8")

    agent.run_sync("open it")
    assert "gemini root rules" in script.sent(0)
    (result,) = script.tool_returns(1)
    assert result.startswith("data") and "gemini sub rules" in result


def test_a_structured_result_keeps_its_value_and_gets_the_text_beside_it(
    tree: Tree, tmp_path: Path
) -> None:
    script = Script(call("stat_file", "c1", path="sub/file.txt"), say("done"))
    loader = Loader(home=tree.home, home_policy=False, policy=on_access_policy(tmp_path))
    agent = Agent(script.model(), capabilities=[LisaContext(loader, tree.repo)])

    @agent.tool_plain
    def stat_file(path: str) -> Dict[str, int]:
        """Size of a file."""
        return {"size": (tree.repo / path).stat().st_size}

    agent.run_sync("stat it")
    request = script.messages[1][-1]
    assert isinstance(request, ModelRequest)
    returns = [p for p in request.parts if isinstance(p, ToolReturnPart)]
    users = [p for p in request.parts if isinstance(p, UserPromptPart)]
    assert len(returns) == 1 and returns[0].content == {"size": 5}
    assert any(isinstance(u.content, str) and "sub rules: keep sub tidy" in u.content for u in users)


def test_tools_not_listed_and_the_default_policy_load_nothing(tree: Tree, tmp_path: Path) -> None:
    # lisa's own policy: `instructions.on-access = false`.
    script = Script(call("read_file", "c1", path="sub/file.txt"), say("done"))
    lisa: LisaContext[None] = LisaContext(Loader(home=tree.home, home_policy=False), tree.repo)
    file_agent(script, lisa, tree.repo).run_sync("read")
    assert script.tool_returns(1) == ["data\n"]

    # On-access policy, but the tool is not among `access_tools`.
    script = Script(call("read_file", "c1", path="sub/file.txt"), say("done"))
    loader = Loader(home=tree.home, home_policy=False, policy=on_access_policy(tmp_path))
    lisa = LisaContext(loader, tree.repo, access_tools={"write_file"})
    file_agent(script, lisa, tree.repo).run_sync("read")
    assert script.tool_returns(1) == ["data\n"]

    # A path outside the repository loads nothing.
    outside = write(tmp_path / "elsewhere.txt", "outside\n")
    script = Script(call("read_file", "c1", path=str(outside)), say("done"))
    file_agent(script, LisaContext(loader, tree.repo), tree.repo).run_sync("read")
    assert script.tool_returns(1) == ["outside\n"]
