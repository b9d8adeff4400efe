"""Attribution combines its sources, best first, into the episode, and only used lessons score.

Locks in: a lesson served and named by nobody is unused and scores neither success nor
failure; the agent's citation (a short id prefix) is credited; the in-session reflector's
"unused" beats both the digest judge's "used" and a citation, and its "used" beats the
judge's "unused"; the judge fills in the lessons the reflector did not name; a failed
judgement credits nothing; a used lesson scores a success or a failure by the outcome in
the graph's stats; the episode keeps the unused lessons' causes (only theirs), the recall
mode of its prompt and which sources spoke; an episode file written before these fields
existed still loads.
"""

from __future__ import annotations

import json

import pytest

from rose.files import sessions
from rose.loop.reflection.attribute import Verdict, record
from rose.models import Node
from rose.store.facade import Store

pytestmark = pytest.mark.graph

A, B, C = "n_0a1b2c3d4e5f60718293", "n_1b2c3d4e5f6071829304", "n_2c3d4e5f607182930415"


@pytest.fixture
def lessons(store: Store) -> Store:
    named = ((A, "Alpha"), (B, "Bravo"), (C, "Charlie"))
    store.write([Node(id=i, title=t, gist=f"{t} gist.", body=f"{t} body.") for i, t in named])
    return store


def _unit(store: Store, turn: int = 1, served=(A, B, C), sid: str = "s1", **prompt) -> str:
    root = store.primary.root
    sessions.append(
        root, sid, "prompt", turn=turn, prompt=f"p{turn}", served=list(served), **prompt
    )
    return str(root)


def _assess(root: str, used=(), unused=(), causes=None, outcome="success", turn=1) -> None:
    record(
        root,
        "s1",
        turn,
        Verdict(
            outcome=outcome,
            used=list(used),
            unused=list(unused),
            causes=causes or {},
            judged=True,
        ),
    )


def _stats(store: Store, lid: str) -> tuple[int, int, int]:
    s = store.get(lid).stats
    return s.attempts, s.successes, s.failures


def test_served_and_named_by_nobody_is_unused_and_scores_nothing(lessons: Store):
    root = _unit(lessons)
    sessions.append(root, "s1", "outcome", turn=1, outcome="success")
    (ep,) = lessons.absorb("s1", final=True)
    assert ep.used == [] and ep.unused == [A, B, C] and ep.attributed_by == []
    assert [_stats(lessons, i) for i in (A, B, C)] == [(0, 0, 0)] * 3


def test_a_citation_by_short_id_is_credited(lessons: Store):
    root = _unit(lessons)
    sessions.append(root, "s1", "cite", turn=1, ids=[A[:10]])
    sessions.append(root, "s1", "outcome", turn=1, outcome="success")
    (ep,) = lessons.absorb("s1", final=True)
    assert ep.used == [A] and ep.citations == [A] and ep.unused == [B, C]
    assert ep.attributed_by == ["cite"]
    assert _stats(lessons, A) == (1, 1, 0) and _stats(lessons, B) == (0, 0, 0)


def test_the_reflector_outranks_the_judge_and_citations(lessons: Store):
    root = _unit(lessons)
    _assess(root, used=[A, B], unused=[C], causes={C: "irrelevant"})
    sessions.append(root, "s1", "cite", turn=1, ids=[B[:10]])
    lessons.attribute("s1", used=[C], unused=[A, B], source="reflector")
    (ep,) = lessons.absorb("s1", final=True)
    assert ep.used == [C] and ep.unused == [A, B]
    assert ep.causes == {}  # the only cause given was for a lesson that turned out used
    assert ep.attributed_by == ["reflector", "assess", "cite"]
    assert [_stats(lessons, i) for i in (A, B, C)] == [(0, 0, 0), (0, 0, 0), (1, 1, 0)]


def test_the_judge_fills_in_what_the_reflector_did_not_name(lessons: Store):
    root = _unit(lessons)
    lessons.attribute("s1", used=[A], unused=[])
    _assess(root, used=[B], unused=[A, C], causes={A: "ignored", C: "redundant"})
    (ep,) = lessons.absorb("s1", final=True)
    assert ep.used == [A, B] and ep.unused == [C] and ep.causes == {C: "redundant"}
    assert ep.attributed_by == ["rose used", "assess"]


def test_a_background_reflection_ranks_with_the_digest_judge(lessons: Store):
    root = _unit(lessons)
    sessions.append(root, "s1", "used", turn=1, used=[A, B, C], unused=[], source="background")
    _assess(root, used=[B], unused=[A])  # one rank: unused once is unused
    lessons.attribute("s1", used=[], unused=[B])  # the reflector outranks both
    (ep,) = lessons.absorb("s1", final=True)
    assert ep.used == [C] and ep.unused == [A, B]
    assert ep.attributed_by == ["rose used", "assess", "background"]


def test_a_citation_beats_the_judges_unused_but_not_the_reflectors(lessons: Store):
    root = _unit(lessons)
    _assess(root, unused=[A, B])
    sessions.append(root, "s1", "cite", turn=1, ids=[A, B])
    lessons.attribute("s1", used=[], unused=[B])
    (ep,) = lessons.absorb("s1", final=True)
    assert ep.used == [A] and ep.unused == [B, C]


def test_within_one_source_unused_once_is_unused(lessons: Store):
    _unit(lessons)
    lessons.attribute("s1", used=[A, B], unused=[])
    lessons.attribute("s1", used=[], unused=[A])
    (ep,) = lessons.absorb("s1", final=True)
    assert ep.used == [B]


def test_a_failed_judgement_credits_nothing(lessons: Store):
    root = _unit(lessons)
    record(root, "s1", 1, Verdict(error="BackendUnavailable: no claude on PATH"))
    (ep,) = lessons.absorb("s1", final=True)
    assert (ep.used, ep.outcome, ep.attributed_by) == ([], "unknown", [])
    assert [_stats(lessons, i) for i in (A, B, C)] == [(0, 0, 0)] * 3


def test_used_lessons_score_by_the_outcome(lessons: Store):
    root = _unit(lessons, 1)
    _assess(root, used=[A, B], unused=[C], outcome="success", turn=1)
    _unit(lessons, 2)
    _assess(root, used=[A], unused=[B, C], outcome="failure", turn=2)
    _unit(lessons, 3)
    _assess(root, used=[B], outcome="partial", turn=3)
    assert len(lessons.absorb("s1", final=True)) == 3
    assert _stats(lessons, A) == (2, 1, 1)
    assert _stats(lessons, B) == (2, 1, 0)  # a partial outcome is an attempt, neither score
    assert _stats(lessons, C) == (0, 0, 0)


def test_the_episode_keeps_the_recall_mode_and_it_survives_the_graph(lessons: Store):
    _unit(lessons, 1, recall="judged")
    _unit(lessons, 2, recall="nonsense")
    _unit(lessons, 3)
    first, second, third = lessons.absorb("s1", final=True)
    assert (first.recall, second.recall, third.recall) == ("judged", "", "")
    again = lessons.get_episode(first.id)
    assert again.recall == "judged" and again.unused == [A, B, C]


def test_causes_and_sources_round_trip_through_the_graph(lessons: Store):
    root = _unit(lessons)
    _assess(root, used=[A], unused=[B, C], causes={B: "irrelevant", C: "ignored"})
    (ep,) = lessons.absorb("s1", final=True)
    again = lessons.get_episode(ep.id)
    assert again.causes == {B: "irrelevant", C: "ignored"} and again.attributed_by == ["assess"]


def test_an_episode_file_from_before_attribution_fields_still_loads(lessons: Store):
    old = {
        "id": "e_old000000001",
        "session": "s0",
        "turn": 1,
        "prompt": "old work",
        "outcome": "success",
        "served": [A, B],
        "used": [A],
        "citations": [],
        "load_bearing": [],
        "expansions": [],
        "rescues": [],
        "accepted_summary": "",
        "time": "2025-01-01T00:00:00+00:00",
    }
    path = lessons.primary.episode_path(old["id"])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(old), encoding="utf-8")
    ep = Store.open().get_episode(old["id"])
    assert (ep.used, ep.unused, ep.causes, ep.recall, ep.attributed_by) == ([A], [], {}, "", [])
    assert _stats(lessons, A) == (1, 1, 0)
