"""Tool health shared by every run and worker (part of the decision module): a breaker per
tool, kept in LangGraph's store by :mod:`tether.nodes.health`. From a tool's record and the
time, these pure functions say whether a call runs, is refused or is the probe, and what a
call's outcome makes of the record.

closed: calls run; ``health_failures`` transient failures in a row within ``health_window``
open it. open: calls are refused until ``health_cooldown`` has passed, then one call is the
probe (half-open; the others are refused while it runs, for at most another cool-down): its
success closes the breaker, its failure opens it again.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from pydantic import BaseModel, ConfigDict

from tether.settings import AgentSettings

_ERROR_CHARS = 200
_LATENCY_WEIGHT = 0.2


class ToolHealth(BaseModel):
    """One tool's record in the store (as plain JSON); the defaults are a healthy tool."""

    model_config = ConfigDict(frozen=True, allow_inf_nan=False)  # NaN, inf: not a record

    state: Literal["closed", "open", "half_open"] = "closed"
    failures: list[float] = []  # times of the transient failures in a row, oldest first
    last_error: str = ""  # the last transient failure's message, cut
    latency_s: float = 0.0  # moving average of the calls' latency
    calls: int = 0  # calls recorded, by every run
    opened_at: float = 0.0  # when it opened, or when the probe was let through
    probe: str = ""  # the probe in flight ("" when none)


class Admission(NamedTuple):
    verdict: Literal["allow", "refuse", "probe"]
    reason: str = ""  # for a refusal: tether's words, naming the tool and why
    wait: float = 0.0  # for a refusal: seconds until a probe may be let through


def trusted(health: ToolHealth, now: float, settings: AgentSettings) -> ToolHealth:
    """The record, or none (a healthy tool) when it holds a time more than a cool-down ahead:
    no clock is that far off, and such a value (1e308) would pause the tool for ever."""
    latest = max([health.opened_at, *health.failures])
    return health if latest <= now + settings.health_cooldown else ToolHealth()


def admit(health: ToolHealth, tool: str, now: float, settings: AgentSettings) -> Admission:
    """Run the call (closed), let it through as the probe (cool-down over), or refuse it (for
    no more than a cool-down from now, whatever clock wrote the record)."""
    health = trusted(health, now, settings)
    if health.state == "closed":
        return Admission("allow")
    left = min(health.opened_at + settings.health_cooldown - now, settings.health_cooldown)
    if left <= 0:
        return Admission("probe")
    why = (
        "a probe call is checking whether it is back"
        if health.state == "half_open"
        else f"{len(health.failures)} calls in a row failed for every run (last: "
        f"{health.last_error}); it is tried again in {left:.0f} s"
    )
    reason = f"{tool} is paused and was not called: {why}. Use another tool."
    return Admission("refuse", reason, left)


def claimed(health: ToolHealth, token: str, now: float) -> ToolHealth:
    """The record once a call is let through as the probe (half-open)."""
    return health.model_copy(update={"state": "half_open", "opened_at": now, "probe": token})


def recorded(
    health: ToolHealth, failed: str | None, latency_s: float, now: float, settings: AgentSettings
) -> ToolHealth:
    """The record after a call that ran: ``failed`` is a transient failure's message (None:
    the tool answered, even with an error of its own, so it is up)."""
    health = trusted(health, now, settings)
    latency = health.latency_s + _LATENCY_WEIGHT * (latency_s - health.latency_s)
    update: dict[str, object] = {"latency_s": round(latency, 6), "calls": health.calls + 1}
    if failed is None:
        update |= {"state": "closed", "failures": [], "probe": ""}
        return health.model_copy(update=update)
    recent = [t for t in health.failures if now - t < settings.health_window] + [now]
    update |= {"failures": recent[-settings.health_failures :], "last_error": failed[:_ERROR_CHARS]}
    if health.state == "half_open" or len(recent) >= settings.health_failures:
        update |= {"state": "open", "opened_at": now, "probe": ""}
    return health.model_copy(update=update)
