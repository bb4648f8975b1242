"""The notebooks run top to bottom with no server and no network, and show what they claim.

Each notebook is executed in a real kernel (as Jupyter would run it, figures inline) and its
key outputs are read back: statuses, amounts, the figures, and the trends the text describes.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

NOTEBOOKS = Path(__file__).parent.parent / "notebooks"


class Executed:
    """A notebook after execution: find a code cell by a piece of its source, read its outputs."""

    def __init__(self, name: str) -> None:
        # Imported here, not at collection: nbformat imports jsonschema, whose format
        # checkers build their grammars at import (over a second in every pytest worker).
        import nbformat
        from nbclient import NotebookClient

        book = nbformat.read(NOTEBOOKS / name, as_version=4)
        NotebookClient(
            book,
            timeout=300,
            kernel_name="python3",
            resources={"metadata": {"path": str(NOTEBOOKS)}},
            shutdown_kernel="immediate",  # every output is in; no need to wait for its exit
        ).execute()
        self.cells = [cell for cell in book.cells if cell.cell_type == "code"]

    def errors(self) -> list[Any]:
        return [o for c in self.cells for o in c.outputs if o.output_type == "error"]

    def cell(self, marker: str) -> Any:
        [found] = [cell for cell in self.cells if marker in cell.source]
        return found

    def text(self, marker: str) -> str:
        outputs = self.cell(marker).outputs
        return "".join(o.get("text", "") for o in outputs if o.output_type == "stream")

    def images(self, marker: str) -> int:
        outputs = self.cell(marker).outputs
        return sum("image/png" in o.get("data", {}) for o in outputs)


@pytest.fixture(scope="module")
def quickstart() -> Executed:
    return Executed("01_quickstart.ipynb")


@pytest.fixture(scope="module")
def loop_control() -> Executed:
    return Executed("02_loop_control.ipynb")


@pytest.fixture(scope="module")
def benchmark() -> Executed:
    return Executed("03_benchmark.ipynb")


def test_quickstart_runs_the_seed_flow_and_the_approval(quickstart: Executed) -> None:
    assert quickstart.errors() == []
    assert "pay_order" in quickstart.text("registry.names()")
    one_run = quickstart.text('run_traced(graph, {"task": SEED_TASK})').splitlines()
    assert one_run[0].startswith("completed - ")
    assert "2328.02" in one_run[1]  # the answer states the discounted amount
    approval = quickstart.text("agent.resume(")
    assert approval.startswith("waiting for: pay_order")
    assert "completed - " in approval
    assert "ORD-2024-001" in approval  # the approved payment is in the world's ledger


def test_loop_control_draws_its_figures_inline(loop_control: Executed) -> None:
    assert loop_control.errors() == []
    assert loop_control.images("plt.subplots(1, 3") == 1
    assert loop_control.images("plt.figure(figsize=(5, 3))") == 1


def test_loop_control_shows_the_trends_it_describes(loop_control: Executed) -> None:
    breaker = {}
    for line in loop_control.text("for breaker in").splitlines():
        threshold, counts = line.split(" ", 1)
        breaker[int(threshold)] = ast.literal_eval(counts)
    assert sorted(breaker) == [1, 2, 3, 4, 5]
    assert all(sum(c.values()) == 20 for c in breaker.values())  # RUNS runs per threshold
    # A breaker that opens sooner fails more runs.
    assert breaker[1].get("failed", 0) > breaker[5].get("failed", 0)

    partial = ast.literal_eval(loop_control.text("for budget in budgets"))
    shares = [partial[budget] for budget in sorted(partial)]
    assert shares == sorted(shares, reverse=True)  # more budget, never more partial runs
    assert shares[0] > shares[-1]

    per_call = [
        float(line.rsplit(" ", 1)[1]) for line in loop_control.text("for window in").splitlines()
    ]
    assert len(per_call) == 3
    assert per_call == sorted(per_call)  # larger windows, larger prompts


def test_benchmark_notebook_tabulates_and_draws_three_agents(benchmark: Executed) -> None:
    assert benchmark.errors() == []
    table = benchmark.text('metrics = data["metrics"]').splitlines()
    header = table[0].split()
    assert header[0] == "metric"
    assert set(header[1:]) == {"tether", "agent_executor", "create_agent"}
    success = [line for line in table if line.startswith("success_rate")]
    assert len(success) == 1
    assert all(0 <= float(v) <= 1 for v in success[0].split()[1:])
    assert benchmark.images("plt.subplots(1, 2") == 1
