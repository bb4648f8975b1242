"""Model profiles: what a step offers the model, how the prompt shows a tool result, the
temperature a call samples at and whether an answer states nothing the run found, decided
for one kind of model.

The loop asks the profile in force (:func:`profile_for`) at each step. With none
(:class:`NoProfile`), a step lists the ``offered_tools`` best matches for the task (every
tool when unset), withholds none and limits no value, results show up to ``result_chars``
characters, calls sample at the state's temperature and every answer is taken. The
small-model profile (the ``small_model`` setting, on for the embedded model) is
tether-local's: it registers it as the ``small`` entry point of the
``tether.model_profiles`` group, as it registers the embedded model's server.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any, Protocol

from langchain_core.tools import BaseTool

from tether.decisions.toolpick import select_tools
from tether.extras import MissingExtraError, missing_modules
from tether.memory.render import ResultView
from tether.settings import AgentSettings
from tether.state import AgentState

if TYPE_CHECKING:
    from tether.decisions.offer import Offer

Grounded = tuple[tuple[str, tuple[str, ...]], ...]
"""Per id pattern, the ids the context holds (hashable, so an offer can be a cache key)."""


class ModelProfile(Protocol):
    """What a model profile decides at each step; the model still writes every call and
    every answer itself. Each body here is the loop's without a profile (:class:`NoProfile`)."""

    def offered_tools(
        self, state: AgentState, tools: Sequence[BaseTool], settings: AgentSettings
    ) -> list[BaseTool]:
        """The registered ``tools`` this step lists, in the order the prompt lists them."""
        used = {entry["tool"] for entry in state.get("tool_buffer", [])}
        return select_tools(tools, state.get("task", ""), settings.offered_tools, used)

    def stray_ids(self, arguments: Any, grounded: Grounded) -> list[str]:
        """The values in a call's arguments that ``grounded`` does not allow (the gate
        refuses the call)."""
        return []

    def result_view(self, settings: AgentSettings) -> ResultView:
        """How the prompt shows one tool result."""
        return ResultView(chars=settings.result_chars)

    def sampling_temperature(self, state: AgentState, settings: AgentSettings) -> float:
        """The temperature of this step's model call."""
        return state.get("next_temperature", settings.temperature)

    def refine(
        self, offer: Offer, state: AgentState, tools: Sequence[BaseTool], settings: AgentSettings
    ) -> Offer:
        """The step's ``offer`` (its listed tools, and ``final_only`` at a cap) with what the
        profile decides of the rest (:class:`~tether.decisions.offer.Offer`'s fields): the ids
        and values an argument may take, the tools withheld and why, no answer or only the
        answer, the facts an answer picks among. ``tools`` are every registered one."""
        return offer

    def unbacked(self, state: AgentState, answer: str, tools: Sequence[BaseTool]) -> bool:
        """Whether a final answer the check took states nothing the run found: the run ends
        ``failed`` (cause ``unbacked``), the answer dropped."""
        return False


class NoProfile(ModelProfile):
    """The loop with no profile, as the module docstring describes it."""


NO_PROFILE: ModelProfile = NoProfile()


def profile_for(settings: AgentSettings) -> ModelProfile:
    """The profile in force: the small-model profile when ``settings.small_profile``."""
    return small_profile() if settings.small_profile else NO_PROFILE


@functools.cache
def small_profile() -> ModelProfile:
    """The small-model profile, from tether-local's ``tether.model_profiles`` entry point
    (looked up once: the metadata of every installed package is read)."""
    found = entry_points(group="tether.model_profiles", name="small")
    if not found or missing_modules("tether_local"):
        raise MissingExtraError(
            "the small-model profile (the small_model setting, on for the embedded model) "
            "needs the 'local' extra (tether-local): pip install 'tether[local]'"
        )
    profile: ModelProfile = next(iter(found)).load()
    return profile
