"""A compressor that cuts a needed fact is rejected, and its rejection teaches the next try.

Locks in, on the simulated world (`over_cut`: the compressor cuts every fact it is not
told to keep): the failing replays reject the candidate and nothing is written but the
original's new preserve hints (what the judge found missing, with the task); the next
attempt, after a new success, keeps what they name, until one passes every replay.
"""

from __future__ import annotations

from rose.loop.abstraction import compress as c
from tests._compress import family, judge, prober, succeed


def test_a_rejection_becomes_preserve_hints_and_the_next_attempt_converges(project):
    f = family(project, seed=0, spans=False)
    j = judge(f, over_cut=1.0)
    (first,) = c.compress_due(f.store, judge=j, prober=prober(j))
    assert first.result == "rejected" and "replays failed" in first.reason
    original = f.store.get(f.node.id)
    assert original.status == "active" and original.preserve == first.preserve
    assert all("(task:" in hint for hint in original.preserve)
    assert [a["id"] for a in c.dag.apexes(f.store)] == [f.node.id]  # nothing new was stored
    results = [first.result]
    for _ in range(4):
        f.store.write([], succeed(f.node.id, f.work[:1]))  # a new success: due again
        (attempt,) = c.compress_due(f.store, judge=j, prober=prober(j))
        results.append(attempt.result)
        if attempt.result == "accepted":
            assert all(r.passed for r in attempt.replays)
            break
    assert results[-1] == "accepted", results
    # Accepted, the original steps aside; unless a held-out replay then failed the new form
    # (the held-out share is drawn by the episodes' ids), which demotes it at once and puts
    # the original back, with what was missing as a hint for the next attempt.
    if attempt.demoted:
        assert f.store.get(attempt.new).status == "demoted"
        assert f.store.get(f.node.id).status == "active"
    else:
        assert f.store.get(f.node.id).status == "superseded"


def test_without_a_new_success_a_rejected_lesson_is_not_tried_again(project):
    f = family(project, seed=0, spans=False)
    j = judge(f, over_cut=1.0)
    c.compress_due(f.store, judge=j, prober=prober(j))
    assert c.compress_due(f.store, judge=j, prober=prober(j)) == []
    (row,) = c.eligible(f.store)
    assert not row.eligible and "since its last attempt" in row.reason
