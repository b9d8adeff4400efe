"""The one protocol every model backend implements."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True)
class SimulatedUsage:
    """What a call of this size would cost a hosted model: invented, never measured.

    Only the simulated backend fills it, as a projection for benchmarks. Its token
    counts are estimates (`rose.tokens.count`), its dollars and seconds come from
    made-up prices and latencies, and nothing adds it to the figures of `Usage`.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    wall_s: float = 0.0


@dataclass
class Usage:
    """What one call cost, as the backend reported or measured it: tokens, dollars, wall time.

    Every figure is real or 0: a backend that cannot know one leaves it at 0 rather than
    guess (codex reports no cost; the scripted backend reports nothing). `wall_s` is the
    backend's own figure, e.g. the CLI process's lifetime; the judge logs its own
    measurement beside it. Invented figures go in `simulated`, never here.
    """

    input_tokens: int = 0
    cached_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    wall_s: float = 0.0
    simulated: SimulatedUsage | None = None


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

    A backend may also offer ``prewarm(schema, n) -> int``: get ready for `n` questions
    with `schema` still to come, returning how many processes it started, never raising
    (`ClaudeBackend.prewarm`; `Judge.prewarm` calls it where it exists).
    """

    name: str

    def complete(
        self, call: str, prompt: str, schema: dict[str, Any], *, timeout_s: float
    ) -> BackendAnswer: ...
