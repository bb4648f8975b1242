"""What ``tether run`` prints: the run's story, read by someone who has never seen tether.

The command is spawned against the simulated model (its README scenario, the persona that
makes no mistakes of its own); the unhappy paths run the printer on a scripted model.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from tether import AgentSettings, ToolRegistry, build_graph, tool
from tether.testing import ScriptedChatModel, run_traced
from tether_bench.scenarios import load_scenarios
from tether_bench.simulator.core import LatencyModel, Simulator
from tether_bench.simulator.personas import PERFECT
from tether_bench.simulator.serve import README_SCENARIOS, serve_lines
from tether_bench.simulator.server import SimulatorServer
from tether_cli.console import TracePrinter

from tests.cli_helpers import tether

pytestmark = pytest.mark.slow  # spawns the command
TASK = "查询订单 ORD-2024-001 的状态并计算折扣"


@pytest.fixture(scope="module")
def simulated() -> Iterator[SimulatorServer]:
    scenarios = load_scenarios(README_SCENARIOS)
    simulator = Simulator(scenarios, persona=PERFECT, latency=LatencyModel(0, 0, 0))
    with SimulatorServer(simulator) as server:
        yield server


def _run(server: SimulatorServer, tmp: Path, tag: str, *extra: str) -> tuple[int, str]:
    model = server.simulator.model_name("readme-status-discount", 0, tag)
    args = ["run", "--base-url", server.base_url, "--model", model, "--protocol", "json_schema"]
    places = [
        "--tools",
        "demo",
        "--data-dir",
        str(tmp / "world"),
        "--store",
        str(tmp / "runs.sqlite"),
    ]
    done = tether(*args, *places, *extra, TASK)
    return done.returncode, " ".join(done.stdout.split())  # rich wraps long lines


def test_the_story_of_a_completed_run(simulated: SimulatorServer, tmp_path: Path) -> None:
    code, out = _run(simulated, tmp_path, "ok")
    assert code == 0, out
    for told in (
        "step 1",
        "model calls query_order",
        "loop the call fits the tool's schema: running it",
        "tool returned:",
        "loop step succeeded; next step",
        "model calls compute_discount",
        "model answers",
        "loop ends the run: final answer after 3 step(s)",
        "completed (answer): the model gave its final answer",
    ):
        assert told in out, (told, out)
    ended = out.index("completed (answer):")
    assert out.index("query_order") < out.index("compute_discount") < ended
    cost = re.search(r"cost 3 step\(s\), ([\d,]+) tokens \(([\d,]+) in, ([\d,]+) out\)", out)
    assert cost, out
    total, inp, outp = (int(x.replace(",", "")) for x in cost.groups())
    assert total == inp + outp > 0
    assert "2328.02" in out.split("answer", 3)[-1]  # the model's answer is shown


def test_a_run_cut_by_the_step_cap_says_so(simulated: SimulatorServer, tmp_path: Path) -> None:
    code, out = _run(simulated, tmp_path, "cap", "--max-steps", "1")
    assert code == 1, out
    assert "max_steps (step_cap): the step cap is reached (max_steps model calls)" in out
    assert "why step cap reached: 1 model calls without a final answer" in out
    assert "asks the model for its best answer, no tools" in out
    assert "answer was asked for at the cap" in out


def test_the_serve_lines_point_a_run_at_the_simulator(simulated: SimulatorServer) -> None:
    (line,) = serve_lines(simulated, ["readme-status-discount"])
    assert line == (
        f"TETHER_BASE_URL={simulated.base_url} TETHER_MODEL=sim:readme-status-discount:0:run"
    )


@tool
def query_order(order_id: str) -> str:
    """Look up an order."""
    return f"{order_id}: pending"


@tool(side_effects=True)
def cancel_order(order_id: str) -> str:
    """Cancel an order."""
    return f"{order_id}: cancelled"


def _story(replies: list[str], tools: list[Any] = [query_order], **settings: object) -> str:  # noqa: B006
    buffer = io.StringIO()
    printer = TracePrinter(Console(file=buffer, width=200, highlight=False, no_color=True))
    options = {"protocol": "json_schema", "small_model": True, **settings}
    model = ScriptedChatModel(responses=replies)
    graph = build_graph(AgentSettings(**options), model=model, registry=ToolRegistry(tools))
    _, trace = run_traced(graph, {"task": "status of ORD-2024-001?"})
    for event in trace:
        printer.event(event)
    return buffer.getvalue()


def _call() -> str:
    action = {"tool": "query_order", "arguments": {"order_id": "ORD-2024-001"}}
    return json.dumps({"action": action, "thought": "look"})


def test_unusable_replies_and_the_breaker_are_told() -> None:
    out = _story(["not json", "still not", "nope", "neither", "nor this"])
    assert out.count("model  wrote a reply the loop could not use") == 5  # the last at the cap
    assert "step failed (parse failure; 1 in a row): sends the model a note" in out
    assert "step failed (parse failure; 2 in a row): sends the model a note" in out
    assert "failed (breaker): too many steps failed in a row (the circuit breaker)" in out
    assert "step failed (parse failure; 3 in a row): sends the model a note" in out
    assert "why    circuit breaker: 4 consecutive failed steps" in out
    assert "asks the model for its best answer, no tools" in out
    assert "asked at the cap for an answer, the reply gave none" in out


def test_a_forced_final_answer_is_told_and_the_answer_is_the_models() -> None:
    final = json.dumps({"action": {"final_answer": "It is pending."}, "thought": "done"})
    out = _story([_call(), _call(), final])
    assert "the call already succeeded: not run again" in out
    assert "no tool offered this step, only a final answer" in out
    assert "answer It is pending." in " ".join(out.split())
    assert "completed (answer): the model gave its final answer" in out


def test_a_tool_listed_but_not_callable_is_told_with_its_reason() -> None:
    final = json.dumps({"action": {"final_answer": "pending"}, "thought": "done"})
    out = _story([_call(), final], tools=[query_order, cancel_order], approval_tools=[])
    first, second = out.split("step 2")
    assert "listed but not callable now: cancel_order: a write, and no read has succeeded" in first
    assert "not callable" not in second  # the read succeeded: the write is offered again
