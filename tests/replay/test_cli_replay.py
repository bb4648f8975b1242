"""``tether replay`` as people run it: a separate process, on the documented examples."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
from tether_replay.outcome import RunOutcome

from tests.cli_helpers import TETHER, PtyProcess, clean_env, tether

pytestmark = pytest.mark.slow

ROOT = Path(__file__).parents[2]
DOC = (ROOT / "docs" / "replay.md").read_text(encoding="utf-8")
EXAMPLES = ROOT / "docs" / "examples" / "replay"


def documented_fields() -> list[str]:
    """The fields the doc's JSON table lists, in its order."""
    section = DOC.split("## The JSON record", 1)[1].split("```", 1)[0]
    return re.findall(r"^\| `(\w+)` \|", section, re.M)


def test_the_doc_lists_every_field() -> None:
    assert documented_fields() == [f.name for f in dataclasses.fields(RunOutcome)]


@pytest.mark.parametrize(
    ("name", "runs"), [("openai.json", 1), ("langchain.json", 1), ("runs.jsonl", 2)]
)
def test_json_gives_one_line_per_run_with_the_documented_keys(name: str, runs: int) -> None:
    done = tether("replay", str(EXAMPLES / name), "--tools", str(EXAMPLES / "tools.json"), "--json")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == runs, done.stdout
    for line in lines:
        record = json.loads(line)
        assert list(record) == documented_fields()
        assert record["face"] == "loop" and isinstance(record["points"], list)
    assert "Traceback" not in done.stderr


def test_both_faces_and_workers_keep_the_input_order() -> None:
    args = ["replay", str(EXAMPLES / "runs.jsonl"), "--face", "both", "--json"]
    one, two = tether(*args, "--workers", "1"), tether(*args, "--workers", "2")
    assert one.returncode == two.returncode == 0, one.stderr + two.stderr
    records = [json.loads(line) for line in one.stdout.splitlines()]
    assert [(r["uid"], r["face"]) for r in records] == [
        ("shop-17", "loop"),
        ("shop-17", "middleware"),
        ("shop-18", "loop"),
        ("shop-18", "middleware"),
    ]
    assert one.stdout == two.stdout


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["{tmp}/missing.jsonl"], "no such file"),
        (["{tmp}/bad.jsonl"], "bad.jsonl:2: not JSON"),
        (["{tmp}/role.json"], "unknown role 'robot'"),
        (["{ex}/openai.json", "--tools", "{tmp}/tools.json"], "a tools file holds a list"),
        (["{ex}/openai.json", "--face", "sideways"], "--face takes loop, middleware or both"),
        (["{ex}/openai.json", "--set", "no_such=1"], "unknown setting 'no_such'"),
        (["{ex}/openai.json", "--set", "max_steps=0"], "max_steps"),
        (["{ex}/openai.json", "--set", "max_steps"], "--set takes KEY=VALUE"),
        (["{ex}/openai.json", "--limit", "0"], "--limit"),
    ],
)
def test_bad_input_gets_one_line_and_exit_2(tmp_path: Path, args: list[str], says: str) -> None:
    good = (EXAMPLES / "runs.jsonl").read_text(encoding="utf-8").splitlines()[0]
    (tmp_path / "bad.jsonl").write_text(f"{good}\n{{oops\n", encoding="utf-8")
    (tmp_path / "role.json").write_text('[{"role": "robot", "content": "x"}]', encoding="utf-8")
    (tmp_path / "tools.json").write_text('"tools"', encoding="utf-8")
    filled = [a.format(tmp=tmp_path, ex=EXAMPLES) for a in args]
    done = tether("replay", *filled)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    assert says in lines[0]


NASTY = "[bold red]evil[/] \x1b]52;c;aGVsbG8=\x07 \x1b[2J [/nope] \u202e"


def nasty_log(tmp_path: Path) -> Path:
    """A log whose uid, cohort, user text and tool results hold markup and escapes, with
    failed calls so the points section shows them."""
    events = [{"r": "u", "x": f"Look up {NASTY}"}]
    for n in range(3):
        call = {"n": "get_order", "a": {"order_id": NASTY}, "id": f"c{n}"}
        events += [
            {"r": "a", "x": NASTY, "c": [call]},
            {"r": "t", "id": f"c{n}", "n": "get_order", "e": 1, "x": NASTY},
        ]
    events.append({"r": "a", "x": f"Done {NASTY}", "c": []})
    record = {"uid": f"uid {NASTY}", "model": NASTY, "impl": "h", "reward": 0.0, "ev": events}
    path = tmp_path / "nasty.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    return path


def test_untrusted_text_does_not_reach_a_pipe_raw(tmp_path: Path) -> None:
    done = tether("replay", str(nasty_log(tmp_path)))
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout and "\u202e" not in done.stdout and "\x07" not in done.stdout
    assert "[bold red]evil[/]" in done.stdout  # markup shown as written, not obeyed
    assert "\\x1b]52;c;" in done.stdout  # the escape shown as its escape


def test_untrusted_text_does_not_reach_a_terminal_raw(tmp_path: Path) -> None:
    env = {k: v for k, v in clean_env().items() if k != "NO_COLOR"}
    child = PtyProcess([TETHER, "replay", str(nasty_log(tmp_path))], env)
    child.expect("points")
    assert child.finish() == 0, child.output
    assert "\x1b]52" not in child.output and "\x1b[2J" not in child.output, child.output
    assert "\x07" not in child.output and "\u202e" not in child.output
    assert "[bold red]evil[/]" in child.output and "\\x1b]52;c;" in child.output
