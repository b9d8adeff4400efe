"""Replay really runs each candidate probe in a fresh `rose` process (end to end, once).

Locks in: by default the candidate's probes are asked by `python -m rose.loop.abstraction.replay`,
which reads one JSON request on stdin (the candidate and the prompt, never the lesson it
would replace) and prints the approach as JSON, answering from the store's configured
backend; a process that cannot answer is a failed replay, never a pass, and no verdict
either: the attempt fails (not rejected, not counted as an attempt, so the lesson is tried
again), its failure teaches no preserve hint, and the event counts the replays that could
not run. A process that gives no answer in time is a `BackendTimeout`, logged as a `timeout`
event, which the benchmark's count of deadlines passed reads;
a merge whose replays time out decides nothing either.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from rose.errors import BackendTimeout
from rose.events import read_events
from rose.loop.abstraction import compress as c
from rose.loop.abstraction import merge as mg
from rose.loop.abstraction import replay as _replay
from rose.sim.hosts import drive
from tests import _merge
from tests._compress import family, judge


@pytest.mark.heavy
def test_compression_replays_in_fresh_processes(project):
    f = family(project, seed=0)
    (attempt,) = c.compress_due(f.store, judge=judge(f))  # the default prober
    assert attempt.result == "accepted", attempt.reason
    assert all(r.passed for r in attempt.replays) and attempt.held_out == {"passed": 1, "total": 1}


def test_the_child_sees_only_the_candidate_and_answers_in_json(project):
    f = family(project, seed=0)
    lesson = {"id": "n_cand", "title": "t", "gist": "g", "body": "Short form."}
    request = {"agent": "simulated", "model": "seed=0", "prompt": f.work[0][0], "lesson": lesson}
    done = subprocess.run(
        [sys.executable, "-m", "rose.loop.abstraction.replay"],
        input=json.dumps(request), capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["approach"]


def test_a_replay_process_that_cannot_answer_decides_nothing(project):
    f = family(project, seed=0)
    broken = _replay.FreshProcess("no-such-backend")
    (attempt,) = c.compress_due(f.store, judge=judge(f), prober=broken)
    assert attempt.result == "failed" and attempt.preserve == []
    assert "could not run: nothing decided" in attempt.reason
    assert all(not r.passed and "replay failed" in r.reason for r in attempt.replays)
    assert all(r.error == "BackendFailed" for r in attempt.replays)
    assert f.store.get(f.node.id).status == "active" and f.store.get(f.node.id).preserve == []
    (event,) = read_events(f.store.primary.events, kind="compress")
    assert not event["attempted"] and event["unrun"] == len(attempt.replays) > 0
    assert event["timeouts"] == 0
    (again,) = c.compress_due(f.store, judge=judge(f))  # still due: it was not an attempt
    assert again.result == "accepted", again.reason


def test_a_replay_process_that_times_out_is_counted_as_a_timeout(project, monkeypatch):
    f = family(project, seed=0)

    def no_answer(argv, **kwargs):
        raise subprocess.TimeoutExpired(argv, kwargs["timeout"])

    monkeypatch.setattr(_replay.subprocess, "run", no_answer)
    (attempt,) = c.compress_due(f.store, judge=judge(f))
    assert attempt.result == "failed" and "timed out" in attempt.reason
    assert {r.error for r in attempt.replays} == {"BackendTimeout"}
    (event,) = read_events(f.store.primary.events, kind="compress")
    assert event["timeouts"] == event["unrun"] == len(attempt.replays)
    late = read_events(f.store.primary.events, kind="timeout")
    assert len(late) == len(attempt.replays) and late[0]["what"] == "replay process"
    assert drive.timeouts(f.store.primary.events) == len(attempt.replays)


def test_a_merge_whose_replays_time_out_decides_nothing(project):
    p = _merge.pair(project, seed=0)
    j = _merge.judge(p)

    def late(lesson, prompt):
        raise BackendTimeout("replay process", 50)

    (attempt,) = mg.merge_due(p.store, judge=j, prober=late)
    assert attempt.result == "failed" and "timed out" in attempt.reason
    assert p.store.get(p.a.id).status == p.store.get(p.b.id).status == "active"
    (event,) = read_events(p.store.primary.events, kind="merge")
    assert not event["attempted"] and event["timeouts"] == event["unrun"] > 0
    (again,) = mg.merge_due(p.store, judge=j, prober=_merge.prober(j))
    assert again.result == "accepted", again.reason
