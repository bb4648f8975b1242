"""The async loop does the sync loop's work: the same outcome, the same traced edges."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from tether import AgentSettings, ToolRegistry, build_graph, tool
from tether.testing import ScriptedChatModel

from tests.scripts import act, final


@tool
async def alookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


@tool(name="alookup")
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


REPLIES = [act("alookup", '{"key": "a"}'), act("alookup", "{}"), final("value of a")]
SETTINGS = AgentSettings(base_url="http://127.0.0.1:9/v1", approval_tools=[], protocol="react")


def test_an_async_run_ends_as_the_sync_run_does() -> None:
    sync_model = ScriptedChatModel(responses=list(REPLIES))
    sync_graph = build_graph(SETTINGS, model=sync_model, registry=ToolRegistry([lookup]))
    async_model = ScriptedChatModel(responses=list(REPLIES))
    async_graph = build_graph(SETTINGS, model=async_model, registry=ToolRegistry([alookup]))
    done = sync_graph.invoke({"task": "look a up"})
    adone = asyncio.run(async_graph.ainvoke({"task": "look a up"}))
    keys = ("status", "reason", "answer", "steps", "failure_streak", "history")
    assert {k: adone[k] for k in keys} == {k: done[k] for k in keys}
    assert _untimed(adone["tool_buffer"]) == _untimed(done["tool_buffer"])
    assert len(async_model.calls) == len(sync_model.calls)
    # the first prompt is the same; later ones quote each result's measured latency
    assert async_model.calls[0].messages == sync_model.calls[0].messages


def _untimed(entries: list[Any]) -> list[Any]:
    """Tool buffer entries without their measured latency (nor the token count of a text
    that quotes it)."""
    for entry in entries:
        entry["result"]["meta"].pop("latency_s")
        entry.pop("tokens")
    return entries


class ChainRecorder(BaseCallbackHandler):
    def __init__(self) -> None:
        self.runs: list[tuple[str, Any]] = []

    def on_chain_start(self, serialized: Any, inputs: Any, **kw: Any) -> None:
        self.runs.append(("start", kw.get("name")))

    def on_chain_end(self, outputs: Any, **kw: Any) -> None:
        self.runs.append(("end", outputs))


@pytest.mark.parametrize("run_async", [False, True])
def test_edges_are_traced_as_runs_of_their_own(run_async: bool) -> None:
    recorder = ChainRecorder()
    model = ScriptedChatModel(responses=list(REPLIES))
    graph = build_graph(
        SETTINGS, model=model, registry=ToolRegistry([[lookup, alookup][run_async]])
    )
    config: Any = {"callbacks": [recorder]}
    if run_async:
        asyncio.run(graph.ainvoke({"task": "look a up"}, config))
    else:
        graph.invoke({"task": "look a up"}, config)
    names = [name for kind, name in recorder.runs if kind == "start"]
    assert names.count("route_after_think") == 3
    assert names.count("route_after_act") == 2
    assert ("end", "tool call") in recorder.runs
    assert ("end", "stop") in recorder.runs
