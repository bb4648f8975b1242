"""TetherMiddleware: the controls that share the run's step records and its model call (every
stop rule, calm temperature, the final-answer check, tool stats, the token budget and the
repeat guard's model side), in one middleware, so create_agent wraps one pair of hooks.

A step is one model call's tool calls. Parallel calls of one step make one step, failed when
every call failed, so the breaker's warning always comes one step before it opens, as in the
loop (where each step runs one call).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, NotRequired

import tether.decisions as decisions
from langchain.agents.middleware import types as lc
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import BaseTool
from langgraph.types import Overwrite
from tether import AgentSettings, ToolStats
from tether.decisions import FAILURE_KINDS
from tether.memory import TokenCounter

from langchain_tether.budget import ModelSteps, TokenBudget
from langchain_tether.calls import ModelCall, model_call
from langchain_tether.closing import Plan, plan_call
from langchain_tether.common import NOTE_ID, Outcome, RunState, counted, ending, facts_of, run_view
from langchain_tether.drive import Steps
from langchain_tether.final import Asked, FinalAnswerCheck, folded
from langchain_tether.repeat import fresh_guard, settled, unique_ids
from langchain_tether.tooling import ToolHooks, ToolStep

Request = lc.ModelRequest[Any]
Response = lc.ModelResponse[Any]
CALLS_PER_STEP = 4
"""Records kept per step the decisions need: room for parallel calls."""


def with_note(request: Request, text: str, name: str, call: ModelCall) -> Request:
    """The request with tether's note as a user message at the end (before the cap's note,
    when the call is closed for the last answer). The state does not keep it: like the
    loop's notes, it is for this call only."""
    note = HumanMessage(text, id=f"{NOTE_ID}{name}")
    messages = list(request.messages)
    at = len(messages) - (1 if call.closing is not None else 0)
    return request.override(messages=[*messages[:at], note, *messages[at:]])


def add_call(current: dict[str, Any], call: dict[str, Any]) -> dict[str, Any]:
    """Reducer: the run's stats with one more call of ``call["tool"]``
    (:meth:`tether.ToolStats.record`; no error text is kept)."""
    stats = dict(current or {})
    kept = ToolStats(**stats.get(call["tool"], {}))
    kept.record(call["ok"], call["latency_s"], None)
    stats[call["tool"]] = dict(vars(kept))  # its fields are plain values
    return stats


def stats_update(step: ToolStep) -> dict[str, Any]:
    """The call counted, with its latency (the time its hook took). A call answered from
    its record or refused by tether is not counted (it did not run); a call whose exception
    propagates is not either (a retry or error middleware goes inside)."""
    if step.call.gate is not None:
        return {}
    call = {
        "tool": step.request.tool_call["name"],
        "ok": step.result["status"] == "success",
        "latency_s": round(step.latency, 6),
    }
    return {"tether_tool_stats": call}


class TetherState(RunState[lc.ResponseT]):
    """The fields of :class:`TetherMiddleware`: the shared ones, the repeat guard's (started
    here), the final-answer check's (private) and the tool stats."""

    tether_tool_stats: NotRequired[Annotated[dict[str, Any], lc.OmitFromInput, add_call]]
    """Per tool: ``usage_count``, ``success_count``, ``failure_count``,
    ``consecutive_failures``, ``last_latency_s``, ``total_latency_s``."""


class TetherMiddleware(
    FinalAnswerCheck, TokenBudget, ToolHooks, lc.AgentMiddleware[Any, lc.ContextT, lc.ResponseT]
):
    """The controls that share the run's step records and its model call, in one middleware
    (create_agent wraps each middleware's hooks at every call, so one pair of hooks costs
    less than one per control):

    - the stop rules (:func:`tether.decisions.first_stop` before each model call, on the
      run's private fields): the breaker, the budget spent, the step cap, a repeat after
      the notes; the failures' note (:func:`tether.decisions.switch_hint`); at a cap, with
      ``cap_answer``, one last call with no tools for the answer.
    - calm temperature (:func:`tether.decisions.temperature_for`, on the same records), in
      the request's ``model_settings``.
    - the final-answer check (:class:`~langchain_tether.final.FinalAnswerCheck`).
    - per-tool stats in the output (``tether_tool_stats``).
    - the token budget (:class:`~langchain_tether.budget.TokenBudget`), innermost of these,
      so it counts each request as sent (notes, temperature, an answer sent back).
    - the repeat guard's model side: its fields start with a run, and an answer while a
      write's outcome is unknown has the write replayed first
      (:func:`langchain_tether.repeat.settled`).

    Place it before (outside) LangChain's ``ToolRetryMiddleware``, so a call retried in
    place is one step, and its exhausted retries one failure.

    Hooks: ``wrap_model_call``, ``wrap_tool_call``: no graph node of its own. State: the
    run's last steps, failures per tool, task, grounds (private), ``tether_tool_stats``.
    """

    state_schema = TetherState  # type: ignore[assignment]

    def __init__(
        self,
        settings: AgentSettings | None = None,
        *,
        tools: Sequence[BaseTool] | None = None,
        counter: TokenCounter | None = None,
    ) -> None:
        lc.AgentMiddleware.__init__(self)
        TokenBudget.__init__(self, settings, counter)
        FinalAnswerCheck.__init__(self, tools)
        self.window = CALLS_PER_STEP * max(
            decisions.history_window(self.settings), self.settings.calm_after_successes
        )

    def fresh(self, state: Any) -> dict[str, Any]:
        """The fields as a run starts (at its first model call: no graph node)."""
        return {
            **fresh_guard(state),
            "tether_history": [],
            "tether_tool_failures": {},
            "tether_tool_stats": Overwrite({}),
            **self.fresh_check(state),
        }

    def prepared(self, request: Request, call: ModelCall) -> tuple[Any, dict[str, Any], Plan]:
        """The run as this call sees it, the update that counts the call (and starts a run),
        and the call with the failures' note and its temperature; at a stop (or one the tools
        left pending), the last answer's call, or none."""
        self.learn(request)
        view, update = run_view(request.state, self.fresh)
        view, grounds = folded(view)
        facts = facts_of(view)
        hint = decisions.switch_hint(list(facts.history), facts.failure_streak, self.settings)
        stop = decisions.first_stop(facts, self.settings) if facts.history else None
        verdict = view.get("tether_stop") or stop
        plan = plan_call(request, verdict, self.settings, call)
        if hint:
            plan.request = with_note(plan.request, hint, "failures", call)
        calm = decisions.streak(facts.history, {"success"})
        temperature = decisions.temperature_for(calm, self.settings)
        settings = {**plan.request.model_settings, "temperature": temperature}
        plan.request = plan.request.override(model_settings=settings)
        return view, update | grounds | counted(view), plan

    def model_steps(self, request: Request) -> ModelSteps:
        """The model hook, for a sync or async handler alike (:mod:`langchain_tether.drive`):
        the stop rules before the call, the step's calls (:meth:`asking`), a stop they end in."""
        with model_call() as call:
            view, update, plan = self.prepared(request, call)
            stop = plan.stopped(update)
            if stop is not None:
                return stop
            inner: dict[str, Any] = {}

            def made(sent: Request) -> Steps[Request, Response, Response]:
                response, guard = settled(view, (yield sent), call)
                inner.update(guard)
                return response

            def passes(sent: Request) -> Steps[Request, Response, Response]:
                inner.clear()  # a later pass's updates replace an earlier's
                response, budget = yield from self.budget_steps(sent, made)
                inner.update(budget)
                return response

            asked = yield from self.asking(view, plan.request, call, passes)
            update |= asked.update(view, self.window)
            if asked.verdict is None:
                response, update = self.finished(plan, view, asked, update)
                response = unique_ids(response)
            else:
                later = plan_call(asked.request, asked.verdict, self.settings, call)
                ended = later.stopped(update)
                if ended is None:  # a cap: the last answer's call
                    ended = later.finish((yield from passes(later.request)), update)
                response, update = ended
                response = lc.ModelResponse([*asked.response.result, *response.result])
            return response, {**inner, **update}  # applied after the inner ones, as LangChain does

    def finished(self, plan: Plan, view: Any, asked: Asked, update: dict[str, Any]) -> Outcome:
        """The response; when it is the run's answer (a reply with no tool call that no
        wrapper inside closed or ended the run with), the run ends as the stop rules say
        after a final step (``answer``)."""
        response = asked.response
        reply = response.result[-1] if response.result else None
        call = plan.call
        answer = isinstance(reply, AIMessage) and not reply.tool_calls
        if answer and plan.closing is None and not call.ended and call.closing is None:
            final: Any = {"kind": "final", "thought": "", "answer": getattr(reply, "text", "")}
            verdict = decisions.first_stop(
                asked.judged(view, final, self.settings)[1], self.settings
            )
            if verdict is not None:
                call.ended = True
                return response, {**update, **ending(verdict)}
        return plan.finish(response, update)

    def tool_update(self, step: ToolStep) -> dict[str, Any]:
        """The call's step record, appended to the run's history; a failed call of a
        registered tool counted against it; what it established; its stats."""
        record = step.record(self.settings)
        update: dict[str, Any] = {"tether_history": decisions.windowed([record], self.window)}
        if record["kind"] in FAILURE_KINDS and "tool" in record:
            update["tether_tool_failures"] = record["tool"]
        return update | self.grounds_update(step) | stats_update(step)
