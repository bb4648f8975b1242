"""Decisions about side effects whose outcome is unknown (part of the decision module).

A side-effecting call that failed transiently (a payment taken, then a timeout) may or may
not have changed the world. Side-effecting tools are idempotent per run (a payment carries
an idempotency key derived from the run id), so replaying the same call settles it. These
pure functions say when a call becomes unknown or settled, that a replay is never blocked,
and that a run replays it once before it stops.
"""

from __future__ import annotations

from tether.state import AgentState, Proposal, StepRecord, Verdict


def is_replay_of_unresolved(state: AgentState, fingerprint: str) -> bool:
    """The same call as a side effect whose outcome is unknown: replaying it (side-effecting
    tools are idempotent per run) is how the outcome becomes known, so no repeat or refuse
    rule may block it."""
    unresolved = state.get("unresolved")
    return unresolved is not None and unresolved.get("fingerprint") == fingerprint


def unresolved_after(
    state: AgentState, proposal: Proposal, record: StepRecord, side_effects: bool
) -> Proposal | None:
    """The side effect whose outcome is unknown after this step: a side-effecting call that
    failed transiently becomes unknown; the same call run again settles it. Not running it
    settles nothing: an operator's rejection marks it ``refuse`` (the loop replays it no more)."""
    current = state.get("unresolved")
    if proposal["kind"] != "action":
        return current
    if side_effects and record["kind"] == "transient":
        return {k: v for k, v in proposal.items() if k not in ("gate", "raw")}  # type: ignore[return-value]
    if current is None or current.get("fingerprint") != record["fingerprint"]:
        return current
    if record["kind"] == "rejected":
        return {**current, "gate": "refuse"}
    return current if record["kind"] in ("refused", "repeat") else None


def must_resolve_first(
    verdict: Verdict | None, unresolved: Proposal | None, resolving: bool
) -> bool:
    """A run about to end with a side effect of unknown outcome replays it first (once per
    stop: a replay that fails again ends the run, and the reason says so), unless the operator
    rejected it."""
    vetoed = unresolved is not None and unresolved.get("gate") == "refuse"
    return verdict is not None and unresolved is not None and not resolving and not vetoed


def settled_verdict(verdict: Verdict, unresolved: Proposal | None) -> Verdict:
    """A run never completes while a side effect's outcome is unknown: the answer was given
    blind (the operator rejected the replay), so it fails and the reason says why."""
    if verdict["status"] != "completed" or unresolved is None:
        return verdict
    return {
        "status": "failed",
        "cause": "unsettled",
        "reason": "a final answer came before the outcome was settled",
    }


def unknown_outcome_note(unresolved: Proposal | None) -> str:
    """What the reason adds when a run ends with a side effect still of unknown outcome."""
    if unresolved is None:
        return ""
    return (
        f"; the outcome of {unresolved.get('tool')} {unresolved.get('fingerprint', '')} is "
        "unknown: it failed transiently, and a replay with the same arguments settles it"
    )
