"""A compression or merge that a held-out replay fails after acceptance is demoted at once.

Locks in: the held-out replays were only logged, so a compression that lost what unseen
work needed was served all the same. Now a held-out replay that fails (a verdict) demotes
the new lesson as `rose.loop.abstraction.demote` does (its sources active apexes again, a `demote`
event with cause `held-out`), what the failing replays found missing becomes preserve
hints (on the original of a compression; with the `merge` event for a merge, shown to the
group's next attempt), and `rose status` counts the demotion. A held-out replay that could
not run (a timeout) is no verdict and demotes nothing. A demoted merge parent no longer
counts as one its group shares, so the group is merged again after a new co-use.
"""

from __future__ import annotations

from collections.abc import Collection

import pytest

from rose.errors import BackendTimeout
from rose.events import read_events
from rose.inspect.status import status
from rose.loop.abstraction import _sample
from rose.loop.abstraction import compress as c
from rose.loop.abstraction import merge as mg
from rose.loop.abstraction import replay as _replay
from rose.store import dag
from rose.store.facade import Store
from tests import _compress, _merge

pytestmark = pytest.mark.graph

#: What a probe that lost the lesson's point answers.
NOTHING = "I would read the code and try something."


def _held_out(store: Store, lesson_id: str) -> set[str]:
    """The prompts of the episodes `lesson_id`'s compression holds out."""
    cfg = store.config.compress
    cases = _replay.cases(dag.regression_set(store, lesson_id))
    split = _sample.split(lesson_id, cases, sample=cfg.sample, held_out=cfg.held_out)
    return {case.prompt for case in split.held_out}


def _failing_on(j, prompts: Collection[str], *, timeout: bool = False) -> _replay.Prober:
    """A prober that answers like the real one, but has lost the point on `prompts` (or,
    with `timeout`, gets no answer in time on them)."""
    ask = _replay.in_process(j)

    def probe(lesson, prompt):
        if prompt in prompts:
            if timeout:
                raise BackendTimeout("replay process", 1)
            return NOTHING
        return ask(lesson, prompt)

    return probe


def test_a_compression_failed_by_a_held_out_replay_is_demoted(project):
    f = _compress.family(project, seed=0)
    j = _compress.judge(f)
    held = _held_out(f.store, f.node.id)
    assert len(held) == 1
    (attempt,) = c.compress_due(f.store, judge=j, prober=_failing_on(j, held))
    assert attempt.result == "accepted" and all(r.passed for r in attempt.replays)
    assert attempt.held_out == {"passed": 0, "total": 1}
    assert attempt.demoted and attempt.preserve
    new, original = f.store.get(attempt.new), f.store.get(f.node.id)
    assert (new.status, original.status) == ("demoted", "active")
    assert [a["id"] for a in dag.apexes(f.store)] == [original.id]
    assert all(h in original.preserve for h in attempt.preserve)
    assert any(p in attempt.preserve[0] for p in held)  # the hint names the task
    (event,) = read_events(f.store.primary.events, kind="demote")
    assert (event["lesson"], event["cause"], event["restored"]) == (
        new.id,
        "held-out",
        [original.id],
    )
    (logged,) = read_events(f.store.primary.events, kind="compress")
    assert logged["demoted"] is True and logged["preserve"] == attempt.preserve
    report = status(f.store)["compression"]
    assert (report["accepted"], report["demoted"], report["held_out_pass_rate"]) == (1, 1, 0.0)


def test_a_held_out_replay_that_could_not_run_demotes_nothing(project):
    f = _compress.family(project, seed=0)
    j = _compress.judge(f)
    held = _held_out(f.store, f.node.id)
    (attempt,) = c.compress_due(f.store, judge=j, prober=_failing_on(j, held, timeout=True))
    assert attempt.result == "accepted" and not attempt.demoted
    assert attempt.held_out == {"passed": 0, "total": 0, "unrun": 1}
    assert f.store.get(attempt.new).status == "active"
    assert f.store.get(f.node.id).status == "superseded"
    assert read_events(f.store.primary.events, kind="demote") == []
    assert status(f.store)["compression"]["demoted"] == 0


def test_a_merge_failed_by_a_held_out_replay_is_demoted_and_tried_again(project):
    p = _merge.pair(project, seed=0)
    j = _merge.judge(p)
    held = _held_out(p.store, p.a.id) | _held_out(p.store, p.b.id)
    assert held
    (attempt,) = mg.merge_due(p.store, judge=j, prober=_failing_on(j, held))
    assert attempt.result == "accepted" and all(r.passed for r in attempt.replays)
    assert attempt.demoted and attempt.preserve
    parent = p.store.get(attempt.new)
    assert parent.status == "demoted"
    assert {p.store.get(i).status for i in (p.a.id, p.b.id)} == {"active"}
    assert sorted(a["id"] for a in dag.apexes(p.store)) == sorted([p.a.id, p.b.id])
    (event,) = read_events(p.store.primary.events, kind="demote")
    assert event["cause"] == "held-out" and sorted(event["restored"]) == sorted([p.a.id, p.b.id])
    assert mg.merge_summary(p.store) == {"accepted": 1, "rejected": 0, "demoted": 1}
    assert status(p.store)["merges"]["demoted"] == 1

    (group,) = [g for g in mg.candidates(p.store) if set(g.members) == {p.a.id, p.b.id}]
    assert group.reason == "no new co-use since its last attempt"
    _merge.more_together(p)
    (again,) = [g for g in mg.candidates(p.store) if set(g.members) == {p.a.id, p.b.id}]
    assert again.due, again.reason
    assert set(attempt.preserve) <= set(mg._hints(p.store, ",".join(again.members)))
