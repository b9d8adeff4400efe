"""Counting a function's calls in a test: the function still runs, each call is recorded."""

from __future__ import annotations

from typing import Any

import pytest


def counted(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str) -> list[int]:
    """Wrap `owner.name` so that each call appends 1 to the returned list (and runs it)."""
    seen: list[int] = []
    real = getattr(owner, name)

    def counting(*args: Any, **kwargs: Any) -> Any:
        seen.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, counting)
    return seen


def statements(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record the name of every named statement a graph runs (`Graph.q`), in order."""
    from rose.graph.engine import Graph

    ran: list[str] = []
    real = Graph.q

    def q(self: Graph, name: str, **params: Any) -> list[dict]:
        ran.append(name)
        return real(self, name, **params)

    monkeypatch.setattr(Graph, "q", q)
    return ran
