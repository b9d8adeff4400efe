"""Replay really runs each candidate probe in a fresh `rose` process (end to end, once).

Locks in: by default the candidate's probes are asked by `python -m rose.loop._replay`,
which reads one JSON request on stdin (the candidate and the prompt, never the lesson it
would replace) and prints the approach as JSON, answering from the store's configured
backend; a process that cannot answer is a failed replay and the candidate is rejected,
never passed, and its failure teaches no preserve hint.
"""

from __future__ import annotations

import json
import subprocess
import sys

from rose.loop import _replay
from rose.loop import compress as c
from tests._compress import family, judge


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
        [sys.executable, "-m", "rose.loop._replay"],
        input=json.dumps(request), capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["approach"]


def test_a_replay_process_that_cannot_answer_rejects_the_candidate(project):
    f = family(project, seed=0)
    broken = _replay.FreshProcess("no-such-backend")
    (attempt,) = c.compress_due(f.store, judge=judge(f), prober=broken)
    assert attempt.result == "rejected" and attempt.preserve == []
    assert all(not r.passed and "replay failed" in r.reason for r in attempt.replays)
    assert f.store.get(f.node.id).status == "active"
