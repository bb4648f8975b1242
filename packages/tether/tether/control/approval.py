"""Approval gates in LangChain v1's human-in-the-loop shape.

A run pauses (LangGraph ``interrupt``) before a gated call with a :class:`HITLRequest`, the
payload ``create_agent``'s HumanInTheLoopMiddleware sends, so Agent Chat UI and Studio render
tether's approvals as they render create_agent's::

    {"action_requests": [{"name": "pay_order", "args": {...}, "description": "..."}],
     "review_configs": [{"action_name": "pay_order",
                         "allowed_decisions": ["approve", "edit", "reject"]}]}

Resume with ``Command(resume={"decisions": [decision]})`` where ``decision`` is
``{"type": "approve"}``, ``{"type": "edit", "edited_action": {"name": ..., "args": {...}}}``
or ``{"type": "reject", "message": "why"}``. A single decision without the ``decisions``
wrapper is accepted too (create_agent's per-call mode). Resume values are untrusted: anything
else raises :class:`ApprovalError` and leaves the paused run as it was.

The shapes are declared here rather than imported from ``langchain``, which the core does
not depend on; ``tests/test_approval_payload.py`` checks they match.
"""

from __future__ import annotations

import copy
import json
from typing import TYPE_CHECKING, Annotated, Any, Literal, NotRequired

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.serde.types import RESUME
from pydantic import Field, TypeAdapter, ValidationError
from typing_extensions import TypedDict  # pydantic reads these on Python 3.11

from tether.errors import TetherError
from tether.text import cut
from tether.tools.results import MESSAGE_CHARS
from tether.tools.safe import MAX_DEPTH, json_safe

if TYPE_CHECKING:
    from tether.tools.registry import ToolRegistry

DecisionType = Literal["approve", "edit", "reject"]
ALLOWED_DECISIONS: list[DecisionType] = ["approve", "edit", "reject"]


class ApprovalError(TetherError, ValueError):
    """An approval answer that cannot be used; the saved run is left as it was."""


class ActionRequest(TypedDict):
    name: str
    args: dict[str, Any]
    description: NotRequired[str]


class ReviewConfig(TypedDict):
    action_name: str
    allowed_decisions: list[DecisionType]


class HITLRequest(TypedDict):
    """What a paused run asks: one gated call and the decisions it accepts."""

    action_requests: list[ActionRequest]
    review_configs: list[ReviewConfig]


class Action(TypedDict):
    name: str
    args: dict[str, Any]


class ApproveDecision(TypedDict):
    type: Literal["approve"]


class EditDecision(TypedDict):
    type: Literal["edit"]
    edited_action: Action


class RejectDecision(TypedDict):
    type: Literal["reject"]
    message: NotRequired[str]


Decision = Annotated[ApproveDecision | EditDecision | RejectDecision, Field(discriminator="type")]


class HITLResponse(TypedDict):
    decisions: list[Decision]


_UNUSABLE = "__tether_unusable__"
_NO_TASK = "00000000-0000-0000-0000-000000000000"  # LangGraph's task id for a Command's writes
ANSWER_CHARS = 20_000
"""The most of one decision a run keeps, as JSON: a longer one is refused (an edit's arguments
cannot be cut)."""
_UNSAVED = f"an integer over 64 bits, nesting deeper than {MAX_DEPTH} or text that is not UTF-8"
_RESPONSE: TypeAdapter[HITLResponse] = TypeAdapter(HITLResponse)
_DECISION: TypeAdapter[Decision] = TypeAdapter(Decision)
_HOW = (
    'answer with {"decisions": [{"type": "approve"}]}, '
    '{"decisions": [{"type": "edit", "edited_action": {"name": ..., "args": {...}}}]} '
    'or {"decisions": [{"type": "reject", "message": "why"}]}'
)


def approval_request(
    tool: str,
    args: dict[str, Any],
    *,
    reason: str,
    will_run: dict[str, Any] | None,
    error: str | None = None,
) -> HITLRequest:
    """The interrupt payload for one gated call (``will_run``: its validated arguments)."""
    runs = f"It will run with: {_dump(will_run if will_run is not None else args)}"
    description = f"Approval needed: {reason}. {runs}"
    if error:
        description += f"\nThe previous answer could not be used: {error}"
    return {
        "action_requests": [{"name": tool, "args": args, "description": description}],
        "review_configs": [{"action_name": tool, "allowed_decisions": list(ALLOWED_DECISIONS)}],
    }


def is_approval_request(value: Any) -> bool:
    """Whether an interrupt value is an approval request (tether raises no other kind)."""
    return isinstance(value, dict) and isinstance(value.get("action_requests"), list)


def requested_tool(request: HITLRequest) -> str:
    return request["action_requests"][0]["name"]


def parse_decision(answer: Any, tool: str | None) -> Decision:
    """Read an untrusted resume value for the gated call ``tool`` (None: any); ApprovalError
    otherwise. Fields the shape does not name are dropped, as LangChain's middleware ignores
    them."""
    if isinstance(answer, dict) and _UNUSABLE in answer:  # kept in place of a long answer
        raise ApprovalError(str(answer[_UNUSABLE]))
    try:
        if isinstance(answer, dict) and "decisions" in answer:
            decisions = _RESPONSE.validate_python(answer)["decisions"]
        else:
            decisions = [_DECISION.validate_python(answer)]
    except ValidationError as exc:
        problem = _first_problem(exc)
        raise ApprovalError(f"cannot read the approval answer ({problem}): {_HOW}") from None
    if len(decisions) != 1:
        raise ApprovalError(f"one call is waiting: give exactly one decision, not {len(decisions)}")
    decision = decisions[0]
    if json_safe(decision) != decision:
        raise ApprovalError(f"the decision holds {_UNSAVED} and cannot be kept in a run: {_HOW}")
    if decision["type"] == "reject" and "message" in decision:  # kept in state and the trace
        decision["message"] = cut(decision["message"], MESSAGE_CHARS, "rejection messages are cut")
    if (size := len(_dump(decision))) > ANSWER_CHARS:
        raise ApprovalError(f"the decision is {size:,} characters; a run keeps {ANSWER_CHARS:,}")
    edited = decision["edited_action"]["name"] if decision["type"] == "edit" else tool
    if tool is not None and edited != tool:
        raise ApprovalError(
            f"an edit cannot switch tools: the waiting call is {tool}, not {edited}"
        )
    return decision


def usable_decision(answer: Any, tool: str, registry: ToolRegistry) -> Decision:
    """:func:`parse_decision`, an edit's arguments checked by the tool's schema too."""
    decision = parse_decision(answer, tool)
    if decision["type"] == "edit":
        problem = registry.check_arguments(tool, decision["edited_action"]["args"])
        if problem:
            raise ApprovalError(f"edited arguments rejected: {problem}")
    return decision


def kept_answer(value: Any) -> Any:
    """What a run store keeps of one resume value (LangGraph saves it as it came, before a node
    reads it): the value when a checkpoint can hold it whole; else the decision read from it,
    or why it cannot be used, so a run read back after a crash decides as the live one did."""
    if json_safe(value) == value and len(_dump(value)) <= ANSWER_CHARS:
        return value
    try:
        return {"decisions": [parse_decision(value, None)]}
    except ApprovalError as exc:
        return {_UNUSABLE: str(exc)}


def _first_problem(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or "value"
    return f"{where}: {err['msg']}"


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def keeping_answers(saver: Any) -> Any:
    """A shallow copy of ``saver`` (as LangGraph's ``with_allowlist`` makes one) that saves
    each resume value as :func:`kept_answer` makes it; ``saver``, maybe shared, is left as it
    was."""
    if not isinstance(saver, BaseCheckpointSaver) or "put_writes" in vars(saver):
        return saver
    clone = copy.copy(saver)
    put, aput = clone.put_writes, clone.aput_writes
    vars(clone).update(
        put_writes=lambda c, w, t, task_path="": put(c, _kept_writes(w, t), t, task_path),
        aput_writes=lambda c, w, t, task_path="": aput(c, _kept_writes(w, t), t, task_path),
    )
    return clone


def _kept_writes(writes: Any, task_id: str) -> list[tuple[str, Any]]:
    """LangGraph saves a resume value twice before a node reads it: as the Command's write (no
    task), and in the list of answers its node was given (the task's write)."""
    keep = kept_answer if task_id == _NO_TASK else lambda v: [*map(kept_answer, v)]
    return [(c, keep(v) if c == RESUME else v) for c, v in writes]
