"""Relapse and heed: whether the model makes its previous call again, and what stops it.

Real models repeat by the run, not by the turn (docs/benchmark.md, "Calibration"): a 7B
model re-issues a failed call far more often than a successful one, and once two identical
calls happen a third often follows. So the chance of repeating the previous call depends on
what the model itself did and what its call returned:

* the last two calls were identical (a loop): ``stickiness``;
* else the last call's result shows an error (or no result is shown: it was not run):
  ``repeat_after_failure``;
* else ``repeat_after_success``.

A **note** can stop it, with ``heed``, when it carries information: written outside any
successful tool result, outside the model's own words and outside a call's rendering
(``name(arguments)``), it names the call's tool and states something the run knows of it
(a value of its result that the call's arguments do not hold, or a word of its error).
Nothing else about a note counts: not its heading, its wording or where it sits, so a blank
or generic note is read as no note, the same in every agent's layout.

After the model's **final answer is sent back**, a note that carries information the model
can act on (:func:`names_lack`: a tool not yet run, an argument of a planned call not yet
made, an id or value that call takes, a value a shown result holds that the answer does not
state, such as a status, or a value of the answer no result shows) sends it back to its plan
with ``heed``; otherwise it gives the same answer again. How the note is worded never
counts, only what it names.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

from tether_bench.scenarios import ToolAction
from tether_bench.simulator.personas import Persona
from tether_bench.simulator.reading import Observation, envelopes
from tether_bench.simulator.sessions import Memory, Turn

_VALUE = re.compile(r"[\w.\-]*\d[\w.\-]*")
_WORD = re.compile(r"[^\W\d_]{4,}")
_CLAIM = re.compile(r"[\w.@\-]*[\d_@\-][\w.@\-]*")


def signature(turn: Turn) -> str:
    """A call as the calibration compares calls: tool name and arguments, keys sorted."""
    return f"{turn.tool}|{json.dumps(turn.arguments or {}, sort_keys=True, default=str)}"


def in_loop(memory: Memory) -> bool:
    """The model's last two calls were identical."""
    return len(memory.calls) >= 2 and memory.calls[-1] == memory.calls[-2]


def last_result(observations: Sequence[Observation], turn: Turn) -> Observation | None:
    """The latest result shown for this call (its tool, its argument values in the call)."""
    values = list((turn.arguments or {}).values())
    for obs in reversed(observations):
        if obs.tool == turn.tool and all(obs.call_holds(v) for v in values):
            return obs
    return None


def repeat_rate(persona: Persona, memory: Memory, result: Observation | None) -> float:
    """The chance of making the last call again (the module docstring's three cases)."""
    if in_loop(memory):
        return persona.stickiness
    if result is None or not result.ok:
        return persona.repeat_after_failure
    return persona.repeat_after_success


def prose(feedback: str, tools: Iterable[str]) -> str:
    """The feedback without successful tool results and without call renderings (``name(...)``,
    or a ReAct ``Action:`` line with its ``Action Input:``): what a note says, as opposed to
    what a tool returned or what the model itself called, in every agent's layout alike."""
    kept, at = [], 0
    for start, end, value in envelopes(feedback):
        if value.get("status") == "success":
            kept.append(feedback[at:start])
            at = end
    text = "".join(kept) + feedback[at:]
    for tool in sorted(set(tools), key=len, reverse=True):
        text = re.sub(rf"(?<![\w]){re.escape(tool)}\([^\n]*?\)", " ", text)
        text = re.sub(rf"Action:[ \t]*{re.escape(tool)}[ \t]*(?=\n|$)", " ", text)
    return re.sub(r"Action Input:[^\n]*", " ", text)  # a call's input in ReAct text


def names_call(text: str, turn: Turn, result: Observation | None) -> bool:
    """The note names this call's tool and states something known of it."""
    if not turn.tool or not _mentions(text, turn.tool):
        return False
    own = {str(v).casefold() for v in (turn.arguments or {}).values()}
    known = [k for k in _known(result) if k.casefold() not in own]
    return any(_mentions(text, k) for k in known)


def names_lack(
    text: str,
    plan: Sequence[ToolAction],
    position: int,
    answer: str,
    observations: Sequence[Observation],
    tools: Iterable[str] = (),
) -> bool:
    """The pushback carries information the model can act on, however it is worded. It
    names at least one of:

    * a tool not yet run: a planned call still to make, or a listed tool (``tools``) with no
      successful result shown;
    * an argument of a planned call still to make, by its name (``order_id`` or ``order id``)
      or by its value when that carries a digit (an id, an amount);
    * a value a shown tool result holds that the answer does not state (a status such as
      ``pending``, an amount, an id);
    * a value of the answer that no tool result shows: a token with a digit, ``_``, ``-`` or
      ``@`` (an id, an amount, an email), quoted back by the note. A plain word of the answer
      does not count: "your", "request", "been" are as much a generic note's words as the
      answer's, so counting them would count wording.

    Anything else (a heading, "are you sure?", a tone, an agent's own phrasing) carries
    nothing, so a generic pushback is read as none in every agent's layout."""
    pending = list(plan[position:])
    ran = {o.tool for o in observations if o.ok}
    named_tools = {step.tool for step in pending} | {t for t in tools if t not in ran}
    if any(_mentions(text, tool) for tool in named_tools if tool):
        return True
    for step in pending:
        for name, value in step.arguments.items():
            if _mentions(text, name) or _mentions(text, name.replace("_", " ")):
                return True
            if _VALUE.fullmatch(str(value)) and _mentions(text, str(value)):
                return True
    said = answer.casefold()
    held = {v for o in observations if o.ok for v in _known(o) if len(v) >= 3}
    if any(v.casefold() not in said and _mentions(text, v) for v in held):
        return True
    shown = " ".join(json.dumps(o.envelope, ensure_ascii=False) for o in observations).casefold()
    claims = {v.strip(".-_@") for v in _CLAIM.findall(answer)}
    unshown = [v for v in claims if v and v.casefold() not in shown]
    return any(_mentions(text, v) for v in unshown)


def _known(result: Observation | None) -> list[str]:
    """What the run knows of a call: its result's values, or its error's words."""
    if result is None:
        return []
    if not result.ok:
        return _WORD.findall(str(result.envelope.get("message", "")))
    return [str(v) for v in _leaves(result.envelope.get("data")) if len(str(v)) >= 2]


def _leaves(value: Any) -> Iterable[Any]:
    if isinstance(value, dict):
        for item in value.values():
            yield from _leaves(item)
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item)
    elif value is not None and not isinstance(value, bool):
        yield value


def _mentions(text: str, value: str) -> bool:
    return re.search(rf"(?<![\w]){re.escape(value)}(?![\w])", text, re.IGNORECASE) is not None
