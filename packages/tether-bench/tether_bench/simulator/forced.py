"""Turns the server's constrained decoding forces on the simulated model.

Where the decoder admits only a call, an answer becomes a call: through the tool that takes
the answer (LangChain's ``ToolStrategy``), else the plan's next call or a call whose required
arguments the prompt's values fill. Where the decoder rules out a fault, the call comes out
well formed, at the persona's ``constrained_cost`` with its first argument made up.
"""

from __future__ import annotations

import re
from dataclasses import replace

from tether_bench.scenarios import Scenario
from tether_bench.simulator import answers
from tether_bench.simulator.facts import invent, missing_arguments
from tether_bench.simulator.reading import PromptView
from tether_bench.simulator.sessions import Turn


def answer_call(turn: Turn, tool: tuple[str, str]) -> Turn:
    """An answer where only calls can be written and a tool takes the answer (LangChain's
    ``ToolStrategy``): the same text, as that tool's string argument."""
    name, field = tool
    call = Turn("action", turn.thought, name, {field: turn.answer or ""}, fault=turn.fault)
    return replace(call, intended_tool=name)


def forced_call(scenario: Scenario, view: PromptView, position: int) -> Turn:
    """The call a model writes when it meant to answer and the decoder admits only a call:
    the plan's next call, else its last call again (a re-query), if the prompt shows their
    values; else the first callable tool whose required arguments values in the prompt fill
    (its pattern matched whole, or one of its enum); else the first callable tool, its
    arguments made up."""
    plan = scenario.gold_actions
    candidates = [plan[position]] if position < len(plan) else []
    candidates += plan[-1:]
    for step in candidates:
        if view.offers(step.tool) and not missing_arguments(step, view):
            thought = answers.thought_for_step(scenario, position + 1, max(len(plan), 1))
            return Turn("action", thought, step.tool, dict(step.arguments), intended_tool=step.tool)
    tool, arguments = fitting_call(view)
    thought = answers.thought_for_step(scenario, position + 1, max(len(plan), 1))
    return Turn("action", thought, tool, arguments, intended_tool=tool)


_TOKEN = re.compile(r"[\w@.\-]+")


def fitting_call(view: PromptView) -> tuple[str, dict[str, str]]:
    """The first callable tool that has required arguments and whose required arguments the
    prompt's values fill, with those values (the first in the prompt's order); else the first
    callable tool, made up."""
    tokens = list(dict.fromkeys(t.strip(".") for t in _TOKEN.findall(view.text)))
    for shape in view.shapes:
        if not shape.required:  # nothing in the prompt points at a tool that needs nothing
            continue
        filled = {}
        for name, pattern, enum in shape.required:
            value = next((t for t in tokens if _fits(t, pattern, enum)), None)
            if value is None:
                break
            filled[name] = value
        else:
            return shape.tool, filled
    first = view.shapes[0] if view.shapes else None
    if first is None:
        return "", {}
    return first.tool, {name: invent(enum[0] if enum else name) for name, _, enum in first.required}


def _fits(token: str, pattern: str | None, enum: tuple[str, ...]) -> bool:
    if enum:
        return token in enum
    if pattern is None:
        return False
    try:
        return re.fullmatch(pattern, token) is not None
    except re.error:
        return False


def constrained(turn: Turn) -> Turn:
    """What a call the model was garbling becomes when the grammar forces it into shape, at
    the persona's ``constrained_cost``: a valid call whose first argument is made up (an id
    one digit off, an amount 10% off), the cost a grammar can put on content it cannot
    check. The same for every request that constrains decoding."""
    arguments = dict(turn.arguments or {})
    key = next(iter(arguments))
    arguments[key] = invent(arguments[key])
    return replace(turn, arguments=arguments)
