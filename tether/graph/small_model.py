"""The small-model profile's decisions: which tools a step offers, when only the final
answer is, and the sampling temperature.

A weak model does better with fewer choices and no sampling noise; these functions decide
that from the state and the settings, like every decision in :mod:`tether.graph.decisions`,
and the model still writes every call and every answer itself.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.tools import BaseTool

from tether.llm.toolpick import select_tools
from tether.settings import AgentSettings
from tether.state import AgentState, call_key


def final_only(state: AgentState, settings: AgentSettings) -> bool:
    """Small-model profile: offer only the final answer after the model repeated a call that
    had already succeeded (its latest step that was not an unreadable reply), since the result
    it needs is in hand. The model still writes the answer; the loop never does."""
    if not settings.small_profile:
        return False
    for record in reversed(state.get("history", [])):
        if record["kind"] == "parse_failure":
            continue
        if record["kind"] != "success" or not record["fingerprint"]:
            return False
        call = state.get("calls", {}).get(call_key(record["fingerprint"]))
        return call is not None and call["runs"] >= 2 and call["outcomes"][-2:] == 2 * ["success"]
    return False


def offered_tools(
    state: AgentState, tools: Sequence[BaseTool], settings: AgentSettings
) -> list[BaseTool]:
    """The tools this step lists: the best matches for the task, with every tool already run
    kept. Matched on the task alone, so the offer (the start of every prompt) stays the same
    from step to step and the server reuses its prompt cache; a forced final answer lists
    them too, but its schema offers none of them (see :func:`final_only`). Under the
    small-model profile the best match is listed last, next to the task: SmolLM2-135M
    picked the right tool for the README's task that way, and a wrong one listed first."""
    used = {entry["tool"] for entry in state.get("tool_buffer", [])}
    task = state.get("task", "")
    return select_tools(tools, task, settings.tool_offer, used, ranked=settings.small_profile)


def sampling_temperature(state: AgentState, settings: AgentSettings) -> float:
    """0 under the small-model profile (a weak model's samples wander); else the state's."""
    return 0.0 if settings.small_profile else state.get("temperature", settings.temperature)
