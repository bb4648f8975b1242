"""Where the agents' ChatOpenAI points: the simulator, the embedded model, or any URL.

A backend gives each run a base URL and a model name. For the simulator the model name routes
the request to the run's session (``sim:<scenario>:<trial>:<agent>``) and the run's tool calls
are fed to that session; real backends see the configured model name and nothing else.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from types import TracebackType
from typing import Any, Literal, Protocol

from tether import TetherError

from tether_bench.instrument import ToolListener
from tether_bench.scenarios import Scenario
from tether_bench.simulator import (
    FAULT_KINDS,
    LatencyModel,
    Persona,
    Simulator,
    SimulatorServer,
    persona_from_spec,
)


@dataclass(frozen=True)
class Session:
    """What one run is told: where to send requests, under which model name."""

    base_url: str
    model: str
    listener: ToolListener | None = None


class Backend(Protocol):
    kind: str

    def start(self) -> None: ...
    def stop(self) -> None: ...
    def session(self, scenario_id: str, trial: int, agent: str) -> Session: ...
    def finish(self, session: Session) -> dict[str, Any]: ...
    def describe(self) -> dict[str, Any]: ...


class SimBackend:
    """The simulated model, served on 127.0.0.1 for the benchmark's duration."""

    kind = "sim"

    def __init__(
        self,
        scenarios: Iterable[Scenario],
        *,
        seed: int,
        persona: Persona | None = None,
        latency: LatencyModel | None = None,
    ) -> None:
        self.simulator = Simulator(scenarios, seed=seed, persona=persona, latency=latency)
        self.server = SimulatorServer(self.simulator)

    def start(self) -> None:
        self.server.start()

    def stop(self) -> None:
        self.server.stop()

    def session(self, scenario_id: str, trial: int, agent: str) -> Session:
        name = self.simulator.model_name(scenario_id, trial, agent)
        return Session(self.server.base_url, name)

    def finish(self, session: Session) -> dict[str, Any]:
        """The session's decisions (for the record), then forget it."""
        decisions = self.simulator.decisions(session.model)
        self.simulator.forget(session.model)
        return {
            "sim_faults": [d.fault for d in decisions],
            "sim_prevented": [d.prevented for d in decisions],
            "sim_decisions": [d.as_dict() for d in decisions],
        }

    def describe(self) -> dict[str, Any]:
        latency = self.simulator.latency
        return {
            "kind": self.kind,
            "seed": self.simulator.seed,
            "persona": self.simulator.persona.model_dump(mode="json"),
            "latency": {
                "base_s": latency.base_s,
                "per_prompt_token_s": latency.per_prompt_token_s,
                "per_output_token_s": latency.per_output_token_s,
            },
        }


class LocalBackend:
    """The embedded llama.cpp server with the bundled SmolLM2, started and stopped here."""

    kind = "local"

    def __init__(
        self, *, gguf: str | None = None, parallel: int = 1, ctx_per_slot: int = 8192
    ) -> None:
        from tether_local import EmbeddedServer

        self.server = EmbeddedServer(gguf, ctx_size=ctx_per_slot * parallel, parallel=parallel)

    def start(self) -> None:
        self.server.start()

    def stop(self) -> None:
        self.server.stop()

    def session(self, scenario_id: str, trial: int, agent: str) -> Session:
        return Session(self.server.base_url, self.server.model_name or "local")

    def finish(self, session: Session) -> dict[str, Any]:
        return {}

    def describe(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "model": self.server.model_name,
            "gguf": str(self.server.gguf_path),
            "threads": self.server.threads,
            "parallel": self.server.parallel,
            "ctx_size": self.server.ctx_size,
        }


class UrlBackend:
    """Any OpenAI-compatible server (vLLM); nothing is started."""

    kind = "url"

    def __init__(self, base_url: str, model: str) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise TetherError(f"backend must be sim, local or an http(s) URL, not {base_url!r}")
        self.base_url, self.model = base_url.rstrip("/"), model

    def start(self) -> None:
        return None

    def stop(self) -> None:
        return None

    def session(self, scenario_id: str, trial: int, agent: str) -> Session:
        return Session(self.base_url, self.model)

    def finish(self, session: Session) -> dict[str, Any]:
        return {}

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind, "base_url": self.base_url, "model": self.model}


class BackendContext:
    """``with BackendContext(backend):`` starts it and always stops it."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend

    def __enter__(self) -> Backend:
        self.backend.start()
        return self.backend

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.backend.stop()


@dataclass(frozen=True)
class BackendSpec:
    """A backend as plain data, so worker processes can each build their own."""

    kind: Literal["sim", "local", "url"]
    seed: int = 0
    persona: str = "strong"
    fault_rate: float | None = None
    fix_rate: float | None = None
    gguf: str | None = None
    """local: the GGUF file to serve (default: the bundled SmolLM2)."""
    disabled_faults: tuple[str, ...] = ()
    """sim: fault kinds switched off (weight 0; for ``repeat_previous``, the relapse
    traits 0), for the sensitivity table."""
    sim_latency: bool = True
    url: str | None = None
    model: str | None = None
    local_parallel: int = 2

    @classmethod
    def parse(cls, text: str, **options: Any) -> BackendSpec:
        """``sim``, ``local`` or an http(s) URL, as ``--backend`` takes it."""
        if text in ("sim", "local"):
            return cls(kind=text, **options)  # type: ignore[arg-type]
        if not text.startswith(("http://", "https://")):
            raise TetherError(f"backend must be sim, local or an http(s) URL, not {text!r}")
        return cls(kind="url", url=text, **options)

    def create(self, scenarios: Iterable[Scenario]) -> Backend:
        if self.kind == "sim":
            return SimBackend(
                scenarios,
                seed=self.seed,
                persona=self.simulated_persona(),
                latency=LatencyModel() if self.sim_latency else LatencyModel.instant(),
            )
        if self.kind == "local":
            return LocalBackend(gguf=self.gguf, parallel=self.local_parallel)
        from tether import AgentSettings

        default = str(AgentSettings.model_fields["model"].get_default())
        return UrlBackend(self.url or "", self.model or default)

    def simulated_persona(self) -> Persona:
        """The persona with this spec's overrides and the fault kinds left switched on."""
        unknown = set(self.disabled_faults) - set(FAULT_KINDS)
        if unknown:
            raise TetherError(f"unknown fault kinds {sorted(unknown)}; known: {FAULT_KINDS}")
        chosen = persona_from_spec(self.persona)
        weights = {
            k: 0.0 if k in self.disabled_faults else w for k, w in chosen.fault_weights.items()
        }
        relapse = {"repeat_after_success", "repeat_after_failure", "stickiness"}
        off = dict.fromkeys(relapse, 0.0) if "repeat_previous" in self.disabled_faults else {}
        return chosen.with_overrides(
            fault_rate=self.fault_rate, fix_rate=self.fix_rate, fault_weights=weights, **off
        )

    def as_url(self, running: Backend) -> BackendSpec:
        """A URL spec for a started local server, so worker processes share it."""
        if not isinstance(running, LocalBackend):
            raise TypeError("only a local backend is shared between worker processes")
        server = running.server
        return replace(self, kind="url", url=server.base_url, model=server.model_name or "local")
