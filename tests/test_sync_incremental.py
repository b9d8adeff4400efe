"""An incremental sync leaves the graph exactly as a rebuild from the files would, case by
case: a lesson filed before its parent, a body edited alone against any other edit, an
episode that feeds only its own links and folds, a sync that dies between its two steps.
The random sequences of changes compared with a rebuild column by column are in
`tests/test_sync_every_column.py`.
"""

from __future__ import annotations

import pytest

from rose.files.nodefile import dump_node
from rose.models import Claim, ClaimRef, Episode, Node, claim_id
from rose.store.facade import Store
from tests._calls import statements

pytestmark = pytest.mark.graph

_EDGES = {
    "DERIVED_FROM": "MATCH (a:Lesson)-[:DERIVED_FROM]->(b:Lesson) RETURN a.id AS a, b.id AS b",
    "DISPUTES": "MATCH (a:Lesson)-[:DISPUTES]->(b:Lesson) RETURN a.id AS a, b.id AS b",
    "SERVED": "MATCH (a:Episode)-[:SERVED]->(b:Lesson) RETURN a.id AS a, b.id AS b",
    "USED": "MATCH (a:Episode)-[:USED]->(b:Lesson) RETURN a.id AS a, b.id AS b",
    "COVERS": "MATCH (a:Lesson)-[:COVERS]->(b:Episode) RETURN a.id AS a, b.id AS b",
    "DROPPED": "MATCH (a:Lesson)-[:DROPPED]->(b:Claim) RETURN a.id AS a, b.id AS b",
    "HELD_BY": "MATCH (a:Claim)-[:HELD_BY]->(b:Lesson) RETURN a.id AS a, b.id AS b",
    "EXPANDED": "MATCH (a:Episode)-[x:EXPANDED]->(b:Lesson) RETURN a.id AS a, b.id + x.claim AS b",
    "RESCUED": "MATCH (a:Episode)-[:RESCUED]->(b:Claim) RETURN a.id AS a, b.id AS b",
}
_LESSONS = (
    "MATCH (l:Lesson) RETURN l.id AS id, l.title AS title, l.attempts AS attempts, "
    "l.successes AS s, l.failures AS f, l.expansions AS x, l.rescues AS r, l.covers AS covers, "
    "l.load_bearing AS spans, l.tokens AS tokens, l.gist AS gist, l.status AS status, "
    "l.level AS level, l.updated AS updated"
)
_CLAIMS = "MATCH (c:Claim) RETURN c.id AS id, c.holder AS holder, c.rescues AS rescues"
_TEXTS = "MATCH (t:LessonText) RETURN t.id AS id, t.body AS body"


def _snapshot(store: Store) -> dict:
    """Every edge and node the comparison reads, in one query (one sync, one open)."""
    *edges, lessons, claims, texts = store.query(
        ";".join([*_EDGES.values(), _LESSONS, _CLAIMS, _TEXTS])
    )
    out: dict = {
        name: sorted((r["a"], r["b"]) for r in rows)
        for name, rows in zip(_EDGES, edges, strict=True)
    }
    out["lessons"] = sorted(
        (r["id"], r["title"], r["attempts"], r["s"], r["f"], r["x"], r["r"],
         tuple(sorted(r["covers"] or [])), tuple(r["spans"] or []), r["tokens"], r["gist"],
         r["status"], r["level"], r["updated"])
        for r in lessons
    )  # fmt: skip
    out["claims"] = sorted((r["id"], r["holder"], r["rescues"]) for r in claims)
    out["texts"] = sorted((r["id"], r["body"]) for r in texts)  # one a lesson
    return out


def _over_a_holder(store: Store, lesson_id: str, detail: str) -> Node:
    """A lesson (not saved) derived from a saved one that holds the detail it drops."""
    store.save(Node(id="n_holder0001", family="fam", title="Holder", body="h"))
    return Node(
        id=lesson_id,
        family="fam",
        title="Over",
        body="first text",
        derived_from=["n_holder0001"],
        dropped=[Claim(claim=detail, holder="n_holder0001")],
    )


def test_a_body_edited_alone_is_written_alone_and_any_other_edit_whole(
    store: Store, monkeypatch: pytest.MonkeyPatch
):
    """The graph ends as a rebuild would either way; only the statement differs."""
    node = _over_a_holder(store, "n_edited001", "a detail")
    path = store.primary.node_path("fam", node.id)
    path.write_text(dump_node(node), encoding="utf-8")
    store.reads()
    ran = statements(monkeypatch)
    for edit, statement in [
        (lambda n: setattr(n, "body", n.body + " and a much longer second sentence"), "rebody"),
        (lambda n: setattr(n, "gist", "a gist"), "update"),
        (lambda n: setattr(n, "status", "archived"), "update"),
        (lambda n: setattr(n, "body", "short"), "rebody"),
    ]:
        edit(node)
        path.write_text(dump_node(node), encoding="utf-8")
        ran.clear()
        incremental = _snapshot(store)
        wrote = [n for n in ran if n in ("lesson_rebody_one", "lessons_update_one")]
        assert wrote == ["lesson_rebody_one" if statement == "rebody" else "lessons_update_one"]
        store.reindex()
        assert _snapshot(store) == incremental


def test_an_episode_runs_only_the_links_and_folds_its_lists_feed(
    store: Store, monkeypatch: pytest.MonkeyPatch
):
    """An episode that served and used lessons, and named no expansion or rescue, draws and
    folds nothing of those; one that names a rescue does. Either way the graph ends as a
    rebuild would."""
    detail = "a detail"
    owner = store.save(_over_a_holder(store, "n_owner00001", detail))
    ran = statements(monkeypatch)
    rescue = [ClaimRef(lesson=owner.id, claim=claim_id(owner.id, detail))]
    plain = Episode(id="e_plain00001", outcome="success", served=[owner.id], used=[owner.id])
    rescued = Episode(
        id="e_rescue0001", outcome="failure", served=[owner.id], used=[owner.id], rescues=rescue
    )
    for ep, expect in [(plain, False), (rescued, True)]:
        store.save_episodes([ep])
        ran.clear()
        incremental = _snapshot(store)
        rescue_work = {"link_rescued", "fold_rescues", "fold_claim_rescues"}
        assert ("link_used" in ran, "fold_use" in ran) == (True, True)
        assert bool(rescue_work & set(ran)) is expect
        assert not {"link_expanded", "link_patch_rescued", "fold_patch_rescues"} & set(ran)
        store.reindex()
        assert _snapshot(store) == incremental
    assert _snapshot(store)["RESCUED"] == [(rescued.id, rescue[0].claim)]


def test_a_lesson_filed_before_its_parent_links_when_the_parent_arrives(store: Store):
    child = Node(id="n_child0001", family="fam", title="Child", body="x", parents=["n_parent001"])
    path = store.primary.node_path("fam", child.id)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dump_node(child), encoding="utf-8")
    assert store.query(_EDGES["DERIVED_FROM"])[0] == []
    store.save(Node(id="n_parent001", family="fam", title="Parent", body="y", level=1))
    edges = {(r["a"], r["b"]) for r in store.query(_EDGES["DERIVED_FROM"])[0]}
    assert edges == {("n_parent001", "n_child0001")}


def test_a_sync_that_dies_between_its_two_steps_is_finished_on_the_next_open(
    store: Store, monkeypatch: pytest.MonkeyPatch
):
    from rose.graph import sync as sync_mod

    lesson = store.add("Keep the cache warm.", family="cache")
    ep = Episode(outcome="success", used=[lesson.id])
    store.save_episode(ep)

    def die(g, todo):
        raise KeyboardInterrupt  # the process is killed after the first transaction

    with monkeypatch.context() as m:
        m.setattr(sync_mod, "_derive", die)
        with pytest.raises(KeyboardInterrupt), store.graph():
            pass
    got = store.get(lesson.id)  # the next open finds the work recorded and does it
    assert (got.stats.successes, got.covers_tasks) == (1, [ep.id])
