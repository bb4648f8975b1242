"""The docs document what the code does: every setting with its real default, every status
and stop cause with its meaning."""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import SecretStr
from tether import CAUSES, STATUSES, AgentSettings

ROOT = Path(__file__).parent.parent
DOCS = ROOT / "docs"
SETTINGS_PAGE = (DOCS / "settings.md").read_text(encoding="utf-8")
STATUSES_PAGE = (DOCS / "concepts" / "statuses.md").read_text(encoding="utf-8")


def settings_rows() -> dict[str, tuple[str, str]]:
    rows = {}
    for match in re.finditer(r"^\| `(\w+)` \| `(TETHER_\w+)` \| ([^|]+) \|", SETTINGS_PAGE, re.M):
        rows[match.group(1)] = (match.group(2), match.group(3).strip())
    return rows


def test_every_setting_is_documented_with_its_default() -> None:
    rows = settings_rows()
    assert set(rows) == set(AgentSettings.model_fields)
    for name, info in AgentSettings.model_fields.items():
        env, default = rows[name]
        assert env == f"TETHER_{name.upper()}"
        value = info.get_default()
        if isinstance(value, SecretStr):
            value = value.get_secret_value()
        expected = "unset" if value is None else f"`{value}`"
        assert default == expected, f"{name}: README says {default}, code says {expected}"


def status_rows() -> dict[str, tuple[str, int]]:
    """The statuses table: status -> (meaning, exit code)."""
    section = STATUSES_PAGE.split("\n## Statuses\n", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for match in re.finditer(r"^\| `(\w+)` \| ([^|]+) \| (\d+) \|", section, re.M):
        assert match.group(1) not in rows, f"{match.group(1)} is listed twice"
        rows[match.group(1)] = (match.group(2).strip(), int(match.group(3)))
    return rows


def test_the_status_table_is_tethers_table() -> None:
    rows = status_rows()
    assert list(rows) == list(STATUSES)
    for status, info in STATUSES.items():
        assert rows[status] == (info.meaning, info.exit_code), status


def test_the_cause_table_is_tethers_table() -> None:
    section = STATUSES_PAGE.split("\n## Stop causes\n", 1)[1]
    rows = dict(re.findall(r"^\| `(\w+)` \| ([^|]+) \|", section, re.M))
    assert {cause: meaning.strip() for cause, meaning in rows.items()} == dict(CAUSES)


def table_rows(text: str) -> dict[str, list[str]]:
    """Every table row of a page by its first cell (the first row of a name wins)."""
    rows: dict[str, list[str]] = {}
    for line in text.splitlines():
        if line.startswith("| ") and not line.startswith("|---"):
            cells = [cell.strip() for cell in line.strip("|").split("|")]
            rows.setdefault(cells[0], cells[1:])
    return rows


def test_the_front_pages_figures_are_the_results_pages() -> None:
    """The README's headline figures are the measured ones its pages report, not a copy that
    goes stale: each of its cells starts the same row's cell there."""
    front = (ROOT / "README.md").read_text(encoding="utf-8").split("\n## Measured\n", 1)[1]
    pages = "\n".join(
        (DOCS / "results" / name).read_text(encoding="utf-8")
        for name in ("real-runs.md", "benchmark.md")
    )
    results = table_rows(pages)
    checked = 0
    for name, cells in table_rows(front.split("\n## ", 1)[0]).items():
        if name in ("Agent", "on the real runs"):
            continue
        there = results[name]
        assert all(any(cell.startswith(mine) for cell in there) for mine in cells), name
        checked += 1
    assert checked == 11  # the real runs table (4 rows) and the persona table (7)
