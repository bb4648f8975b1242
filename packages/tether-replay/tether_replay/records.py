"""Recorded conversations, read into one shape whatever harness wrote them.

Three inputs are read (:func:`read_conversations`), one conversation per JSON object, from a
``.json`` file (one object or a list), ``.jsonl`` or ``.jsonl.gz`` (one a line):

- tether's real-runs format (an object with ``ev``: see docs/replay.md);
- OpenAI chat-completions messages (an object with ``messages``, or the bare list): roles
  ``system``, ``user``, ``assistant`` (``tool_calls``) and ``tool`` (``tool_call_id``);
- LangChain message lists as ``messages_to_dict`` writes them (``{"type": "human", ...}``).

A conversation is cut into user turns: each user message starts one, and the assistant
messages and tool results after it belong to it. Assistant messages before the first user
message (a greeting) ask nothing and are left out.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class RecordError(ValueError):
    """A recorded conversation that cannot be read, with where and why."""


@dataclass(frozen=True)
class Call:
    """One tool call an assistant message made."""

    name: str
    arguments: dict[str, Any]
    id: str


@dataclass(frozen=True)
class Reply:
    """One assistant message: its text, its calls, and the tokens its server reported."""

    text: str
    calls: tuple[Call, ...] = ()
    usage: tuple[int, int] | None = None
    """(prompt tokens, completion tokens) as the server reported them; None if unknown."""


@dataclass(frozen=True)
class Result:
    """One tool result, as the tool returned it."""

    name: str
    text: str
    error: bool = False


@dataclass(frozen=True)
class Turn:
    """One user message and everything the agent did before the next one."""

    user: str
    replies: tuple[Reply, ...]
    results: dict[str, Result] = field(default_factory=dict)
    """Tool results by the id of the call they answer."""


@dataclass(frozen=True)
class Conversation:
    """A recorded run: its turns, its verdict and where it comes from."""

    uid: str
    turns: tuple[Turn, ...]
    reward: float | None = None
    """1.0 success, 0.0 failure, None where the benchmark gives none."""
    cohort: str = "unknown"
    """The model and harness that produced it (a report groups runs by it)."""
    system: str | None = None
    """The agent's system prompt (its domain policy), where the log holds it."""
    toolset: str | None = None
    """The key of the run's tools in a tools file, where the log names one."""

    @property
    def calls(self) -> int:
        """Model calls the run made (assistant messages after the first user message)."""
        return sum(len(turn.replies) for turn in self.turns)


def read_conversations(path: Path) -> Iterator[Conversation]:
    """Every conversation in ``path`` (.json, .jsonl or .jsonl.gz), in file order."""
    for where, item in _objects(path):
        try:
            yield conversation_from(item, default_uid=where)
        except RecordError as exc:
            raise RecordError(f"{where}: {exc}") from None


def conversation_from(item: Any, *, default_uid: str = "run") -> Conversation:
    """One conversation from one JSON value of any of the three formats."""
    if isinstance(item, dict) and "ev" in item:
        return _from_real_run(item)
    meta = item if isinstance(item, dict) else {}
    messages = meta.get("messages") if isinstance(item, dict) else item
    if not isinstance(messages, list) or not messages:
        raise RecordError("expected an object with 'ev' or 'messages', or a list of messages")
    if all(isinstance(m, dict) and "type" in m and "role" not in m for m in messages):
        messages = _from_langchain(messages)
    events, system = _from_openai(messages)
    return Conversation(
        uid=str(meta.get("uid", default_uid)),
        turns=_turns(events),
        reward=_reward(meta.get("reward")),
        cohort=str(meta.get("cohort") or meta.get("model") or "unknown"),
        system=system,
        toolset=meta.get("toolset"),
    )


# --- the real-runs format ---------------------------------------------------------------------


def _from_real_run(item: dict[str, Any]) -> Conversation:
    usage = item.get("usage") or []
    events: list[tuple[str, Any]] = []
    replies = 0
    for event in item["ev"]:
        role = event.get("r")
        if role == "u":
            events.append(("user", str(event.get("x") or "")))
        elif role == "a":
            used = usage[replies] if replies < len(usage) else None
            replies += 1
            calls = tuple(
                Call(str(c.get("n", "")), _arguments(c.get("a")), str(c.get("id", "")))
                for c in _listed(event.get("c"))
            )
            events.append(("reply", Reply(str(event.get("x") or ""), calls, _usage(used))))
        elif role == "t":
            result = Result(str(event.get("n", "")), str(event.get("x") or ""), _flag(event))
            events.append(("result", (str(event.get("id", "")), result)))
    model, impl = item.get("model"), item.get("impl")
    return Conversation(
        uid=str(item.get("uid", "run")),
        turns=_turns(events),
        reward=_reward(item.get("reward")),
        cohort=" / ".join(str(part) for part in (model, impl) if part) or "unknown",
        system=item.get("system"),
        toolset=item.get("toolset"),
    )


def _listed(calls: Any) -> list[dict[str, Any]]:
    """A message's calls, as a list of dicts (some logs hold the list's Python repr)."""
    if isinstance(calls, str):
        import ast

        try:
            calls = ast.literal_eval(calls) if calls.strip() else []
        except (ValueError, SyntaxError, RecursionError, MemoryError):
            raise RecordError(f"unreadable tool calls {calls[:80]!r}") from None
    return [c for c in calls or [] if isinstance(c, dict)]


def _flag(event: dict[str, Any]) -> bool:
    value = event.get("e")
    return str(value).strip() not in ("", "0", "False", "false", "None")


# --- OpenAI and LangChain messages ------------------------------------------------------------


def _from_openai(messages: list[Any]) -> tuple[list[tuple[str, Any]], str | None]:
    events: list[tuple[str, Any]] = []
    system = None
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            raise RecordError(f"message {index} is not an object")
        role = message.get("role")
        text = _text(message.get("content"))
        if role in ("system", "developer"):
            system = text if system is None else f"{system}\n\n{text}"
        elif role == "user":
            events.append(("user", text))
        elif role == "assistant":
            calls = tuple(_openai_call(c, index) for c in message.get("tool_calls") or [])
            used = message.get("usage") or {}
            usage = _usage([used.get("prompt_tokens"), used.get("completion_tokens")])
            events.append(("reply", Reply(text, calls, usage)))
        elif role == "tool":
            result = Result(str(message.get("name", "")), text, bool(message.get("is_error")))
            events.append(("result", (str(message.get("tool_call_id", "")), result)))
        else:
            raise RecordError(f"message {index} has an unknown role {role!r}")
    return events, system


def _openai_call(call: Any, index: int) -> Call:
    function = call.get("function") if isinstance(call, dict) else None
    if not isinstance(function, dict):
        raise RecordError(f"message {index}: a tool call without a function")
    return Call(
        str(function.get("name", "")), _arguments(function.get("arguments")), str(call.get("id"))
    )


def _from_langchain(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """LangChain's dict form as OpenAI messages (the same facts, other names)."""
    from langchain_core.messages import AIMessage, ToolMessage, messages_from_dict

    try:
        parsed = messages_from_dict(messages)
    except (KeyError, ValueError, TypeError) as exc:
        raise RecordError(f"not a LangChain message list ({exc})") from None
    roles = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}
    out: list[dict[str, Any]] = []
    for message in parsed:
        item: dict[str, Any] = {"role": roles.get(message.type, message.type)}
        item["content"] = message.text
        if isinstance(message, AIMessage):
            item["tool_calls"] = [
                {"id": c["id"], "function": {"name": c["name"], "arguments": c["args"]}}
                for c in message.tool_calls
            ]
            if message.usage_metadata:
                used = message.usage_metadata
                item["usage"] = {
                    "prompt_tokens": used["input_tokens"],
                    "completion_tokens": used["output_tokens"],
                }
        if isinstance(message, ToolMessage):
            item |= {"tool_call_id": message.tool_call_id, "name": message.name or ""}
            item["is_error"] = message.status == "error"
        out.append(item)
    return out


# --- shared -----------------------------------------------------------------------------------


def _turns(events: Iterable[tuple[str, Any]]) -> tuple[Turn, ...]:
    turns: list[Turn] = []
    user: str | None = None
    replies: list[Reply] = []
    results: dict[str, Result] = {}
    for kind, value in events:
        if kind == "user":
            if user is not None:
                turns.append(Turn(user, tuple(replies), results))
            user, replies, results = value, [], {}
        elif user is None:
            continue  # before the first user message: a greeting, no task yet
        elif kind == "reply":
            replies.append(value)
        else:
            call_id, result = value
            results[call_id] = result
    if user is not None:
        turns.append(Turn(user, tuple(replies), results))
    return tuple(turns)


def _arguments(value: Any) -> dict[str, Any]:
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else {}
        except json.JSONDecodeError:
            return {"__raw__": value}
    return value if isinstance(value, dict) else {"__raw__": value}


def _usage(value: Any) -> tuple[int, int] | None:
    if not isinstance(value, list | tuple) or len(value) != 2:
        return None
    prompt, completion = value
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value):
        return None
    return prompt, completion


def _reward(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _text(content: Any) -> str:
    if isinstance(content, list):  # content parts
        return "".join(str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in content)
    return "" if content is None else str(content)


def _objects(path: Path) -> Iterator[tuple[str, Any]]:
    """(where, value) for each conversation object in the file."""
    if not path.is_file():
        raise RecordError(f"{path}: no such file")
    opener = gzip.open if path.suffix == ".gz" else open
    name = path.name.removesuffix(".gz")
    try:
        with opener(path, "rt", encoding="utf-8") as handle:  # type: ignore[operator]
            if name.endswith(".jsonl"):
                for number, line in enumerate(handle, 1):
                    if line.strip():
                        yield f"{path.name}:{number}", _loads(line, f"{path.name}:{number}")
                return
            value = _loads(handle.read(), path.name)
    except (OSError, UnicodeDecodeError, EOFError) as exc:
        raise RecordError(f"{path}: cannot read ({exc})") from None
    is_batch = isinstance(value, list) and value and isinstance(value[0], dict | list)
    if is_batch and not (isinstance(value[0], dict) and ("role" in value[0] or "type" in value[0])):
        for number, item in enumerate(value, 1):
            yield f"{path.name}[{number}]", item
    else:
        yield path.name, value


def _loads(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise RecordError(f"{where}: not JSON ({exc.msg} at line {exc.lineno})") from None
    except RecursionError:
        raise RecordError(f"{where}: JSON nested too deep to read") from None
