"""Fixtures for the contract tests: a vLLM-shaped stub server per test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.contract.vllm_stub import RunningStub, StubConfig, serve_stub


@pytest.fixture
def stub() -> Iterator[RunningStub]:
    """A well-behaved vLLM stub: usage reported, /tokenize available."""
    with serve_stub(StubConfig()) as running:
        yield running


@pytest.fixture
def stub_without_usage() -> Iterator[RunningStub]:
    """A server that never reports usage, streamed or not."""
    with serve_stub(StubConfig(usage=False)) as running:
        yield running


@pytest.fixture
def stub_without_tokenize() -> Iterator[RunningStub]:
    """A server whose /tokenize answers 404."""
    with serve_stub(StubConfig(tokenize=False)) as running:
        yield running
