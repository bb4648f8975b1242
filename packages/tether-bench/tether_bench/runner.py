"""Run every (scenario, trial, agent) on a fresh world, judge it, and collect the records.

Runs go through a thread pool; agents are interleaved (scenario by scenario) so that they run
under the same load. Results do not depend on scheduling: each run has its own world and its
own simulator session, and the simulator's faults depend only on the seed, the scenario, the
trial and the call index. Records come back in (agent, scenario, trial) order, and the
metrics are computed in that order too, never in the order the runs happened to finish.
Wall-clock figures are measured (``wall_s``, each call's start and end) but decide nothing:
see :data:`tether_bench.report.TIMING_FIELDS` for where they are in results.json.
"""

from __future__ import annotations

import multiprocessing
import queue
import random
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field, replace
from typing import Any

import httpx

from tether_bench.agents import BenchAgent, ChatSettings, make_agent
from tether_bench.backends import Backend, BackendContext, BackendSpec
from tether_bench.harness import Harness
from tether_bench.judge import Judge
from tether_bench.metrics import AgentMetrics, all_metrics
from tether_bench.records import RunRecord, Verdict
from tether_bench.scenarios import Scenario
from tether_bench.worlds import ExpectedStates, WorldFactory, prepare

AgentFactory = Callable[[str], BenchAgent]


def plan_agents(plan: RunPlan) -> AgentFactory:
    """Agents as the plan asks for them: inside its harness, tether on its protocol."""
    return lambda name: make_agent(name, plan.harness, plan.protocol)


@dataclass(frozen=True)
class RunPlan:
    """What to run and how; the backend is passed separately (it holds a live server)."""

    agents: Sequence[str]
    scenarios: Sequence[Scenario]
    toolset: str = "demo"
    trials: int = 1
    concurrency: int = 4
    temperature: float = 0.7
    max_tokens: int = 512
    timeout: float = 120.0
    api_key: str = "EMPTY"
    progress: bool = True
    harness: Harness = field(default_factory=Harness)
    protocol: str | None = None
    """tether's output protocol (react, json_schema, native); None: its default."""


@dataclass
class BenchResult:
    """Every judged run, the metrics per agent, and how the benchmark was run."""

    plan: RunPlan
    backend: dict[str, Any]
    records: list[RunRecord]
    metrics: dict[str, AgentMetrics]
    wall_s: float
    info: dict[str, Any] = field(default_factory=dict)


def sample_scenarios(scenarios: Sequence[Scenario], n: int, seed: int) -> list[Scenario]:
    """``n`` scenarios spread round-robin over categories, drawn with ``seed``, in file order."""
    if n >= len(scenarios):
        return list(scenarios)
    rng = random.Random(seed)
    by_category: dict[str, list[Scenario]] = defaultdict(list)
    for scenario in scenarios:
        by_category[scenario.category].append(scenario)
    pools = {c: rng.sample(v, len(v)) for c, v in sorted(by_category.items())}
    chosen: set[str] = set()
    while len(chosen) < n:
        for pool in pools.values():
            if pool and len(chosen) < n:
                chosen.add(pool.pop().id)
    return [s for s in scenarios if s.id in chosen]


def simplest_scenarios(scenarios: Sequence[Scenario], n: int) -> list[Scenario]:
    """The ``n`` simplest scenarios by their own gold plans, deterministically: two thirds
    with one gold call, the rest with two (8 and 4 of 12), among those that expect a
    completed run with no injected fault, no domain policy (2,800 more prompt tokens is
    not simple) and one user message (a conversation is not simple); spread round-robin
    over categories, file order within each, returned in file order."""
    plain = [
        s
        for s in scenarios
        if s.expected_termination == "completed"
        and not s.fault_plan
        and not s.policy
        and not s.turns
    ]
    doubles = n // 3
    chosen = _round_robin([s for s in plain if len(s.gold_actions) == 1], n - doubles)
    chosen += _round_robin([s for s in plain if len(s.gold_actions) == 2], doubles)
    ids = {s.id for s in chosen}
    return [s for s in scenarios if s.id in ids]


def _round_robin(scenarios: Sequence[Scenario], n: int) -> list[Scenario]:
    by_category: dict[str, list[Scenario]] = defaultdict(list)
    for scenario in scenarios:
        by_category[scenario.category].append(scenario)
    queues = [list(v) for _, v in sorted(by_category.items())]
    picked: list[Scenario] = []
    while len(picked) < n and any(queues):
        for pending in queues:
            if pending and len(picked) < n:
                picked.append(pending.pop(0))
    return picked


def run_benchmark(
    plan: RunPlan,
    backend: Backend,
    *,
    agent_factory: AgentFactory | None = None,
    on_done: Callable[[RunRecord], None] | None = None,
) -> BenchResult:
    """Start the backend, run the plan on a thread pool, stop the backend; judged records and
    metrics come back. ``on_done`` hears each finished run (a progress feed)."""
    started = time.perf_counter()
    make = agent_factory or plan_agents(plan)
    for agent in plan.agents:  # each agent's modules imported here, not by two threads at
        make(agent)  # once: concurrent first imports of LangGraph can deadlock
    jobs = [
        (scenario, trial, agent)
        for scenario in plan.scenarios
        for trial in range(plan.trials)
        for agent in plan.agents
    ]
    results: list[RunRecord] = []
    with (
        WorldFactory(plan.toolset) as worlds,
        BackendContext(backend),
        httpx.Client(
            limits=httpx.Limits(max_connections=plan.concurrency * 2),
            timeout=plan.timeout,
        ) as client,
        ThreadPoolExecutor(max_workers=plan.concurrency, thread_name_prefix="bench") as pool,
    ):
        judge = Judge(ExpectedStates(worlds))
        list(pool.map(judge.expected.hash_for, plan.scenarios))  # fail fast on a bad plan

        def one(job: tuple[Scenario, int, str]) -> RunRecord:
            scenario, trial, agent = job
            return run_one(make(agent), scenario, trial, worlds, judge, backend, plan, client)

        futures = [pool.submit(one, job) for job in jobs]
        with _progress(len(jobs), plan.progress) as bar:
            for future in as_completed(futures):
                record = future.result()
                results.append(record)
                bar.update(1)
                if on_done is not None:
                    on_done(record)
        backend_info = backend.describe()
    records = sort_records(results, plan)  # the order runs finished in is timing: not used
    return BenchResult(
        plan=plan,
        backend=backend_info,
        records=records,
        metrics=all_metrics(records, plan.agents),
        wall_s=time.perf_counter() - started,
    )


def sort_records(records: list[RunRecord], plan: RunPlan) -> list[RunRecord]:
    """(agent, scenario, trial) order, whatever order the runs finished in."""
    order = {a: i for i, a in enumerate(plan.agents)}
    position = {s.id: i for i, s in enumerate(plan.scenarios)}
    return sorted(records, key=lambda r: (order.get(r.agent, 99), position[r.scenario_id], r.trial))


def run_in_processes(plan: RunPlan, spec: BackendSpec, workers: int = 1) -> BenchResult:
    """The plan split by scenario over ``workers`` processes, each with its own thread pool.

    Tools, worlds and judging are Python code that holds the GIL, so one process uses about
    one core whatever the thread count; shards use the others. Each shard runs its own
    simulator (sessions are independent, so results are the same as in one process); a local
    model server is started once, here, and shared.
    """
    if workers <= 1 or len(plan.scenarios) < 2:
        return run_benchmark(plan, spec.create(plan.scenarios))
    started = time.perf_counter()
    shared: Backend | None = None
    child_spec = spec
    if spec.kind == "local":
        shared = spec.create(plan.scenarios)
        shared.start()
        child_spec = spec.as_url(shared)
    try:
        records, infos = _shards(plan, child_spec, workers)
        backend_info = shared.describe() if shared is not None else infos[0]
    finally:
        if shared is not None:
            shared.stop()
    records = sort_records(records, plan)
    return BenchResult(
        plan=plan,
        backend={**backend_info, "workers": workers},
        records=records,
        metrics=all_metrics(records, plan.agents),
        wall_s=time.perf_counter() - started,
    )


def _shards(
    plan: RunPlan, spec: BackendSpec, workers: int
) -> tuple[list[RunRecord], list[dict[str, Any]]]:
    context = multiprocessing.get_context("spawn")
    total = len(plan.scenarios) * plan.trials * len(plan.agents)
    shards = [
        replace(plan, scenarios=list(plan.scenarios[i::workers]), progress=False)
        for i in range(workers)
    ]
    with context.Manager() as manager, ProcessPoolExecutor(workers, mp_context=context) as pool:
        done = manager.Queue()
        futures = [pool.submit(_run_shard, shard, spec, done) for shard in shards]
        with _progress(total, plan.progress) as bar:
            finished = 0
            while finished < total and not all(f.done() for f in futures):
                try:
                    bar.update(done.get(timeout=0.5))
                    finished += 1
                except queue.Empty:
                    continue
        results = [f.result() for f in futures]
    records = [RunRecord.model_validate(r) for shard, _ in results for r in shard]
    return records, [info for _, info in results]


def _run_shard(
    plan: RunPlan, spec: BackendSpec, done: Any
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    result = run_benchmark(plan, spec.create(plan.scenarios), on_done=lambda _: done.put(1))
    return [r.model_dump(mode="json") for r in result.records], result.backend


def run_one(
    agent: BenchAgent,
    scenario: Scenario,
    trial: int,
    worlds: WorldFactory,
    judge: Judge,
    backend: Backend,
    plan: RunPlan,
    client: httpx.Client | None = None,
) -> RunRecord:
    """One judged run on a fresh world."""
    session = backend.session(scenario.id, trial, agent.name)
    chat = ChatSettings(
        base_url=session.base_url,
        model=session.model,
        api_key=plan.api_key,
        temperature=plan.temperature,
        max_tokens=plan.max_tokens,
        timeout=plan.timeout,
        http_client=client,
        tool_listener=session.listener,
    )
    try:
        with worlds.fresh() as world:
            try:
                prepare(world, scenario)
            except Exception as exc:  # a broken scenario fails its run, loudly, not the bench
                return _setup_failure(agent.name, scenario, trial, exc)
            record = agent.run(scenario, world, chat, trial=trial)
            record.verdict = judge.judge(scenario, record, world)
    finally:
        extra = backend.finish(session)
    record.extra.update(extra)
    return record


def _setup_failure(agent: str, scenario: Scenario, trial: int, exc: Exception) -> RunRecord:
    reason = f"setup failed: {exc}"
    return RunRecord(
        agent=agent,
        scenario_id=scenario.id,
        category=scenario.category,
        trial=trial,
        termination="error",
        termination_reason=reason,
        wall_s=0.0,
        verdict=Verdict(passed=False, failures=[reason]),
    )


class _progress:
    """A tqdm bar when asked for, a no-op otherwise (tqdm is an optional dependency)."""

    def __init__(self, total: int, enabled: bool) -> None:
        self._bar: Any = None
        if enabled:
            from tqdm import tqdm

            self._bar = tqdm(total=total, unit="run", desc="bench", dynamic_ncols=True)

    def __enter__(self) -> _progress:
        return self

    def update(self, n: int) -> None:
        if self._bar is not None:
            self._bar.update(n)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.close()


__all__ = [
    "BenchResult",
    "RunPlan",
    "run_benchmark",
    "run_in_processes",
    "run_one",
    "sample_scenarios",
    "simplest_scenarios",
]
