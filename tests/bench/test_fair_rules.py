"""The simulator's and harness's fairness rules: format faults per client, constrained
decoding for every agent that asks for it, and create_agent's send-back hook."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from tether_bench.agents import VARIANTS, make_agent
from tether_bench.agents.create_agent_careful import malformed
from tether_bench.simulator import FAULT_KINDS, PERFECT, Persona
from tether_bench.simulator.constraints import answer_tool
from tether_bench.simulator.sessions import model_name

from benchmarks.format_faults import count
from tests.bench.sim_prompts import request
from tests.bench.test_simulator_policy import PAY, done, simulator
from tests.bench.test_simulator_policy import flow as flow  # the fixture

ANSWER_TOOL = {
    "type": "function",
    "function": {
        "name": "FinalResponse",
        "description": "The response to return to the user.",
        "parameters": {
            "type": "object",
            "properties": {"answer": {"type": "string"}},
            "required": ["answer"],
        },
    },
}


def one_fault(kind: str, **rates: Any) -> Persona:
    weights = dict.fromkeys(FAULT_KINDS, 0.0) | {kind: 1.0}
    return PERFECT.with_overrides(fault_rate=1.0, fault_weights=weights, **rates)


def native(flow: dict[str, Any], history: list[Any], **extra: Any) -> dict[str, Any]:
    return request("create_agent", flow["scenario"].task, flow["tools"], history) | extra


def strict(body: dict[str, Any]) -> dict[str, Any]:
    tools = [{**t, "function": {**t["function"], "strict": True}} for t in body["tools"]]
    return body | {"tools": tools}


def test_a_broken_call_reaches_a_native_client_as_text_and_a_free_reply_as_both(
    flow: dict[str, Any],
) -> None:
    first = flow["scenario"].gold_actions[0]
    broken = simulator(flow, one_fault("bad_json")).reply(model_name(PAY, 0, "a"), native(flow, []))
    assert broken.tool_call is None and f'"name": "{first.tool}"' in (broken.content or "")
    empty = simulator(flow, one_fault("empty_reply")).reply(
        model_name(PAY, 0, "b"), native(flow, [])
    )
    assert empty.tool_call is None and empty.content == ""
    both = simulator(flow, one_fault("text_and_call")).reply(
        model_name(PAY, 0, "c"), native(flow, [])
    )
    assert both.tool_call is not None and both.content
    assert both.tool_call["function"]["name"] == first.tool


@pytest.mark.parametrize("constrain", ["required", "strict"])
def test_constrained_decoding_costs_the_same_whatever_asks_for_it(
    flow: dict[str, Any], constrain: str
) -> None:
    """A fault the grammar rules out is the planned call at no cost, and a call with a
    made-up value at ``constrained_cost`` 1, whether tool_choice or strict asked for it."""
    plan = flow["scenario"].gold_actions
    made: dict[float, tuple[str, dict[str, Any] | None, str | None]] = {}
    for cost in (0.0, 1.0):
        sim = simulator(flow, one_fault("wrong_argument_name", constrained_cost=cost))
        body = native(flow, [])
        body = body | {"tool_choice": "required"} if constrain == "required" else strict(body)
        name = model_name(PAY, 0, constrain)
        sim.reply(name, body)
        decision = sim.decisions(name)[-1]
        assert decision.prevented == "wrong_argument_name" and decision.fault is None
        made[cost] = (decision.move, decision.arguments, decision.tool)
    assert made[0.0] == ("plan", plan[0].arguments, plan[0].tool)
    move, arguments, tool = made[1.0]
    assert move == "constrained" and tool == plan[0].tool
    assert arguments is not None and set(arguments) == set(plan[0].arguments)
    assert arguments != plan[0].arguments


def test_free_decoding_pays_no_constrained_cost(flow: dict[str, Any]) -> None:
    sim = simulator(flow, one_fault("wrong_argument_name", constrained_cost=1.0))
    sim.reply(model_name(PAY, 0, "free"), native(flow, []))
    assert sim.decisions(model_name(PAY, 0, "free"))[-1].fault == "wrong_argument_name"


def test_structured_output_answers_through_its_tool_when_only_calls_are_allowed(
    flow: dict[str, Any],
) -> None:
    """LangChain's ToolStrategy: tool_choice required plus a tool that takes the answer. The
    model answers through it, not by calling its last tool again."""
    plan = flow["scenario"].gold_actions
    body = native(flow, done(flow, len(plan)), tool_choice="required")
    body["tools"] = [*body["tools"], ANSWER_TOOL]
    reply = simulator(flow, PERFECT).reply(model_name(PAY, 0, "ts"), body)
    assert reply.tool_call is not None and reply.tool_call["function"]["name"] == "FinalResponse"
    said = json.loads(reply.tool_call["function"]["arguments"])["answer"]
    assert said and said == said.strip()
    # without a tool that takes the answer, the forced reply is a call to a listed tool
    plain = native(flow, done(flow, len(plan)), tool_choice="required")
    forced = simulator(flow, PERFECT).reply(model_name(PAY, 0, "fc"), plain)
    assert forced.tool_call is not None
    assert forced.tool_call["function"]["name"] in flow["tools"]


def test_no_world_tool_reads_as_an_answer_tool(flow: dict[str, Any]) -> None:
    assert answer_tool(native(flow, [])) is None
    assert answer_tool({"tools": [ANSWER_TOOL]}) == ("FinalResponse", "answer")


def test_the_send_back_hook_knows_a_malformed_reply_from_an_answer() -> None:
    tools = {"query_order"}
    unparsed = AIMessage(
        "", invalid_tool_calls=[{"name": "query_order", "args": "{bad", "id": "1", "error": None}]
    )
    assert malformed(unparsed, tools) is not None
    assert malformed(AIMessage(""), tools) is not None
    as_text = AIMessage('```json\n{"name": "query_order", "arguments": {"order_id": "X"}}\n```')
    assert malformed(as_text, tools) is not None
    assert malformed(AIMessage("Your order ORD-1 is paid."), tools) is None
    called = AIMessage("", tool_calls=[{"name": "query_order", "args": {}, "id": "2"}])
    assert malformed(called, tools) is None


def test_the_careful_create_agent_is_a_named_variant_with_create_agents_settings() -> None:
    assert "create_agent_careful" in VARIANTS
    careful, plain = (
        make_agent("create_agent_careful").settings(),
        make_agent("create_agent").settings(),
    )
    assert careful.output_repair != plain.output_repair
    same = ("step_cap", "token_budget", "tool_attempts", "retry_delays_s", "tool_call_limit")
    assert all(getattr(careful, k) == getattr(plain, k) for k in same)


def test_the_format_fault_counts_follow_their_definitions(tmp_path: Path) -> None:
    events = [
        {"r": "a", "x": "", "c": [], "fe": [{"orig_calls": ["a"], "orig_text": True}]},
        {"r": "a", "x": "", "c": [], "fe": [{"orig_calls": [], "orig_text": False}]},
        {"r": "a", "x": '{"name": "lookup", "arguments": {}}', "c": []},
        {"r": "a", "x": '{"name": "not_a_tool"}', "c": []},
        {"r": "a", "x": "", "c": [{"n": "lookup", "a": {}, "id": "1"}]},
        {"r": "u", "x": '{"name": "lookup"}'},
    ]
    runs = [
        {"model": "qwen2.5:7b", "toolset": "t", "ev": events},
        {"model": "other", "toolset": "t", "ev": events},
    ]
    path = tmp_path / "runs.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as out:
        out.write("\n".join(json.dumps(r) for r in runs))
    got = count(path, {"t": [{"name": "lookup"}]}, "qwen2.5:7b")
    assert got["runs"] == 1 and got["messages"] == 5
    assert got["text and a call together"] == 1
    assert got["empty reply"] == 1
    assert got["call written as text"] == 1
