"""Check the TETHER_* environment before any command runs.

A bad value is an error (one line, exit 2) in every command, not only in ``tether run``;
a variable tether does not know is probably a typo, so it gets a warning naming the closest
known one.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping

from tether import SettingsError

PREFIX = "TETHER_"
OTHER_VARIABLES = frozenset(  # read outside AgentSettings
    {"TETHER_DATA_DIR", "TETHER_STORE", "TETHER_WORLD_DB"}
)


def known_variables() -> set[str]:
    from tether import AgentSettings

    return {PREFIX + name.upper() for name in AgentSettings.model_fields} | OTHER_VARIABLES


def unknown_variable_warnings(environ: Mapping[str, str]) -> list[str]:
    """One warning per TETHER_* variable that no setting reads."""
    known = known_variables()
    warnings = []
    for name in sorted(environ):
        upper = name.upper()
        if not upper.startswith(PREFIX) or upper in known:
            continue
        close = difflib.get_close_matches(upper, sorted(known), n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]}?" if close else ""
        warnings.append(f"{name} is not a tether setting and is ignored{hint}")
    return warnings


def check_settings(environ: Mapping[str, str]) -> None:
    """Load the settings from the environment; SettingsError names the variables at fault."""
    from pydantic_settings import SettingsError as EnvParseError
    from tether import load_settings

    try:
        load_settings()
    except (SettingsError, EnvParseError) as exc:
        problem = " ".join(str(exc).split())
        named = [
            f"{name}={environ[name]!r}"
            for name in sorted(environ)
            if name.upper().startswith(PREFIX) and name[len(PREFIX) :].lower() in problem.lower()
        ]
        source = f" (from {', '.join(named)})" if named else ""
        raise SettingsError(f"bad TETHER_* environment: {problem}{source}") from exc
