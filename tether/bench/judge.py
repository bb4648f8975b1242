"""The judge: a run passes only on the world's final state, the answer and how it ended.

What the agent says it did counts for nothing. The world's ``snapshot_hash()`` must equal the
hash of a fresh world after the gold plan (so a wrong amount, an extra write or a missing one
all fail), the final answer must state every required output, no forbidden call may have
reached a tool, and the run must have ended the expected way: a run cut off by a step cap
fails, as in tau2-bench, whatever it had done by then.
"""

from __future__ import annotations

from typing import Any

from tether.bench.matching import missing_outputs, same_value
from tether.bench.records import RunRecord, ToolCall, Verdict
from tether.bench.scenarios import ForbiddenAction, Scenario
from tether.bench.worlds import ExpectedStates
from tether.toolsets import World


def is_forbidden(call: ToolCall, rule: ForbiddenAction) -> bool:
    """The call is this tool's, with (at least) the rule's arguments."""
    if call.tool != rule.tool:
        return False
    if rule.arguments is None:
        return True
    args: dict[str, Any] = call.arguments if isinstance(call.arguments, dict) else {}
    return all(k in args and same_value(args[k], v) for k, v in rule.arguments.items())


def judge_run(
    scenario: Scenario, record: RunRecord, world_hash: str, expected_hash: str
) -> Verdict:
    """Every reason ``record`` fails ``scenario``; it passes when there is none."""
    failures: list[str] = []
    if world_hash != expected_hash:
        failures.append("world state differs from the gold plan's")
    if not (record.answer or "").strip():
        failures.append("no final answer")
    else:
        missing = missing_outputs(record.answer, scenario.required_outputs)
        if missing:
            failures.append(f"final answer lacks {', '.join(missing)}")
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

    def judge(self, scenario: Scenario, record: RunRecord, world: World) -> Verdict:
        return judge_run(scenario, record, world.snapshot_hash(), self.expected.hash_for(scenario))
