"""The small-model profile's decisions: which tools a step offers, which ids a call may
name, when only the final answer is offered, how a tool result is shown, and the sampling
temperature; the values a call may take from the results, the tools the task asks for, the
facts an answer picks among and whether it states nothing found are
:mod:`tether_local.facts`'.

A weak model does better with fewer choices and no sampling noise; these functions decide
that from the state and the settings, like every decision of tether's loop, and the model
still writes every call and every answer itself. They are tether's
:class:`~tether.decisions.ModelProfile` as :data:`SMALL_PROFILE`, which this package
registers as the ``small`` entry point of the ``tether.model_profiles`` group: the loop uses
it while the ``small_model`` setting is on (unset, for the embedded model only), and the
functions need not check the setting.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from collections.abc import Sequence
from typing import Any

from langchain_core.tools import BaseTool
from pydantic import BaseModel
from tether import AgentSettings
from tether.decisions import AgentState, Grounded, ModelProfile, Offer, call_key, select_tools
from tether.decisions.grounding import ids_in, numbers_in
from tether.memory import ResultView
from tether.tools import has_side_effects

from tether_local import facts

SMALL_MODEL_TOOLS = 4
"""Tools offered per step under the profile, when ``offered_tools`` is unset."""
SMALL_MODEL_RESULT_CHARS = 500
"""Characters of one tool result the prompt shows under the profile, when ``result_chars``
is unset."""


def tool_limit(settings: AgentSettings) -> int:
    """How many tools to offer each step (before used ones are added)."""
    return SMALL_MODEL_TOOLS if settings.offered_tools is None else settings.offered_tools


def result_view(settings: AgentSettings) -> ResultView:
    """How the prompt shows one tool result: a success as its data alone, and at most
    ``result_chars`` characters (the profile's own cap when unset)."""
    chars = SMALL_MODEL_RESULT_CHARS if settings.result_chars is None else settings.result_chars
    return ResultView(chars=chars, bare=True)


def final_only(state: AgentState, settings: AgentSettings) -> bool:
    """Offer only the final answer after the model repeated a call that had already
    succeeded (its latest step that was not an unreadable reply), since the result it needs
    is in hand. The model still writes the answer; the loop never does."""
    for record in reversed(state.get("history", [])):
        if record["kind"] == "parse_failure":
            continue
        if record["kind"] == "recall":  # proposed again, answered from its record
            return True
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
    them too, but its schema offers none of them (see :func:`final_only`). The best match
    is listed last, next to the task: SmolLM2-135M picked the right tool for the README's
    task that way, and a wrong one listed first."""
    used = {entry["tool"] for entry in state.get("tool_buffer", [])}
    task = state.get("task", "")
    return select_tools(tools, task, tool_limit(settings), used, ranked=True)


WITHHELD_WHY = {
    "write": "a write, and no read has succeeded yet",
    "rejected": "the operator rejected it",
    "ungrounded": "no id or amount it needs is in the task or a result",
    "failed": "its call failed at the last step",
}
"""Why a listed tool is not callable at a step, as the run's story tells it."""


def withheld(
    state: AgentState, tools: Sequence[BaseTool], settings: AgentSettings, grounded: Grounded
) -> dict[str, str]:
    """The listed tools the model may not call at this step, and why (listed still, so the
    prompt and the server's prompt cache stay as they were): every write until a read has
    succeeded in the run (:func:`unread_writes`: look before you change anything; a weak
    model reached for pay_order on a status question), a write the operator rejected within
    the kept history (:func:`rejected_writes`), a tool whose required id has no value in the
    context, or a required amount with no number there (:func:`ungrounded`), and the tool
    whose call failed at the last step (asked again at temperature 0, the model proposes the
    same call). Nothing is withheld when that would leave nothing to call."""
    reasons: dict[str, str] = {}
    for name in just_failed(state):
        reasons[name] = WITHHELD_WHY["failed"]
    for name in ungrounded(tools, grounded, has_amounts(state)):
        reasons[name] = WITHHELD_WHY["ungrounded"]
    for name in unread_writes(state, tools):
        reasons[name] = WITHHELD_WHY["write"]
    for name in rejected_writes(state, tools):
        reasons[name] = WITHHELD_WHY["rejected"]
    listed = {tool.name for tool in tools}
    reasons = {name: why for name, why in reasons.items() if name in listed}
    return {} if set(reasons) == listed else reasons


def ungrounded(tools: Sequence[BaseTool], grounded: Grounded, amounts: bool = True) -> set[str]:
    """The tools with a required id argument (see :func:`grounded_ids`) of which the context
    holds no value, and, when it holds no number (``amounts`` False), the read tools with a
    required number argument: called now, they could only be given an invented id or
    amount (SmolLM2 priced a subtotal of 10.00 before looking the order up)."""
    known = {pattern for pattern, _ in grounded}
    return {
        tool.name
        for tool in tools
        if not _id_fields(tool)[1] <= known
        or not (amounts or has_side_effects(tool) or not _id_fields(tool)[2])
    }


def has_amounts(state: AgentState) -> bool:
    """Whether the task or a successful result holds a number that is not part of an id."""
    texts = [state.get("task", ""), *(value for _, value in facts.held_values(state))]
    for text in texts:
        for found in ids_in(text):
            text = text.replace(found, " ")
        if numbers_in(text):
            return True
    return False


def just_failed(state: AgentState) -> set[str]:
    """The tool whose call failed at the latest step that was not an unreadable reply."""
    for record in reversed(state.get("history", [])):
        if record["kind"] == "parse_failure":
            continue
        if record["kind"] in RETHINK_KINDS and record["fingerprint"]:
            return {_tool_of(record["fingerprint"])}
        return set()
    return set()


RETHINK_KINDS = frozenset({"tool_error", "validation_error", "refused", "rule_failure"})
"""Failures the model's own call caused, which the same call would meet again."""


def unread_writes(state: AgentState, tools: Sequence[BaseTool]) -> set[str]:
    """Every side-effecting tool, until a read has succeeded in the run; then none."""
    writes = _writes(tools)
    read_done = any(
        entry["result"]["status"] == "success" and entry["tool"] not in writes
        for entry in state.get("tool_buffer", [])
    )
    return set() if read_done else writes


def rejected_writes(state: AgentState, tools: Sequence[BaseTool]) -> set[str]:
    """The side-effecting tools the operator rejected within the kept history."""
    return _writes(tools) & {
        _tool_of(record["fingerprint"])
        for record in state.get("history", [])
        if record["kind"] == "rejected"
    }


def _writes(tools: Sequence[BaseTool]) -> set[str]:
    return {tool.name for tool in tools if has_side_effects(tool)}


def _tool_of(fingerprint: str | None) -> str:
    """The tool name a call's fingerprint starts with (``name{arguments}``)."""
    return (fingerprint or "").split("{", 1)[0]


def grounded_ids(state: AgentState, tools: Sequence[BaseTool], settings: AgentSettings) -> Grounded:
    """For each id pattern an offered tool's arguments use, the ids of that shape the task
    and the successful tool results hold, in order of appearance. The step's schema then
    limits the argument to them: ids must be copied from the task or a result (the tools'
    descriptions say so), and a weak model otherwise writes ids of the right shape that name
    nothing. A pattern nothing in the context matches keeps its pattern. Error messages are
    not a source: they may quote a wrong id back."""
    texts = [state.get("task", "")]
    texts += [
        json.dumps(entry["result"].get("data"), ensure_ascii=False, default=str)
        for entry in state.get("tool_buffer", [])
        if entry["result"]["status"] == "success"
    ]
    context = "\n".join(texts)
    grounded = []
    for pattern in sorted(_id_patterns(tools)):
        found = _ids_in(context, pattern)
        if found:
            grounded.append((pattern, found))
    return tuple(grounded)


_ID_PATTERN = re.compile(r"^\^?[A-Z]")
"""An id's pattern starts with a literal capital (``^ORD-``, ``^U``, ``^PAY-``); a pattern that
starts with a class (a country code, a phone number) describes values, not ids, and would
match ordinary words."""


def _id_patterns(tools: Sequence[BaseTool]) -> set[str]:
    """The id patterns (see :data:`_ID_PATTERN`) of the tools' arguments, anchored as pydantic
    writes them."""
    return set().union(*(_id_fields(tool)[0] for tool in tools))


Fields = tuple[frozenset[str], frozenset[str], frozenset[str]]


def _id_fields(tool: BaseTool) -> Fields:
    """A tool's id patterns: all of them, and those of its required arguments; and the names
    of its required number arguments (none for a tool whose arguments are not a pydantic
    model)."""
    schema = tool.args_schema
    if not (isinstance(schema, type) and issubclass(schema, BaseModel)):
        return frozenset(), frozenset(), frozenset()
    return _schema_id_fields(schema)


@functools.lru_cache(maxsize=256)
def _schema_id_fields(schema: type[BaseModel]) -> Fields:
    """:func:`_id_fields`, kept per schema class. Building the JSON schemas afresh cost 24 ms
    a step with 12 tools under the small profile, 1.4% of a 1.8 s model step."""
    spec = schema.model_json_schema()
    found: set[str] = set()
    _collect_patterns(spec, found)
    required = {
        spec.get("properties", {}).get(name, {}).get("pattern") for name in spec.get("required", [])
    }
    ids = frozenset(pattern for pattern in found if _ID_PATTERN.match(pattern))
    props = [(name, spec.get("properties", {}).get(name, {})) for name in spec.get("required", [])]
    amounts = {name for name, p in props if "number" in json.dumps([p.get("type"), p.get("anyOf")])}
    return ids, ids & {p for p in required if isinstance(p, str)}, frozenset(amounts)


def _collect_patterns(node: object, into: set[str]) -> None:
    if isinstance(node, dict):
        if isinstance(node.get("pattern"), str):
            into.add(node["pattern"])
        for value in node.values():
            _collect_patterns(value, into)
    elif isinstance(node, list):
        for value in node:
            _collect_patterns(value, into)


def stray_ids(arguments: Any, grounded: Grounded) -> list[str]:
    """The values in a call's arguments shaped like a grounded pattern's ids but not among
    them: what the step's schema (an ``enum`` of those ids) would not have let through."""
    if isinstance(arguments, dict | list):
        values = arguments.values() if isinstance(arguments, dict) else arguments
        return [stray for value in values for stray in stray_ids(value, grounded)]
    return [
        arguments
        for pattern, ids in grounded
        if isinstance(arguments, str)
        and _ids_in(arguments, pattern) == (arguments,)
        and arguments not in ids
    ][:1]


def _ids_in(text: str, pattern: str) -> tuple[str, ...]:
    """Whole-word matches of an anchored pattern in ``text``, each once, in order."""
    core = pattern.removeprefix("^").removesuffix("$")
    try:
        finder = re.compile(rf"(?<![\w-])(?:{core})(?![\w-])")
    except re.error:
        return ()
    return tuple(dict.fromkeys(match.group(0) for match in finder.finditer(text)))


def sampling_temperature(state: AgentState, settings: AgentSettings) -> float:
    """0: a weak model's samples wander."""
    return 0.0


def refine(
    offer: Offer, state: AgentState, tools: Sequence[BaseTool], settings: AgentSettings
) -> Offer:
    """The step's offer under the profile: id arguments limited to :func:`grounded_ids`,
    the tools :func:`withheld`, only the final answer after a repeat (:func:`final_only`);
    then what the task and the results hold (:func:`tether_local.facts.refine`)."""
    grounded = grounded_ids(state, offer.tools, settings)
    reasons = withheld(state, offer.tools, settings, grounded)
    offer = dataclasses.replace(
        offer,
        grounded=grounded,
        withheld=tuple(sorted(reasons.items())),
        final_only=offer.final_only or final_only(state, settings),
    )
    return facts.refine(offer, state, tools, settings)


class SmallModelProfile:
    """The functions above as one :class:`~tether.decisions.ModelProfile`."""

    offered_tools = staticmethod(offered_tools)
    refine = staticmethod(refine)
    stray_ids = staticmethod(stray_ids)
    result_view = staticmethod(result_view)
    sampling_temperature = staticmethod(sampling_temperature)
    unbacked = staticmethod(facts.found_nothing)


SMALL_PROFILE: ModelProfile = SmallModelProfile()
"""The profile tether loads by the ``tether.model_profiles`` entry point ``small``."""
