"""Render the two buffers into a prompt that fits the memory budget.

Over budget, the oldest reasoning goes first and tool results stay; a tool result that alone
is too large is cut with a visible marker. Nothing is dropped silently: every cut is reported.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from tether.memory.buffers import ReasoningEntry, ToolResultEntry
from tether.memory.tokens import TokenCounter, count_messages

CUT_MARKER = "…[cut {removed} characters to fit the memory budget]"


@dataclass
class RenderedPrompt:
    messages: list[BaseMessage]
    tokens: int
    dropped_reasoning: int = 0
    cut_results: list[int] = field(default_factory=list)  # steps whose result was cut


def _reasoning_text(entry: ReasoningEntry) -> str:
    lines = [f"[step {entry['step']}] Thought: {entry['thought']}"]
    if entry["action"] is not None:
        lines.append(f"Action: {entry['action']}")
        lines.append(f"Action Input: {json.dumps(entry['action_input'], ensure_ascii=False)}")
    return "\n".join(lines)


def _result_text(entry: ToolResultEntry) -> str:
    args = json.dumps(entry["arguments"], ensure_ascii=False)
    result = json.dumps(entry["result"], ensure_ascii=False, default=str)
    return f"[step {entry['step']}] {entry['tool']}({args}) ->\n{result}"


def _user_text(task: str, reasoning: list[str], results: list[str], hints: list[str]) -> str:
    parts = [f"Task: {task}"]
    parts.append(
        "## Your reasoning so far (oldest first)\n" + ("\n\n".join(reasoning) or "(none yet)")
    )
    parts.append("## Tool results (oldest first)\n" + ("\n\n".join(results) or "(none yet)"))
    if hints:
        parts.append("## Notes from the controller\n" + "\n".join(f"- {h}" for h in hints))
    parts.append("Continue with your next step.")
    return "\n\n".join(parts)


def render_prompt(
    *,
    system: str,
    task: str,
    reasoning: list[ReasoningEntry],
    results: list[ToolResultEntry],
    hints: list[str],
    budget: int,
    counter: TokenCounter,
) -> RenderedPrompt:
    """Build [system, user] messages within ``budget`` tokens."""
    reasoning_texts = [_reasoning_text(e) for e in reasoning]
    originals = [_result_text(e) for e in results]
    limits: list[int | None] = [None] * len(originals)

    def result_views() -> list[str]:
        return [_cut(text, limit) for text, limit in zip(originals, limits, strict=True)]

    def build() -> tuple[list[BaseMessage], int]:
        user = _user_text(task, reasoning_texts, result_views(), hints)
        messages: list[BaseMessage] = [SystemMessage(system), HumanMessage(user)]
        return messages, count_messages(counter, messages)

    messages, tokens = build()
    dropped = 0
    while tokens > budget and reasoning_texts:
        reasoning_texts.pop(0)
        dropped += 1
        messages, tokens = build()

    for _ in range(8 * len(originals)):  # bounded: every pass shortens the longest result
        if tokens <= budget:
            break
        views = result_views()
        longest = max(range(len(views)), key=lambda i: len(views[i]))
        shrink = max(0.0, 1 - (tokens - budget) / tokens) * 0.9
        limits[longest] = int(min(len(views[longest]), len(originals[longest])) * shrink)
        messages, tokens = build()
    cut = [results[i]["step"] for i, limit in enumerate(limits) if limit is not None]
    return RenderedPrompt(messages, tokens, dropped, cut)


def _cut(text: str, limit: int | None) -> str:
    if limit is None or limit >= len(text):
        return text
    return text[:limit] + CUT_MARKER.format(removed=len(text) - limit)
