"""compose: build the next prompt from both buffers and the tools registered right now, and
check the budget before the model is called."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from tether.graph import policy
from tether.graph.state import AgentState, TraceEvent, Verdict
from tether.llm.prompts import system_prompt
from tether.memory.render import render_prompt
from tether.nodes.deps import Deps


def make_compose(deps: Deps) -> Any:
    def compose(state: AgentState, runtime: Runtime[Any], config: RunnableConfig) -> dict[str, Any]:
        settings = deps.settings_for(runtime)
        tools = deps.registry.tools()  # rebuilt every step: tools may come and go
        rendered = render_prompt(
            system=system_prompt(tools, settings.protocol),
            task=state["task"],
            reasoning=state.get("reasoning_buffer", []),
            results=state.get("tool_buffer", []),
            hints=state.get("hints", []),
            budget=settings.memory_budget,
            counter=deps.counter_for(settings),
        )
        step = state.get("steps", 0) + 1
        events: list[TraceEvent] = []
        if rendered.dropped_reasoning or rendered.cut_results:
            events.append(
                {
                    "step": step,
                    "event": "memory_trimmed",
                    "detail": {
                        "budget": settings.memory_budget,
                        "dropped_reasoning": rendered.dropped_reasoning,
                        "cut_results_from_steps": rendered.cut_results,
                    },
                }
            )
        verdict = _cancelled(deps, config) or policy.before_call(state, settings, rendered.tokens)
        if verdict:
            events.append({"step": step, "event": "decision", "detail": {"stop": verdict}})
        return {
            "prompt": rendered.messages,
            "prompt_tokens_estimate": rendered.tokens,
            "tool_names": [t.name for t in tools],
            "verdict": verdict,
            "trace": events,
        }

    return compose


def _cancelled(deps: Deps, config: RunnableConfig) -> Verdict | None:
    thread_id = config.get("configurable", {}).get("thread_id")
    if deps.cancel_store is None or thread_id is None:
        return None
    reason = deps.cancel_store.requested(str(thread_id))
    return None if reason is None else {"status": "cancelled", "reason": f"cancelled: {reason}"}
