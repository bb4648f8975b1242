"""Print a run's trace as it happens: step, thought, action, observation, decision, tokens."""

from __future__ import annotations

import json
import time
from typing import Any

from rich.console import Console
from rich.markup import escape

from tether.state import TraceEvent

STATUS_STYLE = {
    "completed": "bold green",
    "partial": "bold yellow",
    "max_steps": "bold yellow",
    "no_progress": "bold red",
    "failed": "bold red",
}


def _short(value: Any, limit: int = 240) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class TracePrinter:
    """Turns trace events into readable lines on a rich Console."""

    def __init__(self, console: Console | None = None, *, tokens: int = 0) -> None:
        """``tokens``: what the run had spent before (a resumed run continues its count)."""
        self.console = console or Console(highlight=False)
        self.tokens = tokens
        self._streaming = False
        self._started = time.monotonic()

    def token(self, text: str) -> None:
        """Model output as it arrives (dim); the parsed step is printed when the call ends."""
        self.console.print(escape(text), end="", style="dim", soft_wrap=True)
        self._streaming = True

    def event(self, event: TraceEvent) -> None:
        handler = getattr(self, f"_on_{event['event']}", None)
        if handler:
            handler(event["step"], event["detail"])

    def _line(self, label: str, text: str, style: str = "") -> None:
        body = escape(text)
        self.console.print(
            f"  [dim]{label:<12}[/dim]{f'[{style}]{body}[/{style}]' if style else body}"
        )

    def _on_start(self, step: int, detail: dict[str, Any]) -> None:
        self.console.print(f"[bold]task[/bold] {escape(detail['task'])}")

    def _on_model_call(self, step: int, detail: dict[str, Any]) -> None:
        if self._streaming:
            self.console.print()
            self._streaming = False
        self.tokens += detail["usage"]["total_tokens"]
        source = "" if detail.get("usage_source") == "server" else ", counted locally"
        self.console.print(
            f"[bold cyan]step {step}[/bold cyan] [dim](temperature {detail['temperature']}, "
            f"{detail['usage']['total_tokens']} tokens{source}, {self.tokens} so far)[/dim]"
        )
        if "offered" in detail:
            offered = ", ".join(detail["offered"]) or "none: the final answer only"
            self._line("offered", offered, "dim")
        if detail.get("thought"):
            self._line("thought", _short(detail["thought"]))
        if detail["kind"] == "action":
            self._line("action", f"{detail['tool']} {_short(detail['arguments'])}", "magenta")
        elif detail["kind"] == "final":
            self._line("answer", _short(detail["answer"], 800), "green")
        else:
            self._line("unparsed", _short(detail.get("error", "")), "red")

    def _on_tool_call(self, step: int, detail: dict[str, Any]) -> None:
        retry = f" (attempt {detail['attempt']})" if detail["attempt"] > 1 else ""
        style = "" if detail["status"] == "success" else "red"
        self._line("observation", _short(detail["observation"]) + retry, style)

    def _on_approval(self, step: int, detail: dict[str, Any]) -> None:
        self._line("approval", _short(detail), "yellow")

    def _on_refused(self, step: int, detail: dict[str, Any]) -> None:
        self._line("refused", f"{detail['tool']} failed twice with these arguments", "red")

    def _on_memory_trimmed(self, step: int, detail: dict[str, Any]) -> None:
        self._line("memory", _short(detail), "yellow")

    def _on_usage_counted(self, step: int, detail: dict[str, Any]) -> None:
        self._line("usage", detail["note"], "yellow")

    def _on_decision(self, step: int, detail: dict[str, Any]) -> None:
        if "stop" in detail:  # the check before a model call
            self._line("decision", f"stop: {detail['stop']['reason']}", "yellow")
            return
        self._line("decision", f"{detail['decision']}: {_short(detail['reason'])}")

    def _on_finish(self, step: int, detail: dict[str, Any]) -> None:
        usage = detail.get("usage") or {}
        style = STATUS_STYLE.get(detail["status"], "bold")
        elapsed = time.monotonic() - self._started
        self.console.print(
            f"[{style}]{detail['status']}[/{style}] after {step} step(s): "
            f"{escape(detail['reason'])} [dim](tokens: {usage.get('input_tokens', 0)} in, "
            f"{usage.get('output_tokens', 0)} out, {usage.get('total_tokens', 0)} total; "
            f"{elapsed:.1f} s)[/dim]"
        )
