"""The simulated model's scripted texts: premature answers come in several wordings per
language, from a shipped file that says where they come from, picked by the run's draws."""

from __future__ import annotations

import re

from tether_bench.scenarios import Scenario
from tether_bench.simulator import model_name
from tether_bench.simulator.answers import premature, premature_wordings, task_id
from tether_bench.simulator.faults import draw

from tests.bench.sim_prompts import request
from tests.bench.test_simulator_policy import PAY, flow, one_fault, simulator

__all__ = ["flow"]  # the fixture, shared with the policy tests

GRID = [(i + 0.5) / 200 for i in range(200)]


def test_the_wordings_file_says_where_they_come_from() -> None:
    shipped = premature_wordings()
    assert "<real-runs>/runs.jsonl.gz" in shipped["source"]
    assert not re.search(r"/(work|tmp|home)/", shipped["source"])
    for language in ("en", "zh"):
        assert len(set(shipped[language])) >= 5, language
        fields = {f for w in shipped[language] for f in re.findall(r"\{(\w+)\}", w)}
        assert fields <= set(shipped["placeholders"]), language


def test_premature_answers_vary_in_the_tasks_language(by_id: dict[str, Scenario]) -> None:
    for scenario in (by_id[PAY], next(s for s in by_id.values() if s.language == "zh")):
        said = {premature(scenario, u) for u in GRID}
        assert len(said) >= 5, scenario.id
        han = [bool(re.search(r"[\u4e00-\u9fff]", text)) for text in said]
        assert all(han) if scenario.language == "zh" else not any(han), scenario.id
        ident = task_id(scenario)
        assert ident and ident in scenario.task
        assert any(ident in text for text in said)  # claims naming the task's id
        assert any(ident not in text for text in said)  # and bare "done" claims
        assert any(re.search(r"\d+\.\d\d", text) for text in said)  # and a stated amount
        assert not any("{" in text for text in said)


def test_a_task_without_an_id_gets_only_wordings_that_need_none(
    by_id: dict[str, Scenario],
) -> None:
    scenario = by_id[PAY].model_copy(update={"task": "Please pay my order."})
    assert task_id(scenario) is None
    said = {premature(scenario, u) for u in GRID}
    assert said and not any("ORD-" in text for text in said)


def test_the_wording_is_a_draw_of_the_turn_and_replays(by_id: dict[str, Scenario]) -> None:
    scenario = by_id[PAY]
    picks = [premature(scenario, draw(seed, PAY, 0, 0).u_word) for seed in range(40)]
    assert picks == [premature(scenario, draw(seed, PAY, 0, 0).u_word) for seed in range(40)]
    assert len(set(picks)) >= 4


def test_the_simulator_sends_the_drawn_wording(flow: dict[str, object]) -> None:
    scenario = flow["scenario"]
    assert isinstance(scenario, Scenario)
    tools = flow["tools"]
    assert isinstance(tools, dict)
    for seed in range(3):
        sim = simulator(flow, one_fault("premature_final"), seed)  # type: ignore[arg-type]
        body = request("create_agent", scenario.task, tools, [])
        reply = sim.reply(model_name(PAY, 0, "w"), body)
        expected = premature(scenario, draw(seed, PAY, 0, 0).u_word)
        assert expected in str(reply)


def test_refusals_and_questions_vary_and_read_as_what_they_stand_for(
    scenarios: list[Scenario],
) -> None:
    """Every wording of a refusal, a request for a fact and a question is read by the judge's
    own claim reader as what it stands for, in both languages, and states the required
    outputs of every shipped stopped-early scenario."""
    from tether_bench.claims import read_claims
    from tether_bench.scenarios import missing_outputs
    from tether_bench.simulator.answers import (
        ask_for,
        final_answer,
        no_tool,
        scripted_wordings,
        what_to_do,
    )

    shipped = scripted_wordings()
    assert "<real-runs>/runs.jsonl.gz" in shipped["source"]
    stopped = [s for s in scenarios if s.expected_termination == "stopped_early"]
    for language in ("en", "zh"):
        scenario = stopped[0].model_copy(update={"language": language})
        texts = {
            "no_tool": {no_tool(scenario, "update_shipping_address", u) for u in GRID},
            "ask_for": {ask_for(scenario, "order_id", u) for u in GRID},
            "what_to_do": {what_to_do(scenario, u) for u in GRID},
        }
        for kind, said in texts.items():
            assert len(said) == len(shipped[kind][language]) >= 3, (kind, language)
            for text in said:
                claims = read_claims(text)
                if kind == "no_tool":
                    assert claims.refuses and claims.says_no_tool, text
                    assert not claims.asks_for_information, text
                else:
                    assert claims.asks_for_information and not claims.says_no_tool, text
                if kind == "ask_for":
                    assert "order id" in text, text
        for case in stopped:
            case = case.model_copy(update={"language": language})
            for u in GRID[::20]:
                text = final_answer(case, ["shipped"], None, u)
                claims = read_claims(text)
                assert claims.refuses and not claims.asks_for_information, text
                if "no-suitable-tool" in case.tags:
                    assert claims.says_no_tool and not missing_outputs(text, case.required_outputs)
                else:
                    assert "shipped" in text and not claims.says_no_tool, text
