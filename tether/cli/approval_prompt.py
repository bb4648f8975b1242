"""Ask the person at the terminal to approve, edit or reject a paused call."""

from __future__ import annotations

import json
import sys
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.prompt import Prompt

from tether.control.approval import ApprovalRequest
from tether.tools.registry import ToolRegistry


def can_ask() -> bool:
    return sys.stdin.isatty()


def ask(request: ApprovalRequest, registry: ToolRegistry, console: Console) -> Any:
    """An answer for Command(resume=...); edits are checked before they are returned."""
    arguments = json.dumps(request["arguments"], ensure_ascii=False)
    console.print(
        f"[bold yellow]approval needed[/bold yellow] step {request['step']}: "
        f"{escape(request['tool'])} {escape(arguments)}"
    )
    while True:
        choice = Prompt.ask("approve, edit or reject?", choices=["a", "e", "r"], default="a")
        if choice == "a":
            return "approve"
        if choice == "r":
            message = Prompt.ask("reason for the model", default="rejected by the operator")
            return {"action": "reject", "message": message}
        text = Prompt.ask("new arguments (JSON object)", default=arguments)
        try:
            edited = json.loads(text)
        except json.JSONDecodeError as exc:
            console.print(f"[red]not JSON:[/red] {escape(str(exc))}")
            continue
        problem = registry.check_arguments(request["tool"], edited)
        if problem:
            console.print(f"[red]{escape(problem)}[/red]")
            continue
        return {"action": "edit", "arguments": edited}
