"""Counterfactual checks run as a job queued by a session end, and the job checks in earnest.

Locks in: `counterfactual` is a job kind; a session end that wrote an attributed episode
which served a lesson queues one (not spawned: the runner that ran the session end drains
the queue), and none when `attribute.counterfactual_calls` is 0; the job probes in fresh
processes and logs its checks within the budget.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rose import config
from rose.events import read_events
from rose.files import sessions
from rose.jobs import bodies, learning
from rose.jobs.queue import KINDS, JobContext, jobs
from rose.loop.reflection.counterfactual import CHECKED
from rose.store.facade import Store

pytestmark = pytest.mark.graph

SID = "sess-counterfactual-1"
PROMPT = "make the api listen on the right port"


def _ended(project: Path, calls: str) -> Store:
    store = Store.init(project)
    config.set_override(store.primary.config, "agent", "simulated")
    config.set_override(store.primary.config, "attribute.counterfactual_calls", calls)
    lesson = store.add("The api listens on 8081.", title="API port")
    sessions.append(store.primary.root, SID, "prompt", turn=1, prompt=PROMPT, served=[lesson.id])
    sessions.append(store.primary.root, SID, "used", turn=1, used=[lesson.id], source="rose used")
    transcript = project / "t.jsonl"
    rec = {"type": "user", "uuid": "u1", "sessionId": SID, "version": "2.1.38",
           "message": {"role": "user", "content": PROMPT}}  # fmt: skip
    transcript.write_text(json.dumps(rec) + "\n")
    store = Store.open(project)
    end = {"session_id": SID, "transcript_path": str(transcript), "reason": "exit"}
    learning.session_end(JobContext(store.primary, {"attempt": 1}, end))
    return store


def _queued(store: Store) -> list[dict]:
    return [r for r in jobs(store.primary) if r["kind"] == "counterfactual"]


def test_a_session_end_queues_the_check_and_the_job_runs_it(project: Path):
    store = _ended(project, "3")
    (job,) = _queued(store)
    assert job["state"] == "queued" and "counterfactual" in KINDS
    bodies.counterfactual(JobContext(store.primary, {"attempt": 1}, {"session": SID}))
    (check,) = read_events(store.primary.events, kind=CHECKED)
    assert check["used"] is True and isinstance(check["changed"], bool)
    probes = [e for e in read_events(store.primary.events, kind="judge")
              if e["call"] == "counterfactual_probe"]  # fmt: skip
    assert len(probes) == 2  # each asked by a fresh process, logged to the store's events


def test_no_job_when_the_budget_is_zero(project: Path):
    assert _queued(_ended(project, "0")) == []
