"""Building blocks for scripted model replies."""

from __future__ import annotations

from tether import tool


def act(tool: str, args: str, thought: str = "next step") -> str:
    """A ReAct reply that calls ``tool``."""
    return f"Thought: {thought}\nAction: {tool}\nAction Input: {args}"


def final(answer: str, thought: str = "done") -> str:
    return f"Thought: {thought}\nFinal Answer: {answer}"


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


@tool
def broken(key: str) -> str:
    """Always fails."""
    raise ValueError(f"no record for {key}")
