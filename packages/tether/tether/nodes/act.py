"""act: run the proposed call once (after a backoff pause when this is a retry), let the rules
judge the result, and close the step unless the call is to be retried."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import get_runtime
from tether.decisions import policy, side_effects
from tether.nodes import health
from tether.nodes.base import Node, emit
from tether.nodes.step import close_step
from tether.settings import AgentSettings
from tether.state import AgentState, Proposal, ToolResult, call_key
from tether.tools.marks import has_side_effects
from tether.tools.results import cap_result
from tether.tools.runinfo import run_config


class Act(Node):
    def run(self, state: AgentState, settings: AgentSettings) -> dict[str, Any]:
        proposal, attempt = _call_in_flight(state)
        delay = self._delay(attempt, settings)
        if delay:
            self.deps.sleep(delay)
        call, gated = _call(state, proposal, attempt)
        result = health.invoke(get_runtime().store, self.deps.registry, call, gated, settings)
        return self._record(state, proposal, attempt, delay, result, settings)

    async def arun(self, state: AgentState, settings: AgentSettings) -> dict[str, Any]:
        proposal, attempt = _call_in_flight(state)
        delay = self._delay(attempt, settings)
        if delay:
            await self.deps.asleep(delay)
        call, gated = _call(state, proposal, attempt)
        store = get_runtime().store
        result = await health.ainvoke(store, self.deps.registry, call, gated, settings)
        return await self.off_loop(self._record, state, proposal, attempt, delay, result, settings)

    def _delay(self, attempt: int, settings: AgentSettings) -> float:
        return policy.backoff_delay(attempt - 1, settings, self.deps.rng) if attempt > 1 else 0.0

    def _record(
        self,
        state: AgentState,
        proposal: Proposal,
        attempt: int,
        delay: float,
        result: Any,
        settings: AgentSettings,
    ) -> dict[str, Any]:
        capped = cap_result(result, settings.max_tool_result_chars)
        meta = {**capped["meta"], "retry_count": attempt - 1}
        tool_result: ToolResult = {**capped, "meta": meta}  # type: ignore[typeddict-item]
        rule = policy.judge(self.deps.rules, state, tool_result, settings)
        emit(
            state["steps"],
            "tool_call",
            {
                "tool": proposal["tool"],
                "arguments": proposal["arguments"],
                "attempt": attempt,
                "backoff_s": round(delay, 3),
                "status": tool_result["status"],
                "observation": tool_result.get("data", tool_result.get("message")),
                "meta": tool_result["meta"],
                "rule": rule,
            },
        )
        update: dict[str, Any] = {"result": tool_result, "rule": rule, "call_attempt": attempt}
        if attempt > 1:
            update["tool_retries"] = state.get("tool_retries", 0) + 1
        if policy.wants_retry(tool_result, rule, attempt, settings):
            if attempt == 1:  # the edge back to act retries it; the call has run once
                update["calls"] = [{"key": call_key(proposal.get("fingerprint", "")), "ran": True}]
            return update | {"next": "act"}
        counter, tool = self.deps.counter_for(settings), self.deps.registry.get(proposal["tool"])
        closed = close_step(
            state,
            settings,
            counter,
            proposal=proposal,
            result=tool_result,
            rule=rule,
            first_run=attempt == 1 and not state.get("resolving", False),
            side_effects=tool is not None and has_side_effects(tool),
        )
        return update | closed


def _call(state: AgentState, proposal: Proposal, attempt: int) -> tuple[dict[str, Any], bool]:
    """The call for the tool registry, and whether shared tool health may refuse it: only a
    first attempt, never the replay of a side effect whose outcome is unknown."""
    config = run_config(state["run_id"])
    call = {"tool": proposal["tool"], "args": proposal["arguments"], "config": config}
    replay = side_effects.is_replay_of_unresolved(state, proposal.get("fingerprint", ""))
    return call, attempt == 1 and not replay


def _call_in_flight(state: AgentState) -> tuple[Any, int]:
    proposal = state.get("proposal")
    if not proposal or proposal["kind"] != "action":
        raise RuntimeError("act reached without a proposed call")  # the graph routes actions only
    return proposal, state.get("call_attempt", 0) + 1
