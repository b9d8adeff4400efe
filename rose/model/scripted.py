"""A backend that replays queued answers and records every request: for tests of later stages.

It behaves like a real backend at the edges: a text answer must parse, every answer
must fit the schema it is asked for, and an empty queue is a failure naming the call.
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass
from typing import Any

from rose.errors import BackendFailed
from rose.model._schema import check_answer, parse_answer
from rose.model.base import BackendAnswer, Usage

# A dict is the answer object, a str is raw model text, an exception is raised as is.
Answer = dict[str, Any] | str | BaseException


@dataclass
class ScriptedRequest:
    """One call the backend was asked to answer."""

    call: str
    prompt: str
    schema: dict[str, Any]
    timeout_s: float


class ScriptedBackend:
    """Answers each call from its own queue, in order."""

    name = "scripted"

    def __init__(self, answers: dict[str, list[Answer]] | None = None):
        self._queues: dict[str, deque[Answer]] = {
            call: deque(queue) for call, queue in (answers or {}).items()
        }
        self.requests: list[ScriptedRequest] = []

    def push(self, call: str, answer: Answer) -> None:
        """Queue one more answer for `call`."""
        self._queues.setdefault(call, deque()).append(answer)

    def pending(self, call: str | None = None) -> int:
        """How many answers are still queued, for one call or for all."""
        if call is not None:
            return len(self._queues.get(call, ()))
        return sum(len(queue) for queue in self._queues.values())

    def complete(
        self, call: str, prompt: str, schema: dict[str, Any], *, timeout_s: float
    ) -> BackendAnswer:
        self.requests.append(ScriptedRequest(call, prompt, schema, timeout_s))
        queue = self._queues.get(call)
        if not queue:
            raise BackendFailed(
                self.name,
                f"no scripted answer left for call {call!r}; "
                f"queue one with push({call!r}, answer) before running the stage",
            )
        answer = queue.popleft()
        if isinstance(answer, BaseException):
            raise answer
        if isinstance(answer, str):
            return BackendAnswer(data=parse_answer(call, answer, schema), raw=answer, usage=Usage())
        raw = json.dumps(answer)  # also a copy: the caller may mutate what it gets back
        data = check_answer(call, json.loads(raw), schema, raw)
        return BackendAnswer(data=data, raw=raw, usage=Usage())
