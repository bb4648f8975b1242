"""The simulated model acts on what its prompt shows, the same way whatever agent wrote it."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any

import pytest
from tether_bench.scenarios import Scenario, load_scenarios
from tether_bench.simulator import (
    FAULT_KINDS,
    PERFECT,
    PERSONAS,
    STRONG,
    LatencyModel,
    Persona,
    Simulator,
    model_name,
    persona,
)
from tether_bench.simulator.constraints import Constraints
from tether_bench.simulator.faults import CALL_FAULTS, possible
from tether_bench.simulator.render import render
from tether_bench.simulator.sessions import Turn
from tether_bench.worlds import WorldFactory, prepare

from tests.bench.conftest import SCENARIO_FILE
from tests.bench.sim_prompts import FORMATS, Exchange, failure, request

PAY = "api-pay-01"


@pytest.fixture(scope="module")
def flow(by_id: dict[str, Scenario], worlds: WorldFactory) -> Iterator[dict[str, Any]]:
    """The seed flow's tools and the world's real results for its three planned calls."""
    scenario = by_id[PAY]
    with worlds.fresh() as world:
        prepare(world, scenario)
        registry = world.registry()
        tools = {t.name: t.description for t in registry.tools()}
        results = [
            json.dumps(registry.invoke(a.tool, a.arguments), ensure_ascii=False, default=str)
            for a in scenario.gold_actions
        ]
    yield {
        "scenario": scenario,
        "tools": tools,
        "results": results,
        "registry_tools": list(registry.tools()),
        "invoke": registry.invoke,
    }


def done(flow: dict[str, Any], n: int, results: list[str] | None = None) -> list[Exchange]:
    """The first ``n`` planned calls with their results (or the ``results`` given)."""
    shown = results or flow["results"]
    plan = flow["scenario"].gold_actions
    return [Exchange(plan[i].tool, dict(plan[i].arguments), shown[i]) for i in range(n)]


def ask(
    sim: Simulator,
    tag: str,
    layout: str,
    flow: dict[str, Any],
    history: list[Exchange],
    *,
    task: str | None = None,
    tools: dict[str, str] | None = None,
) -> Turn:
    """One request in ``layout``; returns the turn the simulator decided on."""
    name = model_name(PAY, 0, tag)
    body = request(layout, task or flow["scenario"].task, tools or flow["tools"], history)
    sim.reply(name, body)
    decision = sim.decisions(name)[-1]
    return Turn(
        kind="action" if decision.tool else "final",
        thought=decision.move,
        tool=decision.tool,
        arguments=decision.arguments,
        fault=decision.fault,
    )


def simulator(flow: dict[str, Any], model: Persona, seed: int = 0) -> Simulator:
    return Simulator([flow["scenario"]], seed=seed, persona=model, latency=LatencyModel.instant())


def test_same_information_in_every_agents_layout_gives_the_same_decisions(
    flow: dict[str, Any],
) -> None:
    stages = [done(flow, n) for n in range(4)]
    seen_faults = set()
    for model in (STRONG, PERSONAS["sloppy"], PERSONAS["loopy"]):
        for seed in range(6):
            sim = simulator(flow, model, seed)
            acts = {}
            for layout in FORMATS:
                for history in stages:
                    ask(sim, layout, layout, flow, history)
                acts[layout] = [d.act() for d in sim.decisions(model_name(PAY, 0, layout))]
            assert acts["tether"] == acts["agent_executor"] == acts["create_agent"]
            seen_faults |= {a[3] for a in acts["tether"] if a[3]}
    assert len(seen_faults) >= 3  # the comparison covered several fault kinds


def one_fault(kind: str, **rates: float) -> Persona:
    weights = dict.fromkeys(FAULT_KINDS, 0.0) | {kind: 1.0}
    return PERFECT.with_overrides(fault_rate=1.0, fault_weights=weights, **rates)


@pytest.mark.parametrize("layout", FORMATS)
def test_an_error_that_names_the_field_gets_the_call_fixed(
    flow: dict[str, Any], layout: str
) -> None:
    sim = simulator(flow, one_fault("missing_argument", fix_rate=1.0, blind_fix_rate=0.0))
    first = ask(sim, "t", layout, flow, [])
    assert first.fault == "missing_argument" and first.arguments == {}
    error = failure("query_order: invalid arguments: order_id: Field required")
    second = ask(sim, "t", layout, flow, [Exchange("query_order", {}, error)])
    assert second.thought == "fix"
    assert second.arguments == {"order_id": "ORD-2024-001"}


@pytest.mark.parametrize("layout", FORMATS)
def test_an_error_that_does_not_say_what_is_wrong_gets_the_same_reply(
    flow: dict[str, Any], layout: str
) -> None:
    sim = simulator(flow, one_fault("missing_argument", fix_rate=1.0, blind_fix_rate=0.0))
    ask(sim, "t", layout, flow, [])
    vague = failure("the call did not work")
    second = ask(sim, "t", layout, flow, [Exchange("query_order", {}, vague)])
    assert second.thought == "repeat"
    assert (second.tool, second.arguments, second.fault) == ("query_order", {}, "missing_argument")


def test_a_result_missing_from_the_prompt_is_asked_for_again(flow: dict[str, Any]) -> None:
    sim = simulator(flow, PERFECT)
    full = ask(sim, "full", "tether", flow, done(flow, 2))
    assert full.tool == "pay_order"
    cut = [flow["results"][0], flow["results"][1][:60] + "…[cut 900 characters]"]
    trimmed = ask(sim, "cut", "tether", flow, done(flow, 2, cut))
    assert trimmed.tool == "compute_discount"  # the discount it cannot see is computed again


def _without_payable(flow: dict[str, Any]) -> list[str]:
    result = json.loads(flow["results"][1])
    result["data"].pop("payable")
    return [flow["results"][0], json.dumps(result, ensure_ascii=False)]


def test_a_missing_fact_is_re_queried_or_invented_as_the_persona_says(
    flow: dict[str, Any],
) -> None:
    history = done(flow, 2, _without_payable(flow))
    careful = ask(simulator(flow, PERFECT), "c", "create_agent", flow, history)
    assert careful.thought == "requery" and careful.tool == "compute_discount"
    guesser = PERFECT.with_overrides(invent_rate=1.0)
    guessed = ask(simulator(flow, guesser), "g", "create_agent", flow, history)
    assert guessed.thought == "invent" and guessed.tool == "pay_order"
    assert guessed.arguments and guessed.arguments["amount"] not in ("2328.02", None)


def test_without_the_order_id_in_the_task_it_asks_for_it(flow: dict[str, Any]) -> None:
    sim = simulator(flow, PERFECT)
    name = model_name(PAY, 0, "vague")
    body = request("agent_executor", "Please pay my order.", flow["tools"], [])
    reply = sim.reply(name, body)
    assert sim.decisions(name)[-1].move == "ask"
    assert "order id" in (reply.content or "")
    assert "Final Answer:" in (reply.content or "")


def test_it_only_calls_tools_its_prompt_lists(flow: dict[str, Any]) -> None:
    sim = simulator(flow, PERFECT)
    without_pay = {k: v for k, v in flow["tools"].items() if k != "pay_order"}
    for layout in FORMATS:
        turn = ask(sim, layout, layout, flow, done(flow, 2), tools=without_pay)
        assert turn.kind == "final" and turn.thought == "no_tool"


def test_the_answer_states_the_facts_shown_and_only_those(flow: dict[str, Any]) -> None:
    sim = simulator(flow, PERFECT)
    name = model_name(PAY, 0, "answer")
    body = request("create_agent", flow["scenario"].task, flow["tools"], done(flow, 3))
    reply = sim.reply(name, body)
    assert "2328.02" in (reply.content or "")
    assert reply.content != flow["scenario"].gold_answer


def test_an_answer_fact_missing_from_the_prompt_is_re_queried_or_made_up(
    by_id: dict[str, Scenario], worlds: WorldFactory
) -> None:
    scenario = by_id["calc-shipping-01"]  # the answer is the fee compute_shipping returns
    step = scenario.gold_actions[0]
    with worlds.fresh() as world:
        tools = {t.name: t.description for t in world.registry().tools()}
        result = world.registry().invoke(step.tool, step.arguments)
    fee = str(result["data"].pop("shipping_fee"))
    history = [Exchange(step.tool, dict(step.arguments), json.dumps(result, default=str))]
    replies = {}
    for rate in (0.0, 1.0):
        sim = Simulator([scenario], persona=PERFECT.with_overrides(invent_rate=rate))
        name = model_name(scenario.id, 0, "x")
        reply = sim.reply(name, request("agent_executor", scenario.task, tools, history))
        replies[rate] = (sim.decisions(name)[-1], reply.content or "")
    careful, guessed = replies[0.0], replies[1.0]
    assert careful[0].move == "requery" and careful[0].tool == step.tool
    assert guessed[0].move == "invent" and "Final Answer:" in guessed[1]
    assert fee not in guessed[1]


@pytest.mark.parametrize("kind", sorted(CALL_FAULTS))
def test_every_call_fault_takes_each_protocols_own_shape(kind: str) -> None:
    args = {"order_id": "ORD-2024-001"}
    turn = Turn("action", "t", "query_order", args, fault=kind, shape=0.2)  # type: ignore[arg-type]
    react = render(turn, protocol="react", call_id="c").content or ""
    native_reply = render(turn, protocol="tools", call_id="c")
    native = native_reply.tool_call
    as_json = render(turn, protocol="json", call_id="c").content or ""
    if kind == "empty_reply":  # no text, no call, in every protocol
        assert react == as_json == "" and native is None and native_reply.content == ""
        return
    if kind == "bad_json":  # a native call the model broke comes as text, as the real runs show
        assert native is None and '"name": "query_order"' in (native_reply.content or "")
        with pytest.raises(json.JSONDecodeError):
            json.loads(react.split("Action Input: ")[1])
        with pytest.raises(json.JSONDecodeError):
            json.loads(as_json)
        return
    assert native is not None and native["function"]["name"] == "query_order"
    if kind == "missing_input":
        assert "Action Input" not in react and native["function"]["arguments"] == ""
        assert "arguments" not in json.loads(as_json)["action"]
    else:  # content faults read the same in every protocol
        written = json.loads(react.split("Action Input: ")[1])
        assert written == json.loads(native["function"]["arguments"])
        assert written == json.loads(as_json)["action"]["arguments"]


def test_text_beside_a_call_keeps_the_call_whole_where_the_model_writes_freely() -> None:
    args = {"order_id": "ORD-2024-001"}
    turn = Turn("action", "I will look it up.", "query_order", args, fault="text_and_call")
    native = render(turn, protocol="tools", call_id="c")
    assert native.content == "I will look it up." and native.tool_call is not None
    assert json.loads(native.tool_call["function"]["arguments"]) == args
    assert native.message()["content"] == "I will look it up."
    react = render(turn, protocol="react", call_id="c").content or ""
    assert json.loads(react.split("Action Input: ")[1]) == args
    free, grammar = Constraints(), Constraints(valid_json=True)
    assert possible("text_and_call", free) and not possible("text_and_call", grammar)
    assert possible("empty_reply", free) and not possible("empty_reply", grammar)


def test_personas_are_named_and_every_parameter_is_documented() -> None:
    assert {"strong", "weak", "loopy", "sloppy"} <= set(PERSONAS)
    assert all(persona(name).name == name for name in PERSONAS)
    undocumented = [n for n, f in Persona.model_fields.items() if not f.description]
    assert undocumented == []
    with pytest.raises(ValueError, match="strong"):
        persona("genius")
    with pytest.raises(ValueError):
        STRONG.with_overrides(fault_rate=1.5)


FRAGMENTS = [
    '{"status": "success", "data": {"order_id": "ORD-2024-001"',
    '{"status": "error", "message": "order_id: Field required", "meta": {}}',
    '{"status": "success", "data": [], "meta": {}} query_order(',
    "Action: pay_order\nAction Input: {“amount”: 1}",
    "- query_order: look up\n",
]


def _junk(rng: random.Random) -> Any:
    """A message an agent, a tool or an attacker could put in a request."""
    text = rng.choice(FRAGMENTS) + "".join(rng.choice('{}[]":,x1 ') for _ in range(8))
    role = rng.choice(["system", "user", "assistant", "tool"])
    shape = rng.randrange(6)
    if shape == 0:
        return rng.choice([7, None, text, ["a"]])
    if shape == 1:
        return {"role": role, "content": [{"text": text}, {"x": 1}, "loose"]}
    if shape == 2:
        calls = [{"function": {"name": text, "arguments": text}}, {"function": "x"}, 3]
        return {"role": "assistant", "content": None, "tool_calls": calls}
    return {"role": role, "content": text}


@pytest.mark.parametrize("seed", range(30))
def test_any_request_gets_a_reply_never_a_crash(seed: int) -> None:
    rng = random.Random(seed)
    scenarios = load_scenarios(SCENARIO_FILE)
    scenario = scenarios[rng.randrange(len(scenarios))]
    sim = Simulator([scenario], persona=PERSONAS["weak"])
    name = model_name(scenario.id, 0, "fuzz")
    tools = rng.choice([None, [], [{"function": {}}], [{"function": {"name": "query_order"}}]])
    fmt = rng.choice([None, {"type": "json_schema", "json_schema": {"schema": [1, {"tool": 2}]}}])
    for _ in range(3):
        messages = [_junk(rng) for _ in range(rng.randrange(6))]
        body = {"messages": messages, "tools": tools, "response_format": fmt, "stop": 5}
        reply = sim.reply(name, body)
        assert reply.finish_reason in ("stop", "tool_calls")
