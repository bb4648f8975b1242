"""Everything ``tether run`` is asked to do, as one validated object.

The command's flags fill a :class:`RunOptions`; everything after parsing (settings, the run
store, the toolset, driving the run, answering approvals, the resume hint) takes this one
object, so a script can run an agent exactly as the command does.
"""

from __future__ import annotations

import os
import shlex
import uuid
from pathlib import Path
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from tether import TetherError
from tether.dburl import redacted

from tether_cli.approval_prompt import Answers, parse_edit_json
from tether_cli.locations import check_store, password_not_kept, without_password


def new_thread_id() -> str:
    return uuid.uuid4().hex


class RunOptions(BaseModel):
    """One ``tether run`` invocation; each field is the flag of the same name.

    Bad input raises :class:`TetherError` with the one line the command prints; the
    settings fields (endpoint, protocol, limits) are checked by ``load_settings``.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    task: str | None = None
    thread: str = Field(default_factory=new_thread_id)
    """Given: the run to resume (or the name of a new one); left out: a fresh id."""
    yes: bool = False
    approve: bool = False
    reject: str | None = None
    edit: dict[str, Any] | None = None
    """The new arguments; the flag's JSON text is parsed here."""
    as_json: bool = False
    tools: str | None = None
    """An installed toolset (``tether.toolsets`` entry point) or a module path; None: no tools."""
    data_dir: Path | None = None
    store: str | None = None
    world_db: str | None = None
    base_url: str | None = None
    model: str | None = None
    protocol: str | None = None
    max_steps: int | None = Field(None, ge=1)
    token_budget: int | None = Field(None, ge=1)
    switch_model: bool = False
    """Resume on another endpoint, model, protocol or toolset than the saved run remembers."""

    @field_validator("edit", mode="before")
    @classmethod
    def _parse_edit(cls, value: Any) -> Any:
        return parse_edit_json(value) if isinstance(value, str) else value

    @field_validator("thread")
    @classmethod
    def _check_thread(cls, value: str) -> str:
        if not value.strip():
            raise TetherError("--thread needs an id: it cannot be empty or blank")
        return value

    @field_validator("store")
    @classmethod
    def _check_store(cls, value: str) -> str:
        return check_store(value)

    @model_validator(mode="after")
    def _check(self) -> Self:
        self.answers()  # at most one decision flag
        if self.task is None and "thread" not in self.model_fields_set:
            raise TetherError("give a TASK, or --thread ID to resume a saved run")
        if self.world_db is not None and self.tools is None:
            raise TetherError("--world-db is the toolset's database: give --tools NAME too")
        return self

    @classmethod
    def from_flags(cls, **flags: Any) -> RunOptions:
        """The options from the command's flags, where None means "not given"."""
        return cls.model_validate({k: v for k, v in flags.items() if v is not None})

    def answers(self) -> Answers:
        """A fresh source of approval answers (each decision flag answers once)."""
        return Answers(self.yes, self.approve, self.reject, self.edit)

    def limits(self) -> dict[str, int]:
        """The per-run limits given (the run's context); empty when none are."""
        given = {"max_steps": self.max_steps, "token_budget": self.token_budget}
        return {key: value for key, value in given.items() if value is not None}

    def settings_overrides(self) -> dict[str, Any]:
        """The settings the flags override: endpoint, protocol and limits."""
        endpoint = {"base_url": self.base_url, "model": self.model, "protocol": self.protocol}
        return {k: v for k, v in endpoint.items() if v is not None} | self.limits()

    def resume_command(self) -> str:
        """The command that picks this run up again: the options that locate it, and the
        endpoint it runs on (a resume takes the saved one anyway; the command shows it).

        A database URL is never shown with its password: one that came from its environment
        variable is left out (the command reads the same variable), any other is shown
        without it (see :meth:`resume_note`)."""
        words = ["tether", "run", "--thread", self.thread]
        for name in RESUME_FLAGS:
            value = getattr(self, name)
            if value is None or (name == "model" and self.base_url is None):
                continue
            if name == "base_url" and password_not_kept(value):
                continue  # the URL is TETHER_BASE_URL's, or the note asks for it there
            if name in DATABASE_FLAGS and without_password(value) != value:
                if os.environ.get(DATABASE_FLAGS[name]) == value:
                    continue
                value = without_password(value)
            words += ["--" + name.replace("_", "-"), str(value)]
        return shlex.join(words)

    def resume_note(self) -> str:
        """What the resume command cannot show: the password of a database URL given as a
        flag, or the model's URL when it has one ("" when there is none)."""
        hidden = [
            (f"--{name.replace('_', '-')}", variable)
            for name, variable in DATABASE_FLAGS.items()
            if (value := getattr(self, name)) is not None
            and without_password(value) != value
            and os.environ.get(variable) != value
        ]
        flags = " and ".join(flag for flag, _ in hidden)
        variables = " and ".join(variable for _, variable in hidden)
        notes = [
            f"the password in {flags} is not shown: give it in PGPASSWORD (or ~/.pgpass), or "
            f"give the whole URL in {variables} and leave {flags} out"
        ] * bool(hidden)
        endpoint = os.environ.get("TETHER_BASE_URL")
        if password_not_kept(self.base_url) and redacted(endpoint or "") != self.base_url:
            notes.append("the model's URL is not shown (its password): give it in TETHER_BASE_URL")
        return "; ".join(notes)


RESUME_FLAGS = ("tools", "data_dir", "store", "world_db", "base_url", "model", "protocol")
"""The flags a resume command repeats (the model only with a base URL: the embedded model
has one of its own)."""
DATABASE_FLAGS = {"store": "TETHER_STORE", "world_db": "TETHER_WORLD_DB"}
"""The flags that may hold a database password, each with the variable that can give it."""
