"""Model profiles: what a step offers the model, how the prompt shows a tool result and the
temperature a call samples at, decided for one kind of model.

The loop asks the profile in force (:func:`profile_for`) at each step. With none
(:class:`NoProfile`), a step lists the ``offered_tools`` best matches for the task (every
tool when unset), withholds none and limits no id, results show up to ``result_chars``
characters and calls sample at the state's temperature. The small-model profile (the
``small_model`` setting, on for the embedded model) is tether-local's: it registers it as
the ``small`` entry point of the ``tether.model_profiles`` group, as it registers the
embedded model's server.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from importlib.metadata import entry_points
from typing import Any, Protocol

from langchain_core.tools import BaseTool

from tether.decisions.toolpick import select_tools
from tether.extras import MissingExtraError, missing_modules
from tether.memory.render import ResultView
from tether.settings import AgentSettings
from tether.state import AgentState

Grounded = tuple[tuple[str, tuple[str, ...]], ...]
"""Per id pattern, the ids the context holds (hashable, so an offer can be a cache key)."""


class ModelProfile(Protocol):
    """What a model profile decides at each step; the model still writes every call and
    every answer itself."""

    def offered_tools(
        self, state: AgentState, tools: Sequence[BaseTool], settings: AgentSettings
    ) -> list[BaseTool]:
        """The registered ``tools`` this step lists, in the order the prompt lists them."""
        ...

    def grounded_ids(
        self, state: AgentState, tools: Sequence[BaseTool], settings: AgentSettings
    ) -> Grounded:
        """For id patterns of the listed ``tools``' arguments, the only ids they may take."""
        ...

    def withheld(
        self,
        state: AgentState,
        tools: Sequence[BaseTool],
        settings: AgentSettings,
        grounded: Grounded,
    ) -> dict[str, str]:
        """The listed ``tools`` the model may not call at this step, and why."""
        ...

    def final_only(self, state: AgentState, settings: AgentSettings) -> bool:
        """Whether this step offers only the final answer."""
        ...

    def stray_ids(self, arguments: Any, grounded: Grounded) -> list[str]:
        """The values in a call's arguments that ``grounded`` does not allow (the gate
        refuses the call)."""
        ...

    def result_view(self, settings: AgentSettings) -> ResultView:
        """How the prompt shows one tool result."""
        ...

    def sampling_temperature(self, state: AgentState, settings: AgentSettings) -> float:
        """The temperature of this step's model call."""
        ...


class NoProfile:
    """The loop with no profile, as the module docstring describes it."""

    def offered_tools(
        self, state: AgentState, tools: Sequence[BaseTool], settings: AgentSettings
    ) -> list[BaseTool]:
        used = {entry["tool"] for entry in state.get("tool_buffer", [])}
        return select_tools(tools, state.get("task", ""), settings.offered_tools, used)

    def grounded_ids(
        self, state: AgentState, tools: Sequence[BaseTool], settings: AgentSettings
    ) -> Grounded:
        return ()

    def withheld(
        self,
        state: AgentState,
        tools: Sequence[BaseTool],
        settings: AgentSettings,
        grounded: Grounded,
    ) -> dict[str, str]:
        return {}

    def final_only(self, state: AgentState, settings: AgentSettings) -> bool:
        return False

    def stray_ids(self, arguments: Any, grounded: Grounded) -> list[str]:
        return []

    def result_view(self, settings: AgentSettings) -> ResultView:
        return ResultView(chars=settings.result_chars)

    def sampling_temperature(self, state: AgentState, settings: AgentSettings) -> float:
        return state.get("next_temperature", settings.temperature)


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
