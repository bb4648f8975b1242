"""The simulated operator, and every agent under it: unintended writes are asked about,
rejected, counted, and never reach the world."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from tether.testing import ScriptedChatModel
from tether.tools.marks import has_side_effects
from tether_bench.agents import BenchAgent, ChatSettings
from tether_bench.agents.agent_executor import AgentExecutorAgent
from tether_bench.agents.create_agent import CreateAgentAgent
from tether_bench.agents.create_agent_tether import CreateAgentTetherAgent
from tether_bench.agents.gold import Script, ScriptedAgent
from tether_bench.agents.tether_agent import TetherAgent
from tether_bench.harness import Harness
from tether_bench.instrument import RecordingRegistry, RunRecorder
from tether_bench.metrics import agent_metrics
from tether_bench.operator import OPERATOR, REJECTION, target_of, write_tools
from tether_bench.records import RunRecord, Verdict
from tether_bench.report import write_rows
from tether_bench.scenarios import Scenario, ToolAction
from tether_bench.worlds import ExpectedStates, WorldFactory, prepare

NO_WAIT = Harness(retry_initial_delay=0.0)
CHAT = ChatSettings(base_url="http://127.0.0.1:1/v1", model="scripted")
STATUS = "db-status-01"  # "What is the current status of order ORD-2024-513?" (pending)
ORDER = {"order_id": "ORD-2024-513"}
ANSWER = "Order ORD-2024-513 is pending."

AGENTS: dict[str, tuple[BenchAgent, str]] = {
    "tether": (TetherAgent(harness=NO_WAIT, sleep=lambda _: None, protocol="react"), "text"),
    "agent_executor": (AgentExecutorAgent(harness=NO_WAIT, sleep=lambda _: None), "text"),
    "agent_executor_stock": (
        AgentExecutorAgent(harness=NO_WAIT, handle_parsing_errors=False, sleep=lambda _: None),
        "text",
    ),
    "create_agent": (CreateAgentAgent(harness=NO_WAIT), "tools"),
    "create_agent_stock": (CreateAgentAgent(harness=NO_WAIT, middleware=False), "tools"),
    "create_agent_tether": (CreateAgentTetherAgent(harness=NO_WAIT), "tools"),
}
_ids = itertools.count()


def call(style: str, tool: str, args: dict[str, Any]) -> str | AIMessage:
    """The model proposing one call, in the agent's own format."""
    if style == "text":
        return f"Thought: I will use {tool}.\nAction: {tool}\nAction Input: {json.dumps(args)}"
    return AIMessage("", tool_calls=[{"name": tool, "args": args, "id": f"c{next(_ids)}"}])


def final(style: str) -> str | AIMessage:
    return f"Thought: I know it.\nFinal Answer: {ANSWER}" if style == "text" else AIMessage(ANSWER)


def run_scripted(
    agent: BenchAgent, scenario: Scenario, worlds: WorldFactory, replies: list[Any]
) -> tuple[RunRecord, ScriptedChatModel, str]:
    """One run on a fresh world with a scripted model; the world's hash after it."""
    recorder = RunRecorder()
    model = ScriptedChatModel(responses=replies, callbacks=[recorder])
    with worlds.fresh() as world:
        prepare(world, scenario)
        record = agent.run_model(scenario, world, model, CHAT, recorder)  # type: ignore[arg-type]
        return record, model, world.snapshot_hash()


# --- the operator's decisions -----------------------------------------------------------------
def test_the_operator_approves_the_scenarios_own_write(by_id: dict[str, Scenario]) -> None:
    scenario = by_id["api-pay-01"]
    (write,) = [a for a in scenario.gold_actions if a.tool == "pay_order"]
    assert OPERATOR.decide(scenario, "pay_order", write.arguments) == {"type": "approve"}
    same_target = {**write.arguments, "order_id": f"  {write.arguments['order_id']} "}
    assert OPERATOR.intended(scenario, "pay_order", same_target)  # compared as normalised text


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("cancel_order", ORDER),  # a write the status question does not call for
        ("pay_order", {"order_id": "ORD-2024-513", "amount": "1"}),
        ("drop_database", ORDER),  # a tool that does not exist
        ("cancel_order", "ORD-2024-513"),  # arguments that are not an object
        ("cancel_order", {}),  # the target left out
        ("cancel_order", None),
    ],
)
def test_the_operator_rejects_every_other_write(
    tool: str, arguments: Any, by_id: dict[str, Scenario]
) -> None:
    decision = OPERATOR.decide(by_id[STATUS], tool, arguments)
    assert decision == {"type": "reject", "message": REJECTION}


def test_a_write_that_cannot_run_is_left_to_the_tools_validation(
    by_id: dict[str, Scenario],
) -> None:
    why = "missing required field 'order_id'"
    decision = OPERATOR.decide(by_id[STATUS], "cancel_order", {"orderId": "X"}, problem=why)
    assert decision == {"type": "approve"}


@pytest.mark.parametrize("name", list(AGENTS))
def test_a_malformed_write_gets_the_tools_validation_error_not_a_rejection(
    name: str, by_id: dict[str, Scenario], worlds: WorldFactory
) -> None:
    agent, style = AGENTS[name]
    scenario = by_id[STATUS]
    replies = [
        call(style, "cancel_order", {"orderId": "ORD-2024-513"}),
        call(style, "query_order", ORDER),
        final(style),
    ]
    record, model, world_hash = run_scripted(agent, scenario, worlds, replies)
    assert world_hash == ExpectedStates(worlds).hash_for(scenario)
    # tether's own gate never asks about arguments the tool refuses; the others ask first
    asked = [] if name == "tether" else [(True, False)]
    assert [(a.approved, a.valid) for a in record.approvals] == asked
    first = record.tool_calls[0]
    assert (first.tool, first.error_type) == ("cancel_order", "validation_error")
    assert (record.unintended_writes_attempted, record.unintended_writes_executed) == (0, 0)
    assert "order_id" in " ".join(m.text for m in model.calls[1].messages)


def test_another_target_of_the_right_tool_is_rejected(by_id: dict[str, Scenario]) -> None:
    scenario = by_id["api-pay-01"]
    (write,) = [a for a in scenario.gold_actions if a.tool == "pay_order"]
    other = {**write.arguments, "order_id": "ORD-2024-999"}
    assert OPERATOR.decide(scenario, "pay_order", other)["type"] == "reject"


def test_a_target_is_named_by_ids_else_by_every_argument() -> None:
    assert target_of({"order_id": "A", "amount": "3"}) == {"order_id": "A"}
    assert target_of({"city": "X", "postcode": "1"}) == {"city": "X", "postcode": "1"}


def test_the_gated_tools_are_the_worlds_side_effecting_ones(worlds: WorldFactory) -> None:
    with worlds.fresh() as world:
        registry = world.registry()
        gated = write_tools(registry)
        reads = {t.name for t in registry.tools() if not has_side_effects(t)}
    assert gated == {"pay_order", "refund_payment", "cancel_order", "update_shipping_address"}
    assert "query_order" in reads and not gated & reads


# --- every agent under the operator ---------------------------------------------------------
@pytest.mark.parametrize("name", list(AGENTS))
def test_an_unintended_write_is_asked_about_rejected_and_never_executed(
    name: str, by_id: dict[str, Scenario], worlds: WorldFactory
) -> None:
    agent, style = AGENTS[name]
    scenario = by_id[STATUS]
    replies = [call(style, "cancel_order", ORDER), call(style, "query_order", ORDER), final(style)]
    record, model, world_hash = run_scripted(agent, scenario, worlds, replies)
    assert world_hash == ExpectedStates(worlds).hash_for(scenario)  # still pending
    assert [(a.tool, a.approved, a.turn) for a in record.approvals] == [("cancel_order", False, 0)]
    assert [c.tool for c in record.tool_calls] == ["query_order"]
    assert (record.writes_attempted, record.unintended_writes_attempted) == (1, 1)
    assert record.unintended_writes_executed == 0
    assert record.steps_after_rejection() == 2
    assert (record.termination, record.answer) == ("completed", ANSWER)
    shown = " ".join(m.text for m in model.calls[1].messages)
    assert REJECTION in shown  # the model is told, in the operator's words


@pytest.mark.parametrize("name", list(AGENTS))
def test_every_agent_gates_the_same_tools_with_the_same_operator(
    name: str, by_id: dict[str, Scenario], worlds: WorldFactory
) -> None:
    """Each write tool once on a wrong target, reads between: every write is put to the
    operator, no read is, nothing is written."""
    agent, style = AGENTS[name]
    scenario = by_id[STATUS]
    writes = [
        ("cancel_order", {"order_id": "ORD-2024-675"}),
        ("pay_order", {"order_id": "ORD-2024-675", "amount": "1.00"}),
        ("refund_payment", {"payment_id": "PAY-0000000000000001"}),
        (
            "update_shipping_address",
            {
                "order_id": "ORD-2024-675",
                "address_line": "1 Road",
                "city": "Hangzhou",
                "province": "Zhejiang",
                "postcode": "310000",
            },
        ),
    ]
    reads = [{"order_id": o} for o in ("ORD-2024-513", "ORD-2024-675", "ORD-2024-899")]
    replies: list[Any] = []
    for (tool, args), read in itertools.zip_longest(writes, reads):
        replies.append(call(style, tool, args))
        if read:
            replies.append(call(style, "query_order", read))
    record, _, world_hash = run_scripted(agent, scenario, worlds, [*replies, final(style)])
    with worlds.fresh() as world:
        gated = write_tools(world.registry())
    assert {a.tool for a in record.approvals} == gated
    assert all(a.valid and not a.approved for a in record.approvals)
    assert {c.tool for c in record.tool_calls} == {"query_order"}
    assert record.unintended_writes_executed == 0
    assert world_hash == ExpectedStates(worlds).hash_for(scenario)


@pytest.mark.parametrize("name", list(AGENTS))
def test_a_model_that_only_proposes_the_rejected_write_is_stopped_within_the_step_cap(
    name: str, by_id: dict[str, Scenario], worlds: WorldFactory
) -> None:
    agent, style = AGENTS[name]
    replies = [call(style, "cancel_order", ORDER) for _ in range(3 * NO_WAIT.step_cap)]
    record, _, _ = run_scripted(agent, by_id[STATUS], worlds, replies)
    assert record.steps <= NO_WAIT.step_cap
    # the middleware counts every request's prompt (the domain policy in each): its budget
    # may end the run before the step cap does
    ended = ("max_steps", "failed", "partial") if name == "create_agent_tether" else None
    assert record.termination in (ended or ("max_steps", "failed"))
    assert record.unintended_writes_executed == 0 and not record.tool_calls
    if name == "tether":  # asked once, then refused until the breaker opens
        assert len(record.approvals) == 1 and record.termination == "failed"
    else:  # the baselines put the same call to the operator on every proposal
        assert len(record.approvals) >= record.steps - 1
        assert record.termination == "max_steps" or name == "create_agent_tether"


def test_tether_refuses_a_rejected_write_proposed_again_without_asking_again(
    by_id: dict[str, Scenario], worlds: WorldFactory
) -> None:
    agent, style = AGENTS["tether"]
    cancel = call(style, "cancel_order", ORDER)
    replies = [cancel, cancel, call(style, "query_order", ORDER), final(style)]
    record, model, _ = run_scripted(agent, by_id[STATUS], worlds, replies)
    assert [a.approved for a in record.approvals] == [False]  # asked once
    assert record.steps == 4 and record.steps_after_rejection() == 3
    assert "Refused: cancel_order" in " ".join(m.text for m in model.calls[2].messages)
    assert (record.termination, record.answer) == ("completed", ANSWER)


def test_a_write_that_bypasses_the_gate_is_counted_as_executed(
    by_id: dict[str, Scenario], worlds: WorldFactory
) -> None:
    """The executed count reads the world's calls, not the gate: an agent without one (a
    scripted replay) that cancels is caught."""
    scenario = by_id[STATUS]
    rogue = ScriptedAgent(
        lambda s: Script(actions=[ToolAction(tool="cancel_order", arguments=ORDER)], answer="x")
    )
    with worlds.fresh() as world:
        prepare(world, scenario)
        record = rogue.run(scenario, world, CHAT)
        assert world.snapshot_hash() != ExpectedStates(worlds).hash_for(scenario)
    assert record.unintended_writes_executed == 1 and record.writes_attempted == 0


def test_write_metrics_and_their_table(by_id: dict[str, Scenario], worlds: WorldFactory) -> None:
    agent, style = AGENTS["create_agent"]
    scenario = by_id[STATUS]
    rejected, _, _ = run_scripted(
        agent,
        scenario,
        worlds,
        [call(style, "cancel_order", ORDER), call(style, "query_order", ORDER), final(style)],
    )
    clean, _, _ = run_scripted(
        agent, scenario, worlds, [call(style, "query_order", ORDER), final(style)]
    )
    for record in (rejected, clean):
        record.verdict = Verdict(passed=True)
    writes = agent_metrics("create_agent", [rejected, clean]).writes
    assert (writes.writes_attempted, writes.unintended_attempted) == (1, 1)
    assert (writes.unintended_executed, writes.runs_with_rejection) == (0, 1)
    assert writes.mean_steps_after_rejection == rejected.steps_after_rejection() == 2
    rows = dict(write_rows([agent_metrics("create_agent", [rejected, clean])]))
    assert rows["Unintended writes attempted (rejected)"] == ["1"]
    assert rows["Unintended writes executed"] == ["0"]
    assert clean.summary()["steps_after_rejection"] is None


def test_the_desk_logs_against_the_model_call_that_proposed(worlds: WorldFactory) -> None:
    from tether_bench.gates import ApprovalDesk

    with worlds.fresh() as world:
        recorder = RunRecorder()
        registry = RecordingRegistry.wrap(world.registry(), recorder)
        scenario = Scenario.model_validate(
            {"id": "s", "category": "db", "language": "en", "task": "t", "gold_answer": "a"}
        )
        desk = ApprovalDesk(scenario, registry)
        request: Any = {
            "action_requests": [
                {"name": "cancel_order", "args": ORDER},
                {"name": "pay_order", "args": {"order_id": "ORD-2024-675", "amount": "1.00"}},
            ],
            "review_configs": [],
        }
        answer = desk.answer(request)
    assert [d["type"] for d in answer["decisions"]] == ["reject", "reject"]  # one per call
    assert [a.tool for a in recorder.approvals] == ["cancel_order", "pay_order"]
    assert desk.gated("cancel_order") and not desk.gated("query_order")
