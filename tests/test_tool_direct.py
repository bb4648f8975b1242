"""Plain function tools are called directly only when that is LangChain's own call: same
arguments, same result, same config; and any callback handler still sees the tool run."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any
from uuid import UUID

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import ensure_config
from langchain_core.tools import BaseTool, InjectedToolArg, StructuredTool
from pydantic import BaseModel, Field, field_validator
from tether import AgentSettings, ToolRegistry, build_graph, tool
from tether.testing import ScriptedChatModel
from tether.tools import direct
from tether.tools.direct import direct_function
from tether.tools.output import ToolOutput
from tether.tools.runinfo import RUN_ID_KEY, run_config, run_id_from

from tests.scripts import act, final


class Doubled(BaseModel):
    n: int

    @field_validator("n")
    @classmethod
    def double(cls, value: int) -> int:
        return value * 2  # not idempotent: validating twice shows


@tool
def plain(key: str, times: Annotated[int, Field(description="how often")] = 2) -> str:
    """Repeat a key."""
    return key * times


@tool(args_schema=Doubled)
def doubled(n: int) -> int:
    """Return n as the schema made it."""
    return n


@tool
def scored(key: str) -> ToolOutput:
    """Report with a score."""
    return ToolOutput(data={"key": key}, confidence_score=0.2)


@tool
def failing(key: str) -> str:
    """Always fails."""
    raise ValueError(f"no record for {key}")


@tool
def seen_config(key: str) -> str | None:
    """What a nested runnable inside the tool would see as its config."""
    return str(ensure_config().get("configurable", {}).get(RUN_ID_KEY))


@tool
async def aplain(key: str) -> str:
    """Async twin of plain."""
    return key.upper()


CASES: list[tuple[BaseTool, dict[str, Any]]] = [
    (plain, {"key": "ab"}),
    (plain, {"key": "ab", "times": "3"}),
    (doubled, {"n": 5}),
    (scored, {"key": "k"}),
    (failing, {"key": "k"}),
    (seen_config, {"key": "k"}),
]


def _langchain_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(direct, "direct_function", lambda tool, run_async: None)


@pytest.mark.parametrize(("item", "args"), CASES)
def test_a_direct_call_returns_what_langchain_returns(
    item: BaseTool, args: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert direct_function(item, run_async=False) is not None
    fast = ToolRegistry([item]).invoke(item.name, args, config=run_config("r1"))
    _langchain_only(monkeypatch)
    slow = ToolRegistry([item]).invoke(item.name, args, config=run_config("r1"))
    fast["meta"].pop("latency_s")
    slow["meta"].pop("latency_s")
    assert fast == slow


def test_the_direct_path_passes_the_run_config_to_nested_runnables() -> None:
    result = ToolRegistry([seen_config]).invoke("seen_config", {"key": "k"}, run_config("r9"))
    assert result["data"] == "r9"


def test_arguments_are_parsed_as_langchain_parses_them() -> None:
    result = ToolRegistry([doubled]).invoke("doubled", {"n": 5})
    assert result["data"] == 20  # validated by tether, then by LangChain's input parsing


@pytest.mark.parametrize(("item", "args"), [(aplain, {"key": "ab"}), (doubled, {"n": 1})])
def test_an_async_direct_call_returns_what_langchain_returns(
    item: BaseTool, args: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    fast = asyncio.run(ToolRegistry([item]).ainvoke(item.name, args))
    _langchain_only(monkeypatch)
    slow = asyncio.run(ToolRegistry([item]).ainvoke(item.name, args))
    fast["meta"].pop("latency_s")
    slow["meta"].pop("latency_s")
    assert fast == slow


def _config_tool(key: str, config: RunnableConfig) -> str | None:
    """Reads its config."""
    return run_id_from(config)


def _injected_tool(key: str, secret: Annotated[str, InjectedToolArg] = "s") -> str:
    """Has an injected argument."""
    return key


class Custom(StructuredTool):
    pass


def _subclassed() -> BaseTool:
    return Custom.from_function(lambda key: key, name="custom", description="d")


@pytest.mark.parametrize(
    "make",
    [
        lambda: tool(_config_tool),
        lambda: tool(_injected_tool),
        _subclassed,
        lambda: StructuredTool.from_function(
            lambda key: key, name="h", description="d", handle_tool_error=True
        ),
        lambda: StructuredTool.from_function(
            lambda key: (key, key),
            name="a",
            description="d",
            response_format="content_and_artifact",
        ),
    ],
)
def test_tools_langchain_treats_specially_take_its_path(make: Any) -> None:
    assert direct_function(make(), run_async=False) is None


def test_a_sync_only_tool_in_an_async_run_takes_langchains_path() -> None:
    assert direct_function(plain, run_async=True) is None
    assert direct_function(aplain, run_async=False) is None


def test_a_tool_that_reads_its_config_still_gets_the_run_id() -> None:
    registry = ToolRegistry([tool(_config_tool)])
    assert registry.invoke("_config_tool", {"key": "k"}, run_config("r7"))["data"] == "r7"


class Recorder(BaseCallbackHandler):
    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []

    def on_tool_start(self, serialized: dict[str, Any], input_str: str, **kw: Any) -> None:
        self.events.append(("start", serialized["name"]))

    def on_tool_end(self, output: Any, *, run_id: UUID, **kw: Any) -> None:
        self.events.append(("end", output))


def test_a_handler_passed_to_the_run_sees_every_tool_call() -> None:
    recorder = Recorder()
    model = ScriptedChatModel(responses=[act("plain", '{"key": "x"}'), final("xx")])
    graph = build_graph(AgentSettings(), model=model, registry=ToolRegistry([plain]))
    state = graph.invoke({"task": "t"}, {"callbacks": [recorder]})
    assert state["status"] == "completed"
    assert ("start", "plain") in recorder.events
    assert ("end", "xx") in recorder.events


def test_an_async_run_with_a_handler_sees_the_tool_call() -> None:
    recorder = Recorder()
    model = ScriptedChatModel(responses=[act("aplain", '{"key": "x"}'), final("X")])
    graph = build_graph(AgentSettings(), model=model, registry=ToolRegistry([aplain]))
    asyncio.run(graph.ainvoke({"task": "t"}, {"callbacks": [recorder]}))
    assert ("start", "aplain") in recorder.events
    assert ("end", "X") in recorder.events


def test_a_handler_on_the_tool_itself_sees_the_call() -> None:
    recorder = Recorder()
    watched = StructuredTool.from_function(
        lambda key: key, name="watched", description="d", callbacks=[recorder]
    )
    assert direct_function(watched, run_async=False) is None
    ToolRegistry([watched]).invoke("watched", {"key": "k"})
    assert ("start", "watched") in recorder.events
