"""The words of the simulated model: thoughts, final answers and refusals, in the task's language.

An answer states only facts the prompt shows (see :func:`.facts.output_fact`), never the
scenario's reference answer, so an agent that lost a tool result from its prompt gets an
answer without that fact, or with a made-up one.
"""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any

from tether_bench.scenarios import DATA_DIR, Scenario

_DIGIT = re.compile(r"\d")
_FIELD = re.compile(r"\{(\w+)\}")


def thought_for_step(scenario: Scenario, number: int, total: int) -> str:
    """A thought that names no tool or value (so it is never read back as feedback)."""
    if scenario.language == "zh":
        return f"我需要执行计划的第 {number}/{total} 步。"
    return f"I need step {number} of {total} of my plan."


def thought_for_answer(scenario: Scenario) -> str:
    if scenario.language == "zh":
        return "已经得到完成任务所需的信息。"
    return "I have what the task needs."


@cache
def premature_wordings() -> dict[str, Any]:
    """The shipped premature answers (``data/premature_answers.json``): wordings per
    language, and the ``source`` they were adapted from."""
    text = (DATA_DIR / "premature_answers.json").read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def premature(scenario: Scenario, u: float) -> str:
    """A final answer before the plan is done: one of the shipped wordings in the task's
    language, picked by the turn's uniform ``u`` (so a run replays the same). A wording that
    names the task's id or its last call's tool is a candidate only when the task has one;
    the amount it may state is drawn from ``u`` too, and no call returned it."""
    fields = {
        "id": task_id(scenario),
        "action": scenario.gold_actions[-1].tool.replace("_", " ")
        if scenario.gold_actions
        else None,
        "amount": _amount(scenario, u),
    }
    language = "zh" if scenario.language == "zh" else "en"
    usable = [
        w
        for w in premature_wordings()[language]
        if all(fields.get(name) for name in _FIELD.findall(w))
    ]
    wording = usable[min(int(u * len(usable)), len(usable) - 1)]
    return wording.format(**{k: v or "" for k, v in fields.items()})


def task_id(scenario: Scenario) -> str | None:
    """The id the task is about: the first argument value of the plan with a digit (not a
    bare number) that the task's text shows."""
    for step in scenario.gold_actions:
        for value in step.arguments.values():
            text = str(value)
            bare_number = text.replace(".", "").isdigit()
            if _DIGIT.search(text) and not bare_number and text in scenario.task:
                return text
    return None


def _amount(scenario: Scenario, u: float) -> str:
    """A plausible amount, from the digits of ``u`` past the ones that picked the wording."""
    cents = int(u * 1e9) % 50_000 + 1_000  # 10.00 to 509.99
    figure = f"{cents // 100}.{cents % 100:02d}"
    return f"{figure} 元" if scenario.language == "zh" else f"${figure}"


@cache
def scripted_wordings() -> dict[str, Any]:
    """The shipped refusals and questions (``data/scripted_texts.json``): wordings per kind
    and language, and the ``source`` they follow."""
    loaded: dict[str, Any] = json.loads(
        (DATA_DIR / "scripted_texts.json").read_text(encoding="utf-8")
    )
    return loaded


def scripted(kind: str, scenario: Scenario, u: float, **fields: str) -> str:
    """One wording of ``kind`` in the task's language, picked by the turn's uniform ``u``
    (``u`` = 0 gives the first, the simulator's wording before it had a choice)."""
    wordings = scripted_wordings()[kind]["zh" if scenario.language == "zh" else "en"]
    return str(wordings[min(int(u * len(wordings)), len(wordings) - 1)]).format(**fields)


def final_answer(scenario: Scenario, facts: list[str], subject: str | None, u: float = 0.0) -> str:
    """The answer: the facts it found (a refusal when the task calls for stopping early)."""
    zh = scenario.language == "zh"
    listed = ("；" if zh else "; ").join(facts)
    if scenario.expected_termination == "stopped_early":
        if "no-suitable-tool" in scenario.tags:  # the plan's own reason for stopping
            return no_tool(scenario, "do this", u)
        return scripted("cannot", scenario, u, listed=listed)
    if zh:
        return f"结果（{subject}）：{listed}。" if subject else f"结果：{listed}。"
    return f"Result for {subject}: {listed}." if subject else f"Result: {listed}."


def ask_for(scenario: Scenario, field: str, u: float = 0.0) -> str:
    """The refusal of a model that lacks a fact the task should have given: it names it."""
    return scripted("ask_for", scenario, u, name=field.replace("_", " "))


def what_to_do(scenario: Scenario, u: float = 0.0) -> str:
    """The question of a model that sees a message but not what the user wants done."""
    return scripted("what_to_do", scenario, u)


def no_tool(scenario: Scenario, tool: str, u: float = 0.0) -> str:
    """The refusal of a model whose prompt lists no tool for the step it needs."""
    return scripted("no_tool", scenario, u, tool=tool.replace("_", " "))
