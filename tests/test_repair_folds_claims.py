"""A dropped claim that rescued the same lesson `compress.repair_after` times is folded back
into its body and leaves its manifest and its patches; one rescue fewer changes nothing.

Locks in: repair was not built, so a claim descent had restored and that kept rescuing the
apex stayed a patch forever. Now, after a session's episodes are written, each rescue (a
successful use with the claim served as the apex's patch, or a failure the claim turned)
counts towards the threshold, counted from the episodes; at the threshold the claim's text
is appended to the body in one write, it is gone from the apex's own manifest and patches,
a `repair` event says so, and descent no longer offers it. A claim inherited from below
leaves the lower lesson's manifest as it was (still true of that lesson), and a
refinement's patch in no manifest is folded the same way.
"""

from __future__ import annotations

import pytest

from rose import config
from rose.events import read_events
from rose.loop.abstraction import descend, repair
from rose.models import claim_id
from rose.store import dag
from rose.store.facade import Store
from tests._lineage import FIRST, L0, L1, L2, SECOND, THIRD, absorb, patch, three_levels, two_levels
from tests._lineage import unit as record

pytestmark = pytest.mark.graph


def _successes(store: Store, lesson: str, pid: str, n: int, sid: str) -> None:
    for turn in range(1, n + 1):
        record(store, sid, turn, lesson=lesson, outcome="success", patches=(pid,))
    absorb(store, sid)


def test_the_claim_is_folded_at_the_threshold_and_not_one_below(store: Store):
    assert store.config.compress.repair_after == 3
    two_levels(store)
    pid = patch(store, L1, FIRST)
    _successes(store, L1, pid, 2, "s1")
    assert repair.due(store) == []
    lesson = store.get(L1)
    assert lesson.patches == [FIRST] and FIRST not in lesson.body
    assert read_events(store.primary.events, kind="repair") == []

    _successes(store, L1, pid, 1, "s2")  # the third rescue
    lesson = store.get(L1)
    assert lesson.body.endswith("\n\n" + FIRST)
    assert lesson.patches == []
    assert [c.claim for c in lesson.dropped] == [SECOND]  # the other claim stays dropped
    (event,) = read_events(store.primary.events, kind="repair")
    assert (event["lesson"], event["claim"], event["rescues"]) == (L1, claim_id(L1, FIRST), 3)
    assert (event["owner"], event["holder"], event["patch"]) == (L1, L0, True)
    assert [c.claim for c in descend.rank(store, None, L1, "it failed")] == [SECOND]
    assert repair.due(store) == []  # folded once: nothing is due again


def test_failures_turned_count_with_successes_served_on(store: Store):
    config.set_override(store.primary.config, "compress.repair_after", "2")
    store = Store.open()
    two_levels(store)
    cid = claim_id(L1, SECOND)
    record(store, "s1", 1, lesson=L1, outcome="success", rescued=cid)  # no patch: turned
    absorb(store, "s1")
    assert repair.due(store) == []
    pid = patch(store, L1, SECOND)
    assert pid == cid  # a claim the apex dropped itself: one id for claim and patch
    record(store, "s2", 1, lesson=L1, outcome="success", patches=(pid,))
    record(store, "s2", 2, lesson=L1, outcome="success", patches=(pid,), used=False)
    absorb(store, "s2")  # the second unit did not use the lesson: it credits nothing
    lesson = store.get(L1)
    assert SECOND in lesson.body and lesson.patches == []
    assert [c.claim for c in lesson.dropped] == [FIRST]


def test_an_inherited_claim_stays_in_the_lower_manifest(store: Store):
    three_levels(store)
    pid = patch(store, L2, FIRST)  # dropped by L1, held by L0, restored into the apex L2
    _successes(store, L2, pid, 3, "s1")
    apex = store.get(L2)
    assert FIRST in apex.body and apex.patches == []
    assert [c.claim for c in apex.dropped] == [THIRD]
    assert [c.claim for c in store.get(L1).dropped] == [FIRST, SECOND]
    manifest = {(r["claim"], r["dropped_by"]) for r in dag.delta_manifest(store, L2)}
    assert (FIRST, L1) in manifest
    offered = {c.claim for c in descend.rank(store, None, L2, "it failed")}
    assert offered == {SECOND, THIRD}
    (event,) = read_events(store.primary.events, kind="repair")
    assert (event["claim"], event["owner"]) == (claim_id(L1, FIRST), L1)


def test_a_refinement_patch_in_no_manifest_is_folded_too(store: Store):
    two_levels(store)
    detail = "A 429 carries Retry-After: wait that long instead."
    pid = patch(store, L1, detail)
    _successes(store, L1, pid, 3, "s1")
    lesson = store.get(L1)
    assert detail in lesson.body and lesson.patches == []
    assert {c.claim for c in lesson.dropped} == {FIRST, SECOND}


def test_only_apexes_are_repaired(store: Store):
    three_levels(store)
    pid = patch(store, L1, FIRST)  # L1 is superseded by L2: never served, never repaired
    for turn in range(1, 4):
        record(store, "s1", turn, lesson=L1, outcome="success", patches=(pid,))
    absorb(store, "s1")
    assert store.get(L1).patches == [FIRST]
    assert repair.due(store, [L1]) == []
