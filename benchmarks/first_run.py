"""A newcomer's first run: ``tether run --tools demo`` on the embedded model (SmolLM2-135M,
the small-model profile), how often it ends right and how long it takes.

Three tasks: ``make run``'s and a status question in English and in Chinese. Each run is a
separate ``tether run --json`` process with a fresh data dir and run store, as on a new clone.
A run is right when it ends ``completed`` and its answer states every expected figure, taken
from a freshly seeded demo world through its own tools (not written here): the order's status
and, for ``make run``'s task, the discount. Wall time is the whole process (start-up and the
model's load included), as a newcomer waits for it; CPU time (user and system, of the process
and its children) is printed beside it, since wall time on a shared machine says as much about
the other processes as about tether. ``uptime``'s load is printed first.

    uv run python benchmarks/first_run.py [--runs 5] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from tether_world import World

TASKS = {
    "make_run": ("查询订单 ORD-2024-001 的状态并计算折扣", "ORD-2024-001", True),
    "status_en": ("What is the status of order ORD-2024-003?", "ORD-2024-003", False),
    "status_zh": ("订单 ORD-2024-003 的状态是什么？", "ORD-2024-003", False),
}
"""name: (task, the order it asks about, whether the discount is asked too)."""


def expected(order_id: str, discount: bool) -> list[str]:
    """The figures a right answer states, from the seeded world's own tools."""
    with tempfile.TemporaryDirectory() as tmp:
        world = World.create(tmp)
        tools = {tool.name: tool for tool in world.tools()}
        order = _data(tools["query_order"].invoke({"order_id": order_id}))
        figures = [order["status"]]
        if discount:
            args = {k: order[k] for k in ("subtotal", "member_tier", "coupon_code")}
            figures.append(_data(tools["compute_discount"].invoke(args))["discount"])
        world.close()
    return figures


def _data(result: Any) -> Any:
    return json.loads(result) if isinstance(result, str) else result


def _cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def run_once(task: str) -> tuple[dict[str, Any], float]:
    """One ``tether run --json`` on a fresh data dir and store: its JSON and wall seconds
    (its CPU seconds under ``cpu_s``)."""
    with tempfile.TemporaryDirectory() as tmp:
        command = ["tether", "run", "--tools", "demo", "--json", "--data-dir", tmp]
        command += ["--store", str(Path(tmp) / "runs.sqlite"), task]
        start, cpu = time.perf_counter(), _cpu()
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        wall, cpu = time.perf_counter() - start, _cpu() - cpu
    try:
        record = json.JSONDecoder().raw_decode(done.stdout, max(done.stdout.find("{"), 0))[0]
    except json.JSONDecodeError:
        record = {}
    record.setdefault("status", f"error (exit {done.returncode})")
    said = [
        e["detail"].get("answer") for e in record.get("trace", []) if e["event"] == "model_call"
    ]
    record["said"] = next((answer for answer in reversed(said) if answer), None)
    record["cpu_s"] = round(cpu, 1)
    return record, wall


def right(record: dict[str, Any], figures: list[str]) -> bool:
    answer = record.get("answer") or ""
    return record["status"] == "completed" and all(figure in answer for figure in figures)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="one JSON line per task")
    options = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}, {os.cpu_count()} cores", flush=True)
    for name, (task, order_id, discount) in TASKS.items():
        figures = expected(order_id, discount)
        outcomes = [run_once(task) for _ in range(options.runs)]
        walls = [wall for _, wall in outcomes]
        row = {
            "task": name,
            "expected": figures,
            "right": sum(right(record, figures) for record, _ in outcomes),
            "runs": options.runs,
            "median_s": round(statistics.median(walls), 1),
            "median_cpu_s": round(statistics.median(r["cpu_s"] for r, _ in outcomes), 1),
            "outcomes": [
                [
                    record["status"],
                    record.get("cause"),
                    record["said"],
                    round(wall, 1),
                    record["cpu_s"],
                ]
                for record, wall in outcomes
            ],
        }
        if options.json:
            print(json.dumps(row, ensure_ascii=False), flush=True)
            continue
        print(
            f"{name}: {row['right']}/{row['runs']} right, median {row['median_s']} s wall, "
            f"{row['median_cpu_s']} s CPU"
        )
        print(f"  task {task!r}, expected {figures}")
        for status, cause, said, wall, cpu in row["outcomes"]:
            print(f"  {status} ({cause}) {wall} s ({cpu} s CPU), the model's answer: {said!r}")
        print(f"load average {os.getloadavg()[0]:.2f}", flush=True)


if __name__ == "__main__":
    main()
