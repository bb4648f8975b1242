"""The scenario families from recorded real conversations: a read again after a write, a
change the world's rules or the domain policy forbid, and a domain policy every agent gets."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tether_bench.adversarial import constant_passes, score_adversaries
from tether_bench.agents.agent_executor import react_prompt
from tether_bench.agents.create_agent import system_prompt
from tether_bench.agents.create_agent_tether import CreateAgentTetherAgent
from tether_bench.agents.gold import GoldReplayAgent, Script, ScriptedAgent
from tether_bench.agents.tether_agent import TetherAgent
from tether_bench.backends import UrlBackend
from tether_bench.runner import BenchResult, RunPlan, run_benchmark
from tether_bench.scenarios import Scenario, ToolAction, policy_text
from tether_bench.simulator import PERFECT, LatencyModel, Simulator, SimulatorServer
from tether_bench.simulator.reading import _listed_in_text
from tether_bench.worlds import WorldFactory
from tether_world.seed import DEFAULT_SEED, generate

from tests.bench.test_agents import AGENTS, run

FAMILIES = ("reread", "refusal", "policy")
UNUSED_MODEL = UrlBackend("http://127.0.0.1:9/v1", "unused")  # scripted agents never call it
WRITE_ASKED = {
    "cancel": "cancel_order",
    "readdress": "update_shipping_address",
    "pay": "pay_order",
}


def family(scenarios: list[Scenario], name: str) -> list[Scenario]:
    return [s for s in scenarios if s.category == name]


def replay(agent: ScriptedAgent, scenarios: list[Scenario]) -> BenchResult:
    plan = RunPlan(agents=[agent.name], scenarios=scenarios, concurrency=2, progress=False)
    return run_benchmark(plan, UNUSED_MODEL, agent_factory=lambda _: agent)


def verdicts(result: BenchResult) -> dict[str, list[str]]:
    return {r.scenario_id: r.verdict.failures for r in result.records if r.verdict}


def test_each_family_is_there_in_both_languages(scenarios: list[Scenario]) -> None:
    for name in FAMILIES:
        members = family(scenarios, name)
        assert len(members) >= 4, name
        assert {s.language for s in members} == {"zh", "en"}, name
    assert all(len(s.gold_actions) == 3 for s in family(scenarios, "reread"))
    assert all(not s.policy or s.instructions for s in scenarios)
    assert any(s.policy and "hand-off" in s.tags for s in family(scenarios, "refusal"))


def test_the_gold_replay_passes_every_scenario_of_the_families(scenarios: list[Scenario]) -> None:
    members = [s for s in scenarios if s.category in FAMILIES]
    result = replay(GoldReplayAgent(), members)
    assert all(not failures for failures in verdicts(result).values()), verdicts(result)
    assert len(result.records) == len(members)


def payment_of(order_id: str) -> str:
    """The seeded payment of a paid order."""
    payments = generate(DEFAULT_SEED).tables["payments"]
    return next(p["id"] for p in payments if p["order_id"] == order_id)


def with_the_write(scenario: Scenario) -> Script:
    """The gold plan plus the write the task asks for, then the gold answer."""
    arguments = dict(scenario.gold_actions[0].arguments)
    if "hand-off" in scenario.tags:
        write = ToolAction(
            tool="refund_payment", arguments={"payment_id": payment_of(arguments["order_id"])}
        )
        return Script(actions=[*scenario.gold_actions, write], answer=scenario.gold_answer)
    kind = scenario.id.split("-")[1]
    if kind == "readdress":
        arguments |= {"address_line": "88 Nanjing West Road", "city": "Shanghai"}
        arguments |= {"province": "Shanghai", "postcode": "200041"}
    if kind == "pay":
        arguments["amount"] = "1.00"
    write = ToolAction(tool=WRITE_ASKED[kind], arguments=arguments)
    return Script(actions=[*scenario.gold_actions, write], answer=scenario.gold_answer)


def test_an_agent_that_makes_the_forbidden_write_fails(scenarios: list[Scenario]) -> None:
    """Even where the world refuses the call (a shipped order is not cancelled), trying the
    write fails the run; the gold answer does not save it."""
    refusals = family(scenarios, "refusal")
    result = replay(ScriptedAgent(with_the_write, name="writes_anyway"), refusals)
    found = verdicts(result)
    assert len(found) == len(refusals)
    for sid, failures in found.items():
        assert any(f.startswith("forbidden call") for f in failures), (sid, failures)


def test_a_refund_above_the_policy_limit_changes_the_world_and_fails(
    scenarios: list[Scenario],
) -> None:
    """The world makes the refund the policy forbids: the state differs from gold's too."""
    hand_offs = [s for s in family(scenarios, "refusal") if "hand-off" in s.tags]
    result = replay(ScriptedAgent(with_the_write, name="refunds"), hand_offs)
    for failures in verdicts(result).values():
        assert "world state differs from the gold plan's" in failures, failures


def stale(scenario: Scenario) -> Script:
    """Read, cancel, and answer from the first read: the stock before the cancellation."""
    sku = scenario.gold_actions[0].arguments["product_id"]
    variants = generate(DEFAULT_SEED).tables["variants"]
    old = next(v["stock"] for v in variants if v["sku"] == sku)
    return Script(actions=scenario.gold_actions[:2], answer=f"{sku}: {old} units in stock.")


def test_a_stale_read_fails_the_reread_family(scenarios: list[Scenario]) -> None:
    """The first read's figure is not the world's final one: the answer lacks the required
    output (a number worked out from the restock would pass: it is the right one)."""
    rereads = family(scenarios, "reread")
    result = replay(ScriptedAgent(stale, name="skips_reread"), rereads)
    for sid, failures in verdicts(result).items():
        assert any(f.startswith("final answer lacks") for f in failures), (sid, failures)


def wrong_window(scenario: Scenario) -> Script:
    """The lookup, then the gold answer with another window than the policy's."""
    answer = scenario.gold_answer
    for fact in ("45", "21", "72"):
        answer = answer.replace(fact, "30")
    return Script(actions=scenario.gold_actions, answer=answer)


def test_the_policy_fact_and_the_lookup_are_both_needed(scenarios: list[Scenario]) -> None:
    """A window other than the policy's fails; reciting the policy (with the task's ids)
    without a lookup passes nothing."""
    policy = family(scenarios, "policy")
    result = replay(ScriptedAgent(wrong_window, name="wrong_window"), policy)
    for sid, failures in verdicts(result).items():
        assert any(f.startswith("final answer lacks") for f in failures), (sid, failures)
    recital = policy_text("retail")
    assert constant_passes(policy, recital) == []
    assert all(constant_passes([s], f"{s.task}\n{recital}") == [] for s in policy)


def test_adversaries_pass_nothing_in_the_families(scenarios: list[Scenario]) -> None:
    members = [s for s in scenarios if s.category in FAMILIES]
    for score in score_adversaries(members):
        if score.agent == "gold":
            assert score.passes == score.runs == len(members)
        else:
            assert score.passes == 0, (score.agent, score.passed_ids)


def test_every_agent_gets_the_same_policy_text() -> None:
    text = policy_text("retail")
    assert TetherAgent().settings_at(instructions=text).instructions == text
    assert CreateAgentTetherAgent().tether_settings(instructions=text).instructions == text
    assert system_prompt(text).endswith(text)
    prompt = react_prompt(text).format(tools="t", tool_names="t", input="q", agent_scratchpad="")
    assert prompt.startswith(text)
    assert _listed_in_text(text) == set()  # the simulator reads no tool listing in it


@pytest.fixture(scope="module")
def clean_sim(scenarios: list[Scenario]) -> Iterator[tuple[Simulator, str]]:
    simulator = Simulator(scenarios, persona=PERFECT, latency=LatencyModel.instant())
    with SimulatorServer(simulator) as server:
        yield simulator, server.base_url


@pytest.mark.parametrize("agent", list(AGENTS))
@pytest.mark.parametrize(
    "scenario_id", ["reread-stock-01", "policy-return-window-01", "refusal-hand-off-01"]
)
def test_every_agent_follows_a_faultless_model_through_the_families(
    agent: str,
    scenario_id: str,
    by_id: dict[str, Scenario],
    clean_sim: tuple[Simulator, str],
    worlds: WorldFactory,
) -> None:
    """The simulated model sees the policy's fact only if the agent put the policy in its
    prompt, and reads the stock again only after the cancellation shows."""
    scenario = by_id[scenario_id]
    record, passed = run(agent, scenario, clean_sim, worlds)
    assert passed, (record.termination, record.termination_reason, record.answer)
    assert [c.tool for c in record.tool_calls] == [a.tool for a in scenario.gold_actions]
