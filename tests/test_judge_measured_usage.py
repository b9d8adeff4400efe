"""A judge event's latency is measured, and only real figures sit where measured ones go.

Locks in: `latency_ms` is always the judge's own measurement of the call, never a
backend's figure (the simulated backend once put an invented 0.6 s+ there); a backend's
real figures (the claude CLI's tokens and cost, its process's wall time) are logged as
reported, the wall time as `backend_latency_ms`; the scripted and claude backends' events
carry no `simulated` label; a simulated backend's projection is logged under `simulated`.
"""

from __future__ import annotations

import json
import time

import pytest

from rose.events import read_events
from rose.judge.calls import Judge, usage_fields
from rose.model.base import SimulatedUsage, Usage
from rose.model.claude import ClaudeBackend
from rose.model.scripted import ScriptedBackend
from rose.sim import World, examples
from tests.test_backend_claude import install_fake

SCOPE = {"scope": "project", "reason": "names this repository's deploy script"}


def _ask(tmp_path, backend) -> tuple[dict, float]:
    """The judge event of one `scope` call, and the milliseconds the call took outside."""
    judge = Judge(backend, cache_path=None, events_path=tmp_path / "e.jsonl")
    started = time.perf_counter()
    judge.ask("scope", examples.contexts(World.generate(3))["scope"])
    elapsed_ms = (time.perf_counter() - started) * 1000
    (event,) = read_events(tmp_path / "e.jsonl", kind="judge")
    return event, elapsed_ms


def test_scripted_backend_event_is_measured_and_not_simulated(tmp_path):
    event, elapsed_ms = _ask(tmp_path, ScriptedBackend({"scope": [SCOPE]}))
    assert 0 < event["latency_ms"] <= elapsed_ms
    assert (event["cost_usd"], event["input_tokens"], event["output_tokens"]) == (0, 0, 0)
    assert "simulated" not in event and "backend_latency_ms" not in event


def test_claude_figures_are_logged_as_reported(tmp_path, monkeypatch):
    install_fake("claude", tmp_path, monkeypatch)
    monkeypatch.setenv("FAKE_ANSWER", json.dumps(SCOPE))
    event, elapsed_ms = _ask(tmp_path, ClaudeBackend())
    assert 0 < event["latency_ms"] <= elapsed_ms
    assert 0 < event["backend_latency_ms"] <= event["latency_ms"]  # the CLI process alone
    assert event["input_tokens"] == 12 + 100 + 2000
    assert event["output_tokens"] == 34
    assert event["cost_usd"] == pytest.approx(0.0123)
    assert "simulated" not in event


def test_usage_fields_keep_simulated_figures_apart():
    sim = SimulatedUsage(input_tokens=300, output_tokens=20, cost_usd=0.0012, wall_s=0.846)
    assert usage_fields(Usage(simulated=sim)) == {
        "input_tokens": 0,
        "output_tokens": 0,
        "cost_usd": 0.0,
        "simulated": {
            "input_tokens": 300,
            "output_tokens": 20,
            "cost_usd": 0.0012,
            "latency_ms": 846.0,
        },
    }
    assert usage_fields(None) == {"input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0}
