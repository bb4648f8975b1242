"""What one step offers the model, decided in one place: :func:`step_offer`.

The tools listed, which of them the model may not call now and why, whether only the final
answer is offered, which values an argument may take and which facts an answer picks among.
The model profile in force (:mod:`tether.decisions.profile`: the small-model profile, or
none) decides each of these; with none a step lists every registered tool (or the
``offered_tools`` best matches) and withholds none. The output protocols
(``tether.llm.protocols``) turn an :class:`Offer` into a prompt, a schema or tool bindings;
they decide nothing about it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from langchain_core.tools import BaseTool

from tether.decisions.final_check import first_lookup
from tether.decisions.profile import NO_PROFILE, Grounded, ModelProfile, profile_for
from tether.settings import AgentSettings
from tether.state import AgentState


@dataclass(frozen=True)
class Offer:
    """What one step offers the model: these tools listed, under the small-model profile or
    not; ``withheld`` of them (or all, ``final_only``) listed but not callable, so the prompt
    stays the same and the server's prompt cache holds; ``grounded`` limits id arguments to
    the ids the context holds, ``held`` an argument named there to the values listed for it
    (and asks for it), and ``facts`` are what a final answer picks among instead of writing
    text, one of each group in turn, joined (json_schema only: the other protocols cannot
    constrain values)."""

    tools: tuple[BaseTool, ...]
    small: bool = False
    final_only: bool = False
    grounded: Grounded = ()
    withheld: tuple[tuple[str, str], ...] = ()
    """(tool name, why) for each listed tool the model may not call at this step."""
    held: Grounded = ()
    facts: tuple[tuple[str, ...], ...] = ()
    calls_only: bool = False
    """No final answer is offered: the task names something a tool can look up and nothing
    has run yet (:func:`look_first`), or the profile says so."""
    profile: ModelProfile = field(default=NO_PROFILE, compare=False, repr=False)
    """The profile that decided this offer: it checks a call's ids against ``grounded``."""

    @property
    def callable(self) -> tuple[BaseTool, ...]:
        """The tools the model may call at this step."""
        if self.final_only:
            return ()
        names = {name for name, _ in self.withheld}
        return tuple(tool for tool in self.tools if tool.name not in names)

    def refusal(self, tool: BaseTool | None, arguments: Any) -> str | None:
        """Why the gate refuses a call (None: this offer allows it): the limits the step's
        schema carries, held here too for a server that ignores the schema."""
        if tool is None:
            return None  # an unknown tool fails as such when it is run
        withheld = dict(self.withheld)
        if tool.name in withheld or self.final_only:
            why = withheld.get(tool.name, "only a final answer is offered")
            return f"is not callable at this step: {why}"
        if tool.name not in {t.name for t in self.tools}:
            return "is not offered at this step"
        stray = self.profile.stray_ids(arguments, self.grounded)
        held, items = dict(self.held), arguments.items() if isinstance(arguments, dict) else ()
        stray += [str(v) for k, v in items if k in held and str(v) not in held[k]]
        return f"names values no task or successful result holds: {stray}" if stray else None


def step_offer(state: AgentState, tools: Sequence[BaseTool], settings: AgentSettings) -> Offer:
    """What this step offers the model, from the state, the registered tools and the settings."""
    profile = profile_for(settings)
    offered = tuple(profile.offered_tools(state, tools, settings))
    draft = Offer(offered, settings.small_profile, bool(state.get("closing")), profile=profile)
    offer = profile.refine(draft, state, tools, settings)
    final_only = offer.final_only or draft.final_only  # a cap's last answer: the loop's call
    calls_only = offer.calls_only or look_first(state, offer.callable, settings)
    return replace(offer, final_only=final_only, calls_only=calls_only and not final_only)


def look_first(state: AgentState, tools: Sequence[BaseTool], settings: AgentSettings) -> bool:
    """Offer no final answer: nothing has run, and the task names something one of the
    callable ``tools`` can look up (the final-answer check's rule (a), which would send an
    answer given now back anyway). A call costs less than an answer sent back, and the model
    still chooses the call."""
    on = settings.small_profile if settings.look_first is None else settings.look_first
    if not on or state.get("tool_buffer") or state.get("sent_back"):
        return False
    return first_lookup(state.get("task", ""), tools) is not None
