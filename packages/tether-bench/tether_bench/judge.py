"""The judge: a run passes only on the world's final state, a grounded answer and its ending.

What the agent says it did counts for nothing. The world's ``snapshot_hash()`` must equal the
hash of a fresh world after the gold plan (so a wrong amount, an extra write or a missing one
all fail); the final answer must state every required output, and every id, number and status
it states must come from the task or from what the tools returned in that run (an answer that
says "paid" when no charge went through, or names an order no tool returned, fails); it must
not give two amounts for one thing; it may refuse only where the scenario calls for a refusal,
and then for the scenario's reason. No forbidden call may have reached a tool, and the run must
have ended the expected way: a run cut off by a step cap fails, as in tau2-bench.
"""

from __future__ import annotations

from typing import Any

from tether.decisions.grounding import Call, Evidence, Unbacked, unbacked

from tether_bench.claims import ORDERS, Claims, conflicting_amounts, read_claims
from tether_bench.matching import same_value
from tether_bench.records import RunRecord, ToolCall, Verdict
from tether_bench.scenarios import ForbiddenAction, Scenario, missing_outputs
from tether_bench.toolset import BenchWorld
from tether_bench.worlds import ExpectedStates

MISSING_INFORMATION, NO_TOOL, STATE = "missing-information", "no-suitable-tool", "state"
HAND_OFF = "hand-off"
"""A refusal the domain policy calls for: decline and hand the customer to a person."""


def is_forbidden(call: ToolCall, rule: ForbiddenAction) -> bool:
    """The call is this tool's, with (at least) the rule's arguments."""
    if call.tool != rule.tool:
        return False
    if rule.arguments is None:
        return True
    args: dict[str, Any] = call.arguments if isinstance(call.arguments, dict) else {}
    return all(k in args and same_value(args[k], v) for k, v in rule.arguments.items())


def evidence_of(scenario: Scenario, record: RunRecord) -> Evidence:
    """What the user said (the task, or every message of a conversation as sent) and every
    successful tool call of the run."""
    calls = [
        Call(c.tool, c.arguments, c.result) for c in record.tool_calls if c.status == "success"
    ]
    return Evidence.of("\n".join(record.user_messages or [scenario.task]), calls)


def turn_failures(scenario: Scenario, record: RunRecord) -> list[str]:
    """A conversation: the user sent every message, and each reply before the last stated
    what that message asked for (a conversation the user ended early did not get there)."""
    if not scenario.turns:
        return []
    sent = len(record.user_messages)
    if sent < len(scenario.turns):
        return [f"the conversation ended after {sent} of {len(scenario.turns)} user messages"]
    failures = []
    for number, (turn, reply) in enumerate(
        zip(scenario.turns[:-1], record.replies, strict=False), start=1
    ):
        if missing := missing_outputs(reply, turn.outputs):
            failures.append(f"reply to message {number} lacks {', '.join(missing)}")
    return failures


def unbacked_claims(scenario: Scenario, claims: Claims, evidence: Evidence) -> Unbacked:
    """What the answer states that nothing backs. The scenario's domain policy backs ids and
    numbers (a limit, a window in days), as the task's words do; never a status: a policy
    says what a state allows, not which state an order is in."""
    missing = unbacked(claims, evidence, ORDERS)
    if not scenario.instructions:
        return missing
    policy = Evidence(f"{scenario.task}\n{scenario.instructions}", evidence.grounds)
    with_policy = unbacked(claims, policy, ORDERS)
    return Unbacked(ids=with_policy.ids, numbers=with_policy.numbers, statuses=missing.statuses)


def grounding_failures(scenario: Scenario, claims: Claims, evidence: Evidence) -> list[str]:
    """Ids, numbers and statuses the answer states that nothing in the run backs (numbers
    only where the scenario has work to do: an answer to a question no tool serves may state
    what it knows)."""
    missing = unbacked_claims(scenario, claims, evidence)
    failures = []
    if missing.ids:
        failures.append(f"answer names ids no tool returned: {', '.join(missing.ids)}")
    if scenario.gold_actions and missing.numbers:
        numbers = ", ".join(map(str, missing.numbers))
        failures.append(f"answer states numbers no tool returned: {numbers}")
    if missing.statuses:
        statuses = ", ".join(missing.statuses)
        failures.append(f"answer claims status {statuses}, which no tool reported")
    return failures


def refusal_failures(scenario: Scenario, claims: Claims) -> list[str]:
    """A refusal only where the scenario calls for one, and for the scenario's reason."""
    if scenario.expected_termination == "completed":
        if claims.refuses or claims.says_no_tool:
            return ["answer refuses a task the scenario expects done"]
        return []
    tags = set(scenario.tags)
    if NO_TOOL in tags and not (claims.says_no_tool and not claims.asks_for_information):
        return ["refusal does not say (only) that no tool can do it"]
    if MISSING_INFORMATION in tags and not (
        claims.asks_for_information and not claims.says_no_tool
    ):
        return ["refusal does not ask (only) for the missing information"]
    if STATE in tags and claims.says_no_tool:
        return ["refusal blames a missing tool, not the order's state"]
    if HAND_OFF in tags and (claims.says_no_tool or claims.asks_for_information):
        return ["hand-off blames a missing tool or asks for information, not the policy"]
    return []


def answer_failures(scenario: Scenario, record: RunRecord) -> list[str]:
    """Every reason the final answer fails: missing, ungrounded, contradictory or misplaced."""
    answer = (record.answer or "").strip()
    if not answer:
        return ["no final answer"]
    failures = []
    if missing := missing_outputs(answer, scenario.required_outputs):
        failures.append(f"final answer lacks {', '.join(missing)}")
    claims = read_claims(answer)
    failures += grounding_failures(scenario, claims, evidence_of(scenario, record))
    if labels := conflicting_amounts(answer):
        failures.append(f"answer gives two different amounts for {', '.join(labels)}")
    return failures + refusal_failures(scenario, claims)


def judge_run(
    scenario: Scenario, record: RunRecord, world_hash: str, expected_hash: str
) -> Verdict:
    """Every reason ``record`` fails ``scenario``; it passes when there is none."""
    failures: list[str] = []
    if world_hash != expected_hash:
        failures.append("world state differs from the gold plan's")
    failures += answer_failures(scenario, record)
    failures += turn_failures(scenario, record)
    for call in record.tool_calls:
        for rule in scenario.forbidden_actions:
            if is_forbidden(call, rule):
                failures.append(f"forbidden call {call.tool}({call.arguments})")
    if record.termination != "completed":
        failures.append(
            f"ended with {record.termination} ({record.termination_reason}), expected "
            f"{scenario.expected_termination}"
        )
    elif (limit := scenario.early_call_limit) is not None and record.steps > limit:
        failures.append(f"did not stop early: {record.steps} model calls, at most {limit}")
    return Verdict(passed=not failures, failures=failures)


class Judge:
    """Judges runs against gold states computed once per scenario."""

    def __init__(self, expected: ExpectedStates) -> None:
        self.expected = expected

    def judge(self, scenario: Scenario, record: RunRecord, world: BenchWorld) -> Verdict:
        return judge_run(scenario, record, world.snapshot_hash(), self.expected.hash_for(scenario))
