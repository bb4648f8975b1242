"""What the task asks for and what the run's results hold, under the small-model profile:
the tools the task asks for in words of their own (:func:`asked_tools`), the values a call
may take from the results (:func:`held_arguments`), the facts a final answer picks among
instead of writing text (:func:`answer_facts`), and whether an answer states nothing the run
found (:func:`found_nothing`). :func:`refine` puts them in the step's offer.

SmolLM2-135M copies badly: it priced a subtotal it made up, answered a task asking for a
discount before pricing anything, and wrote answers stating nothing the run found
("1.0.0.0.0.1:8080:8080..."). Here each of those values is one the task or a result holds,
and the model chooses among them through the step's grammar; the reply's picks, joined, are
its answer.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from langchain_core.tools import BaseTool
from pydantic import BaseModel
from tether import AgentSettings
from tether.decisions import (
    AgentState,
    Grounded,
    Offer,
    asks_user,
    changes_asked,
    declines,
    negated,
    plain_values,
    terms,
)
from tether.decisions.grounding import Grounds, normalise
from tether.tools import has_side_effects

FACT_CHOICES = 40
"""Plain values of one result a final answer may pick among, at most."""
WITHHELD_WHY = {
    "asked": "the task asks for a tool not called yet",
    "answered": "every tool the task asks for has run",
}
"""Why a listed tool is not callable at a step, beside the profile's own reasons."""
_WORD = re.compile(r"[\w@\-]+(?:\.[\w@\-]+)*")
_CHINESE = re.compile(r"[\u4e00-\u9fff]")


def refine(
    offer: Offer, state: AgentState, tools: Sequence[BaseTool], settings: AgentSettings
) -> Offer:
    """The step's offer with the facts of the task and the results: with ``look_first`` (on
    unless set off), while a read tool the task asks for has not been called, only such
    tools are callable and no answer is offered (:func:`unrun_asked`), and once what it
    asks is in hand only the answer is (:func:`answer_now`); an argument named like a
    result's key takes the values held under it; the answer picks among
    :func:`answer_facts`. The model still writes every call and picks every fact of its
    answer."""
    withheld, callable_now = dict(offer.withheld), offer.callable
    asking = settings.look_first is not False
    asked = unrun_asked(state, tools, callable_now) if asking else set()
    done = asking and not asked and answer_now(state, tools)
    for tool in callable_now if asked or done else ():
        if tool.name not in asked:
            withheld[tool.name] = WITHHELD_WHY["asked" if asked else "answered"]
    return dataclasses.replace(
        offer,
        withheld=tuple(sorted(withheld.items())),
        calls_only=offer.calls_only or (bool(asked) and not offer.final_only),
        held=held_arguments(state, offer.tools),
        facts=answer_facts(state, tools),
    )


def held_values(state: AgentState) -> list[tuple[str, str]]:
    """(key, value) for the plain values (:func:`~tether.decisions.plain_values`) of the
    successful results in the prompt, each once: a result's top-level ones if it has any
    (SmolLM2 picked a payment's "status" for its order's), else its nested ones."""
    pairs = (
        pair.split("=", 1)
        for entry in state.get("tool_buffer", [])
        if entry["result"]["status"] == "success"
        for pair in plain_values(_top(entry["result"].get("data")), FACT_CHOICES)
    )
    return list(dict.fromkeys((key, value) for key, value in pairs))


def _top(data: Any) -> Any:
    items = data.items() if isinstance(data, dict) else ()
    top = {key: value for key, value in items if not isinstance(value, dict | list)}
    return top if plain_values(top) else data


def held_arguments(state: AgentState, tools: Sequence[BaseTool]) -> Grounded:
    """For each argument of a listed tool named like a key a result holds
    (compute_discount's ``subtotal``, from query_order's), the values held under that key:
    the step's schema asks for the argument and limits it to them, as the grounded ids do
    for ids (SmolLM2 priced an invented subtotal, and left the member tier and the coupon
    out). Id arguments are left to the grounded ids."""
    held: dict[str, list[str]] = {}
    for key, value in held_values(state):
        held.setdefault(key, []).append(value)
    names = {name for tool in tools for name in _fields(tool) if name in held}
    return tuple((name, tuple(held[name])) for name in sorted(names) if not _is_id(name))


def asked_tools(task: str, tools: Sequence[BaseTool]) -> list[str]:
    """The read tools the task asks for in words of their own: their name's words and their
    description's Chinese, less every such word of another tool and every word the task
    negates ("计算折扣" asks compute_discount; 计算 alone names three tools)."""
    own = {tool.name: _own_words(tool) for tool in tools}
    count = Counter(word for words in own.values() for word in words)
    asked, plain = set(terms(task)), normalise(task)
    return [
        tool.name
        for tool in tools
        if not has_side_effects(tool)
        and any(count[w] == 1 and not negated(plain, [w]) for w in own[tool.name] & asked)
    ]


def _own_words(tool: BaseTool) -> set[str]:
    return set(terms(tool.name.replace("_", " "))) | _chinese(tool.description)


def unrun_asked(
    state: AgentState, tools: Sequence[BaseTool], callable_now: Sequence[BaseTool]
) -> set[str]:
    """The tools the task asks for (:func:`asked_tools`) that are callable and have not been
    called in the run (SmolLM2 answered a task asking for the discount from the order
    alone, or looked the order up again)."""
    tried = {_tool_of(record["fingerprint"]) for record in state.get("history", [])}
    names = {tool.name for tool in callable_now} - tried
    return names & set(asked_tools(state.get("task", ""), tools))


def answer_now(state: AgentState, tools: Sequence[BaseTool]) -> bool:
    """Every tool the task asks for has succeeded in the run, or it asks for none and a
    result holds a key it names (:func:`named_keys`: "the status of order ..."), and it asks
    for no change (:func:`~tether.decisions.changes_asked`): what it asks is in hand
    (SmolLM2 then looked the order up again), and only the answer is offered."""
    grounds: Grounds | None = state.get("grounds")  # type: ignore[assignment]
    task = state.get("task", "")
    asked = set(asked_tools(task, tools))
    done = {e["tool"] for e in state.get("tool_buffer", []) if e["result"]["status"] == "success"}
    if grounds is None or not done or not asked <= done:
        return False
    if not asked and not named_keys(task, {key for key, _ in held_values(state)}, tools):
        return False
    return not changes_asked(task, tools, grounds)


def answer_facts(state: AgentState, tools: Sequence[BaseTool]) -> tuple[tuple[str, ...], ...]:
    """The facts a final answer picks among, each a sentence of one key and value in the
    task's language: the results' plain values (:func:`held_values`) the task does not hold
    itself, only those of the keys the task names (:func:`named_keys`) if it names any.
    Grouped by key when it names several (the answer states one of each: asked for the
    status and the discount, SmolLM2 picked the discount alone, or the same fact three
    times); else one group. None before a result holds any."""
    task, held = state.get("task", ""), held_values(state)
    pairs = [(key, value) for key, value in held if value not in task]
    named = named_keys(task, {key for key, _ in held}, tools) & {key for key, _ in pairs}
    groups: dict[str, list[str]] = {}
    for key, value in pairs:
        if key in named or not named:
            groups.setdefault(key if len(named) > 1 else "", []).append(_fact(key, value, task))
    return tuple(tuple(group) for group in groups.values())


def _fact(key: str, value: str, task: str) -> str:
    """ "The status is shipped." ("status：shipped。" for a Chinese task)."""
    name = key.replace("_", " ")
    return f"{name}：{value}。" if _CHINESE.search(task) else f"The {name} is {value}."


def named_keys(task: str, keys: set[str], tools: Sequence[BaseTool]) -> set[str]:
    """The keys the task names: in their own words, or, but for an id, in a word of four
    letters or more no other key has ("the weight" names ``total_weight_kg``); in the
    Chinese of the descriptions of the tool arguments of that name, less the words several
    keys' descriptions share ("订单"); or as a word of the name of a tool the task asks for
    (:func:`asked_tools`: "计算折扣" names compute_discount's ``discount``)."""
    asked = set(terms(task))
    said: dict[str, set[str]] = {}
    for fields in map(_fields, tools):
        for key in keys & set(fields):
            said.setdefault(key, set()).update(_chinese(fields[key].description))
    count = Counter(word for words in said.values() for word in words)
    spelled = {key: set(terms(key.replace("_", " "))) for key in keys}
    shared = Counter(word for found in spelled.values() for word in found)
    alone = {word for word, n in shared.items() if n == 1 and len(word) > 3}
    own = {
        key
        for key, found in spelled.items()
        if found <= asked or (found & asked & alone and not _is_id(key))
    }
    unique = {key for key, words in said.items() if {w for w in words if count[w] == 1} & asked}
    wanted = {word for name in asked_tools(task, tools) for word in name.split("_")}
    return own | unique | (keys & wanted)


def found_nothing(state: AgentState, answer: str, tools: Sequence[BaseTool]) -> bool:
    """A call succeeded in this run, no change did, and ``answer`` has no word (an id, a
    number, a status) of a result's values beyond the task's own words ("Your task is
    done.", "1.0.0.0.0.1:8080"). Such a run ends ``failed`` (cause ``unbacked``), not
    ``completed``. A question to the user or a refusal is taken as written."""
    grounds: Grounds | None = state.get("grounds")  # type: ignore[assignment]
    fresh = any(c["outcomes"][-1:] == ["success"] for c in state.get("calls", {}).values())
    if grounds is None or not fresh or asks_user(answer) or declines(answer):
        return False
    if any(has_side_effects(tool) and tool.name in grounds["tools"] for tool in tools):
        return False
    said = _words(answer) - _words(state.get("task", ""))
    found = [*grounds["values"], *grounds["ids"], *grounds["numbers"]]
    return not any(said & _words(value) for value in found)


def _words(text: str) -> set[str]:
    return {word for word in _WORD.findall(normalise(text)) if len(word) > 3}


def _chinese(text: str | None) -> set[str]:
    return {word for word in terms(text or "") if not word.isascii()}


def _fields(tool: BaseTool) -> dict[str, Any]:
    schema = tool.args_schema
    return schema.model_fields if isinstance(schema, type) and issubclass(schema, BaseModel) else {}


def _is_id(name: str) -> bool:
    return name == "id" or name.endswith("_id")


def _tool_of(fingerprint: str | None) -> str:
    """The tool name a call's fingerprint starts with (``name{arguments}``)."""
    return (fingerprint or "").split("{", 1)[0]
