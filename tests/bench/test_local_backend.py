"""The local backend's options, 0/N results, and tokens of calls cut by max_tokens."""

from __future__ import annotations

import uuid
from pathlib import Path

import openai
import pytest
from openai.types import CompletionUsage
from openai.types.chat import ChatCompletion
from tether_bench.backends import LocalBackend
from tether_bench.harness import Harness
from tether_bench.instrument import RunRecorder
from tether_bench.metrics import AgentMetrics, agent_metrics, wilson
from tether_bench.options import BenchOptions
from tether_bench.records import RunRecord, Verdict
from tether_bench.report import charts
from tether_bench.runner import RunPlan, plan_agents
from tether_bench.suite import backend_spec, run_plan


def test_the_gguf_path_reaches_the_embedded_server() -> None:
    options = BenchOptions(backend="local", gguf="/models/qwen.gguf")
    backend = backend_spec(options, seed=0, persona="strong").create([])
    assert isinstance(backend, LocalBackend)
    assert backend.server.gguf_path == Path("/models/qwen.gguf")


def test_the_protocol_reaches_tether_only() -> None:
    plan = RunPlan(agents=["tether"], scenarios=[], protocol="json_schema")
    make = plan_agents(plan)
    assert "json_schema" in make("tether").settings().output_repair
    assert make("agent_executor").settings().output_repair == "handle_parsing_errors"
    options = BenchOptions(protocol="native", step_cap=3)
    assert run_plan(options, []).protocol == "native"
    assert run_plan(options, []).harness == Harness(step_cap=3)
    with pytest.raises(ValueError):
        BenchOptions(protocol="xml")  # type: ignore[arg-type]


@pytest.mark.parametrize("n", [1, 7, 21, 63, 162, 486])
def test_wilson_bounds_are_exact_at_the_extremes(n: int) -> None:
    assert wilson(0, n)[0] == 0.0 and wilson(0, n)[1] > 0
    assert wilson(n, n)[1] == 1.0 and wilson(n, n)[0] < 1


def _failed_metrics(n: int) -> AgentMetrics:
    runs = [
        RunRecord(
            agent="a",
            scenario_id=f"s{i}",
            category="db",
            termination="completed",
            wall_s=1.0,
            verdict=Verdict(passed=False, failures=["x"]),
        )
        for i in range(n)
    ]
    return agent_metrics("a", runs)


def test_a_zero_of_n_result_draws_its_chart(tmp_path: Path) -> None:
    metrics = _failed_metrics(63)
    assert metrics.success_rate == 0.0 and metrics.success_ci95[0] == 0.0
    written = charts({"a": metrics}, tmp_path)
    assert tmp_path / "success.png" in written


def test_a_call_cut_by_max_tokens_counts_its_tokens() -> None:
    completion = ChatCompletion(
        id="x",
        choices=[],
        created=0,
        model="m",
        object="chat.completion",
        usage=CompletionUsage(prompt_tokens=900, completion_tokens=512, total_tokens=1412),
    )
    recorder = RunRecorder()
    run_id = uuid.uuid4()
    recorder.on_chat_model_start({}, [[]], run_id=run_id)
    try:
        raise RuntimeError("parse failed") from openai.LengthFinishReasonError(
            completion=completion
        )
    except RuntimeError as exc:
        recorder.on_llm_error(exc, run_id=run_id)
    (call,) = recorder.model_calls
    assert (call.input_tokens, call.output_tokens, call.total_tokens) == (900, 512, 1412)
    assert call.error is not None and call.usage_reported
    recorder.on_llm_error(RuntimeError("connection refused"), run_id=uuid.uuid4())
    assert recorder.model_calls[-1].total_tokens == 0
