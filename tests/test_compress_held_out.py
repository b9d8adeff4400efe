"""A seeded share of a lesson's episodes is held out of validation and checked afterwards.

Locks in: the held-out episodes never reach a probe while the candidate is validated, and
are replayed once it is accepted, the result logged; `rose status` reports the held-out
pass rate of accepted compressions; a lesson with fewer than three episodes holds none
out, and says so; the same lesson holds out the same episodes on every attempt.
"""

from __future__ import annotations

from rose.inspect.status import status
from rose.loop.abstraction import _sample
from rose.loop.abstraction import compress as c
from rose.loop.abstraction.replay import Case
from tests._compress import family, judge, prober


def _recording(j, seen: list[str]):
    ask = prober(j)

    def probe(lesson, prompt):
        seen.append(prompt)
        return ask(lesson, prompt)

    return probe


def test_held_out_episodes_are_checked_only_after_acceptance(project):
    f = family(project, seed=0)
    j = judge(f)
    seen: list[str] = []
    (attempt,) = c.compress_due(f.store, judge=j, prober=_recording(j, seen))
    assert attempt.result == "accepted", attempt.reason
    validated = len(attempt.replays)
    assert attempt.held_out == {"passed": 1, "total": 1}
    assert validated + 1 == len(seen) == len(f.work)
    held = seen[-1]
    assert held not in seen[:validated]  # never shown to validation
    report = status(f.store)["compression"]
    assert report["accepted"] == 1 and report["held_out_pass_rate"] == 1.0


def test_fewer_than_three_episodes_hold_none_out_and_say_so(project):
    f = family(project, seed=0, pieces=2)
    j = judge(f)
    (attempt,) = c.compress_due(f.store, judge=j, prober=prober(j))
    assert attempt.result == "accepted", attempt.reason
    assert attempt.held_out is None and "none held out" in attempt.held_out_note
    assert len(attempt.replays) == 2
    assert status(f.store)["compression"]["held_out_pass_rate"] is None


def test_the_split_is_seeded_by_the_lesson():
    cases = [Case(episode=f"e_{i:04d}", prompt=f"p{i}", accepted="a") for i in range(8)]
    one = _sample.split("n_abcd", cases, sample=5, held_out=0.25)
    again = _sample.split("n_abcd", list(reversed(cases)), sample=5, held_out=0.25)
    assert one == again and len(one.held_out) == 2 and len(one.sample) == 5
    assert not {c.episode for c in one.held_out} & {c.episode for c in one.sample}
