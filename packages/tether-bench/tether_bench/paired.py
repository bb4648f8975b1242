"""tether against each peer on the same runs: which (scenario, seed) pairs only one passes.

Mean ± sd over seeds says how two agents compare on average; it cannot say whether a gap
of two points is more than the seeds' noise, since both agents meet the same scenarios and
the same simulated draws. Pairing them can: for every (scenario, seed, trial) both ran, the
runs only one of them passed are the evidence, and under "neither is better" each such run
is a fair coin. The exact two-sided sign test on those discordant runs (McNemar's exact
test) gives the p-value. pass^k over seeds (tau-bench's measure) is the chance that an agent
passes a scenario on k seeds out of k, so it rewards an agent that passes reliably.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from tether_bench.metrics import pass_hat_k
from tether_bench.records import RunRecord

RunKey = tuple[str, int, int]
"""(scenario id, seed, trial): the runs of two agents that met the same draws."""


@dataclass(frozen=True)
class Paired:
    """Two agents on the runs both made."""

    agent: str
    peer: str
    both: int
    only_agent: int
    only_peer: int
    neither: int

    @property
    def p_value(self) -> float:
        """McNemar's exact test: two-sided sign test on the discordant runs."""
        return sign_test(self.only_agent, self.only_peer)


def sign_test(wins: int, losses: int) -> float:
    """Exact two-sided binomial test of ``wins`` against ``losses`` at p = 1/2 (1.0 when
    there are none): twice the smaller tail, capped at 1."""
    n = wins + losses
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(wins, losses) + 1)) / 2**n
    return min(1.0, 2 * tail)


def passes_by_run(
    records_by_seed: Mapping[int, Iterable[RunRecord]], agent: str
) -> dict[RunKey, bool]:
    """Whether ``agent`` passed each (scenario, seed, trial) it ran."""
    return {
        (r.scenario_id, seed, r.trial): bool(r.verdict and r.verdict.passed)
        for seed, records in records_by_seed.items()
        for r in records
        if r.agent == agent
    }


def paired(records_by_seed: Mapping[int, Iterable[RunRecord]], agent: str, peer: str) -> Paired:
    """The runs both agents made, counted by who passed them."""
    mine = passes_by_run(records_by_seed, agent)
    theirs = passes_by_run(records_by_seed, peer)
    counts: dict[tuple[bool, bool], int] = defaultdict(int)
    for key in mine.keys() & theirs.keys():
        counts[mine[key], theirs[key]] += 1
    return Paired(
        agent,
        peer,
        counts[True, True],
        counts[True, False],
        counts[False, True],
        counts[False, False],
    )


def pass_k_over_seeds(
    records_by_seed: Mapping[int, Iterable[RunRecord]], agent: str, k: int
) -> float | None:
    """pass^k with the seeds as the trials: per scenario (and trial), C(c, k) / C(n, k)."""
    tally: dict[tuple[str, int], list[int]] = defaultdict(lambda: [0, 0])
    for (scenario, _, trial), passed in passes_by_run(records_by_seed, agent).items():
        tally[scenario, trial][0] += passed
        tally[scenario, trial][1] += 1
    return pass_hat_k([(c, n) for c, n in tally.values()], k)
