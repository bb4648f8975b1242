"""The same facts, written by each agent's real code, give the simulated model's same decisions.

Covers what an agent shows after each kind of turn: successful results, an error naming a
field, a reply it could not parse (tether's failure note, AgentExecutor's "Invalid Format"
observation), a repeated result (tether shows it once, the others twice), a controller's
note, a refusal, and native tool messages. create_agent never sends a parse failure back (it
ends the run), so that case compares tether and AgentExecutor.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from tether_bench.simulator import PERSONAS, STRONG, model_name

from tests.bench.real_prompts import LAYOUTS, body, unusable
from tests.bench.sim_prompts import Exchange
from tests.bench.test_simulator_policy import PAY, done, flow, simulator

__all__ = ["flow"]

MODELS = {
    "strong": STRONG,
    "loopy": PERSONAS["loopy"],
    "sloppy": PERSONAS["sloppy"],
    "heedless": STRONG.with_overrides(heed=0.0, repeat_after_success=0.5),
    "heedful": STRONG.with_overrides(heed=0.9, repeat_after_success=0.5),
}


def stages(flow: dict[str, Any], case: str, layout: str) -> list[list[Exchange]]:
    """The histories fed one after another (each a prompt the model answers)."""
    plan = flow["scenario"].gold_actions
    first = done(flow, 1)
    if case == "successes":
        return [done(flow, n) for n in range(4)]
    if case == "error naming a field":
        error = json.dumps(flow["invoke"]("query_order", {}), ensure_ascii=False, default=str)
        return [
            [],
            [Exchange("query_order", {}, error)],
            [Exchange("query_order", {}, error), *first],
        ]
    if case == "invalid format":
        raw = f"Thought: next step\nAction: {plan[0].tool}"
        return [[], [Exchange(None, None, unusable(layout, raw), raw=raw)]]
    if case == "repeated result":
        return [[], first, first + first, first + first + first]
    if case == "note":
        value = json.loads(flow["results"][0])["data"]["status"]
        note = f"query_order was called twice and returned {value}; call compute_discount."
        twice = [*first, Exchange(first[0].tool, first[0].arguments, first[0].result, note=note)]
        return [[], first, twice]
    if case == "refusal":
        refused = json.dumps(
            {
                "status": "error",
                "message": "pay_order was rejected by the "
                "operator: the amount is not the one the discount gave",
            }
        )
        pay = plan[2]
        return [done(flow, 2), [*done(flow, 2), Exchange(pay.tool, dict(pay.arguments), refused)]]
    raise AssertionError(case)


CASES = (
    "successes",
    "error naming a field",
    "invalid format",
    "repeated result",
    "note",
    "refusal",
)


@pytest.mark.parametrize("case", CASES)
def test_each_agents_real_prompt_gives_the_same_decisions(flow: dict[str, Any], case: str) -> None:
    layouts = LAYOUTS if case != "invalid format" else LAYOUTS[:2]
    scenario, tools = flow["scenario"], flow["registry_tools"]
    compared = 0
    for name, model in MODELS.items():
        for seed in range(5):
            acts = {}
            if case == "refusal":  # the history shows a well-formed call refused: no faults
                model = model.with_overrides(fault_rate=0.0)
            if case == "invalid format":  # the note answers a call: not after an answer
                weights = model.fault_weights | {"premature_final": 0.0}
                model = model.with_overrides(fault_weights=weights)
            for layout in layouts:
                sim = simulator(flow, model, seed)
                for history in stages(flow, case, layout):
                    sim.reply(
                        model_name(PAY, 0, layout), body(layout, scenario.task, tools, history)
                    )
                acts[layout] = [
                    (*d.act(), d.heard) for d in sim.decisions(model_name(PAY, 0, layout))
                ]
            assert all(acts[lay] == acts[layouts[0]] for lay in layouts), (name, seed, acts)
            compared += 1
    assert compared == len(MODELS) * 5
