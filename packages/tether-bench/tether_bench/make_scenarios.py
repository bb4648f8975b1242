"""Generate the shipped scenario file from the seeded world, so every gold argument is real.

Each template (:mod:`tether_bench.gen`) executes its plan on a fresh world while it builds a
scenario: arguments of later steps come from earlier results (the payable amount from
compute_discount, the payment id from query_order), and required outputs come from what the
tools answered. The file is then re-read and every scenario replayed by the gold agent, which
must pass them all.

    uv run python -m tether_bench.make_scenarios            # rewrite the file and the schema
    uv run python -m tether_bench.make_scenarios --check    # fail if either is out of date
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from tether_bench.gen import api, calc, conversations, db, families, fault, fixed, multi, policy
from tether_bench.gen.base import Generator
from tether_bench.scenarios import (
    SCENARIO_PATH,
    SCHEMA_PATH,
    Scenario,
    dump_scenarios,
    load_scenarios,
    render_schema,
)
from tether_bench.worlds import WorldFactory

TEMPLATES = (
    *db.TEMPLATES,
    *api.TEMPLATES,
    *calc.TEMPLATES,
    *multi.TEMPLATES,
    *fault.TEMPLATES,
    *fixed.TEMPLATES,
    *families.TEMPLATES,
    *policy.TEMPLATES,
    *conversations.TEMPLATES,
)
"""In this order: the templates share one generator's draws."""


def build(worlds: WorldFactory) -> list[Scenario]:
    generator = Generator(worlds)
    for template in TEMPLATES:
        template(generator)
    return generator.scenarios


def verify(path: Path) -> None:
    """Re-read the file and replay every scenario with the gold agent: all must pass."""
    from tether_bench.backends import UrlBackend
    from tether_bench.runner import RunPlan, run_benchmark

    scenarios = load_scenarios(path)
    result = run_benchmark(
        RunPlan(agents=["gold"], scenarios=scenarios, concurrency=2, progress=False),
        UrlBackend("http://127.0.0.1:9/v1", "unused"),
    )
    failed = [r for r in result.records if not (r.verdict and r.verdict.passed)]
    if failed:
        reasons = [f"{r.scenario_id}: {r.verdict.failures if r.verdict else '?'}" for r in failed]
        raise SystemExit("gold replay failed: " + "; ".join(reasons))


def stale_files(out: Path, text: str) -> list[Path]:
    return [
        p
        for p, want in ((out, text), (SCHEMA_PATH, render_schema()))
        if not p.exists() or p.read_text(encoding="utf-8") != want
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=SCENARIO_PATH)
    parser.add_argument("--check", action="store_true", help="Fail if the files are out of date.")
    args = parser.parse_args(argv)
    with WorldFactory() as worlds:
        scenarios = build(worlds)
    tmp = args.out.with_suffix(".jsonl.new")
    dump_scenarios(scenarios, tmp)
    text = tmp.read_text(encoding="utf-8")
    if args.check:
        tmp.unlink()
        if stale := stale_files(args.out, text):
            print(
                f"out of date: {', '.join(map(str, stale))}; "
                "run python -m tether_bench.make_scenarios",
                file=sys.stderr,
            )
            return 1
        return 0
    tmp.replace(args.out)
    SCHEMA_PATH.write_text(render_schema(), encoding="utf-8")
    verify(args.out)
    counts = dict(Counter(s.category for s in scenarios))
    print(f"wrote {len(scenarios)} scenarios to {args.out} ({counts}); gold replay 100%")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
