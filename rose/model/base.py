"""The one protocol every model backend implements."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable


@dataclass
class Usage:
    """What one call cost: tokens, dollars and wall time."""

    input_tokens: int = 0
    cached_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    wall_s: float = 0.0


@dataclass
class BackendAnswer:
    """A parsed JSON answer (already checked against the schema), the raw text and usage."""

    data: dict[str, Any]
    raw: str
    usage: Usage = field(default_factory=Usage)


@runtime_checkable
class Backend(Protocol):
    """Send one rendered prompt with the JSON schema its answer must fit.

    `call` names the semantic call (e.g. ``relevance``) for logging and for
    backends that answer per call; `timeout_s` bounds the whole exchange.
    Raises BackendUnavailable, BackendFailed, BackendTimeout or AnswerInvalid.
    """

    name: str

    def complete(
        self, call: str, prompt: str, schema: dict[str, Any], *, timeout_s: float
    ) -> BackendAnswer: ...
