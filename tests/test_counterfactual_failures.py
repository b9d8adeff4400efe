"""A counterfactual check that fails records no verdict, never an agreement.

Locks in: a probe the backend fails on, and a judgement that does not fit its schema, leave
no `counterfactual` event and nothing in the summary; each is a `counterfactual-failed`
event naming the error, the pair is tried again on the next run, and after `TRIES`
failed runs it is left alone, so one broken pair cannot take every run's budget.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rose.errors import BackendFailed
from rose.events import read_events
from rose.loop.abstraction import replay as _replay
from rose.loop.reflection.counterfactual import (
    CHECKED,
    FAILED,
    TRIES,
    agreement,
    counterfactual,
    due,
)
from rose.store.facade import Store
from tests._counterfactual import scripted, served

pytestmark = pytest.mark.graph


def _run(store: Store, judge):
    return counterfactual(store, judge=judge, prober=_replay.in_process_set(judge), calls=3)


def _nothing_recorded(store: Store) -> None:
    assert read_events(store.primary.events, kind=CHECKED) == []
    assert agreement(store) == {
        "checked": 0,
        "agreed": 0,
        "agreement": None,
        "used": {"checked": 0, "agreed": 0},
        "unused": {"checked": 0, "agreed": 0},
        "corrected": 0,
    }


def test_a_failed_probe_records_nothing_and_is_tried_again_then_left(project: Path):
    store, ids = served(project, 1)
    for attempt in range(TRIES):
        judge, backend = scripted(store, probes=0)
        backend.push("counterfactual_probe", BackendFailed("scripted", "the model is down"))
        (check,) = _run(store, judge)
        assert check.changed is None and check.agree is None and "down" in check.error
        _nothing_recorded(store)
        assert len(read_events(store.primary.events, kind=FAILED)) == attempt + 1
    assert due(store) == []
    judge, backend = scripted(store)
    assert _run(store, judge) == [] and backend.requests == []


def test_an_unreadable_judgement_records_nothing(project: Path):
    store, ids = served(project, 1)
    judge, backend = scripted(store, changed=[])
    backend.push("counterfactual", '{"changed": "perhaps", "reason": "unsure"}')
    (check,) = _run(store, judge)
    assert check.agree is None and "AnswerInvalid" in check.error
    _nothing_recorded(store)
    (failed,) = read_events(store.primary.events, kind=FAILED)
    assert failed["episode"] == check.episode and failed["lesson"] == ids[0]
    assert [(ep.id, lesson.id) for ep, lesson in due(store)] == [(check.episode, ids[0])]
