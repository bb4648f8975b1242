"""Which real format errors break which client: counts from recorded real agent runs.

Reads the real-runs file (``runs.jsonl.gz``, one run a line, format in its README) and
counts, for one cohort's assistant messages (default: Qwen2.5-7B-Instruct on tau2, the model
the simulator's ``strong`` persona is fitted to):

* **text and a call together**: a reply tau2-bench rejected for its format ("both text
  content and tool calls"), kept in the message's ``fe`` list with ``orig_calls`` and
  ``orig_text``;
* **empty reply**: a reply tau2-bench rejected that had neither text nor calls;
* **call written as text**: a kept message with no call whose text holds a JSON object
  naming one of the run's tools (``"name": "<tool>"``), the shape a model's call takes when
  the server's tool-call parser does not read it.

Then it prints what each error does to each kind of client, as the clients' code handles it
(docs/benchmark.md, "Format faults per client"):

    uv run python benchmarks/format_faults.py RUNS.jsonl.gz --tools TOOLS.json
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

TOOL_NAME = re.compile(r'"name"\s*:\s*"([A-Za-z_0-9]+)"')

CLIENTS = ("native tool calls", "ReAct text", "JSON schema (grammar)")
EFFECT: dict[str, tuple[str, str, str]] = {
    "text and a call together": (
        "the call runs (text beside it is kept)",
        "the text is the Thought: no error",
        "cannot happen",
    ),
    "empty reply": (
        "taken as an empty final answer: the run ends",
        "parse error, sent back (with handle_parsing_errors)",
        "cannot happen",
    ),
    "call written as text": (
        "taken as the final answer: the run ends",
        "parse error or bad Action Input, sent back",
        "cannot happen",
    ),
}
BREAKS_NATIVE = ("empty reply", "call written as text")


def count(path: Path, tools: dict[str, Any], cohort: str) -> Counter[str]:
    """The error counts over the cohort's assistant messages (``messages``: all of them)."""
    counts: Counter[str] = Counter()
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        for line in lines:
            run = json.loads(line)
            if cohort.casefold() not in str(run.get("model", "")).casefold():
                continue
            counts["runs"] += 1
            names = {t["name"] for t in tools.get(run.get("toolset") or "", [])}
            for event in run["ev"]:
                if event.get("r") != "a":
                    continue
                counts["messages"] += 1
                for rejected in event.get("fe") or []:
                    both = bool(rejected.get("orig_calls")) and bool(rejected.get("orig_text"))
                    empty = not rejected.get("orig_calls") and not rejected.get("orig_text")
                    counts[
                        "text and a call together" if both else "empty reply" if empty else ""
                    ] += 1
                text = event.get("x") or ""
                if not event.get("c") and any(n in names for n in TOOL_NAME.findall(text)):
                    counts["call written as text"] += 1
    counts.pop("", None)
    return counts


def table(counts: Counter[str], cohort: str) -> str:
    n = counts["messages"]
    rows = [
        f"{cohort}: {counts['runs']} runs, {n} assistant messages",
        "",
        "| real format error | replies | " + " | ".join(CLIENTS) + " |",
        "|---|---|" + "---|" * len(CLIENTS),
    ]
    for error, effects in EFFECT.items():
        k = counts[error]
        rows.append(f"| {error} | {k}/{n} ({k / n:.1%}) | " + " | ".join(effects) + " |")
    breaking = sum(counts[e] for e in BREAKS_NATIVE)
    rejected = counts["text and a call together"] + counts["empty reply"]
    rows += [
        "",
        f"rejected by tau2 for format: {rejected}/{n} ({rejected / n:.1%}); "
        f"leave a native client no call: {breaking}/{n} ({breaking / n:.1%})",
    ]
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", type=Path, help="runs.jsonl.gz")
    parser.add_argument("--tools", type=Path, required=True, help="tools.json")
    parser.add_argument("--cohort", default="qwen2.5:7b", help="part of the model name")
    args = parser.parse_args(argv)
    tools = json.loads(args.tools.read_text(encoding="utf-8"))
    print(table(count(args.runs, tools, args.cohort), args.cohort))


if __name__ == "__main__":
    main()
