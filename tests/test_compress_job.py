"""Compression runs as a job after a session that succeeded.

Locks in: `compress` is a job kind; a session end that wrote a successful episode using a
lesson queues one `compress` job (not spawned: the runner that ran the session end drains
the queue), at most one a successful session, and a `merge` job after it; the job
compresses what is due.
"""

from __future__ import annotations

import json

import pytest

from rose.files.layout import StoreDir
from rose.jobs import bodies
from rose.jobs.queue import KINDS, JobContext, jobs
from tests._compress import family
from tests._demo_run import demo_json


@pytest.mark.heavy
def test_a_successful_session_queues_a_compress_job(tmp_path_factory: pytest.TempPathFactory):
    # the demo's run of seed 1 over 5 sessions, shared with tests/test_demo_baselines.py
    _, where = demo_json(tmp_path_factory, sessions=5, seed=1)
    root = where / ".rose"
    episodes = [json.loads(p.read_text()) for p in (root / "episodes").glob("*.json")]
    succeeded = sum(1 for e in episodes if e["outcome"] == "success" and e["used"])
    queued = [r for r in jobs(StoreDir(root, "project")) if r["kind"] == "compress"]
    assert succeeded and 1 <= len(queued) <= succeeded
    assert KINDS["compress"].target is bodies.compress
    merges = [r for r in jobs(StoreDir(root, "project")) if r["kind"] == "merge"]
    assert [r["key"].replace(":merge:", ":") for r in merges] == [
        r["key"].replace(":compress:", ":") for r in queued
    ]


def test_the_job_compresses_what_is_due(project):
    f = family(project, seed=0)
    bodies.compress(JobContext(f.store.primary, {"attempt": 1}, {"session": "s"}))
    assert f.store.get(f.node.id).status == "superseded"
