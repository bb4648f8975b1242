"""The README documents what the code does: every setting with its real default."""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import SecretStr
from tether import AgentSettings

README = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")


def settings_rows() -> dict[str, tuple[str, str]]:
    rows = {}
    for match in re.finditer(r"^\| `(\w+)` \| `(TETHER_\w+)` \| ([^|]+) \|", README, re.M):
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
