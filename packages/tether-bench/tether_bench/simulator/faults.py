"""The simulator's fault kinds and its random numbers.

Every turn draws its uniform numbers from sha512(seed, scenario, trial, turn index) alone,
so the draws are the same for every agent and any temperature. Each fault kind takes the
protocol's own shape (see :mod:`.render`). **Fault rates per protocol**: a fault is drawn at
the same rate whatever the protocol, but one that the request's constrained decoding cannot
produce is not made (the turn goes as planned; see :class:`.constraints.Constraints`):

| request | bad_json, empty_reply, text_and_call | missing_input | argument faults | unknown_tool |
|---|---|---|---|---|
| ReAct text; native tools with ``tool_choice`` auto | yes | yes | yes | yes |
| ``response_format`` json_object | no | yes | yes | yes |
| ``response_format`` json_schema, tool names fixed, arguments closed | no | no | no | no |
| native tools, ``tool_choice`` required or named (guided decoding) | no | no | no | no |
| native tools, every function ``strict`` | no | no | no | yes |

A fault the request rules out is not made; with the persona's ``constrained_cost`` it costs
the turn anyway (the grammar forces the broken output into a valid call whose first value
is made up, :mod:`.policy`); the cost is the same whatever asked for the constraint.

``premature_final`` is possible wherever an answer is: not under a JSON schema whose every
branch names a tool, nor with ``tool_choice`` ``required`` or naming a tool.
``repeat_previous`` is never drawn here: it is the label of a relapse, which the persona's
repeat traits decide (:mod:`.relapse`).

* ``bad_json``: the call cannot be read as a call. In ReAct text the Action Input is not
  valid JSON (curly quotes, or the closing brace never came); for native tools the call is
  written as text (``{"name": ..., "arguments": ...}`` in the content, no ``tool_calls``), as
  a server's tool-call parser returns a call it cannot read and as the real runs show it.
* ``empty_reply``: an empty reply (no text, no call).
* ``text_and_call``: text beside the planned call (the call itself is well formed): a native
  client runs the call; in ReAct text the text is the Thought; the real runs' most frequent
  "format error" (tau2-bench rejects such a message), harmless to the clients here.
* ``missing_input``: the call comes without arguments (no Action Input line; an empty
  ``arguments`` string; a JSON action without ``arguments``).
* ``wrong_argument_name``: one argument under a wrong name (``order_id`` as ``orderId``).
* ``missing_argument``: the first argument left out.
* ``unknown_tool``: the planned tool under a near-miss name (``queryOrder``).
* ``repeat_previous``: the previous call again, identically (a relapse, see above).
* ``premature_final``: a final answer before the plan is done, in one of the wordings of
  ``data/premature_answers.json`` (a bare "done", the task's id claimed handled, the write
  claimed by its tool's words, an amount no call returned), picked by the turn's draw.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from tether_bench.simulator.constraints import Constraints

FaultKind = Literal[
    "bad_json",
    "missing_input",
    "wrong_argument_name",
    "missing_argument",
    "unknown_tool",
    "repeat_previous",
    "premature_final",
    "empty_reply",
    "text_and_call",
]
FAULT_KINDS: tuple[FaultKind, ...] = (
    "bad_json",
    "missing_input",
    "wrong_argument_name",
    "missing_argument",
    "unknown_tool",
    "repeat_previous",
    "premature_final",
    "empty_reply",
    "text_and_call",
)
CALL_FAULTS: frozenset[FaultKind] = frozenset(
    {
        "bad_json",
        "missing_input",
        "wrong_argument_name",
        "missing_argument",
        "unknown_tool",
        "empty_reply",
    }
)
"""Faults that garble the planned call itself (only possible when a call is planned)."""
FORMAT_FAULTS: frozenset[FaultKind] = frozenset({"bad_json", "missing_input", "empty_reply"})
"""Faults in the reply's shape rather than its content that leave no usable call."""
TAU2_FORMAT_FAULTS: frozenset[FaultKind] = frozenset({"text_and_call", "empty_reply"})
"""What tau2-bench rejects for its format (a message with text and calls together, or an
empty one): the real runs' "malformed" count, which the calibration matches."""
NATIVE_BREAKING_FAULTS: frozenset[FaultKind] = frozenset({"bad_json", "empty_reply"})
"""What leaves a native tool-calling client no call to run: an empty reply, or the call
written as text (a server's tool-call parser that cannot read a call returns it as text)."""


@dataclass(frozen=True)
class Draw:
    """The uniform numbers of one turn, each for one decision."""

    u_fault: float
    u_kind: float
    u_fix: float
    u_invent: float
    u_loop: float
    u_shape: float
    u_heed: float
    u_word: float = 0.0
    """Which wording a scripted text takes (:mod:`.answers`)."""


def draw(seed: int, scenario_id: str, trial: int, index: int) -> Draw:
    """The turn's numbers: a pure function of its key (sha512, not Python's salted hash)."""
    digest = hashlib.sha512(f"{seed}\x1f{scenario_id}\x1f{trial}\x1f{index}".encode()).digest()
    scale = float(1 << 64)
    u = [int.from_bytes(digest[i : i + 8], "big") / scale for i in range(0, 64, 8)]
    return Draw(*u)


def applicable_faults(*, planned_call: bool, has_arguments: bool) -> list[FaultKind]:
    """The faults that make sense when the plan's next step is a call (or the answer)."""
    kinds: list[FaultKind] = []
    for kind in FAULT_KINDS:
        if kind == "repeat_previous" or not planned_call:
            continue  # a relapse is not drawn here; an answer turn has no call to garble
        if kind in ("missing_argument", "wrong_argument_name") and not has_arguments:
            continue
        kinds.append(kind)
    return kinds


def possible(kind: FaultKind, constraints: Constraints) -> bool:
    """Whether constrained decoding lets the model make this fault (the module's table)."""
    if kind == "bad_json":
        return not constraints.valid_json
    if kind == "unknown_tool":
        return not constraints.tool_names_fixed
    if kind in ("missing_input", "missing_argument", "wrong_argument_name"):
        return not constraints.arguments_fixed
    if kind == "premature_final":
        return constraints.answers_allowed
    if kind == "empty_reply":  # a grammar admits no empty reply; a forced call is a call
        return not constraints.valid_json and constraints.answers_allowed
    if kind == "text_and_call":  # text beside a call: only where the model writes freely
        return not constraints.valid_json
    return True


def pick_fault(
    rate: float, weights: Mapping[FaultKind, float], turn: Draw, applicable: Sequence[FaultKind]
) -> FaultKind | None:
    """The turn's fault (``u_fault < rate``, kind by weight), or None to act as planned."""
    if turn.u_fault >= rate:
        return None
    kinds = [k for k in applicable if weights.get(k, 0.0) > 0]
    if not kinds:
        return None
    point = turn.u_kind * sum(weights[k] for k in kinds)
    for kind in kinds:
        point -= weights[kind]
        if point < 0:
            return kind
    return kinds[-1]
