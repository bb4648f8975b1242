"""One conversation's information, written the way each benchmarked agent lays out its prompt.

``tether``: a system prompt with the tool listing, one user message with the task, the
tool results, the reasoning so far and controller notes. ``agent_executor``: the standard
ReAct prompt with a Thought/Action/Observation scratchpad. ``create_agent``: chat messages
with assistant tool calls and tool messages. The test asserts the simulator decides the same
on all three.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from tether_bench.agents.agent_executor import REACT_PROMPT

FORMATS = ("tether", "agent_executor", "create_agent")


@dataclass(frozen=True)
class Exchange:
    """One model reply (a call, or raw text the agent could not use) and what came back."""

    tool: str | None
    arguments: dict[str, Any] | None
    result: str
    """The observation text: a tool envelope's JSON, or the agent's error message."""
    raw: str | None = None
    """The reply's text when it was not a usable call."""
    note: str | None = None
    """A controller's note sent after the result (in each layout where notes go)."""


def envelope(data: Any) -> str:
    return json.dumps({"status": "success", "data": data, "meta": {}}, ensure_ascii=False)


def failure(message: str) -> str:
    return json.dumps(
        {"status": "error", "message": message, "meta": {"error_type": "validation_error"}},
        ensure_ascii=False,
    )


def request(
    layout: str, task: str, tools: dict[str, str], history: list[Exchange]
) -> dict[str, Any]:
    """The chat request body ``layout``'s agent would send."""
    if layout == "tether":
        return {"messages": _tether(task, tools, history)}
    if layout == "agent_executor":
        return {"messages": [{"role": "user", "content": _react(task, tools, history)}]}
    return _native(task, tools, history)


def _args(arguments: dict[str, Any] | None) -> str:
    return json.dumps(arguments or {}, ensure_ascii=False)


def _tether(task: str, tools: dict[str, str], history: list[Exchange]) -> list[dict[str, Any]]:
    listing = "\n".join(f"- {n}: {d}\n  arguments: {{}}" for n, d in tools.items())
    system = f"You are a careful tool-calling agent.\n\nTools:\n{listing}\n\nAnswer in ReAct."
    reasoning, results, notes = [], [], []
    for step, ex in enumerate(history, start=1):
        if ex.tool is None:
            notes.append(f"- Your last reply could not be used: {ex.result}")
            continue
        action = f"Action: {ex.tool}\nAction Input: {_args(ex.arguments)}"
        reasoning.append(f"[step {step}] Thought: next step\n{action}")
        results.append(f"[step {step}] {ex.tool}({_args(ex.arguments)}) ->\n{ex.result}")
        if ex.note is not None:
            notes.append(f"- {ex.note}")
    user = [f"Task: {task}"]
    user.append("## Tool results (oldest first)\n" + ("\n\n".join(results) or "(none yet)"))
    user.append("## Your reasoning so far (oldest first)\n" + ("\n\n".join(reasoning) or "(none)"))
    if notes:
        user.append("## Notes from the controller\n" + "\n".join(notes))
    user.append("Continue with your next step.")
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n\n".join(user)}]


def _react(task: str, tools: dict[str, str], history: list[Exchange]) -> str:
    listing = "\n".join(f"{n}: {d}, args: {{}}" for n, d in tools.items())
    pad = ""
    for ex in history:
        if ex.tool is None:
            pad += f" {ex.raw or ''}\nObservation: {ex.result}\nThought:"
            continue
        note = f"\n{ex.note}" if ex.note is not None else ""
        pad += (
            f" next step\nAction: {ex.tool}\nAction Input: {_args(ex.arguments)}"
            f"\nObservation: {ex.result}{note}\nThought:"
        )
    return REACT_PROMPT.format(
        tools=listing, tool_names=", ".join(tools), input=task, agent_scratchpad=pad
    )


def _native(task: str, tools: dict[str, str], history: list[Exchange]) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a careful tool-calling agent."},
        {"role": "user", "content": task},
    ]
    for i, ex in enumerate(history):
        if ex.tool is None:
            messages.append({"role": "assistant", "content": ex.raw or ""})
            messages.append({"role": "user", "content": ex.result})
            continue
        function = {"name": ex.tool, "arguments": _args(ex.arguments)}
        call = {"id": f"c{i}", "type": "function", "function": function}
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": ex.result})
        if ex.note is not None:
            messages.append({"role": "user", "content": ex.note})
    specs = [
        {"type": "function", "function": {"name": n, "description": d, "parameters": {}}}
        for n, d in tools.items()
    ]
    return {"messages": messages, "tools": specs}
