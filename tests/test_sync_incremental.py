"""An incremental sync leaves the graph exactly as a rebuild from the files would.

Locks in: a changed lesson is updated in place and only its own lists are re-linked, and
whatever names something not yet in the graph is linked when it arrives, so no write scans
the store; what changed is found from the file states kept beside the database, or from every
file's row when they are gone. Files here arrive in any order, as a `git pull` or a hand edit
brings them: a lesson before its parent, an episode before its lessons, a claim folded back
into a body, files deleted and restored. After every batch the graph is compared with a full
reindex.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest

from rose.models import Claim, ClaimRef, Episode, Node, Span, claim_id
from rose.store.facade import Store
from rose.store.nodefile import dump_episode, dump_node
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


class _World:
    """Lesson and episode files written straight to disk, in whatever order the dice say."""

    def __init__(self, store: Store, seed: int):
        self.store, self.rng = store, random.Random(seed)
        self.ids = [f"n_lesson{i:04d}" for i in range(10)]
        self.nodes: dict[str, Node] = {}
        self.episodes: list[str] = []

    def path(self, lesson_id: str) -> Path:
        return self.store.primary.node_path("fam", lesson_id)

    def write_lesson(self) -> None:
        rng, lid = self.rng, self.rng.choice(self.ids)
        others = [i for i in self.ids if i != lid]
        below = sorted(rng.sample(others, rng.randint(0, 2)))
        below = [b for b in below if lid not in self._below(b)]  # keep it a DAG
        claims = [
            Claim(claim=f"detail {rng.randint(0, 4)} of {lid}", holder=rng.choice(below or others))
            for _ in range(rng.randint(0, 3))
        ]
        title = f"{lid} v{rng.randint(0, 99)}"
        node = Node(
            id=lid,
            family="fam",
            title=title,
            body=f"text of {title}",
            derived_from=below,
            disputes=sorted(rng.sample(others, rng.randint(0, 1))),
            dropped=claims,
        )
        self.nodes[lid] = node
        path = self.path(lid)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dump_node(node), encoding="utf-8")
        self._tick(path)

    def edit_lesson(self) -> None:
        """An edit of one field of a lesson on disk: its body alone (as most edits are), or
        its gist, status or level, each of which the graph must take in as well."""
        if not self.nodes:
            return
        rng = self.rng
        node = self.nodes[rng.choice(sorted(self.nodes))]
        field = rng.choice(["body", "body", "gist", "status", "level"])
        if field == "body":
            node.body += f" More {rng.randint(0, 999)}."
            node.updated = node.updated.replace(microsecond=rng.randint(0, 999_999))
        elif field == "gist":
            node.gist = f"gist {rng.randint(0, 99)}"
        elif field == "status":
            node.status = "archived" if node.status == "active" else "active"
        else:
            node.level += 1
        path = self.path(node.id)
        path.write_text(dump_node(node), encoding="utf-8")
        self._tick(path)

    def _tick(self, path: Path) -> None:
        """A distinct mtime for every write (a coarse clock could hide a same-size rewrite)."""
        self.clock = getattr(self, "clock", 1_700_000_000_000_000_000) + 1_000_000
        os.utime(path, ns=(self.clock, self.clock))

    def _below(self, lid: str, seen: set | None = None) -> set:
        seen = seen if seen is not None else set()
        for child in self.nodes.get(lid, Node(title="x")).derived_from:
            if child not in seen:
                seen.add(child)
                self._below(child, seen)
        return seen

    def delete_lesson(self) -> None:
        if self.nodes:
            lid = self.rng.choice(sorted(self.nodes))
            self.path(lid).unlink()
            del self.nodes[lid]

    def write_episode(self) -> None:
        rng = self.rng
        used = sorted(rng.sample(self.ids, rng.randint(0, 3)))
        refs = []
        for lid in rng.sample(self.ids, rng.randint(0, 2)):
            text = f"detail {rng.randint(0, 4)} of {lid}"
            refs.append(ClaimRef(lesson=lid, claim=claim_id(lid, text)))
        ep = Episode(
            id=f"e_{rng.getrandbits(40):010x}",
            outcome=rng.choice(["success", "failure", "unknown"]),
            served=sorted(set(used) | set(rng.sample(self.ids, 1))),
            used=used,
            load_bearing=[Span(lesson=u, span=f"span of {u}") for u in used[:1]],
            expansions=refs,
            rescues=refs[:1],
        )
        self.store.primary.episodes.mkdir(parents=True, exist_ok=True)
        path = self.store.primary.episode_path(ep.id)
        path.write_text(json.dumps(dump_episode(ep)), encoding="utf-8")
        self.episodes.append(ep.id)

    def delete_episode(self) -> None:
        if self.episodes:
            eid = self.episodes.pop(self.rng.randrange(len(self.episodes)))
            self.store.primary.episode_path(eid).unlink()

    def step(self) -> None:
        op = self.rng.choices(
            [
                self.write_lesson,
                self.edit_lesson,
                self.delete_lesson,
                self.write_episode,
                self.delete_episode,
            ],
            weights=[5, 3, 1, 4, 1],
        )[0]
        op()


@pytest.mark.heavy
@pytest.mark.parametrize(
    ("seed", "kept", "small"),
    [(1, True, 4), (2, True, 4), (3, True, 4), (4, False, 4), (5, True, 0), (6, True, 99)],
)
def test_incremental_sync_matches_a_rebuild(
    store: Store, seed: int, kept: bool, small: int, monkeypatch: pytest.MonkeyPatch
):
    """`kept`: the sync finds what changed from the file states kept beside the database;
    without them (deleted before every batch), from every file's row. `small`: up to how many
    rows a statement runs once per row, by key (`rose.graph._apply.SMALL`): 0 takes the batch
    forms for every write, 99 the keyed ones."""
    from rose.graph import _apply, synced
    from rose.graph import sync as sync_mod

    monkeypatch.setattr(_apply, "SMALL", small)
    monkeypatch.setattr(sync_mod, "SMALL", small)

    world = _World(store, seed)
    did = False
    for _batch in range(8):
        for _ in range(world.rng.randint(1, 4)):
            world.step()
        if not kept:
            synced.forget(store.graph_path)
        incremental = _snapshot(store)
        store.reindex()
        assert _snapshot(store) == incremental
        did = did or any(incremental[k] for k in ("RESCUED", "HELD_BY", "COVERS", "EXPANDED"))
    assert did  # it did things


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
