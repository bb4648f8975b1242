"""assess: classify the step, update every counter and buffer, and record the decision."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from tether.graph import policy
from tether.graph.state import FAILURE_KINDS, AgentState, StepRecord, Verdict
from tether.llm.prompts import parse_failure_note
from tether.memory.buffers import ToolResultEntry, windowed
from tether.nodes.deps import Deps
from tether.settings import AgentSettings
from tether.tools.envelope import LOOP_ORIGIN, TOOL_ERROR_TYPES

SUMMARY_CHARS = 300


def make_assess(deps: Deps) -> Any:
    def assess(state: AgentState, runtime: Runtime[Any]) -> dict[str, Any]:
        settings = deps.settings_for(runtime)
        record = classify(state, settings)
        history = [*state.get("history", []), record]
        failed = record["kind"] in FAILURE_KINDS
        succeeded = record["kind"] == "success"
        success_streak = state.get("success_streak", 0) + 1 if succeeded else 0
        failure_streak = state.get("failure_streak", 0) + 1 if failed else 0

        hints: list[str] = []
        proposal: dict[str, Any] = dict(state.get("proposal") or {})
        if record["kind"] == "parse_failure":
            hints.append(parse_failure_note(proposal.get("error", "unreadable reply")))
        rule = (state.get("result") or {}).get("meta", {}).get("rule")
        if rule and rule.get("action") == "switch":
            hints.append(f"Rule {rule['rule']}: {rule.get('reason', '')}")
        if switch := policy.switch_hint(history, settings):
            hints.append(switch)

        update: dict[str, Any] = {
            "history": [record],
            "success_streak": success_streak,
            "failure_streak": failure_streak,
            "parse_failures": state.get("parse_failures", 0) + (record["kind"] == "parse_failure"),
            "temperature": policy.temperature_for(success_streak, settings),
            "hints": hints,
            "tool_attempts": 0,
        }
        if (result := state.get("result")) is not None and proposal.get("kind") == "action":
            entry: ToolResultEntry = {
                "step": record["step"],
                "tool": proposal["tool"],
                "arguments": proposal["arguments"],
                "result": result,
            }
            update["tool_buffer"] = windowed([entry], settings.tool_window)

        after: Any = {**state, **update, "history": history}
        verdict = _rule_stop(rule) or policy.after_step(after, settings)
        update["verdict"] = verdict
        switching = bool(switch) or bool(rule and rule.get("action") == "switch")
        decision = "stop" if verdict else ("switch" if switching else "continue")
        update["trace"] = [
            {
                "step": record["step"],
                "event": "decision",
                "detail": {
                    "step_kind": record["kind"],
                    "decision": decision,
                    "reason": verdict["reason"] if verdict else record["summary"],
                    "success_streak": success_streak,
                    "failure_streak": failure_streak,
                    "next_temperature": update["temperature"],
                    "hints": hints,
                },
            }
        ]
        return update

    return assess


def classify(state: AgentState, settings: AgentSettings) -> StepRecord:
    """What kind of step this was, with a one-line summary."""
    step = state.get("steps", 0)
    proposal = state.get("proposal")
    if proposal is None:
        raise RuntimeError("assess reached without a proposal")
    if proposal["kind"] == "final":
        return _record(step, "final", proposal.get("answer", ""), None)
    if proposal["kind"] == "invalid":
        thought = " ".join(proposal["thought"].split()).lower()
        return _record(
            step,
            "parse_failure",
            proposal.get("error", ""),
            f"thought:{thought}" if thought else None,
        )
    fingerprint = proposal["fingerprint"]
    result = state.get("result")
    if result is None:
        times = settings.repeat_limit
        return _record(
            step,
            "repeat",
            f"{proposal['tool']} proposed with the same arguments for the {_ordinal(times)} time: "
            f"{fingerprint}",
            fingerprint,
        )
    rule = result.get("meta", {}).get("rule")
    if rule and rule.get("action") in ("switch", "retry"):
        return _record(
            step, "rule_failure", f"{rule['rule']}: {rule.get('reason', '')}", fingerprint
        )
    if result["status"] == "success":
        return _record(step, "success", f"{proposal['tool']} succeeded", fingerprint)
    return _record(step, _error_kind(result), result.get("message", ""), fingerprint)


def _error_kind(result: dict[str, Any]) -> str:
    """The failure kind of an error result. Whatever a tool calls its error, an executed call
    that failed is a tool error unless it is one of the registry's own kinds."""
    meta = result.get("meta", {})
    kind = str(meta.get("error_type", "tool_error"))
    if meta.get("origin") == LOOP_ORIGIN or kind in TOOL_ERROR_TYPES:
        return kind
    return "tool_error"


def _record(step: int, kind: Any, summary: str, fingerprint: str | None) -> StepRecord:
    return {
        "step": step,
        "kind": kind,
        "summary": summary[:SUMMARY_CHARS],
        "fingerprint": fingerprint,
    }


def _rule_stop(rule: dict[str, Any] | None) -> Verdict | None:
    if not rule or rule.get("action") != "stop":
        return None
    return {
        "status": rule.get("status", "failed"),
        "reason": f"rule {rule['rule']}: {rule.get('reason', 'stop')}",
    }


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"
