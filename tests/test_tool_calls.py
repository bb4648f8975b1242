"""The registry calls a tool through LangChain's own ``invoke``/``ainvoke``: the arguments
parsed as LangChain parses them, the run's config passed on, and every callback handler
sees the tool run."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import ensure_config
from langchain_core.tools import StructuredTool
from pydantic import BaseModel, Field, field_validator
from tether import AgentSettings, ToolRegistry, build_graph, tool
from tether.testing import ScriptedChatModel
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
def seen_config(key: str) -> str | None:
    """What a nested runnable inside the tool would see as its config."""
    return str(ensure_config().get("configurable", {}).get(RUN_ID_KEY))


@tool
async def aplain(key: str) -> str:
    """Async twin of plain."""
    return key.upper()


def test_the_run_config_reaches_nested_runnables() -> None:
    result = ToolRegistry([seen_config]).invoke("seen_config", {"key": "k"}, run_config("r9"))
    assert result["data"] == "r9"


def test_arguments_are_parsed_as_langchain_parses_them() -> None:
    result = ToolRegistry([doubled]).invoke("doubled", {"n": 5})
    assert result["data"] == 20  # validated by tether, then by LangChain's input parsing


def _config_tool(key: str, config: RunnableConfig) -> str | None:
    """Reads its config."""
    return run_id_from(config)


def test_a_tool_that_reads_its_config_still_gets_the_run_id() -> None:
    registry = ToolRegistry([tool(_config_tool)])
    assert registry.invoke("_config_tool", {"key": "k"}, run_config("r7"))["data"] == "r7"


class Recorder(BaseCallbackHandler):
    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []

    def on_tool_start(self, serialized: dict[str, Any], input_str: str, **kw: Any) -> None:
        self.events.append(("start", serialized["name"]))

    def on_tool_end(self, output: Any, *, run_id: UUID, **kw: Any) -> None:
        # a tether tool is called with a tool call: its end is the ToolMessage, and what the
        # function returned is the message's artifact
        self.events.append(("end", getattr(output, "artifact", output)))


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
    ToolRegistry([watched]).invoke("watched", {"key": "k"})
    assert ("start", "watched") in recorder.events
