"""The data model: lessons (nodes), episodes, routing rules, sessions and events."""

from __future__ import annotations

import re
import secrets
from datetime import datetime, timezone
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

Status = Literal["active", "superseded", "demoted", "disputed", "archived"]
Origin = Literal["reflection", "compression", "merge", "manual"]
Scope = Literal["project", "global"]
Outcome = Literal["success", "failure", "partial", "unknown"]
ClaimKind = Literal["parameter", "detail", "step", "example", "caveat", "principle", "other"]

#: Statuses recall may serve: disputed lessons stay servable, their question attached.
SERVABLE: tuple[str, ...] = ("active", "disputed")

_FAMILY_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
_ID_RE = re.compile(r"^[a-z]_[0-9a-zA-Z_-]{4,64}$")


def new_id(prefix: str) -> str:
    """A fresh id: one letter, underscore, 80 random bits in hex (20 chars)."""
    return f"{prefix}_{secrets.token_hex(10)}"


def now() -> datetime:
    return datetime.now(timezone.utc).replace(microsecond=0)


def slug(text: str) -> str:
    """A family name usable as a folder: lowercase words joined by dashes."""
    s = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:64].strip("-")
    return s or "general"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class Claim(_Model):
    """A piece of detail a compression or merge removed, and the node that still holds it."""

    claim: str = Field(min_length=1)
    kind: ClaimKind = "detail"
    holder: str = Field(description="id of the lesson whose body still has this detail")


class Stats(_Model):
    attempts: int = Field(0, ge=0)
    successes: int = Field(0, ge=0)
    failures: int = Field(0, ge=0)
    expansions: int = Field(0, ge=0)
    rescues: int = Field(0, ge=0)
    last_used: datetime | None = None

    @property
    def success_rate(self) -> float | None:
        judged = self.successes + self.failures
        return self.successes / judged if judged else None


def _check_ids(values: list[str], what: str) -> list[str]:
    for v in values:
        if not _ID_RE.match(v):
            raise ValueError(f"{what} entry {v!r} is not a valid id")
    return list(dict.fromkeys(values))  # drop duplicates, keep order


class Node(_Model):
    """One lesson at one level of abstraction."""

    id: str = Field(default_factory=lambda: new_id("n"))
    family: str = "general"
    title: str = Field(min_length=1)
    gist: str = ""
    body: str = ""
    level: int = Field(0, ge=0)
    status: Status = "active"
    origin: Origin = "manual"
    conflict: str = ""
    disputes: list[str] = Field(default_factory=list)
    derived_from: list[str] = Field(default_factory=list)
    parents: list[str] = Field(default_factory=list)
    covers_tasks: list[str] = Field(default_factory=list)
    dropped: list[Claim] = Field(default_factory=list)
    preserve: list[str] = Field(default_factory=list)
    load_bearing: list[str] = Field(default_factory=list)
    patches: list[str] = Field(
        default_factory=list, description="dropped detail that rescued this lesson: re-attached"
    )
    scope: Scope = "project"
    stats: Stats = Field(default_factory=Stats)
    created: datetime = Field(default_factory=now)
    updated: datetime = Field(default_factory=now)

    @field_validator("id")
    @classmethod
    def _id_ok(cls, v: str) -> str:
        if not _ID_RE.match(v):
            raise ValueError(f"{v!r} is not a valid lesson id (letter, '_', 4+ characters)")
        return v

    @field_validator("family")
    @classmethod
    def _family_ok(cls, v: str) -> str:
        if not _FAMILY_RE.match(v):
            raise ValueError(
                f"{v!r} is not a valid family (lowercase letters, digits, '-' and '_')"
            )
        return v

    @field_validator("derived_from", "parents", "covers_tasks", "disputes")
    @classmethod
    def _ids_ok(cls, v: list[str], info) -> list[str]:
        return _check_ids(v, info.field_name)

    @property
    def servable(self) -> bool:
        return self.status in SERVABLE


class Episode(_Model):
    """A recorded piece of accepted work: the replay corpus compressions are checked on."""

    id: str = Field(default_factory=lambda: new_id("e"))
    prompt: str = ""
    outcome: Outcome = "unknown"
    served: list[str] = Field(default_factory=list)
    used: list[str] = Field(default_factory=list)
    accepted_summary: str = ""
    session: str = ""
    time: datetime = Field(default_factory=now)

    @field_validator("served", "used")
    @classmethod
    def _ids_ok(cls, v: list[str], info) -> list[str]:
        return _check_ids(v, info.field_name)


class RoutingRule(_Model):
    """A selection lesson: when a kind of task comes up, where (not) to look."""

    id: str = Field(default_factory=lambda: new_id("r"))
    when: str = Field(min_length=1, description="the kind of task this applies to")
    then: str = Field(min_length=1, description="where to look, or what to skip")
    helped: int = Field(0, ge=0)
    hurt: int = Field(0, ge=0)
    created: datetime = Field(default_factory=now)


class ServedEntry(_Model):
    turn: int = Field(ge=0)
    form: Literal["full", "refresher"] = "full"


class SessionRecord(_Model):
    """Per-session scratch: what was served when, for the fresh/stale/refresh decision."""

    session: str
    turn: int = 0
    served: dict[str, ServedEntry] = Field(default_factory=dict)
    tool_calls: int = 0
    failed_tool_calls: int = 0
    turns_since_nudge: int = 0
    last_nudge: datetime | None = None
    transcript_path: str = ""
    host: Literal["claude", "codex", "unknown"] = "unknown"


EventKind = Literal[
    "inject",
    "judge",
    "error",
    "add",
    "write",
    "reindex",
    "sync",
    "nudge",
    "reflect",
    "assess",
    "compress",
    "descend",
    "merge",
    "route",
    "config",
]


class Event(_Model):
    model_config = ConfigDict(extra="allow")

    time: datetime = Field(default_factory=now)
    kind: str
