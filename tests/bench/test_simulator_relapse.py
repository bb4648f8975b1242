"""Relapse and heed: the simulated model repeats by the run, and acts on notes that carry
information, the same way in every agent's layout (a blank or generic note is no note)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tether_bench.simulator import PERFECT, STRONG, Persona, answers, model_name
from tether_bench.simulator.constraints import Constraints
from tether_bench.simulator.personas import persona_from_spec
from tether_bench.simulator.reading import read_request

from tests.bench.sim_prompts import FORMATS, Exchange, failure, request
from tests.bench.test_simulator_policy import PAY, ask, done, flow, one_fault, simulator

__all__ = ["flow"]  # the fixture, shared with the policy tests


def first_value(result: str) -> str:
    """A value the first result returned that its call's arguments do not hold."""
    data = json.loads(result)["data"]
    return next(str(v) for k, v in data.items() if k != "order_id" and isinstance(v, str))


def with_note(history: list[Exchange], note: str | None) -> list[Exchange]:
    last = history[-1]
    return [*history[:-1], Exchange(last.tool, last.arguments, last.result, note=note)]


def test_after_a_success_it_repeats_at_its_own_rate(flow: dict[str, Any]) -> None:
    for rate, expected in ((1.0, "query_order"), (0.0, "compute_discount")):
        sim = simulator(flow, PERFECT.with_overrides(repeat_after_success=rate))
        ask(sim, "s", "agent_executor", flow, [])
        turn = ask(sim, "s", "agent_executor", flow, done(flow, 1))
        assert turn.tool == expected
        assert (turn.fault == "repeat_previous") == (rate == 1.0)


def test_after_a_failure_it_repeats_at_its_own_rate(flow: dict[str, Any]) -> None:
    step = flow["scenario"].gold_actions[0]
    failed = [Exchange(step.tool, dict(step.arguments), failure("Order lookup timed out"))]
    for layout in FORMATS:
        for after_failure, repeated in ((1.0, True), (0.0, False)):
            model = PERFECT.with_overrides(repeat_after_failure=after_failure)
            sim = simulator(flow, model)
            ask(sim, layout, layout, flow, [])
            turn = ask(sim, layout, layout, flow, failed)
            assert (turn.fault == "repeat_previous") is repeated, layout


def test_a_loop_is_a_state_of_the_run(flow: dict[str, Any]) -> None:
    """Two identical calls make the third follow at ``stickiness``, not at the fresh rate."""
    twice = [*done(flow, 1), *done(flow, 1)]
    for sticky, expected in ((1.0, "query_order"), (0.0, "compute_discount")):
        model = PERFECT.with_overrides(repeat_after_success=1.0, stickiness=sticky)
        sim = simulator(flow, model)
        ask(sim, "l", "create_agent", flow, [])
        assert ask(sim, "l", "create_agent", flow, done(flow, 1)).tool == "query_order"
        assert ask(sim, "l", "create_agent", flow, twice).tool == expected


@pytest.mark.parametrize("layout", FORMATS)
def test_a_note_naming_the_call_and_what_it_returned_is_heeded(
    flow: dict[str, Any], layout: str
) -> None:
    value = first_value(flow["results"][0])
    notes = {
        "informed": f"query_order already returned {value} for this order; use it.",
        "blank": "",
        "generic": "Do not repeat yourself; think about what to do next.",
        "tool only": "query_order was called.",
    }
    model = PERFECT.with_overrides(repeat_after_success=1.0, heed=1.0)
    tools = {}
    for name, note in notes.items():
        sim = simulator(flow, model)
        ask(sim, name, layout, flow, [])
        tools[name] = ask(sim, name, layout, flow, with_note(done(flow, 1), note)).tool
    assert tools == {
        "informed": "compute_discount",
        "blank": "query_order",
        "generic": "query_order",
        "tool only": "query_order",
    }


def test_a_real_note_and_a_blank_note_differ_only_where_heed_is_above_zero(
    flow: dict[str, Any],
) -> None:
    """The acceptance check: at heed 0 a note changes nothing; above it, it does."""
    value = first_value(flow["results"][0])
    real = f"You called query_order twice; it returned {value}. Call compute_discount next."
    twice = [*done(flow, 1), *done(flow, 1)]
    for heed in (0.0, 0.5, 0.9):
        differ = 0
        for seed in range(12):
            model = STRONG.with_overrides(heed=heed, repeat_after_success=0.6, stickiness=0.6)
            acts: dict[str, list[tuple[Any, ...]]] = {}
            for note in (real, ""):
                for layout in FORMATS:
                    sim = simulator(flow, model, seed)
                    for history in ([], done(flow, 1), with_note(twice, note)):
                        ask(sim, "n", layout, flow, history)
                    acts[f"{note}|{layout}"] = [
                        d.act() for d in sim.decisions(model_name(PAY, 0, "n"))
                    ]
            for layout in FORMATS:
                assert acts[f"{real}|{layout}"] == acts[f"{real}|{FORMATS[0]}"]
            differ += acts[f"{real}|tether"] != acts["|tether"]
        assert (differ > 0) == (heed > 0), heed


@pytest.mark.parametrize("layout", FORMATS)
def test_a_final_answer_sent_back_is_reconsidered_only_for_a_reason(
    flow: dict[str, Any], layout: str
) -> None:
    premature = one_fault("premature_final", heed=1.0)
    pushbacks = {
        "names the tool": "No tool has run yet: look the order up with query_order first.",
        "generic": "Are you sure? Please check your answer.",
    }
    for name, text in pushbacks.items():
        sim = simulator(flow, premature)
        first = ask(sim, name, layout, flow, [])
        assert first.kind == "final" and first.fault == "premature_final"
        said = answers.premature(flow["scenario"], 0.0)
        sent_back = [Exchange(None, None, text, raw=f"Final Answer: {said}")]
        again = ask(sim, name, layout, flow, sent_back)
        if name == "generic":
            assert again.kind == "final"  # the same answer again
        else:
            assert again.tool == "query_order"
    at_zero = simulator(flow, one_fault("premature_final", heed=0.0))
    ask(at_zero, "z", layout, flow, [])
    said = answers.premature(flow["scenario"], 0.0)
    sent_back = [Exchange(None, None, pushbacks["names the tool"], raw=said)]
    assert ask(at_zero, "z", layout, flow, sent_back).kind == "final"


def test_constrained_decoding_rules_out_the_faults_it_cannot_produce(
    flow: dict[str, Any],
) -> None:
    from tether.llm.structured import response_format

    scenario = flow["scenario"]
    body = request("tether", scenario.task, flow["tools"], [])
    with_schema = {**body, "response_format": response_format(flow["registry_tools"])}
    assert read_request(with_schema).constraints == Constraints(True, True, True)
    native = request("create_agent", scenario.task, flow["tools"], [])
    assert read_request(native).constraints == Constraints()
    assert read_request({**native, "tool_choice": "required"}).constraints.tool_names_fixed
    for kind in ("bad_json", "unknown_tool", "missing_argument"):
        sim = simulator(flow, one_fault(kind))
        sim.reply(model_name(PAY, 0, "schema"), with_schema)
        sim.reply(model_name(PAY, 0, "free"), native)
        assert sim.decisions(model_name(PAY, 0, "schema"))[-1].fault is None
        assert sim.decisions(model_name(PAY, 0, "free"))[-1].fault == kind


def test_a_decoder_that_admits_only_calls_rules_out_an_answer(flow: dict[str, Any]) -> None:
    """Where the model would answer too early, or would answer at all, and the request's
    schema (or tool_choice) admits only a call, it writes a call: the planned one."""
    from tether.llm.structured import response_format

    scenario = flow["scenario"]
    body = request("tether", scenario.task, flow["tools"], [])
    calls_only = {
        **body,
        "response_format": response_format(flow["registry_tools"], calls_only=True),
    }
    answerable = {**body, "response_format": response_format(flow["registry_tools"])}
    assert not read_request(calls_only).constraints.answers_allowed
    assert read_request(answerable).constraints.answers_allowed
    native = request("create_agent", scenario.task, flow["tools"], [])
    assert read_request(native).constraints.answers_allowed
    assert not read_request({**native, "tool_choice": "required"}).constraints.answers_allowed
    sim = simulator(flow, one_fault("premature_final"))
    sim.reply(model_name(PAY, 0, "only"), calls_only)
    sim.reply(model_name(PAY, 0, "free"), answerable)
    forced, free = (sim.decisions(model_name(PAY, 0, n))[-1] for n in ("only", "free"))
    assert free.fault == "premature_final"
    assert forced.fault is None and forced.tool == scenario.gold_actions[0].tool


def test_a_forced_call_with_nothing_planned_takes_values_the_prompt_shows() -> None:
    """With no call left in its plan, a model held to a call calls the first tool whose
    required arguments the prompt's values fill, never one it would have to make up."""
    from tether_bench.simulator.constraints import CallShape
    from tether_bench.simulator.forced import fitting_call
    from tether_bench.simulator.reading import PromptView

    shapes = (
        CallShape("find_user", ()),  # takes nothing required: nothing points at it
        CallShape("cancel_order", (("order_id", r"^ORD-\d{4}-\d{3,}$", ()),)),
        CallShape("list_user_orders", (("user_id", r"^U\d{4,}$", ()),)),
    )
    view = PromptView("Task: Delete the account of customer U0003.", "json", frozenset(), ())
    assert fitting_call(PromptView(**{**vars(view), "shapes": shapes})) == (
        "list_user_orders",
        {"user_id": "U0003"},
    )
    limited = (CallShape("query_order", (("order_id", None, ("ORD-2024-001",)),)),)
    view = PromptView("Task: where is ORD-2024-001 and ORD-2024-009?", "json", frozenset(), ())
    assert fitting_call(PromptView(**{**vars(view), "shapes": limited})) == (
        "query_order",
        {"order_id": "ORD-2024-001"},
    )


def test_it_reads_the_tool_definitions_a_request_carries(flow: dict[str, Any]) -> None:
    body = request("create_agent", "t", {"query_order": "Looks up an order by its id."}, [])
    view = read_request(body)
    assert "Looks up an order by its id." in view.text
    assert view.offers("query_order")


def test_persona_specs_and_files(tmp_path: Path) -> None:
    assert persona_from_spec("strong") == STRONG
    cell = persona_from_spec("strong;heed=0.5;stickiness=0.1")
    assert (cell.heed, cell.stickiness, cell.name) == (0.5, 0.1, "strong;heed=0.5;stickiness=0.1")
    path = tmp_path / "mine.toml"
    path.write_text('base = "loopy"\nheed = 0.2\n', encoding="utf-8")
    mine = persona_from_spec(f"{path};fix_rate=0.4")
    assert (mine.heed, mine.fix_rate, mine.stickiness) == (0.2, 0.4, 0.983)
    assert mine.name == "mine;fix_rate=0.4"
    named = tmp_path / "named.json"
    weights = {"premature_final": 5.0}
    named.write_text(json.dumps({"name": "eager", "fault_weights": weights}), encoding="utf-8")
    eager = persona_from_spec(str(named))
    assert (eager.name, eager.fault_weights, eager.heed) == ("eager", weights, STRONG.heed)
    for bad, says in (
        ("strong;heed=2", "heed"),
        ("strong;loudness=1", "traits"),
        ("nobody", "unknown persona"),
        (f"{tmp_path / 'missing.json'}", "cannot read"),
    ):
        with pytest.raises(ValueError, match=says):
            persona_from_spec(bad)


def test_the_shipped_persona_grid_loads_and_each_file_changes_its_base() -> None:
    """benchmarks/personas/ holds the persona settings the README's grid reports."""
    files = sorted((Path(__file__).parents[2] / "benchmarks" / "personas").glob("*.toml"))
    assert len(files) >= 9
    for path in files:
        loaded = persona_from_spec(str(path))
        assert loaded.name == path.stem
        changed = loaded.model_dump(exclude={"name"}) != STRONG.model_dump(exclude={"name"})
        assert changed and path.read_text(encoding="utf-8").startswith("# "), path.name


def test_a_persona_file_is_reported_by_its_name_and_a_spec_as_written(tmp_path: Path) -> None:
    from tether_bench.suite_report import label, slug

    named = tmp_path / "any file.json"
    named.write_text(json.dumps({"name": "eager", "heed": 0.1}), encoding="utf-8")
    assert (label(str(named)), slug(str(named))) == ("eager", "eager")
    unnamed = tmp_path / "calm.toml"
    unnamed.write_text("heed = 0.2\n", encoding="utf-8")
    assert slug(f"{unnamed};stickiness=0.5") == "calm_stickiness-0.5"
    assert slug(str(unnamed)) == "calm"
    assert slug("strong;heed=0.5") == "strong_heed-0.5"
    assert label("not a persona") == "not a persona"


def test_every_trait_is_a_probability() -> None:
    for field, info in Persona.model_fields.items():
        if field in ("name", "fault_weights"):
            continue
        with pytest.raises(ValueError):
            STRONG.with_overrides(**{field: 1.5})
        assert info.description, field


def test_the_command_line_crosses_personas_with_a_grid() -> None:
    import typer
    from tether_bench.cli import persona_specs

    cells = persona_specs(["strong", "loopy"], ["fix_rate=0.5"], ["heed=0,0.9", "stickiness=0.1"])
    assert cells == [
        "strong;fix_rate=0.5;heed=0;stickiness=0.1",
        "strong;fix_rate=0.5;heed=0.9;stickiness=0.1",
        "loopy;fix_rate=0.5;heed=0;stickiness=0.1",
        "loopy;fix_rate=0.5;heed=0.9;stickiness=0.1",
    ]
    assert all(persona_from_spec(cell).fix_rate == 0.5 for cell in cells)
    with pytest.raises(typer.BadParameter, match="TRAIT=V1,V2"):
        persona_specs(["strong"], [], ["heed"])


def test_switching_repeat_previous_off_switches_the_relapse_traits_off() -> None:
    from tether_bench.backends import BackendSpec

    off = BackendSpec(kind="sim", disabled_faults=("repeat_previous",)).simulated_persona()
    assert (off.repeat_after_success, off.repeat_after_failure, off.stickiness) == (0, 0, 0)
    assert BackendSpec(kind="sim").simulated_persona().stickiness == STRONG.stickiness


def test_a_pushback_counts_for_any_information_it_carries_in_any_agents_words(
    flow: dict[str, Any],
) -> None:
    """After a premature answer with the order looked up, a note is heard when it names a
    tool not yet run, an argument of a call still to make, an id that call takes, or a status
    a shown result holds, whichever agent wrote it and however; a generic one is not."""
    from tether_bench.simulator.reading import Observation
    from tether_bench.simulator.relapse import names_lack

    plan = flow["scenario"].gold_actions
    looked_up = [
        Observation("query_order", "(order_id ORD-2024-001)", json.loads(r))
        for r in flow["results"][:1]
    ]
    status = json.loads(flow["results"][0])["data"]["status"]
    answer = "All set. Your request is complete."
    tools = list(flow["tools"])
    notes = {
        # tether's final-answer check
        "tether change": "The task asks for a change that pay_order makes, and no call to "
        "pay_order has succeeded in this run: make the change, or say why it cannot be made.",
        # an AgentExecutor observation after an output it could not parse
        "executor error": f"Invalid or incomplete response. Order ORD-2024-001 is still {status}.",
        # a LangChain ToolMessage error
        "tool message": "Error: no payment was made; the amount is still due.",
        "argument name": "Nothing was charged: compute the member tier discount first.",
        "other tool": "Use compute_discount before you answer.",
        "chinese": "还没有付款：请先调用 pay_order。",
        "status only": f"The order's status is {status}, not done.",
        "generic": "Are you sure? Please check your answer.",
        "generic heading": "## Notes from the controller\n- Your last reply could not be used.",
        "blank": "",
        "answer words": "Is your request really complete? Are you all set?",
    }
    heard = {
        name: names_lack(note, plan, 1, answer, looked_up, tools) for name, note in notes.items()
    }
    assert heard == {
        "tether change": True,
        "executor error": True,
        "tool message": True,
        "argument name": True,
        "other tool": True,
        "chinese": True,
        "status only": True,
        "generic": False,
        "generic heading": False,
        "blank": False,
        "answer words": False,
    }
    # a value of the answer that no result shows, quoted back, counts; one a result shows does not
    claimed = "ORD-2024-001 is paid: 999.99 was charged."
    assert names_lack("Nothing returned 999.99.", plan, 1, claimed, looked_up, tools)
    assert not names_lack("It is ORD-2024-001 indeed.", plan[:1], 1, claimed, looked_up, [])
