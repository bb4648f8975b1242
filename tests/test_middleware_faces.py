"""Both faces, one list of stop rules: for each rule of :data:`tether.decisions.STOP_RULES`
(a new rule needs a scenario here, or the test fails), the loop and ``create_agent`` with
tether's middleware, given the same scripted replies and tools, stop at the same model call
with the same cause and the same cap note to the model."""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import ToolRetryMiddleware
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import ToolException
from langchain_tether import tether_middleware
from tether import AgentSettings, ToolRegistry, build_graph, tool
from tether.decisions import STOP_RULES, cap_note
from tether.testing import ScriptedChatModel, run_traced


@tool
def lookup(order_id: str) -> dict[str, Any]:
    """Look up an order by its id."""
    return {"order_id": order_id, "status": "paid"}


@tool
def fetch(url: str) -> str:
    """Fetch a page."""
    raise ToolException("timeout while fetching")


@tool
def read(key: str) -> str:
    """Read a long document by its key. The document comes back whole, as plain text, with
    its paragraphs in order; a key names one document of the archive (letters and digits),
    and a key the archive does not hold comes back as an error naming it. Reading the same
    key twice returns the same text, so read each document once and keep what it says."""
    return "lorem ipsum dolor " * 250


def calls(name: str, count: int, **args: Any) -> list[AIMessage]:
    """``count`` replies, each one call of ``name`` (``args`` values formatted with ``i``)."""
    return [
        AIMessage(
            "",
            tool_calls=[
                {"name": name, "args": {k: v.format(i=i) for k, v in args.items()}, "id": f"c{i}"}
            ],
        )
        for i in range(count)
    ]


SCENARIOS: dict[str, tuple[list[Any], list[Any], AgentSettings]] = {
    "answered": (
        [*calls("lookup", 1, order_id="ORD-1"), "ORD-1 is paid."],
        [lookup],
        AgentSettings(),
    ),
    "repeated": (calls("lookup", 4, order_id="ORD-1"), [lookup], AgentSettings(repeat_notes=1)),
    "same_replies": (
        [AIMessage("I will look it up", response_metadata={"finish_reason": "length"})] * 4,
        [lookup],
        AgentSettings(),
    ),  # a reply cut at max_tokens, three times (an empty one has no fingerprint to repeat)
    "breaker": ([*calls("fetch", 6, url="https://x/{i}"), "No page."], [fetch], AgentSettings()),
    "over_budget": (
        [*calls("read", 6, key="k{i}"), "Lorem."],
        [read],
        AgentSettings(token_budget=2560, max_tokens=300),
    ),  # the faces' prompts differ (the loop writes its own): the third prompt crosses the
    # budget in both, and both close that call (the middleware's last answer fits, with the
    # tool's schema left out: its long description makes room for the cap's note)
    "one_tool_failing": (
        [
            *[
                pair
                for i in range(3)
                for pair in (
                    *calls("fetch", 1, url=f"https://x/{i}"),
                    *calls("lookup", 1, order_id=f"ORD-{i}"),
                )
            ],
            "No page.",
        ],
        [fetch, lookup],
        AgentSettings(max_tool_failures=3),
    ),  # failures between successes: the breaker never opens
    "step_cap": (
        [*calls("lookup", 6, order_id="ORD-{i}"), "All paid."],
        [lookup],
        AgentSettings(max_steps=3),
    ),
}
"""A run that each rule ends, by the rule's name."""
CAUSES = {
    "answered": "answer",
    "repeated": "repeat",
    "same_replies": "same_reply",
    "breaker": "breaker",
    "one_tool_failing": "tool_failures",
    "over_budget": "budget",
    "step_cap": "step_cap",
}
"""The stop cause each rule ends a run with."""


def on_the_loop(replies: list[Any], tools: list[Any], settings: AgentSettings) -> tuple[Any, ...]:
    model = ScriptedChatModel(responses=list(replies))
    native = settings.model_copy(update={"protocol": "native"})
    graph = build_graph(native, model=model, registry=ToolRegistry(tools), sleep=lambda s: None)
    state, _ = run_traced(graph, {"task": "Look up ORD-1"})
    return len(model.calls), state.get("cause"), model.calls[-1].messages[-1].text


def on_the_middleware(
    replies: list[Any], tools: list[Any], settings: AgentSettings
) -> tuple[Any, ...]:
    model = ScriptedChatModel(responses=list(replies))
    errors = ToolRetryMiddleware(max_retries=0)  # a tool's exception as an error result
    agent = create_agent(
        model, tools=tools, middleware=tether_middleware(settings, retries=[errors])
    )
    out = agent.invoke({"messages": [HumanMessage("Look up ORD-1")]})
    return len(model.calls), out.get("tether_cause"), model.calls[-1].messages[-1].text


@pytest.mark.parametrize("rule", [rule.__name__ for rule in STOP_RULES])
def test_each_scenario_ends_the_loop_by_its_rule(rule: str) -> None:
    replies, tools, settings = SCENARIOS[rule]
    assert on_the_loop(replies, tools, settings)[1] == CAUSES[rule]


@pytest.mark.parametrize("rule", [rule.__name__ for rule in STOP_RULES])
def test_each_stop_rule_stops_both_faces_alike(rule: str) -> None:
    replies, tools, settings = SCENARIOS[rule]
    loop_calls, loop_cause, loop_last = on_the_loop(replies, tools, settings)
    calls_made, cause, last = on_the_middleware(replies, tools, settings)
    assert (calls_made, cause) == (loop_calls, loop_cause)
    if cause in ("breaker", "tool_failures", "budget", "step_cap"):  # a cap: the last answer's note
        assert last == cap_note(cause) and cap_note(cause) in loop_last
