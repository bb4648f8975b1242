"""act: run the proposed tool call once (after a backoff pause when this is a retry)."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from tether.graph import policy
from tether.graph.rules import apply_rules
from tether.graph.state import AgentState
from tether.nodes.deps import Deps
from tether.tools.runinfo import run_config


def make_act(deps: Deps) -> Any:
    def act(state: AgentState, runtime: Runtime[Any]) -> dict[str, Any]:
        settings = deps.settings_for(runtime)
        proposal = state["proposal"]
        assert proposal and proposal["kind"] == "action"  # routed here only for actions
        attempt = state.get("tool_attempts", 0) + 1
        delay = 0.0
        if attempt > 1:
            delay = policy.backoff_delay(attempt - 1, settings, deps.rng)
            deps.sleep(delay)
        result = deps.registry.invoke(
            proposal["tool"], proposal["arguments"], config=run_config(state["run_id"])
        )
        result["meta"]["retry_count"] = attempt - 1
        decision = apply_rules(deps.rules, state, dict(result), settings)
        if decision:
            result["meta"]["rule"] = decision
        update: dict[str, Any] = {
            "result": result,
            "tool_attempts": attempt,
            "trace": [
                {
                    "step": state["steps"],
                    "event": "tool_call",
                    "detail": {
                        "tool": proposal["tool"],
                        "arguments": proposal["arguments"],
                        "attempt": attempt,
                        "backoff_s": round(delay, 3),
                        "status": result["status"],
                        "observation": result.get("data", result.get("message")),
                        "meta": result["meta"],
                    },
                }
            ],
        }
        if attempt == 1:
            update["executed"] = [proposal["fingerprint"]]
        else:
            update["tool_retries"] = state.get("tool_retries", 0) + 1
        return update

    return act
