"""An incremental sync leaves every column as a rebuild would, and the recall view it writes
equals one built from scratch, in two scopes, with patches and their rescues.

Locks in the per-fold derive, the links an episode skips, the body-only write and the
patched recall view (`rose.store.view.patched`): lesson and episode files change in whatever
order the dice say (a title alone, several lessons at once, an episode rewritten under its
id, an episode naming a lesson not filed yet), and after every batch each Lesson, Claim and
Episode column and every edge is compared with a full reindex.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest

from rose.files.nodefile import dump_episode, dump_node
from rose.models import Claim, ClaimRef, Episode, Node, Span, claim_id
from rose.store.facade import Store

pytestmark = pytest.mark.graph

_EDGES = ("DERIVED_FROM", "DISPUTES", "SERVED", "USED", "COVERS", "DROPPED", "HELD_BY")
_EDGE_QUERIES = [f"MATCH (a)-[:{name}]->(b) RETURN a.id AS a, b.id AS b" for name in _EDGES] + [
    "MATCH (a)-[x:EXPANDED]->(b) RETURN a.id AS a, b.id + '|' + x.claim AS b",
    "MATCH (a)-[:RESCUED]->(b) RETURN a.id AS a, b.id AS b",
    "MATCH (a)-[x:PATCH_RESCUED]->(b) RETURN a.id AS a, b.id + '|' + x.patch AS b",
]
_NODES = [f"MATCH (n:{t}) RETURN n" for t in ("Lesson", "Claim", "Episode", "LessonText")]
# Lists whose order a fold's collect does not fix.
_UNORDERED = ("covers", "patch_rescues")


def _row(n: dict) -> tuple:
    out = []
    for k, v in sorted(n.items()):
        if k.startswith("_"):
            continue
        if k in _UNORDERED and v is not None:
            v = sorted(v)
        out.append((k, json.dumps(v, sort_keys=True, default=str)))
    return tuple(out)


def _snapshot(store: Store) -> dict:
    """Every edge and every column of every node, in one open."""
    results = store.query(";".join(_EDGE_QUERIES + _NODES))
    edges, nodes = results[: len(_EDGE_QUERIES)], results[len(_EDGE_QUERIES) :]
    out: dict = {
        q: sorted((r["a"], r["b"]) for r in rows)
        for q, rows in zip(_EDGE_QUERIES, edges, strict=True)
    }
    for q, rows in zip(_NODES, nodes, strict=True):
        out[q] = sorted(_row(r["n"]) for r in rows)
    return out


class _World:
    """Lesson files of both scopes and episode files, written straight to disk."""

    def __init__(self, store: Store, seed: int):
        self.store, self.rng = store, random.Random(seed)
        self.ids = [f"n_lesson{i:04d}" for i in range(10)]
        self.nodes: dict[str, Node] = {}
        self.episodes: list[str] = []
        self.clock = 1_700_000_000_000_000_000

    def dir(self, lesson_id: str):
        glob = int(lesson_id[-1]) % 2 and self.store.global_
        return self.store.global_ if glob else self.store.primary

    def path(self, lesson_id: str) -> Path:
        return self.dir(lesson_id).node_path("fam", lesson_id)

    def _below(self, lid: str, seen: set | None = None) -> set:
        seen = seen if seen is not None else set()
        for child in self.nodes.get(lid, Node(title="x")).derived_from:
            if child not in seen:
                seen.add(child)
                self._below(child, seen)
        return seen

    def _save(self, node: Node) -> None:
        self.nodes[node.id] = node
        path = self.path(node.id)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dump_node(node), encoding="utf-8")
        self.clock += 1_000_000
        os.utime(path, ns=(self.clock, self.clock))

    def _claims(self, lid: str, below: list[str]) -> list[Claim]:
        others = [i for i in self.ids if i != lid]
        return [
            Claim(claim=f"detail {self.rng.randint(0, 3)} of {lid}",
                  holder=self.rng.choice(below or others))
            for _ in range(self.rng.randint(0, 3))
        ]  # fmt: skip

    def write_lesson(self) -> None:
        rng, lid = self.rng, self.rng.choice(self.ids)
        others = [i for i in self.ids if i != lid]
        below = sorted(rng.sample(others, rng.randint(0, 2)))
        below = [b for b in below if lid not in self._below(b)]  # keep it a DAG
        title = f"{lid} v{rng.randint(0, 99)}"
        self._save(
            Node(
                id=lid,
                family="fam",
                title=title,
                body=f"text of {title}",
                level=1 if below else 0,
                derived_from=below,
                disputes=sorted(rng.sample(others, rng.randint(0, 1))),
                dropped=self._claims(lid, below),
                patches=[f"patch {k} of {lid}" for k in range(rng.randint(0, 2))],
            )
        )

    def edit_lesson(self, node: Node | None = None, field: str | None = None) -> None:
        if not self.nodes:
            return
        rng = self.rng
        node = node or self.nodes[rng.choice(sorted(self.nodes))]
        field = field or rng.choice(
            ["body", "body", "title", "gist", "status", "level", "patches", "claims", "holder"]
        )
        if field == "body":
            node.body += f" More {rng.randint(0, 999)}."
        elif field == "title":
            node.title = f"{node.id} t{rng.randint(0, 99)}"
        elif field == "gist":
            node.gist = f"gist {rng.randint(0, 99)}"
        elif field == "status":
            node.status = "archived" if node.status == "active" else "active"
        elif field == "level":
            node.level += 1
        elif field == "patches":
            node.patches = [f"patch {k} of {node.id}" for k in range(rng.randint(0, 2))]
        elif field == "claims":
            node.dropped = self._claims(node.id, node.derived_from)
        elif node.dropped:  # the same claims, held elsewhere
            others = [i for i in self.ids if i != node.id]
            node.dropped = [Claim(claim=c.claim, holder=rng.choice(others)) for c in node.dropped]
        self._save(node)

    def edit_many(self) -> None:
        """Bodies of several lessons at once (past `SMALL`, the batch forms)."""
        for lid in sorted(self.nodes)[: self.rng.randint(3, 7)]:
            self.edit_lesson(self.nodes[lid], "body")

    def delete_lesson(self) -> None:
        if self.nodes:
            lid = self.rng.choice(sorted(self.nodes))
            self.path(lid).unlink()
            del self.nodes[lid]

    def write_episode(self, eid: str | None = None) -> None:
        rng = self.rng
        used = sorted(rng.sample(self.ids, rng.randint(0, 3)))
        refs = [
            ClaimRef(lesson=lid, claim=claim_id(lid, f"detail {rng.randint(0, 3)} of {lid}"))
            for lid in rng.sample(self.ids, rng.randint(0, 2))
        ]
        patches = [
            ClaimRef(lesson=lid, claim=claim_id(lid, f"patch {rng.randint(0, 1)} of {lid}"))
            for lid in rng.sample(used, min(len(used), rng.randint(0, 2)))
        ]
        ep = Episode(
            id=eid or f"e_{rng.getrandbits(40):010x}",
            outcome=rng.choice(["success", "failure", "unknown"]),
            served=sorted(set(used) | set(rng.sample(self.ids, 1))),
            used=used,
            load_bearing=[Span(lesson=u, span=f"span {rng.randint(0, 9)} of {u}")
                          for u in used[:2]],
            expansions=refs[rng.randint(0, 1):],
            rescues=refs[:1] if rng.random() < 0.7 else [],
            patch_rescues=patches,
        )  # fmt: skip
        scope = self.store.primary if rng.random() < 0.7 else self.store.global_
        scope.episodes.mkdir(parents=True, exist_ok=True)
        scope.episode_path(ep.id).write_text(json.dumps(dump_episode(ep)), encoding="utf-8")
        if ep.id not in self.episodes:
            self.episodes.append(ep.id)

    def rewrite_episode(self) -> None:
        """An episode under an id gone before (episodes are written once: a file rewritten in
        place is not seen), from a scope of its own choosing."""
        if self.episodes:
            eid = self.rng.choice(self.episodes)
            for d in (self.store.primary, self.store.global_):
                d.episode_path(eid).unlink(missing_ok=True)
            self.store.view()  # synced without it
            self.write_episode(eid)

    def delete_episode(self) -> None:
        if self.episodes:
            eid = self.episodes.pop(self.rng.randrange(len(self.episodes)))
            for d in (self.store.primary, self.store.global_):
                d.episode_path(eid).unlink(missing_ok=True)

    def step(self) -> None:
        ops = [
            (self.write_lesson, 5),
            (self.edit_lesson, 6),
            (self.edit_many, 1),
            (self.delete_lesson, 1),
            (self.write_episode, 4),
            (self.rewrite_episode, 2),
            (self.delete_episode, 1),
        ]
        self.rng.choices([o for o, _ in ops], weights=[w for _, w in ops])[0]()


def _rebuilt_view(store: Store) -> dict:
    store.primary.recall_view.unlink()
    return store.view()


@pytest.mark.heavy
@pytest.mark.parametrize(("seed", "small", "kept"), [(1, 4, True), (2, 0, True), (3, 99, False)])
def test_every_column_and_the_view_match_a_rebuild(
    store: Store, seed: int, small: int, kept: bool, monkeypatch: pytest.MonkeyPatch
):
    """`small`: up to how many rows a statement runs once per row (`rose.graph._apply.SMALL`):
    0 takes the batch forms for every write, 99 the keyed ones. `kept`: the sync finds what
    changed from the file states kept beside the database; without them (deleted before
    every batch), from every file's row. Some batches are edits of lessons alone, which the
    recall view is patched for."""
    from rose.graph import _apply, synced
    from rose.graph import sync as sync_mod

    monkeypatch.setattr(_apply, "SMALL", small)
    monkeypatch.setattr(sync_mod, "SMALL", small)
    (store.primary.root / "config.yaml").write_text("recall:\n  max_pack_tokens: 100000\n")
    Store.init(scope="global")
    store = Store.open(store.primary.root.parent)
    assert store.global_ is not None
    world = _World(store, seed)
    store.view()
    for batch in range(12):
        edits_only = world.rng.random() < 0.4
        for _ in range(world.rng.randint(1, 3)):
            if edits_only:
                world.rng.choice([world.edit_lesson, world.edit_lesson, world.edit_many])()
            else:
                world.step()
        if not kept:
            synced.forget(store.graph_path)
        incremental = _snapshot(store)
        view = store.view()
        assert view.get("fits") or view.get("empty"), view
        assert _rebuilt_view(store) == view, f"view after batch {batch}"
        store.reindex()
        full = _snapshot(store)
        for k in full:
            assert full[k] == incremental[k], f"{k} after batch {batch}"


@pytest.mark.parametrize("crash", [False, True])
def test_rescues_and_patch_rescues_fold_as_a_rebuild_also_across_a_crash(
    store: Store, crash: bool, monkeypatch: pytest.MonkeyPatch
):
    """An episode whose failure a held claim rescued and whose success a patch served, filed
    before the lessons it names; then the lessons; then the claim moved to another holder and
    the patch dropped, the episode deleted: each sync killed between its two steps or not."""
    from rose.graph import sync as sync_mod

    owner, holder, other = "n_owner00001", "n_holder0001", "n_other00001"
    detail, patch = "a detail", "a patch"
    rescue = ClaimRef(lesson=owner, claim=claim_id(owner, detail))
    ep = Episode(
        id="e_rescued001",
        outcome="failure",
        served=[owner],
        used=[owner, holder],
        load_bearing=[Span(lesson=owner, span="the span")],
        expansions=[rescue],
        rescues=[rescue],
        patch_rescues=[ClaimRef(lesson=owner, claim=claim_id(owner, patch))],
    )
    win = ep.model_copy(update={"id": "e_success01", "outcome": "success", "rescues": []})

    def write(node: Node) -> None:
        path = store.primary.node_path("fam", node.id)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dump_node(node), encoding="utf-8")

    def episode(e: Episode) -> None:
        store.primary.episodes.mkdir(parents=True, exist_ok=True)
        store.primary.episode_path(e.id).write_text(json.dumps(dump_episode(e)))

    over = Node(
        id=owner, family="fam", title="Over", body="over", level=1,
        derived_from=[holder], dropped=[Claim(claim=detail, holder=holder)], patches=[patch],
    )  # fmt: skip
    steps = [
        lambda: (episode(ep), episode(win)),
        lambda: write(over),
        lambda: (
            write(Node(id=holder, family="fam", title="H", body="h")),
            write(Node(id=other, family="fam", title="O", body="o")),
        ),  # fmt: skip
        lambda: write(over.model_copy(update={"dropped": [Claim(claim=detail, holder=other)]})),
        lambda: write(over.model_copy(update={"patches": [], "body": "over, again"})),
        lambda: store.primary.episode_path(ep.id).unlink(),
    ]
    for n, step in enumerate(steps):
        step()
        if crash:

            def die(g, todo):
                raise KeyboardInterrupt

            with monkeypatch.context() as m:
                m.setattr(sync_mod, "_derive", die)
                with pytest.raises(KeyboardInterrupt), store.graph():
                    pass
        incremental = _snapshot(store)
        store.reindex()
        full = _snapshot(store)
        for k in full:
            assert full[k] == incremental[k], f"{k} after step {n}"
