"""The simulated model's policy: what it does next, given the prompt in front of it.

It knows the scenario's plan (which call comes after which), but acts only on what the
prompt shows. When the request's constrained decoding admits no call (a JSON schema with no
tool branch, ``tool_choice`` ``none``) it answers from what the prompt shows, any missing fact
made up; otherwise:

1. **Where the plan stands**: the latest planned call whose successful result the prompt
   shows (same tool, its grounded arguments in the call written before the result).
2. **Its final answer sent back**: with ``heed`` it goes back to its plan if the note names
   what the answer lacks; otherwise it gives the same answer again (:mod:`.relapse`).
3. **An error after its own faulty call**: the fix comes with ``fix_rate`` if the new text
   names what was wrong (the field, the tool, the JSON), with ``blind_fix_rate`` otherwise;
   if it does not come, the same faulty reply is repeated.
4. **A relapse** after a well-formed call: the same call again, at the rate its outcome and
   the run's loop state give, unless a note that names the call is heeded (:mod:`.relapse`).
5. **The next call**: only if its tool is listed (else a refusal that says so), and only with
   grounded values the prompt shows. A missing one is made up with ``invent_rate``;
   otherwise the call before it is made again (re-query), or, at the plan's start, the model
   asks for it.
6. **The answer**: the required facts the prompt shows; a missing one is made up with
   ``invent_rate`` or re-queried by calling the plan's last step again.

Then, on a turn that follows the plan, the persona's fault draw may turn it into a fault, if
the request's constrained decoding allows that fault (:func:`.faults.possible`). A turn that
would answer where the decoding admits only a call becomes a call (:func:`.forced.forced_call`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from tether_bench.scenarios import Scenario, ToolAction
from tether_bench.simulator import answers
from tether_bench.simulator.facts import (
    grounded,
    invent,
    invented_fact,
    missing_arguments,
    output_fact,
    visible,
)
from tether_bench.simulator.faults import (
    CALL_FAULTS,
    FORMAT_FAULTS,
    Draw,
    FaultKind,
    applicable_faults,
    pick_fault,
    possible,
)
from tether_bench.simulator.forced import answer_call, constrained, forced_call
from tether_bench.simulator.personas import Persona
from tether_bench.simulator.reading import Observation, PromptView
from tether_bench.simulator.relapse import (
    last_result,
    names_call,
    names_lack,
    prose,
    repeat_rate,
)
from tether_bench.simulator.sessions import Heard, Memory, Move, Turn

_ERROR_WORDS = re.compile(
    r"error|invalid|not a valid|unknown|missing|required|could not|cannot|failed|"
    r"not permitted|错误|无效|缺少|失败",
    re.IGNORECASE,
)
_FORMAT_WORDS = (
    "json",
    "parse",
    "format",
    "action input",
    "argument",
    "quote",
    "empty",
    "格式",
    "空",
)


@dataclass(frozen=True)
class Choice:
    """The turn to send, why, and where the plan stood."""

    turn: Turn
    move: Move
    position: int
    heard: Heard = "none"
    heeded: bool = False
    naming: frozenset[str] = frozenset()
    """The prompt lines that said what was wrong with the faulty call it repeats."""
    prevented: FaultKind | None = None
    """The fault drawn that the request's constrained decoding ruled out."""


def progress(plan: list[ToolAction], view: PromptView) -> int:
    """How many planned calls are done, judged by the latest one whose result is shown. A
    call the plan makes again (a read again after a write) is done only by a result shown
    after the first result of the call before it: the earlier result is not the new one."""
    done = 0
    for index, step in enumerate(plan):
        if step in plan[:index]:
            if _shown_after(plan[index - 1], step, view.observations):
                done = index + 1
        elif any(_shows(obs, step) for obs in view.observations):
            done = index + 1
    return done


def _shown_after(
    before: ToolAction, step: ToolAction, observations: tuple[Observation, ...]
) -> bool:
    """Some result of ``step`` is shown after the first shown result of ``before``."""
    first = next((i for i, obs in enumerate(observations) if _shows(obs, before)), None)
    return first is not None and any(_shows(obs, step) for obs in observations[first + 1 :])


def _shows(obs: Observation, step: ToolAction) -> bool:
    if not obs.ok or obs.tool != step.tool:
        return False
    return all(obs.call_holds(v) for v in step.arguments.values() if grounded(v))


def decide(
    scenario: Scenario, view: PromptView, memory: Memory, draw: Draw, persona: Persona
) -> Choice:
    """The next turn for this prompt; see the module docstring for the order of rules. Where
    it would answer and the decoder admits only a call, the call is forced
    (:func:`.forced.forced_call`)."""
    choice = _decide(scenario, view, memory, draw, persona)
    if choice.turn.kind == "final" and view.answer_tool and view.constraints.tool_names_fixed:
        return replace(choice, turn=answer_call(choice.turn, view.answer_tool), move="answer_tool")
    if choice.turn.kind == "final" and not view.constraints.answers_allowed:
        return Choice(forced_call(scenario, view, choice.position), "forced", choice.position)
    return choice


def _decide(
    scenario: Scenario, view: PromptView, memory: Memory, draw: Draw, persona: Persona
) -> Choice:
    plan = scenario.gold_actions
    position = progress(plan, view)
    if not view.constraints.calls_allowed:  # the decoder admits only an answer
        return _answer(scenario, view, draw, persona, position, may_call=False)
    last = memory.last_turn
    heard: Heard = "none"
    if last is not None and last.kind == "final":
        said = prose(new_text(view, memory), view.tools | {s.tool for s in plan})
        answer = last.answer or ""
        if not names_lack(said, plan, position, answer, view.observations, view.tools):
            return Choice(last, "repeat", position)
        if draw.u_heed >= persona.heed:
            return Choice(last, "repeat", position, "pushback")
        return replace(
            _next(scenario, view, draw, persona, position, heeding=True),
            heard="pushback",
            heeded=True,
        )
    if last is not None and last.fault in CALL_FAULTS and position <= memory.last_position:
        naming = naming_lines(last, view, memory)
        if draw.u_fix >= (persona.fix_rate if naming else persona.blind_fix_rate):
            return Choice(last, "repeat", position, naming=naming)
        return _call(scenario, view, draw, persona, position, fixing=True)
    if last is not None and last.kind == "action" and last.fault not in CALL_FAULTS:
        result = last_result(view.observations, last)
        said = prose(new_text(view, memory), view.tools | {s.tool for s in plan})
        if names_call(said, last, result):
            heard = "note"
            if draw.u_heed < persona.heed:
                return replace(
                    _next(scenario, view, draw, persona, position, heeding=True),
                    heard=heard,
                    heeded=True,
                )
        if draw.u_loop < repeat_rate(persona, memory, result):
            return Choice(replace(last, fault="repeat_previous"), "loop", position, heard)
    return replace(_next(scenario, view, draw, persona, position), heard=heard)


def _next(
    scenario: Scenario,
    view: PromptView,
    draw: Draw,
    persona: Persona,
    position: int,
    *,
    heeding: bool = False,
) -> Choice:
    """What the plan says next: the answer once every planned call is done, else a call (a
    turn that acts on a note is a fix: no fault is drawn on it)."""
    if position >= len(scenario.gold_actions):
        return _answer(scenario, view, draw, persona, position)
    return _call(scenario, view, draw, persona, position, fixing=heeding)


def new_text(view: PromptView, memory: Memory) -> str:
    """Lines this prompt has that the last one had not, without the model's own words."""
    fresh = [
        line
        for line in view.text.splitlines()
        if line.strip()
        and line.strip() not in memory.prompt_lines
        and not any(piece and piece in line for piece in memory.echo)
    ]
    return "\n".join(fresh)


def naming_lines(turn: Turn, view: PromptView, memory: Memory) -> frozenset[str]:
    """The lines that say what was wrong with this faulty call: new ones, or the ones that
    said it before if the prompt still shows them (an agent that shows the same error again
    and one that shows it once tell the model the same thing)."""
    fresh = new_text(view, memory)
    if names_problem(turn, fresh):
        return frozenset(line.strip() for line in fresh.splitlines())
    return frozenset(line for line in memory.naming if line in view.lines)


def names_problem(turn: Turn, text: str) -> bool:
    """The feedback says what was wrong with this faulty call."""
    folded = text.casefold()
    if not _ERROR_WORDS.search(folded):
        return False
    if turn.fault in ("missing_argument", "wrong_argument_name") and turn.problem_field:
        return turn.problem_field.casefold() in folded
    if turn.fault == "unknown_tool":
        intended = (turn.intended_tool or "").casefold()
        return (bool(intended) and intended in folded) or "tool" in folded
    if turn.fault in FORMAT_FAULTS:
        return any(word in folded for word in _FORMAT_WORDS)
    return False


def _call(
    scenario: Scenario,
    view: PromptView,
    draw: Draw,
    persona: Persona,
    position: int,
    fixing: bool,
) -> Choice:
    plan = scenario.gold_actions
    step = plan[position]
    if not view.offers(step.tool):
        return _final(
            scenario, answers.no_tool(scenario, step.tool, draw.u_word), "no_tool", position
        )
    move: Move = "fix" if fixing else "plan"
    arguments = dict(step.arguments)
    missing = missing_arguments(step, view)
    if missing and draw.u_invent < persona.invent_rate:
        arguments.update({k: invent(arguments[k]) for k in missing})
        move = "invent"
    elif missing:
        source = _requery_source(plan, position, view)
        if source is None:
            return _final(
                scenario, answers.ask_for(scenario, missing[0], draw.u_word), "ask", position
            )
        step, arguments, move = plan[source], dict(plan[source].arguments), "requery"
    thought = answers.thought_for_step(scenario, position + 1, len(plan))
    turn = Turn("action", thought, step.tool, arguments, intended_tool=step.tool)
    if fixing:
        return Choice(turn, move, position)
    kinds = applicable_faults(planned_call=True, has_arguments=bool(arguments))
    fault = pick_fault(persona.fault_rate, persona.fault_weights, draw, kinds)
    if fault is not None and not possible(fault, view.constraints):
        if fault in CALL_FAULTS and arguments and draw.u_shape < persona.constrained_cost:
            return Choice(constrained(turn), "constrained", position, prevented=fault)
        return Choice(turn, move, position, prevented=fault)
    if fault is None:
        return Choice(turn, move, position)
    return Choice(_faulty(scenario, turn, fault, draw, position), "fault", position)


def _requery_source(plan: list[ToolAction], position: int, view: PromptView) -> int | None:
    """The latest earlier planned call the model can make again with what it sees."""
    for index in range(position - 1, -1, -1):
        if not missing_arguments(plan[index], view):
            return index
    return None


def _faulty(scenario: Scenario, turn: Turn, fault: FaultKind, draw: Draw, position: int) -> Turn:
    """The planned call turned into ``fault`` (its shape is the renderer's job)."""
    arguments = dict(turn.arguments or {})
    base = replace(turn, fault=fault, shape=draw.u_shape)
    if fault == "premature_final":
        said = answers.premature(scenario, draw.u_word)
        return Turn("final", turn.thought, answer=said, fault=fault)
    if fault == "unknown_tool":
        return replace(base, tool=_near_miss(turn.tool or ""))
    if fault in ("missing_argument", "wrong_argument_name"):
        key = next(iter(arguments))
        value = arguments.pop(key)
        if fault == "wrong_argument_name":
            arguments[_wrong_name(key)] = value
        return replace(base, arguments=arguments, problem_field=key)
    return base


def _answer(
    scenario: Scenario,
    view: PromptView,
    draw: Draw,
    persona: Persona,
    position: int,
    *,
    may_call: bool = True,
) -> Choice:
    """The answer from the facts shown; a missing one is re-queried (when a call may be
    written) unless it is made up with ``invent_rate``."""
    plan = scenario.gold_actions
    facts = [output_fact(o, view, needs_context=bool(plan)) for o in scenario.required_outputs]
    move: Move = "answer"
    if any(f is None for f in facts):
        if draw.u_invent >= persona.invent_rate and plan and may_call:
            step = plan[-1]
            thought = answers.thought_for_step(scenario, len(plan), len(plan))
            turn = Turn("action", thought, step.tool, dict(step.arguments), intended_tool=step.tool)
            return Choice(turn, "requery", position)
        out = scenario.required_outputs
        facts = [f if f is not None else invented_fact(o) for f, o in zip(facts, out, strict=True)]
        move = "invent"
    subject = _subject(plan, view)
    stated = [f for f in facts if f and f != subject]
    text = answers.final_answer(scenario, stated, subject, draw.u_word)
    return _final(scenario, text, move, position)


def _final(scenario: Scenario, text: str, move: Move, position: int) -> Choice:
    return Choice(Turn("final", answers.thought_for_answer(scenario), answer=text), move, position)


def _subject(plan: list[ToolAction], view: PromptView) -> str | None:
    """The id the task is about (the first grounded, non-numeric argument shown), if any."""
    for step in plan:
        for value in step.arguments.values():
            text = str(value)
            if grounded(value) and not text.replace(".", "").isdigit() and visible(value, view):
                return text
    return None


def _near_miss(tool: str) -> str:
    """A plausible wrong name: the tool's name in camelCase (query_order -> queryOrder)."""
    head, *rest = tool.split("_")
    return head + "".join(part.capitalize() for part in rest) if rest else f"{tool}_tool"


def _wrong_name(key: str) -> str:
    """A plausible wrong argument name (order_id -> orderId, amount -> amount_value)."""
    head, *rest = key.split("_")
    return head + "".join(part.capitalize() for part in rest) if rest else f"{key}_value"
