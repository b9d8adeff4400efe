"""A trial patch that did not help on its next serving is dropped from its lesson.

Locks in: the patch descent attaches after a failure (for the lesson's next serving) stayed
on the lesson for good whether or not it helped. Now its first serving with a known outcome
judges it: the work failed again, or the lesson was judged unused, and the patch is taken
off the lesson (no longer in its block); the work succeeded using the lesson, and it stays
for good (a later failure does not drop it). An unknown outcome judges nothing. A patch
that is no trial (a refinement's) is never dropped. Each verdict is a `trial-patch` event,
and `rose status` counts them.
"""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from rose.cli import app
from rose.events import read_events
from rose.inspect.status import status
from rose.jobs import learning
from rose.loop.abstraction import descend, trial
from rose.models import claim_id
from rose.store.facade import Store
from tests._lineage import L1, SECOND, patch, two_levels, unit

pytestmark = pytest.mark.graph


def _trial(store: Store) -> str:
    """A failure of work L1 served leaves a trial patch on it (descent, no judge); its id."""
    two_levels(store)
    descend.after_failure(
        store, None, session_id="s0", turn=1, prompt="retry the client",
        failure="the retries hammered the service", served=[store.get(L1)], used=[L1],
    )  # fmt: skip
    (text,) = store.get(L1).patches
    return claim_id(L1, text)


def _serve(store: Store, sid: str, pid: str, *outcomes: str, used: bool = True) -> None:
    """A session serving L1 with the patch in its block, a unit per outcome, absorbed."""
    for turn, outcome in enumerate(outcomes, 1):
        unit(store, sid, turn, lesson=L1, outcome=outcome, patches=(pid,), used=used)
    learning.heal(store, learning._absorb(store, sid, final=True))


def _ids(store: Store) -> list[str]:
    return [claim_id(L1, p) for p in store.get(L1).patches]


def _in_block(store: Store, pid: str) -> bool:
    return any(pid in item["patch_ids"] for item in store.view()["lessons"])


def test_a_trial_patch_served_on_failing_work_is_dropped(store: Store):
    pid = _trial(store)
    assert trial.pending(store.primary.events) == {(L1, pid)} and _in_block(store, pid)
    _serve(store, "s1", pid, "failure")
    assert _ids(store) == [] and not _in_block(store, pid)
    (event,) = read_events(store.primary.events, kind=trial.TRIAL)
    assert (event["lesson"], event["patch"], event["verdict"]) == (L1, pid, "dropped")
    assert event["outcome"] == "failure" and event["carried"] is True
    assert trial.pending(store.primary.events) == set()
    assert status(store)["trial_patches"] == {"judged": 1, "kept": 0, "dropped": 1}
    shown = CliRunner().invoke(app, ["status"])
    assert shown.exit_code == 0, shown.output
    assert "1 trial patch(es) judged on their next serving: 0 kept, 1 dropped" in shown.stdout


def test_a_trial_patch_whose_lesson_went_unused_is_dropped(store: Store):
    pid = _trial(store)
    _serve(store, "s1", pid, "success", used=False)
    assert _ids(store) == []
    (event,) = read_events(store.primary.events, kind=trial.TRIAL)
    assert (event["verdict"], event["used"]) == ("dropped", False)


def test_a_trial_patch_that_helped_stays_for_good(store: Store):
    pid = _trial(store)
    _serve(store, "s1", pid, "success", "failure")  # the failure comes after its verdict
    assert _ids(store) == [pid]
    (event,) = read_events(store.primary.events, kind=trial.TRIAL)
    assert event["verdict"] == "kept"
    _serve(store, "s2", pid, "failure")
    assert _ids(store) == [pid]
    assert status(store)["trial_patches"] == {"judged": 1, "kept": 1, "dropped": 0}


def test_an_unknown_outcome_leaves_the_trial_to_the_next_serving(store: Store):
    pid = _trial(store)
    _serve(store, "s1", pid, "unknown")
    assert _ids(store) == [pid] and trial.pending(store.primary.events) == {(L1, pid)}
    _serve(store, "s2", pid, "failure")
    assert _ids(store) == []


def test_a_patch_that_is_no_trial_is_never_dropped(store: Store):
    two_levels(store)
    pid = patch(store, L1, SECOND)  # a refinement's patch, say: no descent attached it
    _serve(store, "s1", pid, "failure")
    assert _ids(store) == [pid]
    assert read_events(store.primary.events, kind=trial.TRIAL) == []
