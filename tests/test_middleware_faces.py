"""Both faces, one list of stop rules: for each rule of :data:`tether.decisions.STOP_RULES`
(a new rule needs a scenario here, or the test fails), the loop and ``create_agent`` with
tether's middleware, given the same scripted replies and tools, stop at the same model call
with the same cause and status, and the same notes to the model at that call."""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import ToolRetryMiddleware
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import ToolException
from langchain_tether import answer_of, tether_middleware, tether_part
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
    """Model calls, cause, status, answer, and the last call's prompt."""
    model = ScriptedChatModel(responses=list(replies))
    native = settings.model_copy(update={"protocol": "native"})
    graph = build_graph(native, model=model, registry=ToolRegistry(tools), sleep=lambda s: None)
    state, _ = run_traced(graph, {"task": "Look up ORD-1"})
    last = model.calls[-1].messages[-1].text
    return len(model.calls), state.get("cause"), state.get("status"), state.get("answer"), last


def on_the_middleware(
    replies: list[Any], tools: list[Any], settings: AgentSettings
) -> tuple[Any, ...]:
    """Model calls, cause, status, answer, and the notes tether added to the last call."""
    model = ScriptedChatModel(responses=list(replies))
    errors = ToolRetryMiddleware(max_retries=0)  # a tool's exception as an error result
    agent = create_agent(
        model, tools=tools, middleware=tether_middleware(settings, retries=[errors])
    )
    out = agent.invoke({"messages": [HumanMessage("Look up ORD-1")]})
    notes = [m.text for m in model.calls[-1].messages if tether_part(m) in ("note", "cap_note")]
    status, answer = out.get("tether_status"), answer_of(out)
    return len(model.calls), out.get("tether_cause"), status, answer, notes


@pytest.mark.parametrize("rule", [rule.__name__ for rule in STOP_RULES])
def test_each_scenario_ends_the_loop_by_its_rule(rule: str) -> None:
    replies, tools, settings = SCENARIOS[rule]
    assert on_the_loop(replies, tools, settings)[1] == CAUSES[rule]


CUT = AIMessage("I will look it up", response_metadata={"finish_reason": "length"})
"""A reply cut at max_tokens with no tool call."""


@pytest.mark.parametrize("rule", [rule.__name__ for rule in STOP_RULES])
def test_each_stop_rule_stops_both_faces_alike(rule: str) -> None:
    replies, tools, settings = SCENARIOS[rule]
    *loop, loop_prompt = on_the_loop(replies, tools, settings)
    *middleware, notes = on_the_middleware(replies, tools, settings)
    assert middleware[:3] == loop[:3]  # calls, cause, status
    assert all(line in loop_prompt for note in notes for line in note.splitlines())
    if loop[1] in ("breaker", "tool_failures", "budget", "step_cap"):  # a cap: the last answer's
        assert notes[-1] == cap_note(loop[1]) and cap_note(loop[1]) in loop_prompt


@pytest.mark.parametrize("check_final", [True, False])
def test_a_single_cut_off_reply_is_asked_again_on_both_faces(check_final: bool) -> None:
    """A reply cut at max_tokens is no answer on either face: a failed step, asked again
    with the loop's note, and the run goes on to the answer that follows (never a run
    ``completed`` on the cut-off text)."""
    replies = [CUT, *calls("lookup", 1, order_id="ORD-1"), "ORD-1 is paid."]
    settings = AgentSettings(check_final=check_final)
    loop = on_the_loop(replies, [lookup], settings)
    middleware = on_the_middleware(replies, [lookup], settings)
    assert loop[:4] == middleware[:4] == (3, "answer", "completed", "ORD-1 is paid.")
    alone = [CUT, "ORD-1 is paid."]  # an agent with no tools: asked again all the same
    assert on_the_middleware(alone, [], settings)[:4] == on_the_loop(alone, [], settings)[:4]
    assert on_the_middleware(alone, [], settings)[:4] == (2, "answer", "completed", alone[1])
