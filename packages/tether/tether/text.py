"""Cutting text to a size, everywhere with one visible marker (a leaf: imports nothing).

Tool results, error messages and prompt sections are cut by this one function, so a reader
(or a model) meets one marker that says how much was cut and why, never a silent cut.
"""

from __future__ import annotations

__all__ = ["cut"]


def cut(text: str, keep: int, why: str) -> str:
    """``text`` when it has at most ``keep`` characters, or is cut already; else its first
    ``keep`` followed by ``…[cut N of M characters: why]``."""
    if len(text) <= keep or (text.startswith("…[cut ", max(keep, 0)) and text.endswith("]")):
        return text
    keep = max(keep, 0)
    return f"{text[:keep]}…[cut {len(text) - keep} of {len(text)} characters: {why}]"
