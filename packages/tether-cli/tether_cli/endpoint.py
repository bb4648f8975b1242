"""What a saved run remembers of how it ran: endpoint, model, protocol and toolset.

A resume that left these flags out used to continue on whatever the environment said (often
the embedded model), silently. The run now keeps them in its checkpoints' metadata (LangGraph
writes a run's config metadata into every checkpoint it saves), next to the run itself in
the same store. A resume takes them when its flags are left out, and refuses a flag that
would change them unless ``--switch-model`` is given. Never a secret: an API key is not a
field here, and a password in the base URL is kept as ``***``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from tether import TetherError
from tether.dburl import redacted

from tether_cli.locations import password_not_kept

if TYPE_CHECKING:
    from tether import Agent, AgentSettings
    from tether.control import RunStore

    from tether_cli.run_options import RunOptions

PREFIX = "tether_"
FIELDS = ("base_url", "model", "protocol", "tools")
FLAGS = {"base_url": "--base-url", "model": "--model", "protocol": "--protocol", "tools": "--tools"}


@dataclass(frozen=True)
class Endpoint:
    """Where a run's model calls go and with which tools; ``base_url`` None: embedded model."""

    base_url: str | None
    model: str
    protocol: str
    tools: str | None

    @classmethod
    def of(cls, settings: AgentSettings, tools: str | None) -> Endpoint:
        """The endpoint a run with these settings and toolset uses."""
        base_url = None if settings.base_url is None else redacted(settings.base_url)
        return cls(base_url, settings.model, settings.protocol_name, tools)

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, Any]) -> Endpoint | None:
        """The endpoint a checkpoint's metadata remembers; None when it remembers none."""
        if not isinstance(metadata.get(PREFIX + "model"), str):
            return None
        values = {name: str(metadata.get(PREFIX + name) or "") for name in FIELDS}
        return cls(
            values["base_url"] or None, values["model"], values["protocol"], values["tools"] or None
        )

    def metadata(self) -> dict[str, str]:
        """The checkpoint metadata that remembers this endpoint ("" for none)."""
        return {PREFIX + name: value or "" for name, value in asdict(self).items()}

    def describe(self) -> str:
        where = f"model {self.model} at {self.base_url}" if self.base_url else "the embedded model"
        return f"{where}, protocol {self.protocol}, toolset {self.tools or 'none'}"


def remembered(store: RunStore, thread: str) -> Endpoint | None:
    """The endpoint the newest checkpoint of ``thread`` that remembers one holds."""
    config: Any = {"configurable": {"thread_id": thread}}
    for item in store.checkpointer.list(config):
        found = Endpoint.from_metadata(item.metadata or {})
        if found is not None:
            return found
    return None


def resumed(options: RunOptions, saved: Endpoint, known_url: str | None = None) -> RunOptions:
    """``options`` with the saved endpoint where a flag is left out.

    A flag that differs from what the run remembers is refused (one line, exit 2) unless
    ``--switch-model`` is given: a run that pays on one model should not go on on another
    by accident. A saved base URL's password is not kept: the URL then comes from
    ``known_url`` (``TETHER_BASE_URL``) when it is the same but for the password.
    """
    given = {name: getattr(options, name) for name in FIELDS if getattr(options, name) is not None}
    changed = [name for name, value in given.items() if shown(name, value) != getattr(saved, name)]
    if changed and not options.switch_model:
        flags = ", ".join(f"{FLAGS[name]} {given[name]}" for name in changed)
        raise TetherError(
            f"run {options.thread} was saved with {saved.describe()}; {flags} would change it "
            "(add --switch-model to resume on it anyway)"
        )
    update = {name: getattr(saved, name) for name in FIELDS if name not in given}
    if "base_url" in update and password_not_kept(saved.base_url):
        if known_url is None or redacted(known_url) != saved.base_url:
            raise TetherError(
                f"run {options.thread} was saved with the model at {saved.base_url}, whose "
                "password tether does not keep: give its URL in TETHER_BASE_URL (or --base-url)"
            )
        update["base_url"] = known_url
    return options.model_copy(update=update)


def shown(name: str, value: str) -> str:
    """A flag's value as a run remembers it (a base URL's password as ``***``)."""
    return redacted(value) if name == "base_url" else value


def settings_overrides(options: RunOptions, saved: Endpoint | None) -> dict[str, Any]:
    """The settings overrides of ``options``; a run saved on the embedded model stays on it
    whatever ``TETHER_BASE_URL`` says."""
    overrides = options.settings_overrides()
    if saved is not None and saved.base_url is None and options.base_url is None:
        overrides["base_url"] = None
    return overrides


def applied(
    options: RunOptions, settings: AgentSettings, store: RunStore
) -> tuple[RunOptions, AgentSettings, Endpoint]:
    """The options and settings a run goes on with (a resume's: the saved endpoint's where
    its flags are left out), and the endpoint it is to remember."""
    saved = None if options.task is not None else remembered(store, options.thread)
    if saved is not None:
        options = resumed(options, saved, settings.base_url)
        settings = settings.with_overrides(settings_overrides(options, saved))
    endpoint = Endpoint.of(settings, options.tools)
    shown = {"base_url": endpoint.base_url, "model": endpoint.model, "protocol": endpoint.protocol}
    return options.model_copy(update=shown), settings, endpoint


def remember(agent: Agent, endpoint: Endpoint) -> Agent:
    """``agent``, its runs' checkpoints remembering ``endpoint`` (LangGraph copies a run's
    config metadata into each checkpoint's)."""
    agent.graph = agent.graph.with_config(metadata=endpoint.metadata())
    return agent
