"""The repeat guard: a call that succeeded in the run is answered from its record, not run
again; proposed again after ``repeat_notes`` notes, the run ends ``no_progress``. A write
never runs twice and is never retried blind: a transient failure is replayed in place with
the same arguments (the same idempotency key), and one whose outcome is still unknown stays
open until a replay settles it."""

from __future__ import annotations

import json
import random
import uuid
from typing import Any

import tether.decisions as decisions
from langchain.agents.middleware import types as lc
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command
from tether import AgentSettings
from tether.decisions import GateDecision, Proposal, ToolResult, Verdict
from tether.llm import call_fingerprint
from tether.tools import RUN_ID_KEY, error_envelope, has_side_effects

from langchain_tether.calls import ModelCall, ToolCallRecord
from langchain_tether.closing import replay_call
from langchain_tether.common import Response, RunState, ending, facts_of, packed, step_of
from langchain_tether.tooling import ToolHooks, ToolResponse, ToolStep, gate_result, proposal_of

TWIN = "was already called in this step"  # the same reply made the same call earlier
UNKNOWN_OUTCOME = (
    " Its outcome is unknown: it may have taken effect before it failed. Calling it again "
    "with the same arguments settles it."
)


def fresh_guard(state: Any) -> dict[str, Any]:
    """The guard's fields as a run starts. The thread's call memory stays, as in the loop: a
    call that failed twice is still refused, and every success is stale."""
    return {
        "tether_calls": decisions.stale_records(state.get("tether_calls") or {}),
        "tether_unresolved": None,
        "tether_resolving": False,
        "tether_run_id": uuid.uuid4().hex,
    }


def settled(view: Any, response: Response, call: ModelCall) -> tuple[Response, dict[str, Any]]:
    """The model's response, and the guard's update: an answer while a write's outcome is
    unknown has the write replayed first, with the same arguments
    (:func:`tether.decisions.must_resolve_first`), as a tool call added after the answer,
    and the model answers again once it is settled; if the replay left it unknown, the
    answer stands and the run fails, saying so. An answer asked for at a stop is taken as
    it is (the cap's ending says what is unknown)."""
    result = list(response.result)
    reply = result[-1] if result else None
    unresolved: Proposal | None = view.get("tether_unresolved")
    if not isinstance(reply, AIMessage) or reply.tool_calls or unresolved is None:
        return response, {}
    if call.closing is not None or call.ended:
        return response, {}
    answered: Verdict = {"status": "completed", "cause": "answer", "reason": "a final answer"}
    if decisions.must_resolve_first(answered, unresolved, bool(view.get("tether_resolving"))):
        result.append(replay_call(unresolved))
        update: dict[str, Any] = {"tether_resolving": True}
    else:
        verdict = decisions.settled_verdict(answered, unresolved)
        update = ending(verdict, verdict["reason"] + decisions.unknown_outcome_note(unresolved))
        call.ended = True
    kept = lc.ModelResponse(result=result, structured_response=response.structured_response)
    return kept, update


class RepeatGuardMiddleware(
    ToolHooks, lc.AgentMiddleware[RunState[lc.ResponseT], lc.ContextT, lc.ResponseT]
):
    """Asks :func:`tether.decisions.gate` about each tool call (tool name and canonical
    arguments, :func:`tether.llm.call_fingerprint`): a call that succeeded before is
    answered with the recall note (what it returned, as plain tokens only), a call that
    failed on its last two runs is refused, and a repeat after ``repeat_notes`` notes ends
    the run ``no_progress`` (:func:`tether.decisions.first_stop`) before the next model call.

    A write that fails transiently is run again in place with the same arguments, within
    ``tool_attempts`` and after the loop's backoff, as the loop retries it. Place it after
    (inside) LangChain's ``ToolRetryMiddleware``: a write's exception comes back from here
    as an error result, so the retry middleware retries reads only.

    It goes with :class:`langchain_tether.TetherMiddleware` before it, which starts its
    fields at a run's first model call, acts on the stop it leaves pending, and replays a
    write of unknown outcome after an answer (:func:`settled`): the guard needs no model
    hook of its own (:func:`langchain_tether.check_order` refuses it alone).

    Hooks: ``wrap_tool_call``: no graph node of its own. State: the run's calls, the write
    of unknown outcome and whether it was replayed (private). Settings: ``repeat_notes``,
    ``repeat_limit``, ``tool_attempts``, ``retry_base_delay``, ``retry_max_delay``.
    """

    state_schema = RunState  # type: ignore[assignment]

    def __init__(self, settings: AgentSettings | None = None) -> None:
        super().__init__()
        self.settings = settings or AgentSettings()
        self._rng = random.Random()  # the jitter of a write's replay in place

    # --- before the call: the gate --------------------------------------------------------

    def decide(self, request: ToolCallRequest, call: ToolCallRecord) -> GateDecision:
        """The gate's decision on the call. Approval is the business of LangChain's
        HumanInTheLoopMiddleware, so ``approve`` runs; a write that already succeeded is
        answered from its record whatever the settings; a call the same reply made earlier,
        tool and arguments alike, is refused (it runs once, as one call a step in the loop),
        and so is a call whose id the reply gave another call too, but for the first to
        claim it."""
        view, proposal = _view(request.state), proposal_of(request, call)
        reply = _reply_of(request)
        if _earlier_twin(request, reply, proposal["fingerprint"]):
            return GateDecision("refuse", TWIN)
        decided = decisions.gate(view, proposal, request.tool, self.settings)
        if decided.gate not in ("run", "approve"):
            return decided
        record = view["calls"].get(decisions.call_key(proposal["fingerprint"]))
        if _writes(request) and record is not None and record["outcomes"][-1:] == ["success"]:
            return GateDecision("recall")
        return GateDecision("run")

    def tool_answer(self, request: ToolCallRequest, call: ToolCallRecord) -> ToolResponse | None:
        """The answer to a call that is not run, with its state update; None to run it. A
        call that runs gets the run's id in its config, as the loop gives it
        (:func:`tether.tools.run_id_from`), unless the caller set one."""
        config, run_id = request.runtime.config, request.state.get("tether_run_id")
        configurable = config.get("configurable") or {}
        if run_id and RUN_ID_KEY not in configurable:  # ToolNode runs the tool with this config
            config["configurable"] = {**configurable, RUN_ID_KEY: run_id}
        decided = self.decide(request, call)
        if decided.gate == "run":
            return None
        proposal = proposal_of(request, call)
        call.gate, call.result = decided.gate, gate_result(decided.gate)
        if decided.gate == "refuse":
            why = decided.reason or "failed on its last two runs"
            text = (
                f"Refused: {_named(proposal)} with these exact arguments {why}; it was not "
                "run this time. Use another tool, or change the arguments."
            )
            return _answered(request, text, "refuse", {})
        view, step = _view(request.state), step_of(request.state)
        gated: Proposal = {**proposal, "gate": decided.gate}
        record = decisions.classify(step, gated, None, None, self.settings)
        if decided.gate == "recall":
            note = decisions.recall_hint(view, record, self.settings)
            events = decisions.call_events(view["calls"], record, None, ran=False)
            return _answered(request, note, "recall", {"tether_calls": events})
        verdict = decisions.first_stop(facts_of(request.state, [record]), self.settings)
        text = f"{_named(proposal)} was not run: it was proposed again after the note."
        return _answered(request, text, "repeat", {"tether_stop": verdict})

    # --- after the call: its record -------------------------------------------------------

    def tool_replay(self, request: ToolCallRequest, exc: Exception, attempt: int) -> float | None:
        """A write that failed transiently runs again in place, the same call, while
        ``tool_attempts`` allow, after the loop's backoff: side-effecting tools are idempotent
        per run (the same arguments carry the same key). A read's exception is left to a
        retry middleware outside this one."""
        if not _writes(request):
            return None
        if not decisions.wants_retry(_failure(exc), None, attempt, self.settings):
            return None
        return decisions.backoff_delay(attempt, self.settings, self._rng)

    def tool_failed(
        self, request: ToolCallRequest, exc: Exception, call: ToolCallRecord
    ) -> ToolResponse:
        """A write's exception as its result (a read's propagates, for a retry middleware):
        a transient one, once its replays in place are spent, leaves the outcome unknown."""
        if not _writes(request):
            raise exc
        call.result = _failure(exc)
        return ToolMessage(
            content=json.dumps(call.result, ensure_ascii=False, default=str),
            tool_call_id=request.tool_call["id"],
            name=request.tool_call["name"],
            status="error",
        )

    def tool_update(self, step: ToolStep) -> dict[str, Any]:
        """The call's record: it ran, how it fared, what a success returned (plain tokens
        only), and the write whose outcome it leaves unknown or settles."""
        if step.call.gate is not None:
            return {}
        request = step.request
        record = step.record(self.settings)
        view, proposal = _view(request.state), proposal_of(request, step.call)
        events = decisions.call_events(
            view["calls"], record, step.result, ran=True, wrote=_writes(request)
        )
        update: dict[str, Any] = {"tether_calls": events}
        unresolved = decisions.unresolved_after(view, proposal, record, _writes(request))
        if unresolved != view.get("unresolved"):
            update["tether_unresolved"] = unresolved
        return update


def unique_ids(response: Response) -> Response:
    """The response with each tool call of its reply under an id of its own. Calls are
    answered by id: a second call under a taken id would run apart from the first's record
    (the same write twice); under its own id, it is that call's twin, refused as such."""
    reply = response.result[-1] if response.result else None
    if not isinstance(reply, AIMessage):
        return response
    seen: set[str | None] = set()
    calls = []
    for call in reply.tool_calls:
        taken = call["id"] in seen
        seen.add(call["id"])
        calls.append({**call, "id": f"tether-{uuid.uuid4().hex}"} if taken else call)
    if len(seen) == len(calls):
        return response
    kept = reply.model_copy(update={"tool_calls": calls})
    return lc.ModelResponse([*response.result[:-1], kept], response.structured_response)


def _writes(request: ToolCallRequest) -> bool:
    """The call is to a registered side-effecting tool."""
    return request.tool is not None and has_side_effects(request.tool)


def _failure(exc: Exception) -> ToolResult:
    """A write's exception as the loop records it; a transient one leaves its outcome unknown."""
    transient = decisions.is_transient(exc)
    message = decisions.describe(exc) + (UNKNOWN_OUTCOME if transient else "")
    return error_envelope(message, error_type="transient" if transient else "tool_error")


def _reply_of(request: ToolCallRequest) -> AIMessage | None:
    """The reply that made this call: the last AI message of the state with its id."""
    call_id = request.tool_call["id"]
    for message in reversed(request.state.get("messages") or []):
        if isinstance(message, AIMessage) and any(c["id"] == call_id for c in message.tool_calls):
            return message
    return None


def _earlier_twin(request: ToolCallRequest, reply: AIMessage | None, fingerprint: str) -> bool:
    """The reply that made this call made the same call earlier (the same tool and the
    arguments the tool receives, under another id)."""
    call_id = request.tool_call["id"]
    if reply is None:
        return False
    ids = [call["id"] for call in reply.tool_calls]
    name = request.tool_call["name"]
    return any(
        call["name"] == name
        and call["id"] != call_id
        and call_fingerprint(request.tool, name, dict(call.get("args") or {})) == fingerprint
        for call in reply.tool_calls[: ids.index(call_id)]
    )


def _named(proposal: Proposal) -> str:
    """The call as tether's own words name it: its tool when registered."""
    return proposal["tool"] if proposal.get("registered") else "this call"


def _view(state: Any) -> Any:
    """The part of the loop's state the gate reads, from this middleware's fields."""
    return {"calls": state.get("tether_calls") or {}, "unresolved": state.get("tether_unresolved")}


def _answered(
    request: ToolCallRequest, text: str, gate: str, update: dict[str, Any]
) -> ToolResponse:
    """tether's answer in place of the call; its gate is marked for readers of the run
    (:func:`langchain_tether.tether_part`), never read back by tether."""
    message = ToolMessage(
        content=text,
        tool_call_id=request.tool_call["id"],
        name=request.tool_call["name"],
        status="success" if gate == "recall" else "error",
        additional_kwargs={"tether": gate},
    )
    return Command(update=packed({"messages": [message], **update})) if update else message
