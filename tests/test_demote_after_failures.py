"""A compression whose work failed `compress.demote_after` times in a row, with no rescue in
between, is demoted, and what it was derived from serves again; a rescue resets the count.

Locks in: demotion was not built, so a compression that kept failing was served forever
(descent attached patch after patch to it). Now, after a session's episodes are written,
the failures in a row of the episodes that used each compression are counted from the
episodes (an unknown outcome is passed over, a lesson served but not used is not blamed);
at the threshold the lesson is `demoted`, its superseded original is active again and an
apex (the recall view serves it, not the compression), and a `demote` event says so. A
rescue (a patch served on a success, a failure turned) ends the run, as does a success.
"""

from __future__ import annotations

import pytest

from rose.events import read_events
from rose.jobs import learning
from rose.jobs.queue import JobContext
from rose.loop.abstraction import demote
from rose.models import Node, claim_id
from rose.store import dag
from rose.store.facade import Store
from tests._lineage import FIRST, L0, L1, L2, VERBOSE, absorb, patch, three_levels, two_levels
from tests._lineage import unit as record

pytestmark = pytest.mark.graph


def _units(store: Store, sid: str, *outcomes: str, lesson: str = L1, **how) -> None:
    """One session with a unit per outcome, then its episodes written and acted on."""
    for turn, outcome in enumerate(outcomes, 1):
        record(store, sid, turn, lesson=lesson, outcome=outcome, **how)
    absorb(store, sid)


def _served(store: Store) -> list[str]:
    return [i["id"] for i in store.view()["lessons"]]


def test_demoted_at_the_threshold_and_the_original_serves_again(store: Store):
    assert store.config.compress.demote_after == 3
    two_levels(store)
    assert _served(store) == [L1]
    _units(store, "s1", "failure", "failure")
    assert store.get(L1).status == "active"
    _units(store, "s2", "failure")  # the third failure in a row
    assert store.get(L1).status == "demoted"
    assert store.get(L0).status == "active"
    assert [a["id"] for a in dag.apexes(store)] == [L0]
    assert _served(store) == [L0]
    (event,) = read_events(store.primary.events, kind="demote")
    assert (event["lesson"], event["failures"], event["restored"]) == (L1, 3, [L0])


def test_unknown_outcomes_and_lessons_not_used_are_not_counted(store: Store):
    two_levels(store)
    _units(store, "s1", "failure", "unknown")  # an unknown outcome says nothing either way
    _units(store, "s2", "failure", used=False)  # served beside failing work: not blamed
    _units(store, "s3", "failure")
    assert len(demote.failures_in_a_row(store, L1)) == 2
    assert store.get(L1).status == "active"


def test_a_lesson_derived_from_nothing_is_never_demoted(store: Store):
    store.save(Node(id=L0, family="retry", title="Retries", body=VERBOSE))
    _units(store, "s1", "failure", "failure", "failure", lesson=L0)
    assert len(demote.failures_in_a_row(store, L0)) == 3
    assert store.get(L0).status == "active"  # level 0: the floor descent escalates to


def test_a_patch_served_on_a_success_resets_the_count(store: Store):
    two_levels(store)
    pid = patch(store, L1, FIRST)
    record(store, "s1", 1, lesson=L1, outcome="failure")
    record(store, "s1", 2, lesson=L1, outcome="failure")
    record(store, "s1", 3, lesson=L1, outcome="success", patches=(pid,))  # the patch rescued it
    record(store, "s1", 4, lesson=L1, outcome="failure")
    record(store, "s1", 5, lesson=L1, outcome="failure")
    absorb(store, "s1")
    assert len(demote.failures_in_a_row(store, L1)) == 2
    assert store.get(L1).status == "active"


def test_a_failure_turned_by_a_claim_resets_the_count(store: Store):
    two_levels(store)
    record(store, "s1", 1, lesson=L1, outcome="failure")
    record(store, "s1", 2, lesson=L1, outcome="failure")
    record(store, "s1", 3, lesson=L1, outcome="failure", rescued=claim_id(L1, FIRST))
    record(store, "s1", 4, lesson=L1, outcome="failure")
    absorb(store, "s1")
    assert len(demote.failures_in_a_row(store, L1)) == 1
    assert store.get(L1).status == "active"
    assert read_events(store.primary.events, kind="demote") == []


def test_a_source_with_another_servable_lesson_above_stays_superseded(store: Store):
    three_levels(store)  # L2 over L1 over L0
    _units(store, "s1", "failure", "failure", "failure", lesson=L2)
    assert store.get(L2).status == "demoted"
    assert store.get(L1).status == "active" and store.get(L0).status == "superseded"
    assert [a["id"] for a in dag.apexes(store)] == [L1]


def test_the_absorb_job_demotes(store: Store):
    two_levels(store)
    for n in range(3):
        record(store, "s1", n + 1, lesson=L1, outcome="failure")
    job = JobContext(store.primary, {"attempt": 1}, {"session": "s1", "final": True})
    learning.absorb(job)
    assert store.get(L1).status == "demoted"
    assert _served(store) == [L0]
    assert L2 not in _served(store)
