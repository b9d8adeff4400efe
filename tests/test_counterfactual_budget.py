"""Counterfactual checks stay within their budget of model calls and never check a pair twice.

Locks in: a run makes at most `calls` requests (each probe and each judgement counts; an
episode's probe with everything it served is made once a run and shared by its lessons), a
pair is started only when its calls fit, `attribute.counterfactual_calls` is the default
budget and 0 makes no call at all; a pair checked (a `counterfactual` event) is not
checked again, so later runs take the pairs left and then ask nothing; an episode no
source attributed is never sampled.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rose import config
from rose.loop.abstraction import replay as _replay
from rose.loop.reflection.counterfactual import counterfactual, due
from rose.models import Episode
from rose.store.facade import Store
from tests._counterfactual import scripted, served

pytestmark = pytest.mark.graph


def _run(store: Store, calls: int | None):
    judge, backend = scripted(store)
    checks = counterfactual(store, judge=judge, prober=_replay.in_process_set(judge), calls=calls)
    return checks, [r.call for r in backend.requests]


def test_the_budget_caps_the_calls_and_later_runs_take_what_is_left(project: Path):
    store, ids = served(project, 3)
    checks, asked = _run(store, 6)
    assert len(checks) == 2  # 3 calls, then 2 (the whole probe is shared); a third needs 2 more
    probe, judge = "counterfactual_probe", "counterfactual"
    assert asked == [probe, probe, judge, probe, judge]
    checks_2, asked_2 = _run(store, 6)
    assert [c.lesson for c in checks_2] == sorted(set(ids) - {c.lesson for c in checks})
    assert len(asked_2) == 3
    checks_3, asked_3 = _run(store, 6)
    assert checks_3 == [] and asked_3 == []


def test_a_budget_too_small_for_one_pair_and_zero_ask_nothing(project: Path):
    store, _ = served(project, 2)
    for calls in (0, 2):
        checks, asked = _run(store, calls)
        assert checks == [] and asked == []
    assert len(due(store)) == 2


def test_the_setting_is_the_default_budget(project: Path):
    store, _ = served(project, 3)
    config.set_override(store.primary.config, "attribute.counterfactual_calls", "3")
    checks, asked = _run(Store.open(project), None)
    assert len(checks) == 1 and len(asked) == 3


def test_an_episode_nobody_attributed_is_not_sampled(project: Path):
    store, ids = served(project, 1)
    store.write([], [Episode(prompt="another task", outcome="unknown", served=ids)])
    assert [(ep.prompt, lesson.id) for ep, lesson in due(store)] == [("fix the port", ids[0])]
