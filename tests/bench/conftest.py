"""Shared fixtures for the benchmark tests: the repository's scenarios, worlds, a simulator."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tether_bench.scenarios import SCENARIO_PATH, Scenario, load_scenarios
from tether_bench.worlds import WorldFactory

REPO = Path(__file__).resolve().parents[2]
SCENARIO_FILE = SCENARIO_PATH


@pytest.fixture(scope="session")
def scenarios() -> list[Scenario]:
    return load_scenarios(SCENARIO_FILE)


@pytest.fixture(scope="session")
def by_id(scenarios: list[Scenario]) -> dict[str, Scenario]:
    return {s.id: s for s in scenarios}


@pytest.fixture(scope="session")
def worlds() -> Iterator[WorldFactory]:
    with WorldFactory() as factory:
        yield factory
