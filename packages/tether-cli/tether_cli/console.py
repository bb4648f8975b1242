"""Print a run as a story, as it happens: each step, what the model tried and what the loop did
about it; at the end, how the run ended, its answer, tokens and time.

Written for someone who has never seen tether: every line says who acted (the model, the
loop, the tool) in plain words. Model and tool text is quoted and shortened, never styled as
tether's own words, and its control characters are shown, never obeyed (:mod:`.visible`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape

from tether_cli.visible import visible

if TYPE_CHECKING:  # the state's module loads LangGraph: --help and bad arguments need not
    from tether import Status, TraceEvent, TraceEventName

STATUS_STYLE: dict[Status, str] = {  # every status (a test checks); meanings: tether.STATUSES
    "running": "bold cyan",
    "completed": "bold green",
    "partial": "bold yellow",
    "failed": "bold red",
    "max_steps": "bold yellow",
    "no_progress": "bold red",
    "cancelled": "bold yellow",
}
GATE_SAYS = {
    "run": "the call fits the tool's schema: running it",
    "approve": "this tool needs an operator's approval first",
    "refuse": "refused without running: the same call failed twice or was just rejected",
    "repeat": "not run: the same call again, one time too many",
}


def _short(value: Any, limit: int = 240) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class TracePrinter:
    """Turns trace events into the run's story on a rich Console."""

    def __init__(self, console: Console | None = None, *, tokens: int = 0) -> None:
        """``tokens``: what the run had spent before (a resumed run continues its count)."""
        self.console = console or Console(highlight=False)
        self.tokens = tokens
        self._streaming = False
        self._started = time.monotonic()
        self._mark = self._started
        self._answer: str | None = None

    def token(self, text: str) -> None:
        """Model output as it arrives (dim); the parsed step is printed when the call ends."""
        if not self._streaming:
            self.console.print("[dim]  the model writes: [/dim]", end="")
        self.console.print(escape(visible(text)), end="", style="dim", soft_wrap=True)
        self._streaming = True

    def event(self, event: TraceEvent) -> None:
        """Print one event. A name this console does not know (a trace saved by another
        version of tether, or damaged) gets one line saying so: it is never dropped."""
        name, step = event.get("event"), event.get("step", "?")
        handler = EVENT_HANDLERS.get(name) if isinstance(name, str) else None
        if handler is None:
            said = _short(event.get("detail"))
            self._line("trace", f"unknown event {name!r} at step {step}: {said}", "red")
            return
        handler(self, event["step"], event["detail"])

    def _line(self, who: str, text: str, style: str = "") -> None:
        body = escape(visible(text))
        self.console.print(
            f"  [dim]{who:<7}[/dim]{f'[{style}]{body}[/{style}]' if style else body}"
        )

    def _since_mark(self) -> float:
        now = time.monotonic()
        elapsed, self._mark = now - self._mark, now
        return elapsed

    def _on_start(self, step: int, detail: dict[str, Any]) -> None:
        self.console.print(f"[bold]task[/bold] {escape(visible(detail['task']))}")
        self._mark = time.monotonic()

    def _on_model_call(self, step: int, detail: dict[str, Any]) -> None:
        if self._streaming:
            self.console.print()
            self._streaming = False
        used = detail["usage"]["total_tokens"]
        self.tokens += used
        counted = "" if detail.get("usage_source") == "server" else ", counted locally"
        self.console.print(
            f"[bold cyan]step {step}[/bold cyan] [dim](model call: {used:,} tokens{counted}, "
            f"{self._since_mark():.1f} s; temperature {detail['temperature']}; "
            f"{self.tokens:,} tokens so far)[/dim]"
        )
        if detail.get("final_only"):
            self._line(
                "loop",
                "no tool offered this step, only a final answer: the model "
                "repeated a call that had already succeeded",
                "yellow",
            )
        elif detail.get("offered"):
            self._line("loop", "offered the tools " + ", ".join(detail["offered"]), "dim")
        if detail.get("calls_only"):
            self._line(
                "loop",
                "no final answer offered yet: the task names something a tool can look up",
                "dim",
            )
        if detail.get("withheld") and not detail.get("final_only"):
            held = "; ".join(f"{name}: {why}" for name, why in detail["withheld"].items())
            self._line("loop", f"listed but not callable now: {held}", "dim")
        self._model_line(detail)

    def _model_line(self, detail: dict[str, Any]) -> None:
        if detail["kind"] == "action":
            call = f"{detail['tool']} {_short(detail['arguments'])}"
            self._line("model", f"calls {call}", "magenta")
        elif detail["kind"] == "final":
            self._answer = str(detail["answer"])
            self._line("model", f"answers {_short(detail['answer'], 800)!r}", "green")
        else:
            self._line("model", "wrote a reply the loop could not use", "red")
            self._line("loop", f"why: {_short(detail.get('error', ''))}", "red")
        if detail.get("thought"):
            self._line("", f"(its reason: {_short(detail['thought'], 160)!r})", "dim")
        if detail["kind"] == "action":
            self._line("loop", GATE_SAYS.get(str(detail.get("gate")), "checked the call"))

    def _on_tool_call(self, step: int, detail: dict[str, Any]) -> None:
        retry = f" (attempt {detail['attempt']})" if detail["attempt"] > 1 else ""
        ok = detail["status"] == "success"
        what = "returned" if ok else "failed"
        self._line("tool", f"{what}{retry}: {_short(detail['observation'])}", "" if ok else "red")

    def _on_approval(self, step: int, detail: dict[str, Any]) -> None:
        self._line("loop", f"operator's answer: {_short(detail)}", "yellow")

    def _on_refused(self, step: int, detail: dict[str, Any]) -> None:
        why = detail.get("why", "failed on its last two runs")
        self._line("loop", f"refused {detail['tool']}: this exact call {why}", "red")

    def _on_resolve(self, step: int, detail: dict[str, Any]) -> None:
        call = f"{detail.get('tool')} {_short(detail.get('arguments'))}"
        self._line(
            "loop",
            f"replays {call} before it ends the run: its outcome is unknown (it failed "
            "transiently, and it has side effects)",
            "yellow",
        )

    def _on_memory_trimmed(self, step: int, detail: dict[str, Any]) -> None:
        self._line("loop", f"trimmed the prompt to fit: {_short(detail)}", "yellow")

    def _on_usage_counted(self, step: int, detail: dict[str, Any]) -> None:
        self._line("loop", detail["note"], "yellow")

    def _on_decision(self, step: int, detail: dict[str, Any]) -> None:
        if "stop" in detail:  # the check before a model call
            self._line(
                "loop", f"stops before calling the model: {detail['stop']['reason']}", "yellow"
            )
            return
        if "last_answer" in detail:
            why = _short(detail["last_answer"]["reason"])
            self._line("loop", f"{why}: asks the model for its best answer, no tools", "yellow")
            return
        decision, kind = detail["decision"], detail.get("step_kind")
        if decision == "stop":
            self._line("loop", f"ends the run: {_short(detail['reason'])}", "yellow")
        elif kind == "success":
            self._line("loop", "step succeeded; next step")
        elif kind in STEP_NOTES:
            self._line("loop", STEP_NOTES[kind], "yellow")
        else:
            streak = detail.get("failure_streak", 0)
            what = str(detail.get("step_kind", "")).replace("_", " ")
            note = "sends the model a note and asks again" if detail.get("hints") else "goes on"
            self._line("loop", f"step failed ({what}; {streak} in a row): {note}", "yellow")

    def _on_finish(self, step: int, detail: dict[str, Any]) -> None:
        usage = detail.get("usage") or {}
        status = detail["status"]
        style = STATUS_STYLE.get(status, "bold")
        ending, means = _ending(status, detail.get("cause"), detail["reason"])
        elapsed = time.monotonic() - self._started
        said = f"{escape(visible(ending))}[/{style}]: {escape(visible(means))}"
        self.console.print(f"[{style}]{said}")
        self._line("why", detail["reason"])
        if status == "completed" and self._answer is not None:
            self._line("answer", _short(self._answer, 800), "green")
        elif detail.get("answer"):  # asked for at a cap: the model's best, not a completion
            self._line("answer", _short(str(detail["answer"]), 800), "yellow")
        self._line(
            "cost",
            f"{step} step(s), {usage.get('total_tokens', 0):,} tokens "
            f"({usage.get('input_tokens', 0):,} in, {usage.get('output_tokens', 0):,} out), "
            f"{elapsed:.1f} s",
        )


STEP_NOTES = {
    "recall": "the call already succeeded: not run again; sends the model a note with its result",
    "sent_back": "sends the answer back once, with a note on what it lacks",
}
"""What the console says of a step that ends with a note rather than a success or failure."""


EVENT_HANDLERS: dict[TraceEventName, Callable[[TracePrinter, int, dict[str, Any]], None]] = {
    "start": TracePrinter._on_start,
    "model_call": TracePrinter._on_model_call,
    "usage_counted": TracePrinter._on_usage_counted,
    "memory_trimmed": TracePrinter._on_memory_trimmed,
    "tool_call": TracePrinter._on_tool_call,
    "approval": TracePrinter._on_approval,
    "refused": TracePrinter._on_refused,
    "resolve": TracePrinter._on_resolve,
    "decision": TracePrinter._on_decision,
    "finish": TracePrinter._on_finish,
}
"""How each trace event is printed: every :data:`tether.TraceEventName` has an entry (a test
checks), so a new event cannot be dropped unseen; a name not here is printed as unknown."""


def _ending(status: Any, cause: Any, reason: str) -> tuple[str, str]:
    """How the run ended and what that means: its status and stop cause, told by the cause
    (a trace from an older tether may have none: then by the status)."""
    from tether import CAUSES, STATUSES  # a run has loaded tether's state by now

    if isinstance(cause, str) and cause in CAUSES:
        return f"{status} ({cause})", CAUSES[cause]
    info = STATUSES.get(status) if isinstance(status, str) else None
    return str(status), info.meaning if info is not None else reason
