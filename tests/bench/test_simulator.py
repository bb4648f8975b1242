"""The simulated model over HTTP: seeded, agent-agnostic draws; ReAct or tool_calls; usage; SSE."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from langchain_core.messages import HumanMessage
from langchain_openai import ChatOpenAI
from tether_bench.agents import ChatSettings, make_agent
from tether_bench.scenarios import Scenario
from tether_bench.simulator import (
    FAULT_KINDS,
    PERFECT,
    PERSONAS,
    LatencyModel,
    Simulator,
    SimulatorServer,
    model_name,
)
from tether_bench.simulator.faults import Draw, applicable_faults, draw, pick_fault
from tether_bench.worlds import WorldFactory, prepare

from tests.bench.sim_prompts import Exchange, envelope, request

SEED_TASK_ID = "api-pay-01"
SEED_TASK = "Check order ORD-2024-001, work out the amount due and pay it."
TOOLS = {"query_order": "Look up an order.", "compute_discount": "Price an order."}


def go() -> list[HumanMessage]:
    """A ReAct prompt with the seed task and a tool listing."""
    body = request("agent_executor", SEED_TASK, TOOLS, [])
    return [HumanMessage(body["messages"][0]["content"])]


@pytest.fixture(scope="module")
def served(scenarios: list[Scenario]) -> Iterator[tuple[Simulator, str]]:
    simulator = Simulator(scenarios, seed=11, latency=LatencyModel.instant())
    with SimulatorServer(simulator) as server:
        yield simulator, server.base_url


def chat(base_url: str, name: str, **kwargs: Any) -> ChatOpenAI:
    return ChatOpenAI(base_url=base_url, model=name, api_key="x", max_retries=0, **kwargs)  # type: ignore[arg-type]


def test_draws_are_a_pure_function_of_seed_scenario_trial_and_index() -> None:
    assert draw(1, "s", 0, 3) == draw(1, "s", 0, 3)
    keys = [(2, "s", 0, 3), (1, "t", 0, 3), (1, "s", 1, 3), (1, "s", 0, 4)]
    assert all(draw(*key) != draw(1, "s", 0, 3) for key in keys)
    values = [draw(0, "s", 0, i).u_fault for i in range(2000)]
    assert 0.17 < sum(v < 0.2 for v in values) / len(values) < 0.23  # uniform enough


def test_fault_picks_follow_the_documented_thresholds() -> None:
    weights = dict.fromkeys(FAULT_KINDS, 1.0)
    every = applicable_faults(planned_call=True, has_arguments=True)
    assert every == [k for k in FAULT_KINDS if k != "repeat_previous"]  # a relapse is a trait
    low, high = Draw(0.1, 0.0, 0, 0, 0, 0, 0), Draw(0.25, 0.0, 0, 0, 0, 0, 0)
    assert pick_fault(0.2, weights, low, every) == every[0]
    assert pick_fault(0.2, weights, high, every) is None  # 0.25 >= 0.2
    assert pick_fault(0.2, weights, Draw(0.1, 0.99, 0, 0, 0, 0, 0), every) == every[-1]
    assert pick_fault(0.2, dict.fromkeys(FAULT_KINDS, 0.0), low, every) is None
    assert applicable_faults(planned_call=False, has_arguments=False) == []


def test_the_plan_moves_only_when_the_prompt_shows_the_planned_calls_result(
    by_id: dict[str, Scenario],
) -> None:
    simulator = Simulator([by_id[SEED_TASK_ID]], persona=PERFECT)
    name = model_name(SEED_TASK_ID, 0, "t")

    def next_tool(history: list[Exchange]) -> str | None:
        simulator.reply(name, request("tether", SEED_TASK, TOOLS, history))
        return simulator.decisions(name)[-1].tool

    assert next_tool([]) == "query_order"
    other = {"order_id": "ORD-2024-002", "subtotal": "10.00"}
    wrong_order = Exchange("query_order", {"order_id": "ORD-2024-002"}, envelope(other))
    assert next_tool([wrong_order]) == "query_order"
    right = {
        "order_id": "ORD-2024-001",
        "subtotal": "2471.60",
        "shipping_fee": "0.00",
        "coupon_code": "SAVE20",
    }
    right_order = Exchange("query_order", {"order_id": "ORD-2024-001"}, envelope(right))
    assert next_tool([wrong_order, right_order]) == "compute_discount"
    assert [d.position for d in simulator.decisions(name)] == [0, 0, 1]


def test_react_text_without_tools_and_tool_calls_with_them(served: tuple[Simulator, str]) -> None:
    _, url = served
    text = chat(url, model_name(SEED_TASK_ID, 0, "react")).invoke(go())
    assert text.text.startswith("Thought:") and "Action Input:" in text.text
    tool_schema = {"type": "function", "function": {"name": "query_order", "parameters": {}}}
    model = chat(url, model_name(SEED_TASK_ID, 0, "native")).bind_tools([tool_schema])
    reply = model.invoke([HumanMessage(SEED_TASK)])
    assert reply.tool_calls[0]["name"] == "query_order"
    assert reply.tool_calls[0]["args"] == {"order_id": "ORD-2024-001"}
    assert reply.usage_metadata and reply.usage_metadata["total_tokens"] > 0


def test_streamed_replies_carry_usage_on_the_last_chunk(served: tuple[Simulator, str]) -> None:
    _, url = served
    plain = chat(url, model_name(SEED_TASK_ID, 0, "plain")).invoke(go())
    streamed_model = chat(
        url, model_name(SEED_TASK_ID, 0, "sse"), streaming=True, stream_usage=True
    )
    chunks = list(streamed_model.stream(go()))
    text = "".join(c.text for c in chunks)
    assert text == plain.text and len(chunks) > 3
    usage = [c.usage_metadata for c in chunks if c.usage_metadata]
    assert usage and usage[-1] == plain.usage_metadata
    with httpx.Client() as client:
        body = {
            "model": model_name(SEED_TASK_ID, 0, "raw"),
            "stream": True,
            "messages": [{"role": "user", "content": go()[0].text}],
        }
        lines = client.post(f"{url}/chat/completions", json=body).text.strip().splitlines()
    events = [json.loads(line[6:]) for line in lines if line.startswith("data: {")]
    assert lines[-1] == "data: [DONE]" and all("usage" not in e for e in events)


def test_streamed_tool_calls_arrive_whole(served: tuple[Simulator, str]) -> None:
    _, url = served
    tool_schema = {"type": "function", "function": {"name": "query_order", "parameters": {}}}
    model = chat(url, model_name(SEED_TASK_ID, 0, "sse-tools"), streaming=True, stream_usage=True)
    chunks = list(model.bind_tools([tool_schema]).stream([HumanMessage(SEED_TASK)]))
    whole = chunks[0]
    for chunk in chunks[1:]:
        whole += chunk
    assert whole.tool_calls[0]["name"] == "query_order"  # type: ignore[attr-defined]
    assert whole.tool_calls[0]["args"] == {"order_id": "ORD-2024-001"}  # type: ignore[attr-defined]
    assert whole.usage_metadata and whole.usage_metadata["output_tokens"] > 1


def test_temperature_and_sampling_do_not_change_what_it_says(by_id: dict[str, Scenario]) -> None:
    scenario = by_id[SEED_TASK_ID]
    replies = []
    for temperature in (0.0, 0.7, 1.5):
        simulator = Simulator([scenario], seed=4, persona=PERSONAS["sloppy"])
        name = model_name(scenario.id, 2, f"t{temperature}")
        body = {"messages": [{"role": "user", "content": go()[0].text}], "temperature": temperature}
        replies.append([simulator.reply(name, body).content for _ in range(6)])
    assert replies[0] == replies[1] == replies[2]


def test_tokenize_unknown_models_and_stop_sequences(served: tuple[Simulator, str]) -> None:
    _, url = served
    root = url.removesuffix("/v1")
    with httpx.Client() as client:
        counted = client.post(f"{root}/tokenize", json={"prompt": "hello world"}).json()
        assert counted["count"] == len(counted["tokens"]) == 2
        missing = client.post(
            f"{url}/chat/completions",
            json={"model": "gpt-4o", "messages": [{"role": "user", "content": "x"}]},
        )
        assert missing.status_code == 404 and "sim:<scenario id>" in missing.text
        cut = client.post(
            f"{url}/chat/completions",
            json={
                "model": model_name(SEED_TASK_ID, 0, "stop"),
                "stop": ["\nAction Input"],
                "messages": [{"role": "user", "content": go()[0].text}],
            },
        ).json()
    assert cut["choices"][0]["message"]["content"].endswith("Action: query_order")


def run_agent(
    agent: str, scenario: Scenario, simulator: Simulator, url: str, worlds: WorldFactory, tag: str
) -> Any:
    name = model_name(scenario.id, 1, tag)
    settings = ChatSettings(base_url=url, model=name)
    with worlds.fresh() as world:
        prepare(world, scenario)
        record = make_agent(agent).run(scenario, world, settings, trial=1)
    return record, simulator.decisions(name)


def test_same_seed_same_draws_for_every_agent(
    by_id: dict[str, Scenario], worlds: WorldFactory
) -> None:
    """Every agent meets the same draws at each call index, and the same first decision."""
    scenario = by_id["multi-find-pay-01"]
    simulator = Simulator(
        [scenario], seed=5, persona=PERSONAS["weak"], latency=LatencyModel.instant()
    )
    with SimulatorServer(simulator) as server:
        logs = {
            agent: run_agent(agent, scenario, simulator, server.base_url, worlds, agent)[1]
            for agent in ("tether", "agent_executor", "create_agent")
        }
        again, again_log = run_agent(
            "tether", scenario, simulator, server.base_url, worlds, "again"
        )
    assert any(d.fault for log in logs.values() for d in log)  # the test exercises faults
    for log in logs.values():
        for d in log:
            expected = draw(5, scenario.id, 1, d.index)
            assert (d.u_fault, d.u_kind) == (expected.u_fault, expected.u_kind)
    # the first prompt holds the same facts for all, so the same act where the decoding is
    # free; under tether's grammar a fault it rules out (text beside the call) is not made
    free = {logs[a][0].act() for a in ("agent_executor", "create_agent")}
    assert len(free) == 1
    first = logs["tether"][0]
    assert (first.tool, first.arguments) == (
        logs["create_agent"][0].tool,
        logs["create_agent"][0].arguments,
    )
    # the same agent with the same seed meets exactly the same decisions again
    assert [d.act() for d in again_log] == [d.act() for d in logs["tether"]]
    assert again.termination is not None
