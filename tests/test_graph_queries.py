"""The named queries return the right sets on hand-built DAGs: diamonds, several apexes, deep
chains, scopes. Locks in DISTINCT over diamonds, the *0..30 subtree bound, inherited deltas
with their holders, and apexes that ignore non-servable parents."""

from __future__ import annotations

import pytest

from rose.models import Claim, ClaimRef, Episode, Node, claim_id
from rose.store import dag
from rose.store.facade import Store

pytestmark = pytest.mark.graph


def _node(title: str, level: int = 0, **kw) -> Node:
    return Node(title=title, body=f"{title} body text", level=level, **kw)


@pytest.fixture
def diamond(store: Store):
    """top -> (left, right) -> base: a diamond, plus a separate apex `solo`."""
    base = _node("base")
    left = _node(
        "left",
        1,
        derived_from=[base.id],
        dropped=[Claim(claim="timeout is 30s", kind="parameter", holder=base.id)],
    )
    right = _node(
        "right",
        1,
        derived_from=[base.id],
        dropped=[Claim(claim="retry thrice", holder=base.id)],
    )
    top = _node(
        "top",
        2,
        derived_from=[left.id, right.id],
        dropped=[Claim(claim="left detail", holder=left.id)],
    )
    solo = _node("solo", family="other")
    base, left, right, top, solo = store.write([base, left, right, top, solo])  # one sync
    # The regression set comes from the episodes: successful work that used the lesson.
    ep1 = store.save_episode(Episode(prompt="p1", outcome="success", used=[base.id]))
    ep2 = store.save_episode(Episode(prompt="p2", outcome="success", used=[right.id]))
    store.save_episode(Episode(prompt="p3", outcome="failure", used=[left.id]))
    return {
        "base": base,
        "left": left,
        "right": right,
        "top": top,
        "solo": solo,
        "ep1": ep1,
        "ep2": ep2,
    }


def test_apexes_are_servable_nodes_without_servable_parent(store: Store, diamond):
    ids = {r["id"] for r in dag.apexes(store, "")}
    assert ids == {diamond["top"].id, diamond["solo"].id}
    top = diamond["top"]
    top.status = "archived"
    store.save(top)
    ids = {r["id"] for r in dag.apexes(store, "")}
    assert ids == {diamond["left"].id, diamond["right"].id, diamond["solo"].id}


def test_subtree_counts_a_diamond_once(store: Store, diamond):
    rows = dag.subtree(store, diamond["top"].id)
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids)) == 4
    assert set(ids) == {diamond[k].id for k in ("top", "left", "right", "base")}


def test_regression_set_spans_the_whole_subtree(store: Store, diamond):
    got = {r["id"] for r in dag.regression_set(store, diamond["top"].id)}
    assert got == {diamond["ep1"].id, diamond["ep2"].id}
    got = {r["id"] for r in dag.regression_set(store, diamond["left"].id)}
    assert got == {diamond["ep1"].id}


def test_delta_manifest_is_inherited_with_holders(store: Store, diamond):
    rows = dag.delta_manifest(store, diamond["top"].id)
    assert {(r["claim"], r["holder"]) for r in rows} == {
        ("left detail", diamond["left"].id),
        ("timeout is 30s", diamond["base"].id),
        ("retry thrice", diamond["base"].id),
    }
    assert dag.delta_manifest(store, diamond["base"].id) == []


def test_descent_candidates_carry_holder_statistics(store: Store, diamond):
    base, left, top = diamond["base"], diamond["left"], diamond["top"]
    timeout = claim_id(left.id, "timeout is 30s")  # dropped by left, still held by base
    for _ in range(3):  # three failures of `left` rescued by base's timeout detail
        rescue = ClaimRef(lesson=left.id, claim=timeout)
        store.save_episode(Episode(outcome="success", expansions=[rescue], rescues=[rescue]))
    for _ in range(2):  # two more expansions into base's own dropped claims: no rescue
        other = ClaimRef(lesson=base.id, claim="n_nothing#0")
        store.save_episode(Episode(outcome="failure", expansions=[other]))
    assert store.get(left.id).stats.expansions == 3
    assert store.get(base.id).stats.expansions == 2
    rows = {r["claim"]: r for r in dag.descent_candidates(store, top.id)}
    assert rows["timeout is 30s"]["rescues"] == 3
    assert rows["timeout is 30s"]["expansions"] == 2
    assert rows["left detail"]["rescues"] == 0
    assert all(r["holder_exists"] for r in rows.values())
    assert rows["retry thrice"]["holder_tokens"] > 0


def test_ancestors_reach_every_apex(store: Store, diamond):
    rows = dag.ancestors(store, diamond["base"].id)
    assert {r["id"] for r in rows} == {diamond[k].id for k in ("left", "right", "top")}
    assert [r["id"] for r in rows if r["is_apex"]] == [diamond["top"].id]


def test_deep_chain_of_25_levels(store: Store):
    first = _node("L0")
    chain = [first]
    for level in range(1, 26):
        chain.append(
            _node(
                f"L{level}",
                level,
                derived_from=[chain[-1].id],
                dropped=[Claim(claim=f"c{level}", holder=first.id)],
            )
        )
    prev = store.write(chain)[-1]  # one write: the links point within it
    assert len(dag.subtree(store, prev.id)) == 26
    assert len(dag.delta_manifest(store, prev.id)) == 25
    assert len(dag.ancestors(store, first.id)) == 25
    assert [r["id"] for r in dag.apexes(store, "")] == [prev.id]


def test_families_conflicts_and_co_usage(store: Store, diamond):
    fams = {r["family"]: r for r in store.read("families")}
    assert fams["general"]["lessons"] == 4 and fams["general"]["max_level"] == 2
    assert fams["other"]["lessons"] == 1

    a, b = diamond["left"], diamond["right"]
    a.status, a.conflict, a.disputes = "disputed", "Is it 30s or 60s?", [b.id]
    store.save(a)
    conflicts = dag.conflicts(store)
    assert [(r["id"], r["question"], r["against"]) for r in conflicts] == [
        (a.id, "Is it 30s or 60s?", [b.id])
    ]

    for outcome in ("success", "success", "failure"):
        store.save_episode(Episode(outcome=outcome, served=[a.id, b.id], used=[a.id, b.id]))
    co = dag.co_usage(store, 10)
    assert len(co) == 1
    assert {co[0]["a"], co[0]["b"]} == {a.id, b.id} and co[0]["together"] == 2


def test_apexes_per_scope(store: Store, diamond):
    Store.init(scope="global")
    store = Store.open()
    g = store.add("A lesson true everywhere.", scope="global")
    assert [r["id"] for r in dag.apexes(store, "global")] == [g.id]
    project = {r["id"] for r in dag.apexes(store, "project")}
    assert project == {diamond["top"].id, diamond["solo"].id}
