"""What the simulated model says next in one conversation (a session): the gold plan, or a fault.

A session is one agent's run of one scenario trial, named by the model string the agent's
ChatOpenAI sends: ``sim:<scenario id>:<trial>:<session tag>``. Its state is where the plan
stands (gold calls the world has already answered successfully) and whether the previous turn
moved it forward.

How progress is known: the benchmark's recording registry, which every agent's tools go
through, tells the session about each tool call the world answered. A planned call counts as
done when the world ran exactly that call (same tool, same arguments after the agent's own
parsing) and answered with success, after any in-place retries. So the simulator never reads
an agent's prompt layout, and a fault that an agent repairs (tether's JSON repair) moves the
plan forward exactly as a clean call would.
"""

from __future__ import annotations

import json
import threading
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from tether.bench.records import ToolCall
from tether.bench.scenarios import Scenario, ToolAction
from tether.bench.simulator.faults import FaultKind, FaultModel, applicable_faults, decide, draw

MODEL_PREFIX = "sim"
TurnKind = Literal["action", "final", "text"]


def model_name(scenario_id: str, trial: int, tag: str) -> str:
    """The model string that routes a request to its session."""
    return f"{MODEL_PREFIX}:{scenario_id}:{trial}:{tag}"


def parse_model_name(name: str) -> tuple[str, int, str] | None:
    """(scenario id, trial, tag) from a session model string; None if it is not one."""
    parts = name.split(":")
    if len(parts) != 4 or parts[0] != MODEL_PREFIX or not parts[2].isdigit():
        return None
    return parts[1], int(parts[2]), parts[3]


@dataclass(frozen=True)
class Turn:
    """One reply, before it is rendered as ReAct text or as a tool call."""

    kind: TurnKind
    thought: str
    tool: str | None = None
    arguments: dict[str, Any] | None = None
    arguments_text: str | None = None
    answer: str | None = None
    fault: FaultKind | None = None


@dataclass(frozen=True)
class Decision:
    """The log line of one turn: enough to check that every agent met the same draws."""

    index: int
    u_fault: float
    u_kind: float
    stalled: bool
    position: int
    planned: Literal["action", "final"]
    fault: FaultKind | None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Session:
    scenario: Scenario
    trial: int
    position: int = 0
    calls: int = 0
    last_turn: Turn | None = None
    advanced: bool = False
    feed: list[ToolCall] = field(default_factory=list)
    decisions: list[Decision] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def observe(self, call: ToolCall) -> None:
        """A tool call the world answered (from the recording registry)."""
        with self.lock:
            gold = self.scenario.gold_actions
            if (
                self.position < len(gold)
                and call.status == "success"
                and _same_call(call, gold[self.position])
            ):
                self.position += 1
                self.advanced = True

    def next_turn(self, seed: int, faults: FaultModel) -> Turn:
        """Decide this turn: follow the plan, or make the fault the draw calls for."""
        with self.lock:
            index = self.calls
            self.calls += 1
            previous = self.last_turn
            stalled = previous is not None and previous.kind != "final" and not self.advanced
            if previous is not None and previous.kind == "final" and previous.fault is not None:
                stalled = True
            self.advanced = False
            gold = self.scenario.gold_actions
            planned_call = self.position < len(gold)
            step = gold[self.position] if planned_call else None
            turn_draw = draw(seed, self.scenario.id, self.trial, index)
            fault = decide(
                faults,
                turn_draw,
                stalled=stalled,
                applicable=applicable_faults(
                    planned_call=planned_call,
                    has_previous=self.position > 0,
                    has_arguments=bool(step and step.arguments),
                ),
            )
            self.decisions.append(
                Decision(
                    index=index,
                    u_fault=turn_draw.u_fault,
                    u_kind=turn_draw.u_kind,
                    stalled=stalled,
                    position=self.position,
                    planned="action" if planned_call else "final",
                    fault=fault,
                )
            )
            turn = self._turn(step, fault, previous)
            self.last_turn = turn
            return turn

    # --- building the turn ----------------------------------------------------------------
    def _turn(
        self, step: ToolAction | None, fault: FaultKind | None, previous: Turn | None
    ) -> Turn:
        zh = self.scenario.language == "zh"
        gold = self.scenario.gold_actions
        if fault == "repeated_thought":
            thought = previous.thought if previous else self._thought(step)
            return Turn(kind="text", thought=thought, fault=fault)
        if fault == "premature_final":
            answer = "已处理完毕。" if zh else "Done, the request has been handled."
            return Turn(kind="final", thought=self._thought(None), answer=answer, fault=fault)
        if fault == "repeat_previous":
            done = gold[self.position - 1]
            return _action(self._thought(done), done.tool, done.arguments, fault)
        if step is None:
            return Turn(kind="final", thought=self._thought(None), answer=self.scenario.gold_answer)
        thought = self._thought(step)
        if fault == "unknown_tool":
            return _action(thought, _near_miss(step.tool), step.arguments, fault)
        if fault == "missing_argument":
            arguments = dict(step.arguments)
            arguments.pop(next(iter(arguments)))
            return _action(thought, step.tool, arguments, fault)
        if fault == "chinese_quotes":
            text = _curly_quotes(_json(step.arguments))
            return Turn("action", thought, step.tool, None, text, fault=fault)
        if fault == "malformed_json":
            text = _json(step.arguments)[:-1]  # the closing brace never came
            return Turn("action", thought, step.tool, None, text, fault=fault)
        return _action(thought, step.tool, step.arguments, None)

    def _thought(self, step: ToolAction | None) -> str:
        zh = self.scenario.language == "zh"
        total = len(self.scenario.gold_actions)
        if step is None:
            return "已经得到完成任务所需的信息。" if zh else "I have what the task needs."
        number = min(self.position + 1, total)
        if zh:
            return f"下一步调用 {step.tool}（计划第 {number}/{total} 步）。"
        return f"Next I call {step.tool} (step {number} of {total} in my plan)."


def _action(thought: str, tool: str, arguments: dict[str, Any], fault: FaultKind | None) -> Turn:
    return Turn("action", thought, tool, dict(arguments), _json(arguments), fault=fault)


def _json(arguments: dict[str, Any]) -> str:
    return json.dumps(arguments, ensure_ascii=False)


def _same_call(call: ToolCall, action: ToolAction) -> bool:
    if call.tool != action.tool or not isinstance(call.arguments, dict):
        return False
    return _canonical(call.arguments) == _canonical(action.arguments)


def _canonical(arguments: dict[str, Any]) -> str:
    return json.dumps(arguments, sort_keys=True, ensure_ascii=False, default=str)


def _curly_quotes(text: str) -> str:
    """Straight double quotes become “ and ” in turn, as the seed saw Qwen write them."""
    out, opening = [], True
    for char in text:
        if char == '"':
            out.append("“" if opening else "”")
            opening = not opening
        else:
            out.append(char)
    return "".join(out)


def _near_miss(tool: str) -> str:
    """A plausible wrong name: the tool's name in camelCase (query_order -> queryOrder)."""
    head, *rest = tool.split("_")
    return head + "".join(part.capitalize() for part in rest) if rest else f"{tool}_tool"
