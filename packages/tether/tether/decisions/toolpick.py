"""Which tools to offer a model at one step: the best matches for the task.

A small model picks better among a few tools than among a dozen, and every tool offered costs
prompt tokens (or grammar states) at every step. The tools are ranked with Okapi BM25 over
each tool's name, description and argument descriptions, against the task only (so the list,
and the prompt's start, stay the same from step to step and the server's prompt cache
holds); the top ``k`` are offered, together with every tool that ties with the ``k``-th, the
tools the task names outright, and the tools already used in the run, so a tool the run
needs never becomes unreachable once it has been found.

Text is split into lower-case Latin words and, for Chinese, character pairs; digits are left
out (they are values, such as ids and amounts, not topics).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Collection, Sequence

from langchain_core.tools import BaseTool

from tether.tools.arguments import args_model, fills, requirements

K1 = 1.5
B = 0.75
_WORD = re.compile(r"[a-z]+|[\u3400-\u9fff]+")


def terms(text: str) -> list[str]:
    """Lower-case Latin words of two letters or more, and Chinese character pairs."""
    found: list[str] = []
    for run in _WORD.findall(text.lower()):
        if run[0].isascii():
            if len(run) > 1:
                found.append(run)
        elif len(run) > 1:
            found.extend(run[i : i + 2] for i in range(len(run) - 1))
    return found


def tool_text(tool: BaseTool) -> str:
    """What a tool is matched on: its name (twice: names are short and telling), its
    description, and its arguments' names and descriptions."""
    name = tool.name.replace("_", " ")
    parts = [name, name, tool.description]
    if (schema := args_model(tool)) is not None:
        for field_name, info in schema.model_fields.items():
            parts.append(field_name.replace("_", " "))
            parts.append(info.description or "")
    return "\n".join(parts)


def bm25_scores(documents: Sequence[list[str]], query: list[str]) -> list[float]:
    """Okapi BM25 score of each document for ``query`` (each distinct query term once)."""
    if not documents:
        return []
    counts = [Counter(doc) for doc in documents]
    average = sum(len(doc) for doc in documents) / len(documents) or 1.0
    n = len(documents)
    scores = [0.0] * n
    for term in set(query):
        df = sum(1 for c in counts if term in c)
        if df == 0:
            continue
        idf = math.log((n - df + 0.5) / (df + 0.5) + 1)
        for i, c in enumerate(counts):
            tf = c[term]
            if tf:
                norm = K1 * (1 - B + B * len(documents[i]) / average)
                scores[i] += idf * tf * (K1 + 1) / (tf + norm)
    return scores


def select_tools(
    tools: Sequence[BaseTool],
    query: str,
    k: int | None,
    keep: Collection[str] = (),
    *,
    ranked: bool = False,
) -> list[BaseTool]:
    """The tools to offer, in their registered order (``ranked``: best match last): all of
    them when ``k`` is None or covers them; else the ``k`` best matches for ``query`` (ties
    with the ``k``-th kept), the tools ``query`` names, and the tools named in ``keep``
    (already used)."""
    if k is None or len(tools) <= k:
        return list(tools)
    scores = bm25_scores([terms(tool_text(t)) for t in tools], terms(query))
    cutoff = sorted(scores, reverse=True)[k - 1]
    words = set(re.findall(r"[\w.@\-]+", query))
    chosen = {
        t.name
        for t, score in zip(tools, scores, strict=True)
        if (score >= cutoff and score > 0)
        or t.name in words
        or t.name in keep
        or callable_from(t, words)
    }
    order = sorted(range(len(tools)), key=lambda i: -scores[i])
    for i in order:  # with too few matches, fill up to k by rank (then registered order)
        if len(chosen) >= k:
            break
        chosen.add(tools[i].name)
    listed = reversed(order) if ranked else range(len(tools))
    return [tools[i] for i in listed if tools[i].name in chosen]


def callable_from(tool: BaseTool, words: Collection[str]) -> bool:
    """Whether the text's words fill every required argument of ``tool`` that has a pattern
    (an id), and it has at least one: the tool can be called with the task's own values."""
    needs = requirements(tool)
    return bool(needs) and all(pattern and fills(pattern, words) for _, pattern in needs)
