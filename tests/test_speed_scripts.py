"""The speed scripts the README quotes still run, on a small shape, as a user runs them.

Their figures are never asserted here (this machine is shared and noisy); what is checked is
what holds at any speed: every agent runs to the end, and async runs overlap their waits.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.bench]

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def script(name: str, *args: str) -> dict:
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / name), *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_concurrent_runs_of_every_agent_overlap_their_model_waits() -> None:
    shape = ("--runs", "4", "--steps", "2", "--latency", "0.2")
    report = script("concurrency.py", "--repeats", "1", *shape)
    agents = {"tether (native)", "create_agent", "bare langgraph loop", "langgraph alone"}
    assert agents <= set(report)
    for agent in agents:
        # 4 runs of two 200 ms waits: one after another they'd take 4x one run's time, so an
        # overlap near 1 would mean a node blocks the event loop. The wait is long enough
        # that a loaded machine's slower steps still leave the overlap well above 2.
        assert report[agent]["overlap"] > 2, (agent, report[agent])


def test_cpu_per_step_runs_every_agent_to_its_last_step() -> None:
    report = script("loop_overhead.py", "--only", "cpu", "--repeats", "1")["cpu_per_step"]
    medians = report["ms_per_step_median"]
    expected = {"tether (native)", "create_agent", "langgraph prebuilt"}
    assert expected | {"tether (react)", "AgentExecutor"} == set(medians)
    assert all(value > 0 for value in medians.values())


def test_cpu_per_step_with_tethers_middleware_runs_every_agent_to_the_answer() -> None:
    args = ("--repeats", "1", "--runs", "1", "--unchecked", "--layered", "--json")
    report = script("middleware_overhead.py", *args)
    medians = report["ms_per_step_median"]
    stock, tether = "create_agent + stock middleware", "create_agent + tether_middleware"
    layered = f"{stock} + two empty tool hooks"
    assert set(medians) == {"create_agent", stock, tether, f"{tether}, check_final off", layered}
    assert all(value > 0 for value in medians.values()) and report["ratio"] > 0
    assert report["ratio_unchecked"] > 0 and report["ratio_layered"] > 0
    assert set(report["user_system_ms_per_step_mean"]) == set(medians)
    assert set(report["page_faults_per_step"]) == set(medians)


def test_callgrind_counts_only_the_runs_of_each_agent(monkeypatch: pytest.MonkeyPatch) -> None:
    """``--instructions`` (valgrind is not needed here): the counting goes on after the
    warm-up run and off after the last counted run, for each agent it compares."""
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    overhead = importlib.import_module("middleware_overhead")
    invoke, events = overhead.invoke, []
    monkeypatch.setattr(overhead, "invoke", lambda agent: events.append("run") or invoke(agent))
    for name in overhead.COUNTED:
        events.clear()
        overhead.counted_runs(name, 2, switch=events.append)
        assert events == ["run", "on", "run", "run", "off"]
    assert overhead.instructions_in("==7== Collected : 92827501\n") == 92827501
    one_thread = "thread: 1\nsummary: 0\nfn=(1) main\n16 3\ntotals: 68313\n"  # a counts file
    assert overhead.instructions_in(one_thread, r"^totals: (\d+)") == 68313
    with pytest.raises(RuntimeError, match="no count"):
        overhead.instructions_in("valgrind: command not found")


def test_the_real_runs_script_gives_every_agents_row_on_the_fixtures() -> None:
    fixtures = BENCHMARKS.parent / "tests" / "replay" / "fixtures"
    rows = script(
        "real_runs.py",
        str(fixtures / "real_runs.jsonl.gz"),
        "--tools",
        str(fixtures / "real_tools.json"),
        "--limit",
        "12",
        "--json",
    )
    agents = [row["agent"] for row in rows]
    assert agents[:2] == ["tether loop", "tether middleware"] and len(agents) == 4
    assert all(0 <= row["stopped_ok"] <= 100 for row in rows)
    assert rows[2]["sent_back_ok"] is None  # the peers have no such check
