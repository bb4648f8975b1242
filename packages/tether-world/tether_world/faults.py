"""Deterministic fault injection for the payment API's endpoints and for the world's tools.

A plan maps a *target* (an API endpoint such as ``api.create_payment``, or a tool name such as
``query_order``) to the faults its calls meet: by call index (``fail_first(2, Fault(status=503))``
makes the first two calls fail, then lets calls through) and/or at a seeded random rate. Calls
are counted per target from 0; the same plan against the same sequence of calls always injects
the same faults, which is what a benchmark needs.

A fault adds latency, answers with an HTTP error status (an API endpoint) or raises (a tool:
429/408/5xx become :class:`TransientToolError`, other statuses a permanent error), and can
strike *after* the call took effect (``after_effect=True``): the charge is recorded, then the
client waits past its timeout or sees a 5xx. That is the case idempotency keys exist for.
"""

from __future__ import annotations

import functools
import random
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, model_validator
from tether import TransientToolError

API_ENDPOINTS = ("api.create_payment", "api.get_payment", "api.refund_payment")
TRANSIENT_STATUSES = frozenset({408, 425, 429})

T = TypeVar("T")


class Fault(BaseModel):
    """What happens to one call."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    delay_s: float = Field(0.0, ge=0, le=300, description="Latency added to the call.")
    status: int | None = Field(
        None, ge=400, le=599, description="Fail with this HTTP status (None: do not fail)."
    )
    retry_after_s: int | None = Field(
        None, ge=0, le=3600, description="Retry-After header sent with the status."
    )
    after_effect: bool = Field(
        False, description="Strike after the call took effect (e.g. the charge is recorded)."
    )

    @classmethod
    def latency(cls, delay_s: float) -> Fault:
        return cls(delay_s=delay_s)

    @classmethod
    def timeout(cls, delay_s: float, *, after_effect: bool = False) -> Fault:
        """Stall for ``delay_s`` (longer than the client's timeout), before or after the effect."""
        return cls(delay_s=delay_s, after_effect=after_effect)

    @classmethod
    def error(cls, status: int = 503, *, retry_after_s: int | None = None) -> Fault:
        return cls(status=status, retry_after_s=retry_after_s)

    @classmethod
    def rate_limited(cls, retry_after_s: int = 1) -> Fault:
        return cls(status=429, retry_after_s=retry_after_s)


class TargetFaults(BaseModel):
    """The faults for one target: a schedule by call index, then a seeded random rate."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schedule: dict[int, Fault] = Field(
        default_factory=dict, description="0-based call index -> fault for that call."
    )
    rate: float = Field(0.0, ge=0, le=1, description="Share of other calls that get `fault`.")
    fault: Fault | None = Field(None, description="The fault injected at `rate`.")
    seed: int = Field(0, description="Seed of the random draws behind `rate`.")

    @model_validator(mode="after")
    def _rate_needs_fault(self) -> TargetFaults:
        if self.rate > 0 and self.fault is None:
            raise ValueError("a fault rate needs the fault to inject")
        if any(index < 0 for index in self.schedule):
            raise ValueError("call indexes start at 0")
        return self


def fail_first(n: int, fault: Fault) -> TargetFaults:
    """The first ``n`` calls meet ``fault``; later calls go through."""
    return TargetFaults(schedule=dict.fromkeys(range(n), fault))


def at_rate(rate: float, fault: Fault, *, seed: int = 0) -> TargetFaults:
    """Each call meets ``fault`` with probability ``rate``, drawn from ``Random(seed)``."""
    return TargetFaults(rate=rate, fault=fault, seed=seed)


FaultPlan = Mapping[str, TargetFaults | Mapping[str, Any]]


class InjectedFault(RuntimeError):
    """A permanent failure injected into a tool call."""


class InjectedTransientFault(TransientToolError):
    """A transient failure (429, 408, 5xx) injected into a tool call."""


def fault_exception(fault: Fault, target: str) -> Exception:
    message = f"{target} failed: injected fault, the backend answered HTTP {fault.status}"
    if fault.retry_after_s is not None:
        message += f" (retry after {fault.retry_after_s}s)"
    transient = fault.status in TRANSIENT_STATUSES or (fault.status or 0) >= 500
    return InjectedTransientFault(message) if transient else InjectedFault(message)


class FaultInjector:
    """Holds the current plan and counts calls per target; safe to share between threads."""

    def __init__(self, targets: Iterable[str] = API_ENDPOINTS) -> None:
        self._targets = set(targets)
        self._plan: dict[str, TargetFaults] = {}
        self._calls: dict[str, int] = {}
        self._rngs: dict[str, random.Random] = {}
        self._lock = threading.Lock()

    def add_targets(self, targets: Iterable[str]) -> None:
        with self._lock:
            self._targets.update(targets)

    def set_plan(self, plan: FaultPlan | None) -> None:
        """Replace the plan (None clears it) and restart every call count at 0."""
        if not isinstance(plan, Mapping | None):  # a plan read from a file is untrusted
            raise ValueError(f"a fault plan maps targets to faults, not {type(plan).__name__}")
        parsed = {
            target: spec if isinstance(spec, TargetFaults) else TargetFaults.model_validate(spec)
            for target, spec in (plan or {}).items()
        }
        with self._lock:
            unknown = sorted(set(parsed) - self._targets)
            if unknown:
                raise ValueError(
                    f"unknown fault targets {unknown}; known: {', '.join(sorted(self._targets))}"
                )
            self._plan = parsed
        self.rewind()

    def rewind(self) -> None:
        """Restart call counts and random draws, so the plan replays from its beginning."""
        with self._lock:
            self._calls = {}
            self._rngs = {t: random.Random(spec.seed) for t, spec in self._plan.items()}

    def calls(self, target: str) -> int:
        """How many calls ``target`` has had since the plan was set or rewound."""
        with self._lock:
            return self._calls.get(target, 0)

    def next_fault(self, target: str) -> Fault | None:
        """Count one call of ``target`` and return the fault it meets, if any."""
        with self._lock:
            index = self._calls.get(target, 0)
            self._calls[target] = index + 1
            spec = self._plan.get(target)
            if spec is None:
                return None
            if index in spec.schedule:
                return spec.schedule[index]
            if spec.rate and self._rngs[target].random() < spec.rate:
                return spec.fault
            return None

    def wrap(self, target: str, fn: Callable[..., T]) -> Callable[..., T]:
        """``fn`` with this injector's faults for ``target`` applied to each call."""

        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> T:
            fault = self.next_fault(target)
            if fault is None:
                return fn(*args, **kwargs)
            if not fault.after_effect:
                _strike(fault, target)
            result = fn(*args, **kwargs)
            if fault.after_effect:
                _strike(fault, target)
            return result

        return call


def _strike(fault: Fault, target: str) -> None:
    if fault.delay_s:
        time.sleep(fault.delay_s)
    if fault.status is not None:
        raise fault_exception(fault, target)
