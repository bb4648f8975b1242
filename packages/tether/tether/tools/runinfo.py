"""What a tool may learn about the run that calls it."""

from __future__ import annotations

from langchain_core.runnables import RunnableConfig

RUN_ID_KEY = "tether_run_id"


def run_config(run_id: str) -> RunnableConfig:
    """The config tether passes to every tool call of a run."""
    return {"configurable": {RUN_ID_KEY: run_id}}


def run_id_from(config: RunnableConfig | None) -> str | None:
    """The id of the tether run calling a tool (stable across resume), if any.

    A tool that declares a ``config: RunnableConfig`` parameter receives it; side-effecting
    tools derive idempotency keys from it so a retried or resumed run never repeats an effect.
    """
    if not config:
        return None
    value = config.get("configurable", {}).get(RUN_ID_KEY)
    return str(value) if value is not None else None
