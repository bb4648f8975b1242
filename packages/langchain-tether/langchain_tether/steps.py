"""The circuit breaker and calm temperature: both read the run's tool steps in a row.

A step is one model call's tool calls. Parallel calls of one step make one step, failed when
every call failed, so the breaker's warning always comes one step before it opens, as in the
loop (where each step runs one call).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any, NotRequired

from langchain.agents.middleware.types import (
    AgentMiddleware,
    ContextT,
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
    PrivateStateAttr,
    ResponseT,
)
from tether.decisions import policy, stop_rules, stops
from tether.decisions.stop_rules import StopFacts
from tether.settings import AgentSettings
from tether.state import FAILURE_KINDS, StepRecord, windowed

from langchain_tether.closing import Plan, plan_call
from langchain_tether.common import (
    TetherState,
    as_settings,
    counted,
    run_view,
    step_of,
    window_of,
    with_note,
)
from langchain_tether.kept import signed
from langchain_tether.layer import ToolReading, ToolSteps

ModelHandler = Callable[[ModelRequest[Any]], ModelResponse[Any]]
AsyncModelHandler = Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]]
CALLS_PER_STEP = 4
"""Records kept per step the decisions need: room for parallel calls."""


def by_step(history: list[StepRecord]) -> list[StepRecord]:
    """One record per step: its last failure when every call failed, else its last call
    that did not fail (one pass: it runs at every model call)."""
    steps: list[StepRecord] = []
    for record in history:
        if not steps or steps[-1]["step"] != record["step"]:
            steps.append(record)
        elif record["kind"] not in FAILURE_KINDS or steps[-1]["kind"] in FAILURE_KINDS:
            steps[-1] = record
    return steps


def streak(steps: list[StepRecord], kinds: frozenset[str]) -> int:
    """How many of the last steps in a row are of ``kinds``."""
    count = 0
    for record in reversed(steps):
        if record["kind"] not in kinds:
            break
        count += 1
    return count


@signed
class StepsMiddleware(ToolSteps, AgentMiddleware[Any, ContextT, ResponseT]):
    """Records each tool step of the run in ``field`` (sync and async hooks)."""

    field = ""

    def __init__(self, settings: AgentSettings | None = None) -> None:
        super().__init__()
        self.settings = as_settings(settings)

    def window(self) -> int:
        return policy.history_window(self.settings)

    def fresh(self, state: Any) -> dict[str, Any]:
        """This middleware's field as a run starts."""
        return {self.field: []}

    def steps(self, state: Any) -> list[StepRecord]:
        return by_step(list(state.get(self.field) or []))

    def tool_update(self, reading: ToolReading) -> dict[str, Any]:
        """The call's step record, appended to ``field``."""
        record = reading.record(self.settings)
        return {self.field: windowed([record], self.window() * CALLS_PER_STEP)}

    def plan(self, request: ModelRequest[Any]) -> tuple[Plan, dict[str, Any]]:
        """The call as this middleware makes it, and its update (a new run's fields, the
        step counted)."""
        view, update = run_view(request.state, self.fresh)
        return self.prepared(request, view), update | counted(view)

    def prepared(self, request: ModelRequest[Any], view: Any) -> Plan:
        """The request as this middleware sends it on (``view``: the run's state)."""
        return Plan(request)

    def wrap_model_call(
        self, request: ModelRequest[ContextT], handler: ModelHandler
    ) -> ModelResponse[Any] | ExtendedModelResponse[Any]:
        plan, update = self.plan(request)
        stop = plan.stopped(update)
        if stop is not None:
            return stop
        return plan.finish(handler(plan.request), update)

    async def awrap_model_call(
        self, request: ModelRequest[ContextT], handler: AsyncModelHandler
    ) -> ModelResponse[Any] | ExtendedModelResponse[Any]:
        plan, update = self.plan(request)
        stop = plan.stopped(update)
        if stop is not None:
            return stop
        return plan.finish(await handler(plan.request), update)


class CircuitBreakerState(TetherState[ResponseT]):
    tether_history: NotRequired[Annotated[list[StepRecord], PrivateStateAttr, window_of]]
    """The run's last tool steps, as many as the breaker and the switch note need."""


class CircuitBreakerMiddleware(StepsMiddleware[ContextT, ResponseT]):
    """Counts the run's failed tool steps in a row. After ``switch_after_failures`` of them
    the next model call gets :func:`tether.decisions.stops.switch_hint`'s note (which call
    failed and how, in tether's words); at ``breaker_failures`` the note also says one more
    failed step ends the run; the next failed step opens the breaker
    (:func:`tether.decisions.stops.breaker`): with ``cap_answer`` one last call with no
    tools asks for the answer, then the run ends ``failed``.

    Place it before (outside) LangChain's ``ToolRetryMiddleware``, so a call retried in
    place is one step, and its exhausted retries one failure.

    Hooks: ``wrap_model_call`` (the note; the last answer, or the stop message in place of
    the call), ``wrap_tool_call``: no graph node of its own. State: the run's last steps
    (private). Settings: ``switch_after_failures``, ``breaker_failures``, ``cap_answer``.
    """

    state_schema = CircuitBreakerState  # type: ignore[assignment]
    field = "tether_history"

    def prepared(self, request: ModelRequest[Any], view: Any) -> Plan:
        """The call with the failures' note; at the breaker (or at a stop the tools left
        pending), the last answer's call, or none."""
        steps = self.steps(view)
        failures = streak(steps, FAILURE_KINDS)
        hint = stops.switch_hint(steps, failures, self.settings)
        noted = with_note(request, hint, "failures") if hint else request
        facts = StopFacts(step_of(view), steps, failures)
        verdict = view.get("tether_stop") or stop_rules.breaker(facts, self.settings)
        return plan_call(noted, verdict, self.settings)


class CalmTemperatureState(TetherState[ResponseT]):
    tether_calm_history: NotRequired[Annotated[list[StepRecord], PrivateStateAttr, window_of]]
    """The run's last tool steps, as many as the calm setting needs."""


class CalmTemperatureMiddleware(StepsMiddleware[ContextT, ResponseT]):
    """Sets each model call's temperature from :func:`tether.decisions.stops.temperature_for`:
    ``temperature``, then ``calm_temperature`` once ``calm_after_successes`` tool steps in
    a row succeeded (explore less once the run is going well). The request's
    ``model_settings`` carry it, as LangChain binds them to the model.

    Hooks: ``wrap_model_call``, ``wrap_tool_call``. State: the run's last steps (private).
    Settings: ``temperature``, ``calm_temperature``, ``calm_after_successes``.
    """

    state_schema = CalmTemperatureState  # type: ignore[assignment]
    field = "tether_calm_history"

    def window(self) -> int:
        return self.settings.calm_after_successes

    def prepared(self, request: ModelRequest[Any], view: Any) -> Plan:
        successes = streak(self.steps(view), frozenset({"success"}))
        temperature = stops.temperature_for(successes, self.settings)
        settings = {**request.model_settings, "temperature": temperature}
        return Plan(request.override(model_settings=settings))
