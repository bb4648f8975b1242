"""Tool health in LangGraph's store (the graph's ``store``, or the one LangGraph's server
passes): a tool's record is read before a call and its outcome written after, under
:data:`NAMESPACE`. The decisions are :mod:`tether.decisions.health`'s; this is the I/O (in a
thread on the event loop: every LangGraph store has the sync API).

Only a call's first attempt is gated: its retries, and the replay of a side effect whose
outcome is unknown, are never refused (the replay is how the outcome becomes known). A probe
is claimed by writing the record and reading it back: the store has no compare-and-set, so two
workers whose claims cross within one round trip may both probe. A store that fails is passed
over with a warning (logged, and in ``meta.health_store``): the call runs once, as without it.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Callable
from typing import Any

from langgraph.store.base import BaseStore, Item
from pydantic import ValidationError
from tether.decisions.health import ToolHealth, admit, claimed, recorded
from tether.settings import AgentSettings
from tether.tools.envelope import LOOP_ORIGIN, Envelope, error_envelope
from tether.tools.registry import ToolRegistry

NAMESPACE = ("tether", "tool_health")
_NOT_RUN = ("validation_error", "unknown_tool")
_log = logging.getLogger(__name__)


def read(item: Item | None) -> ToolHealth:
    """A stored record; none, or one that is not a valid record, is a healthy tool."""
    try:
        return ToolHealth() if item is None else ToolHealth.model_validate(item.value)
    except ValidationError:
        return ToolHealth()


def gate(store: BaseStore, tool: str, settings: AgentSettings) -> Envelope | None:
    """The refusal when ``tool`` is paused; None when the call runs (maybe as the probe)."""
    now = time.time()
    health = read(store.get(NAMESPACE, tool))
    admission = admit(health, tool, now, settings)
    if admission.verdict == "probe":
        token = uuid.uuid4().hex
        store.put(NAMESPACE, tool, claimed(health, token, now).model_dump())
        back = read(store.get(NAMESPACE, tool))
        if back.probe == token:
            return None
        admission = admit(back, tool, now, settings)  # another worker's claim won
    if admission.verdict != "refuse":
        return None
    return error_envelope(admission.reason, error_type="refused", origin=LOOP_ORIGIN)


def note(store: BaseStore, tool: str, result: Envelope, settings: AgentSettings) -> None:
    """Record a call's outcome: a transient failure counts against the tool; any other
    outcome of a call that ran (even the tool's own error) shows the tool is up."""
    meta = result["meta"]
    if meta.get("error_type") in _NOT_RUN:
        return
    failed = str(result.get("message", "")) if meta.get("transient") else None
    latency = float(meta.get("latency_s", 0.0))
    old = read(store.get(NAMESPACE, tool))
    store.put(NAMESPACE, tool, recorded(old, failed, latency, time.time(), settings).model_dump())


def _shared(trouble: list[str], job: Callable[..., Any], *args: Any) -> Any:
    """``job(*args)``, or None (no refusal, nothing recorded) when the store fails."""
    try:
        return job(*args)
    except Exception as exc:  # a shared store is an aid: a run never fails with it
        trouble.append(f"tool health store failed, skipped: {type(exc).__name__}: {exc}"[:300])
        _log.warning(trouble[-1])
        return None


def invoke(
    store: BaseStore | None, registry: ToolRegistry, call: dict[str, Any], gated: bool, s: Any
) -> Envelope:
    """Run ``call`` (tool, args, config) unless the tool is paused; record the outcome."""
    trouble: list[str] = []
    refused = (
        _shared(trouble, gate, store, call["tool"], s) if store is not None and gated else None
    )
    if refused is not None:
        return refused
    result = registry.invoke(call["tool"], call["args"], config=call["config"])
    if store is not None:
        _shared(trouble, note, store, call["tool"], result, s)
    result["meta"].update({"health_store": trouble[-1]} if trouble else {})
    return result


async def ainvoke(
    store: BaseStore | None, registry: ToolRegistry, call: dict[str, Any], gated: bool, s: Any
) -> Envelope:
    """:func:`invoke` on the event loop."""
    trouble: list[str] = []
    if store is not None and gated:
        refused = await asyncio.to_thread(_shared, trouble, gate, store, call["tool"], s)
        if refused is not None:
            return refused
    result = await registry.ainvoke(call["tool"], call["args"], config=call["config"])
    if store is not None:
        await asyncio.to_thread(_shared, trouble, note, store, call["tool"], result, s)
    result["meta"].update({"health_store": trouble[-1]} if trouble else {})
    return result
