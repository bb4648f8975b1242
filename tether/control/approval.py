"""Approval gates: what a paused run asks, and the answers it accepts.

A run pauses (LangGraph ``interrupt``) before a call that needs approval, with an
:class:`ApprovalRequest`. Resume it with ``Command(resume=answer)`` where ``answer`` is
``"approve"``, ``{"action": "edit", "arguments": {...}}`` or
``{"action": "reject", "message": "why"}`` (``True``/``False`` work too).
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

from tether.errors import TetherError


class ApprovalError(TetherError, ValueError):
    """An approval answer that cannot be used; the saved run is left as it was."""


class ApprovalRequest(TypedDict):
    kind: Literal["approval"]
    tool: str
    arguments: dict[str, Any]
    step: int
    run_id: str
    reason: str
    error: NotRequired[str]  # set when the previous answer could not be used


class Decision(TypedDict):
    action: Literal["approve", "edit", "reject"]
    arguments: NotRequired[dict[str, Any]]
    message: NotRequired[str]


_APPROVE = {"approve", "approved", "yes", "y", "ok"}
_REJECT = {"reject", "rejected", "no", "n", "deny"}


def parse_decision(answer: Any) -> Decision:
    """Read an operator's answer; ApprovalError says what a valid one looks like."""
    if answer is True or (isinstance(answer, str) and answer.strip().lower() in _APPROVE):
        return {"action": "approve"}
    if answer is False or (isinstance(answer, str) and answer.strip().lower() in _REJECT):
        return {"action": "reject", "message": "rejected by the operator"}
    if isinstance(answer, dict):
        action = answer.get("action")
        if action == "approve":
            return {"action": "approve"}
        if action == "reject":
            return {"action": "reject", "message": str(answer.get("message") or "rejected")}
        if action == "edit":
            arguments = answer.get("arguments")
            if isinstance(arguments, dict):
                return {"action": "edit", "arguments": arguments}
            raise ApprovalError("an edit needs 'arguments': a JSON object of the new arguments")
    raise ApprovalError(
        f"cannot read approval answer {answer!r}: use 'approve', "
        "{'action': 'edit', 'arguments': {...}} or {'action': 'reject', 'message': '...'}"
    )
