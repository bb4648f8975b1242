"""Answer a paused call from the terminal: a decision flag, ``--yes``, or a question.

Every answer is built in LangChain's human-in-the-loop shape (tether.control.approval), and
edits are checked against the tool's schema before they reach the saved run.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.prompt import Prompt
from tether import TetherError

from tether_cli.visible import visible, visible_json

if TYPE_CHECKING:  # LangChain loads only when a run does, so the CLI starts fast
    from tether import ToolRegistry
    from tether.control import HITLRequest

APPROVE: dict[str, Any] = {"decisions": [{"type": "approve"}]}


def reject(message: str) -> dict[str, Any]:
    return {"decisions": [{"type": "reject", "message": message}]}


def edit(tool: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"decisions": [{"type": "edit", "edited_action": {"name": tool, "args": args}}]}


def parse_edit_json(text: str) -> dict[str, Any]:
    """``--edit`` text: a JSON object of the new arguments."""
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise TetherError(f"--edit needs a JSON object of arguments: {exc}") from None
    if not isinstance(value, dict):
        raise TetherError(f"--edit needs a JSON object of arguments, not {type(value).__name__}")
    return value


@dataclass
class Answers:
    """Where answers come from: one decision flag (for the first request), ``--yes`` (for
    every request), else the person at the terminal, else nobody (the run keeps waiting)."""

    yes: bool = False
    approve: bool = False
    reject: str | None = None
    edit: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        chosen = [self.yes, self.approve, self.reject is not None, self.edit is not None]
        if sum(chosen) > 1:
            raise TetherError("give at most one of --yes, --approve, --reject, --edit")

    def decides(self) -> bool:
        """A decision flag (not ``--yes``) is given: it answers a call already waiting."""
        return self.approve or self.reject is not None or self.edit is not None

    def answer(self, request: HITLRequest, registry: ToolRegistry, console: Console) -> Any:
        """The answer to ``request``, or None when nobody can give one."""
        show(request, console)
        tool = request["action_requests"][0]["name"]
        flag: Any = None
        if self.approve:
            flag = APPROVE
        elif self.reject is not None:
            flag = reject(self.reject)
        elif self.edit is not None:
            flag = edit(tool, self.edit)
        if flag is not None:
            self.approve, self.reject, self.edit = False, None, None  # a flag answers once
            return flag
        if self.yes:
            return APPROVE
        if not sys.stdin.isatty():
            return None
        return ask(request, registry, console)


def show(request: HITLRequest, console: Console) -> None:
    action = request["action_requests"][0]
    arguments = visible_json(json.dumps(action["args"], ensure_ascii=False))
    console.print(
        f"[bold yellow]approval needed:[/bold yellow] {escape(visible(action['name']))} "
        f"{escape(arguments)}\n  {escape(visible(action.get('description', '')))}"
    )


def ask(request: HITLRequest, registry: ToolRegistry, console: Console) -> Any:
    """Ask until the answer is usable; edits are validated here, before resuming.

    Nothing is a default: Enter alone at the question asks again, and at the arguments it
    goes back to the question. A call that pays must be chosen, never fallen into.
    """
    tool = request["action_requests"][0]["name"]
    current = visible_json(json.dumps(request["action_requests"][0]["args"], ensure_ascii=False))
    while True:
        choice = Prompt.ask("approve, edit or reject?", choices=["a", "e", "r"], console=console)
        if choice == "a":
            return APPROVE
        if choice == "r":
            message = Prompt.ask(
                "reason for the model", default="rejected by the operator", console=console
            )
            return reject(message)
        console.print(f"now: {escape(current)}")
        text = Prompt.ask(
            "new arguments (JSON object; Enter: back)",
            default="",
            show_default=False,
            console=console,
        )
        if not text.strip():
            continue
        try:
            args = parse_edit_json(text)
        except TetherError as exc:
            console.print(f"[red]{escape(visible(str(exc)))}[/red]")
            continue
        problem = registry.check_arguments(tool, args)
        if problem:
            console.print(f"[red]{escape(visible(problem))}[/red]")
            continue
        return edit(tool, args)
