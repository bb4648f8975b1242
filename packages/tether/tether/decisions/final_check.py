"""The check before a final answer is taken: send it back once with a note, or take it.

Sent back when (a) no tool has succeeded though the task names something a read tool can look
up; (b) it states an id, number or status nothing backs; (c) or (d) the task asks for a change
the run never made. docs/architecture.md ("The final-answer check") gives each rule and why.
The note holds only :data:`NOTES`, registered tool names and tokens matching :data:`SAFE_VALUE`.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import unicodedata
from collections.abc import Sequence
from typing import Any

from langchain_core.tools import BaseTool
from pydantic import BaseModel

from tether.decisions.grounding import (
    Call,
    Evidence,
    Grounds,
    Stated,
    Unbacked,
    Vocabulary,
    empty_grounds,
    fold,
    ids_in,
    normalise,
    stated_in,
    tried,
    unbacked,
)
from tether.decisions.replies import asks_user, declines, negated, offers_help
from tether.decisions.toolpick import bm25_scores, terms, tool_text
from tether.state import ToolResult
from tether.tools.arguments import fills, requirements
from tether.tools.marks import has_side_effects

SAFE_VALUE = re.compile(r"-?[A-Za-z0-9][A-Za-z0-9_.\-]{0,39}", re.ASCII)
"""The only values from the answer a note may repeat: one short token of ASCII letters,
digits, ``_``, ``.`` and ``-`` (an id, a number, a status word)."""
MAX_SHOWN = 6
"""Values a note names at most; the rest are counted."""
NOTES = {
    "lookup": "No tool has succeeded in this run, and the task names something {tool} can "
    "look up: call {tool} and answer from what it returns.",
    "unbacked": "Your answer states {values}, which neither the task nor any tool result in "
    "this run holds. Check them with a tool, or leave them out.",
    "change": "The task asks for a change that {tool} makes, and no call to {tool} has "
    "succeeded in this run: make the change, or say why it cannot be made.",
    "empty": "Your answer holds nothing that this run's tool results hold, and no call that "
    "makes a change has succeeded in this run. The task's words ask for a change that {tools} "
    "can make: make it, or answer from what the tools returned.",
    "more": "{count} more",
    "one": "a value",
    "some": "{count} values",
}
"""Every word a note is made of, besides tool names and the answer's values."""
_WORDS = re.compile(r"[\w@\-]+(?:\.[\w@\-]+)*")


def check_final(
    task: str,
    answer: str,
    grounds: Grounds | None,
    tools: Sequence[BaseTool],
    vocabulary: Vocabulary | None = None,
    *,
    context: str | None = None,
) -> str | None:
    """The note to send ``answer`` back with, or None to take it.

    ``task`` is the run's task; ``grounds`` what its tool calls established
    (:func:`record_result` folds each one in; None before any); ``tools`` the registered
    tools; ``vocabulary`` which words are statuses (default: :func:`status_vocabulary`).
    With no tools there is nothing to look anything up with, and every answer is taken. The
    ``check_final`` setting decides whether the loop asks at all. ``context`` (the agent's
    instructions) backs the values it states, and asks for nothing."""
    if not tools:
        return None
    held = grounds or empty_grounds()
    words = vocabulary or status_vocabulary(tools, held)
    notes = []
    stated = stated_in(answer, words)
    offer = offers_help(answer) and not declines(answer)  # closes the turn: (a) reads it
    if asks_user(answer) and not offer:  # a question hands the turn to the user: not yet
        return None
    if not held["tools"] and (tool := lookup_tool(task, tools, held, says_nothing(stated))):
        notes.append(NOTES["lookup"].format(tool=tool))
    if offer:
        return " ".join(notes) or None
    missing = unbacked(stated, Evidence(f"{task}\n{context or ''}", held), words)
    changed = any(has_side_effects(t) and t.name in held["tools"] for t in tools)
    if vocabulary is None:  # see the module docstring, (b)
        statuses = (
            () if changed else tuple(s for s in missing.statuses if s not in held["reported"])
        )
        missing = dataclasses.replace(missing, statuses=statuses)
    if missing:
        notes.append(NOTES["unbacked"].format(values=shown(missing)))
    if declines(answer):  # says why the change is not made, or hands the user to a person
        return " ".join(notes) or None
    made, given = changes_not_made(task, tools, held), stated_in(task, words)
    if not (notes or changed) and only_the_tasks(stated, given):
        made += [t for t in claimed_changes(task, answer, tools, held) if t not in made]
    notes += [NOTES["change"].format(tool=tool) for tool in made]
    new = dataclasses.replace(stated, ids=stated.ids - given.ids)  # the task's ids tell nothing
    empty = not (notes or changed) and says_nothing(new) and not echoes(answer, held, task)
    if empty and (names := changes_asked(task, tools, held)):
        notes.append(NOTES["empty"].format(tools=" or ".join(names)))
    return " ".join(notes) or None


def record_result(
    grounds: Grounds | None, task: str, tool: str, arguments: Any, result: ToolResult
) -> Grounds:
    """``grounds`` after one tool call of the run on ``task``: a success is folded in
    (:func:`tether.decisions.grounding.fold`); any other outcome marks its tool as tried."""
    if result["status"] == "success":
        return fold(grounds, task, Call(tool, arguments, result.get("data")))
    return tried(grounds, tool)


def shown(missing: Unbacked) -> str:
    """The unbacked values as a note may write them: safe tokens, each once, the rest
    counted."""
    values = [*missing.ids, *(str(n) for n in missing.numbers), *missing.statuses]
    unique = list(dict.fromkeys(values))
    safe = [value for value in unique if SAFE_VALUE.fullmatch(value)][:MAX_SHOWN]
    hidden = len(unique) - len(safe)
    if not safe:
        return NOTES["one"] if hidden == 1 else NOTES["some"].format(count=hidden)
    return ", ".join([*safe, *([NOTES["more"].format(count=hidden)] if hidden else [])])


# --- (a) a lookup the task asks for -----------------------------------------------------------


def lookup_tool(
    task: str, tools: Sequence[BaseTool], grounds: Grounds, empty: bool = False
) -> str | None:
    """The untried read tool whose required arguments the task's own values fill (the best
    match for the task among them), or None. For an ``empty`` answer (it states nothing: no
    id, number or status) an untried read tool that takes arguments and matches the task's
    words will do, when the task holds a value one could take (a token with a digit, or an
    email)."""
    values, has_ids = task_values(task), bool(ids_in(task))
    loose = empty and any(any(c.isdigit() for c in v) or "@" in v for v in values)
    for score, tool in ranked(terms(task), tools):
        if has_side_effects(tool) or tool.name in grounds["tried"]:
            continue
        if looks_up(tool, values, has_ids) or (loose and score > 0 and requirements(tool)):
            return tool.name
    return None


def first_lookup(task: str, tools: Sequence[BaseTool]) -> str | None:
    """The read tool (a): the task's own values fill its required arguments, before anything
    has run. An answer given now has checked nothing, so the step offers none
    (:func:`tether.decisions.offer.step_offer`, the ``look_first`` setting)."""
    return lookup_tool(task, tools, empty_grounds())


def says_nothing(stated: Stated) -> bool:
    """The answer states no id, number or status ("Done, the request has been handled.")."""
    return not (stated.ids or stated.numbers or stated.statuses)


def looks_up(tool: BaseTool, values: set[str], has_ids: bool) -> bool:
    """Every required argument of ``tool`` is filled by the values (it has at least one): an
    argument with a pattern by a value that matches it, an id argument without one (``id``,
    ``*_id``) by any id; an argument of free text or a number cannot be told from the task."""
    needs = requirements(tool)
    return bool(needs) and all(
        fills(pattern, values) if pattern else is_id(name) and has_ids for name, pattern in needs
    )


# --- (c) a change the task asks for -----------------------------------------------------------


def changes_not_made(task: str, tools: Sequence[BaseTool], grounds: Grounds) -> list[str]:
    """The side-effecting tools the task clearly asks for that never succeeded in the run
    (the task is read only when there is one)."""
    untried = [t for t in tools if has_side_effects(t) and t.name not in grounds["tools"]]
    if not untried:
        return []
    words, plain = set(terms(task)), normalise(task)
    values = task_values(task) | set(grounds["ids"])
    has_ids = bool(ids_in(task)) or bool(grounds["ids"])
    found = []
    for tool in untried:
        parts = name_words(tool)
        if not parts or not set(parts) <= words or negated(plain, parts):
            continue
        if held_for(tool, values, has_ids):
            found.append(tool.name)
    return found


def claimed_changes(
    task: str, answer: str, tools: Sequence[BaseTool], grounds: Grounds
) -> list[str]:
    """The changes the task asks for (:func:`changes_asked`) that the answer names in a word
    of the tool's own description, not negated in either ("已成功支付" after "调用支付接口
    付款"), though no call made them. Read only for an answer that states nothing but the
    task's values: one that reports what the run found ("应付 1644.22 元") claims nothing. A
    tool's name words are left out: a task that names the tool is (c)'s, and an English
    question names a change it does not ask for ("how much is left to pay")."""
    said, plain, read = set(terms(answer)) & set(terms(task)), normalise(answer), read_words(tools)
    asked, claimed = changes_asked(task, tools, grounds), []
    for tool in (t for t in tools if t.name in asked):
        own = (said & change_words(tool)) - set(name_words(tool)) - read
        if any(not negated(plain, [word]) for word in own):
            claimed.append(tool.name)
    return claimed


def only_the_tasks(stated: Stated, given: Stated) -> bool:
    """The answer states no status and only ids and numbers the task gave (``given``)."""
    return not stated.statuses and stated.ids <= given.ids and {*stated.numbers} <= {*given.numbers}


def held_for(tool: BaseTool, values: set[str], has_ids: bool) -> bool:
    """The values hold what every required argument of ``tool`` needs: a value matching an
    argument's pattern, any id for an id argument without one; free text and numbers are
    the model's to write."""
    return all(
        fills(pattern, values) if pattern else not is_id(name) or has_ids
        for name, pattern in requirements(tool)
    )


# --- (d) an answer with nothing in it -----------------------------------------------------------


def echoes(answer: str, grounds: Grounds, task: str) -> bool:
    """The answer repeats a text value a result returned and the task does not give (three
    characters or more, as a whole word): it says something the run found, in words no
    vocabulary knows. The task's own id echoed back ("ORD-1 的请求已完成") says nothing."""
    plain, given = normalise(answer), normalise(task)
    whole = [re.compile(rf"(?<!\w){re.escape(v)}(?!\w)") for v in grounds["values"] if len(v) > 2]
    return any(value.search(plain) and not value.search(given) for value in whole)


def changes_asked(task: str, tools: Sequence[BaseTool], grounds: Grounds) -> list[str]:
    """The side-effecting tools, in registry order (no change ranked above another), that
    have not been called in the run and that the task asks for in words of their own
    (:func:`change_words`, one of them not negated), when the task and the results hold what
    their required arguments need."""
    values = task_values(task) | set(grounds["ids"]) | set(grounds["numbers"])
    has_ids = bool(ids_in(task)) or bool(grounds["ids"])
    asked, plain, read = set(terms(task)), normalise(task), read_words(tools)
    found = []
    for tool in tools:
        if not has_side_effects(tool) or tool.name in grounds["tried"]:
            continue  # a change tried already: its outcome, a rejection too, is in the prompt
        own = (asked & change_words(tool)) - read
        if any(not negated(plain, [word]) for word in own) and held_for(tool, values, has_ids):
            found.append(tool.name)
    return found


def read_words(tools: Sequence[BaseTool]) -> set[str]:
    """The words of the read tools' texts: a task's word among them names no change."""
    return {word for tool in tools if not has_side_effects(tool) for word in terms(tool_text(tool))}


def change_words(tool: BaseTool) -> set[str]:
    """The words a task asks for a side-effecting tool's change in: its name's words, and
    the Chinese of its description (where tools describe themselves in a second language),
    less what the description negates ("取消未付款订单" cancels unpaid orders: 付款 is not
    its change). Words a read tool's text has too tell nothing and are left out by the
    caller."""
    text = normalise(tool_text(tool))
    chinese = {word for word in terms(text) if not word.isascii()}
    return set(name_words(tool)) | {word for word in chinese if not negated(text, [word])}


def name_words(tool: BaseTool) -> list[str]:
    """The words of a tool's name (``cancel_order``: cancel, order)."""
    return terms(tool.name.replace("_", " "))


# --- shared -----------------------------------------------------------------------------------


def ranked(words: list[str], tools: Sequence[BaseTool]) -> list[tuple[float, BaseTool]]:
    """The tools with their BM25 score for the words, best first (ties in registry order)."""
    scores = bm25_scores([terms(tool_text(tool)) for tool in tools], words)
    order = sorted(range(len(tools)), key=lambda i: (-scores[i], i))
    return [(scores[i], tools[i]) for i in order]


def task_values(task: str) -> set[str]:
    """The task's words that could be an argument's value (ids, emails, numbers)."""
    return set(_WORDS.findall(unicodedata.normalize("NFKC", task))) | ids_in(task)


def is_id(name: str) -> bool:
    return name == "id" or name.endswith("_id")


# --- the default vocabulary -------------------------------------------------------------------


def status_vocabulary(tools: Sequence[BaseTool], grounds: Grounds | None = None) -> Vocabulary:
    """The domain-independent vocabulary: the values tools reported under ``status`` keys in
    the run, and the ``enum`` values of the tools' ``status`` (or ``*_status``) arguments."""
    found = list((grounds or empty_grounds())["statuses"])
    for tool in tools:
        found += _status_enums(tool.args_schema) if isinstance(tool.args_schema, type) else []
    return Vocabulary(words={value: value for value in found})


@functools.lru_cache(maxsize=256)  # its JSON schema took 0.25 ms a tool at every check
def _status_enums(schema: type) -> list[str]:
    if not issubclass(schema, BaseModel):
        return []
    spec = schema.model_json_schema()
    found: list[str] = []
    _collect_enums(spec, False, spec.get("$defs", {}), found)
    return list(dict.fromkeys(found))


def _collect_enums(node: Any, in_status: bool, defs: dict[str, Any], into: list[str]) -> None:
    """The string ``enum`` values under properties named ``status`` or ``*_status`` (an enum
    class's values too: ``$defs`` it refers to are followed once)."""
    if isinstance(node, dict):
        if in_status and isinstance(node.get("enum"), list):
            into += [value for value in node["enum"] if isinstance(value, str)]
        ref = node.get("$ref")
        if in_status and isinstance(ref, str) and ref.startswith("#/$defs/"):
            _collect_enums(defs.get(ref.removeprefix("#/$defs/")), True, {}, into)
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                for name, spec in value.items():
                    status = name == "status" or str(name).endswith("_status")
                    _collect_enums(spec, status, defs, into)
            elif key != "$defs":
                _collect_enums(value, in_status, defs, into)
    elif isinstance(node, list):
        for value in node:
            _collect_enums(value, in_status, defs, into)
