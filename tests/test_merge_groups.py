"""Which lessons are candidates for a shared parent: counted co-usage, grouped with networkx.

Locks in: a group is apexes used together on at least `merge.min_co_uses` successful
episodes, and at most `merge.max_children` of them; an apex is in one group at a time;
failed episodes, lessons of another scope and two apexes reached only through one lesson
they share do not count as used together; a use of a lesson since compressed counts for
the apex serving it now; a group below the threshold is listed with its count and why it is
not due, and an attempted group waits for a new co-use.
"""

from __future__ import annotations

from rose import config
from rose.loop.abstraction import _groups
from rose.loop.abstraction import merge as mg
from rose.models import Episode, Node
from rose.store.facade import Store
from tests._merge import plain, used_by


def _rows(episodes: dict[str, list[str]], scope: dict[str, str] | None = None) -> list[dict]:
    return [
        {"episode": e, "apex": a, "scope": (scope or {}).get(a, "project"), "used": a}
        for e, apexes in episodes.items()
        for a in apexes
    ]


def test_pairs_at_the_threshold_are_grouped_and_the_rest_are_near():
    uses, scope = _groups.usage(
        _rows({"e1": ["a", "b", "c"], "e2": ["a", "b"], "e3": ["a", "b", "c"], "e4": ["c", "d"]})
    )
    (group,) = _groups.groups(uses, scope, min_co_uses=3, max_children=4)
    assert group.members == ("a", "b") and group.episodes == ("e1", "e2", "e3")
    near = _groups.near(uses, scope, min_co_uses=3, limit=10)
    assert [(g.members, g.co_uses) for g in near] == [
        (("a", "c"), 2), (("b", "c"), 2), (("c", "d"), 1)
    ]  # fmt: skip


def test_a_group_grows_to_max_children_and_no_further():
    every = ["a", "b", "c", "d", "e", "f"]
    uses, scope = _groups.usage(_rows({f"e{i}": every for i in range(3)}))
    groups = _groups.groups(uses, scope, min_co_uses=3, max_children=4)
    assert [len(g.members) for g in groups] == [4, 2]
    assert sorted(m for g in groups for m in g.members) == every  # each apex once


def test_a_member_must_keep_the_whole_group_at_the_threshold():
    # a-b, a-c and b-c are each used together three times, but never all three at once
    uses, scope = _groups.usage(
        _rows(
            {
                "e1": ["a", "b"],
                "e2": ["a", "b"],
                "e3": ["a", "b"],
                "e4": ["a", "c"],
                "e5": ["a", "c"],
                "e6": ["a", "c"],
                "e7": ["b", "c"],
                "e8": ["b", "c"],
                "e9": ["b", "c"],
            }
        )  # fmt: skip
    )
    groups = _groups.groups(uses, scope, min_co_uses=3, max_children=4)
    assert all(len(g.members) == 2 and g.co_uses == 3 for g in groups)


def test_another_scope_and_a_shared_lesson_do_not_count():
    rows = _rows({f"e{i}": ["a", "g"] for i in range(3)}, scope={"g": "global"})
    rows += [{"episode": f"s{i}", "apex": x, "scope": "project", "used": "n_shared"}
             for i in range(3) for x in ("p", "q")]  # fmt: skip
    uses, scope = _groups.usage(rows)
    assert _groups.groups(uses, scope, min_co_uses=3, max_children=4) == []


def test_candidates_from_the_store(project):
    a, b, c = plain(project, 3, co_uses=2)
    store = Store.open(project)
    store.write([], [*used_by([a, b], 1, "ab"),
                     Episode(prompt="p", outcome="failure", served=[a.id, b.id], used=[a.id, b.id],
                             accepted_summary="")])  # fmt: skip
    rows = {tuple(r.members): r for r in mg.candidates(store)}
    assert rows[(a.id, b.id)].due and rows[(a.id, b.id)].co_uses == 3  # the failure is not one
    assert not rows[(a.id, c.id)].due
    assert "2 successful episodes of the 3 needed" in rows[(a.id, c.id)].reason
    config.set_override(store.primary.config, "merge.min_co_uses", "2")
    config.set_override(store.primary.config, "merge.max_children", "3")
    (row,) = [r for r in mg.candidates(Store.open(project)) if r.co_uses >= 2]
    assert row.members == [a.id, b.id, c.id] and row.due


def test_a_compressed_lesson_counts_for_the_apex_serving_it(project):
    a, b = plain(project, 2, co_uses=3)
    store = Store.open(project)
    short = Node(id="n_shorta1", title=a.title, body="Retry idempotent calls.", level=1,
                 origin="compression", derived_from=[a.id], family="plain")  # fmt: skip
    a.status, a.parents = "superseded", [short.id]
    store.write([short, a])
    (row,) = mg.candidates(store)
    assert row.members == sorted([short.id, b.id]) and row.co_uses == 3 and row.due


def test_an_attempted_group_waits_for_a_new_co_use(project):
    a, b = plain(project, 2, co_uses=3)
    store = Store.open(project)
    store.log("merge", {"group": [a.id, b.id], "attempted": True, "co_uses": 3,
                        "result": "rejected"})  # fmt: skip
    (row,) = mg.candidates(store)
    assert not row.due and "no new co-use" in row.reason
    store.write([], used_by([a, b], 1, "again"))
    assert mg.candidates(store)[0].due
