"""Render the two buffers into a prompt that fits the memory budget.

Each buffer entry carries its token count, made once when the entry was added, so a prompt's
size is a sum, not a recount. Over budget, the oldest reasoning goes first, then a thread's
oldest earlier messages; tool results stay, and one that alone is too large is cut with a
visible marker. Nothing is dropped silently: every cut is reported. A call that returned the
same result more than once is shown once, labelled with every step that returned it.

A thread's earlier messages come first, then the task, the tool results, the reasoning (a few
short lines) and the controller's notes: a step's results section is the previous step's with
the new result added, so a server's prompt cache (llama.cpp, vLLM's prefix caching) reuses
everything up to there and processes only what is new. On a CPU that is most of a step's time.

Untrusted text (the user's messages, the model's words, what tools returned) never starts a
line: messages and thoughts are folded onto their entry's line and tool results are JSON, so
none can forge a section heading such as the controller's notes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from tether.memory.tokens import MESSAGE_OVERHEAD, TokenCounter
from tether.state import ReasoningEntry, ToolResultEntry, Turn
from tether.text import cut as cut_text

BUDGET_WHY = "to fit the memory budget"
SHORT_WHY = "results are shown short for a small model"
REASONING_HEADING = "## Your reasoning so far (oldest first)"
RESULTS_HEADING = "## Tool results (oldest first)"
NOTES_HEADING = "## Notes from the controller"
CONVERSATION_HEADING = "## The conversation so far (oldest first)"
HEADINGS = (REASONING_HEADING, RESULTS_HEADING, NOTES_HEADING)
CLOSING = "Continue with your next step."
AGAIN = "the same call again: the same result"
AGAIN_TOKENS = 12  # the line naming the later steps of a repeated result, generously
SEPARATOR_TOKENS = 2  # the blank line between two entries, generously


@dataclass(frozen=True)
class PromptFrame:
    """What stays the same while the tools do: the system message and its token count."""

    system: str
    tokens: int


@dataclass(frozen=True)
class ResultView:
    """How the prompt shows a tool result: ``chars`` caps its characters (the rest is cut with
    a visible marker); ``bare`` shows a success as its data alone, compact, plain values first
    (a cut keeps them). SmolLM2 answered "success" to a status question, reading the
    envelope's status instead of the order's, and the envelope and the spaces cost prompt
    tokens, which on a CPU are most of a step."""

    chars: int | None = None
    bare: bool = False


WHOLE = ResultView()
"""The whole envelope, uncut."""


@dataclass
class RenderedPrompt:
    messages: list[BaseMessage]
    tokens: int
    dropped_reasoning: int = 0
    cut_results: list[int] = field(default_factory=list)  # steps whose result was cut
    dropped_turns: int = 0


def one_line(text: str) -> str:
    return " ".join(text.split())


def turn_text(turn: Turn) -> str:
    return f"{'User' if turn['role'] == 'user' else 'You'}: {one_line(turn['text'])}"


def reasoning_text(entry: ReasoningEntry) -> str:
    text = f"[step {entry['step']}] Thought: {one_line(entry['thought'])}"
    if entry["action"] is not None:
        arguments = json.dumps(entry["action_input"], ensure_ascii=False)
        text += f"\nAction: {one_line(entry['action'])}"
        text += f"\nAction Input: {arguments}"
    return text


def result_text(entry: ToolResultEntry, again: Sequence[int] = (), view: ResultView = WHOLE) -> str:
    """One result, shown as ``view`` says; ``again``: the later steps where the same call
    returned the same, named after the result so the text before it stays as it was (a
    server's prompt cache holds)."""
    args = json.dumps(entry["arguments"], ensure_ascii=False)
    outcome = entry["result"]
    if view.bare and outcome["status"] == "success":
        data = outcome.get("data")
        if isinstance(data, dict):  # its plain values first, so that a cut keeps them
            data = dict(sorted(data.items(), key=lambda item: isinstance(item[1], dict | list)))
        result = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    else:
        result = json.dumps(outcome, ensure_ascii=False)
    if view.chars is not None:
        result = cut_text(result, view.chars, SHORT_WHY)
    text = f"[step {entry['step']}] {one_line(entry['tool'])}({args}) ->\n{result}"
    if again:
        label = "steps" if len(again) > 1 else "step"
        text += f"\n[{label} {', '.join(str(step) for step in again)}] {AGAIN}"
    return text


def distinct_results(
    results: Sequence[ToolResultEntry],
) -> list[tuple[ToolResultEntry, list[int]]]:
    """Each distinct (call, outcome) once, at its latest step, with the later steps that
    returned the same: a weak model repeats a call that worked, and showing the same result
    twice doubles its cost in the prompt (a query_order result is ~700 tokens on SmolLM2).
    The entry shown is the first one, so its text does not change when the call is repeated
    (only its timing would)."""
    latest: dict[str, tuple[ToolResultEntry, list[int]]] = {}
    for entry in results:
        outcome = {k: v for k, v in entry["result"].items() if k != "meta"}
        key = json.dumps([entry["tool"], entry["arguments"], outcome], sort_keys=True, default=str)
        first, again = latest.pop(key, (entry, []))
        latest[key] = (first, [*again, entry["step"]] if first is not entry else again)
    return list(latest.values())


def render_prompt(
    *,
    frame: PromptFrame,
    task: str,
    reasoning: list[ReasoningEntry],
    results: list[ToolResultEntry],
    hints: list[str],
    budget: int,
    counter: TokenCounter,
    view: ResultView = WHOLE,
    earlier: Sequence[Turn] = (),
) -> RenderedPrompt:
    """Build [system, user] messages within ``budget`` tokens, each result shown as ``view``
    says (its entry's token count was made with the same view) after the ``earlier`` turns."""
    notes = [f"- {one_line(h)}" for h in hints]
    fixed = (
        frame.tokens
        + 2 * MESSAGE_OVERHEAD
        + counter.count(f"Task: {task}")
        + sum(counter.count(h) for h in (*HEADINGS, CLOSING))
        + sum(counter.count(n) + 1 for n in notes)
        + (counter.count(CONVERSATION_HEADING) if earlier else 0)
    )
    kept, turns = list(reasoning), list(earlier)
    shown = distinct_results(results)
    results = [entry for entry, _ in shown]
    results_tokens = sum(
        e["tokens"] + SEPARATOR_TOKENS + (AGAIN_TOKENS + 2 * len(steps) if steps else 0)
        for e, steps in shown
    )
    tokens = fixed + results_tokens + sum(e["tokens"] + SEPARATOR_TOKENS for e in [*kept, *turns])
    while tokens > budget and (kept or turns):
        tokens -= (kept or turns).pop(0)["tokens"] + SEPARATOR_TOKENS

    texts = [result_text(entry, steps, view) for entry, steps in shown]
    cut: list[int] = []
    if tokens > budget and results:
        texts, tokens, cut = _cut_results(results, texts, tokens - budget, tokens, counter)

    said = [f"{CONVERSATION_HEADING}\n" + "\n".join(map(turn_text, turns))] if turns else []
    user = "\n\n".join([*said, _user_text(task, [reasoning_text(e) for e in kept], texts, notes)])
    messages: list[BaseMessage] = [SystemMessage(frame.system), HumanMessage(user)]
    dropped = len(reasoning) - len(kept)
    return RenderedPrompt(messages, tokens, dropped, cut, len(earlier) - len(turns))


def _cut_results(
    results: list[ToolResultEntry],
    texts: list[str],
    excess: int,
    tokens: int,
    counter: TokenCounter,
) -> tuple[list[str], int, list[int]]:
    """Shorten the largest results until ``excess`` tokens are gone (bounded passes)."""
    sizes = [e["tokens"] for e in results]
    cut: list[int] = []
    for _ in range(8 * len(texts)):
        if excess <= 0:
            break
        i = max(range(len(texts)), key=lambda k: sizes[k])
        keep = max(0.0, 1 - excess / max(sizes[i], 1)) * 0.9
        limit = int(len(texts[i]) * keep)
        texts[i] = cut_text(texts[i], limit, BUDGET_WHY)
        new_size = counter.count(texts[i])
        excess -= sizes[i] - new_size
        tokens -= sizes[i] - new_size
        sizes[i] = new_size
        if results[i]["step"] not in cut:
            cut.append(results[i]["step"])
    return texts, tokens, cut


def _user_text(task: str, reasoning: list[str], results: list[str], notes: list[str]) -> str:
    parts = [f"Task: {one_line(task)}"]
    parts.append(f"{RESULTS_HEADING}\n" + ("\n\n".join(results) or "(none yet)"))
    parts.append(f"{REASONING_HEADING}\n" + ("\n\n".join(reasoning) or "(none yet)"))
    if notes:
        parts.append(f"{NOTES_HEADING}\n" + "\n".join(notes))
    parts.append(CLOSING)
    return "\n\n".join(parts)
