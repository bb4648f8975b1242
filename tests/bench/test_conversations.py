"""Conversation scenarios: a simulated user who answers what the reply asks, one thread per
scenario for every agent, a simulated model that answers the latest message it is shown, and
a judge that reads the final world state and every reply."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import ValidationError
from tether_bench.adversarial import score_adversaries
from tether_bench.agents.gold import GoldReplayAgent, Script, ScriptedAgent
from tether_bench.cli import plan_bench
from tether_bench.options import BenchOptions
from tether_bench.records import Outcome
from tether_bench.scenarios import Scenario
from tether_bench.simulator import PERFECT, LatencyModel, Simulator, SimulatorServer, model_name
from tether_bench.simulator.turns import at_turn, latest_turn
from tether_bench.user import asks_for, next_message
from tether_bench.worlds import WorldFactory

from tests.bench.test_agents import AGENTS, run
from tests.bench.test_families import family, replay, verdicts

FAMILIES = ("clarify", "multiturn")
PEERS = [a for a in AGENTS if a != "create_agent_stock"]


def members(scenarios: list[Scenario]) -> list[Scenario]:
    return [s for s in scenarios if s.category in FAMILIES]


def test_each_family_is_a_conversation_in_both_languages(scenarios: list[Scenario]) -> None:
    for name in FAMILIES:
        found = family(scenarios, name)
        assert len(found) >= 4 and {s.language for s in found} == {"zh", "en"}, name
        assert all(len(s.messages) >= 2 and s.messages[0] == s.task for s in found), name
    assert all(s.turns[1].answers is not None for s in family(scenarios, "clarify"))
    assert all(s.turns[0].outputs for s in family(scenarios, "multiturn"))


def test_a_conversation_must_start_with_the_task_and_end_at_the_plans_end(
    by_id: dict[str, Scenario],
) -> None:
    base = by_id["multiturn-total-pay-01"].model_dump()
    with pytest.raises(ValidationError, match="first turn is the task"):
        Scenario.model_validate(base | {"turns": [{"message": "other", "plan_end": 3}]})
    short = [base["turns"][0], {"message": "pay", "plan_end": 2}]
    with pytest.raises(ValidationError, match="plan's end"):
        Scenario.model_validate(base | {"turns": short})


def done(answer: str | None) -> Outcome:
    return Outcome(answer=answer, termination="completed")


def test_the_user_answers_only_a_reply_that_asks_for_what_it_holds(
    by_id: dict[str, Scenario],
) -> None:
    scenario = by_id["clarify-pay-01"]
    answer = scenario.messages[1]
    assert (
        next_message(scenario, 1, done("Which order should I pay? Tell me the order id.")) == answer
    )
    assert next_message(scenario, 1, done("请提供订单号。")) == answer
    assert next_message(scenario, 1, done("Order ORD-2024-001 is paid.")) is None  # no question
    assert next_message(scenario, 1, done("Please provide your email.")) is None  # not the id
    stopped = Outcome(answer=None, termination="max_steps")
    assert next_message(scenario, 1, stopped) is None
    assert next_message(scenario, 2, done("Which order id?")) is None  # nothing left to say


def test_a_scripted_message_follows_any_reply(by_id: dict[str, Scenario]) -> None:
    scenario = by_id["multiturn-total-pay-01"]
    assert next_message(scenario, 1, done("It comes to 12.00.")) == scenario.messages[1]
    assert next_message(scenario, 1, done("I don't know.")) == scenario.messages[1]


def body(*texts: str, tools: tuple[str, ...] = ()) -> dict[str, object]:
    """A request showing ``texts`` as one user message, with native ``tools``."""
    listed = [{"type": "function", "function": {"name": t, "parameters": {}}} for t in tools]
    request: dict[str, object] = {"messages": [{"role": "user", "content": "\n\n".join(texts)}]}
    return request | ({"tools": listed} if listed else {})


def test_the_model_answers_the_latest_message_its_prompt_shows(by_id: dict[str, Scenario]) -> None:
    from tether_bench.simulator.reading import read_request

    scenario = by_id["multiturn-total-pay-01"]
    first, second = scenario.messages
    assert latest_turn(scenario, read_request(body(first))) == 0
    assert latest_turn(scenario, read_request(body(first, second))) == 1
    assert latest_turn(scenario, read_request(body(second))) == 1
    assert [a.tool for a in at_turn(scenario, 0).gold_actions] == [
        "query_order",
        "compute_discount",
    ]
    assert at_turn(scenario, 0).required_outputs == scenario.turns[0].outputs
    assert at_turn(scenario, 1) == scenario


@pytest.fixture(scope="module")
def sim(scenarios: list[Scenario]) -> Simulator:
    return Simulator(members(scenarios), persona=PERFECT, latency=LatencyModel.instant())


def test_the_model_asks_what_to_do_when_the_message_that_said_it_is_gone(
    by_id: dict[str, Scenario], sim: Simulator
) -> None:
    """The answer to "which order?" names the order, not what to do with it: shown alone, the
    model asks; shown after the task, it goes on with the task on that order."""
    scenario = by_id["clarify-cancel-01"]
    task, answer = scenario.messages
    tools = ("cancel_order",)
    alone = sim.reply(model_name(scenario.id, 0, "alone"), body(answer, tools=tools))
    assert alone.tool_call is None and "?" in (alone.content or "")
    both = sim.reply(model_name(scenario.id, 0, "both"), body(task, answer, tools=tools))
    assert both.tool_call is not None and both.tool_call["function"]["name"] == "cancel_order"


@pytest.fixture(scope="module")
def clean_sim(scenarios: list[Scenario]) -> Iterator[tuple[Simulator, str]]:
    simulator = Simulator(members(scenarios), persona=PERFECT, latency=LatencyModel.instant())
    with SimulatorServer(simulator) as server:
        yield simulator, server.base_url


@pytest.mark.parametrize("agent", PEERS)
@pytest.mark.parametrize("scenario_id", ["multiturn-total-pay-01", "multiturn-total-pay-02"])
def test_every_agent_carries_the_first_messages_results_into_the_second(
    agent: str,
    scenario_id: str,
    by_id: dict[str, Scenario],
    clean_sim: tuple[Simulator, str],
    worlds: WorldFactory,
) -> None:
    scenario = by_id[scenario_id]
    record, passed = run(agent, scenario, clean_sim, worlds)
    assert passed, (record.verdict, record.replies)
    assert record.user_messages == scenario.messages
    assert [c.tool for c in record.tool_calls if c.tool == "pay_order"] == ["pay_order"]


@pytest.mark.parametrize("agent", PEERS)
@pytest.mark.parametrize("scenario_id", ["clarify-pay-01", "clarify-cancel-02"])
def test_an_agent_that_asks_gets_the_answer_and_makes_the_write(
    agent: str,
    scenario_id: str,
    by_id: dict[str, Scenario],
    clean_sim: tuple[Simulator, str],
    worlds: WorldFactory,
) -> None:
    scenario = by_id[scenario_id]
    record, passed = run(agent, scenario, clean_sim, worlds)
    assert passed, (record.verdict, record.replies)
    assert record.user_messages == scenario.messages
    wanted = scenario.turns[1].answers
    assert wanted is not None and asks_for(record.replies[0] or "", wanted)
    assert [c.tool for c in record.tool_calls][-1] == scenario.gold_actions[-1].tool


def test_tether_carries_the_task_into_the_answer_to_its_question(
    by_id: dict[str, Scenario], clean_sim: tuple[Simulator, str], worlds: WorldFactory
) -> None:
    """tether's prompt for the answer to its question shows the task and the question before
    it, so the model goes on with the write the task asked for (it used to see the answer
    alone, ask what to do, and make no write)."""
    scenario = by_id["clarify-cancel-02"]
    record, passed = run("tether", scenario, clean_sim, worlds)
    assert passed, (record.verdict, record.replies)
    assert [c.tool for c in record.tool_calls][-1] == scenario.gold_actions[-1].tool


def invents(scenario: Scenario) -> Script:
    """The write on another order than the user's, and the gold answer, without asking."""
    action = scenario.gold_actions[-1]
    wrong = {**action.arguments, "order_id": "ORD-2024-001"}
    return Script(
        actions=[action.model_copy(update={"arguments": wrong})], answer=scenario.gold_answer
    )


def test_the_judge_fails_a_write_on_a_value_the_user_never_gave(scenarios: list[Scenario]) -> None:
    clarify = family(scenarios, "clarify")
    for sid, failures in verdicts(replay(ScriptedAgent(invents, name="invents"), clarify)).items():
        assert "world state differs from the gold plan's" in failures, (sid, failures)
        assert any("conversation ended after 1 of 2" in f for f in failures), (sid, failures)


def no_amount(scenario: Scenario) -> Script:
    """The gold plan and answer, but a first reply that does not state the amount due."""
    script = GoldReplayAgent().script_for(scenario)
    return Script(actions=script.actions, answer=script.answer, replies=["I looked it up."])


def test_the_judge_reads_every_reply_and_the_gold_replay_passes(scenarios: list[Scenario]) -> None:
    found = members(scenarios)
    assert not any(verdicts(replay(GoldReplayAgent(), found)).values())
    turns = family(scenarios, "multiturn")
    for sid, failures in verdicts(replay(ScriptedAgent(no_amount, name="vague"), turns)).items():
        assert any(f.startswith("reply to message 1 lacks") for f in failures), (sid, failures)
    for score in score_adversaries(found):
        assert score.agent == "gold" or score.passes == 0, (score.agent, score.passed_ids)


def test_a_dry_run_counts_the_conversations(
    scenarios: list[Scenario], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``tether bench --dry-run --category clarify --category multiturn`` plans every
    conversation of both families for each agent."""
    out = tmp_path / "bench-out"
    options = BenchOptions(
        agents=["tether", "agent_executor"], categories=list(FAMILIES), seeds=[0], out=out
    )
    plan_bench(options)
    n = len(members(scenarios))
    said = capsys.readouterr().out
    assert said.startswith(f"would run {2 * n} runs: 2 agents (tether, agent_executor) x {n} ")
    assert not out.exists()
