"""A model-decided recall opens the graph as few times as it can: every open is an engine
start (tens of milliseconds) on the prompt's path.

Locks in: when the apexes fit the first level's questions, the rules' records, the
apexes, their families and every apex in full are read in one open, and the second pass
and the rendering of what is served need no other; what is served is rendered exactly as
a fresh read renders it; past one level, what each level asks about is read on a side
thread while the model answers, so nothing more is opened after the walk (and a side read
that fails is left to the read that needs it); and the batched read of what each
compressed or merged lesson was made from (`sources_among`) agrees with a walk of each
one's subtree.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from pathlib import Path

import pytest

from rose.judge.calls import Judge
from rose.loop.selection import recall as recall_mod
from rose.models import Node
from rose.sim import SimulatedBackend, World
from rose.store import facade
from rose.store import view as recall_view
from rose.store.facade import Store
from tests._reconcile import lesson

pytestmark = pytest.mark.graph


@pytest.fixture
def opens(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The graph opens made from here on, by the thread that made each."""
    made: list[str] = []
    real = facade.open_graph

    @contextmanager
    def counting(path, *args, **kwargs):
        made.append(threading.current_thread().name)
        with real(path, *args, **kwargs) as g:
            yield g

    monkeypatch.setattr(facade, "open_graph", counting)
    return made


def _world_store(store: Store, world: World, n: int, topics_n: int | None = None) -> None:
    topics = list(world.topics)[:topics_n]
    nodes = []
    for i in range(n):
        topic = topics[i % len(topics)]
        d = world.lesson(list(world.topics[topic].facts[:2]))
        nodes.append(
            Node(id=f"n_open{i:04d}", family=topic, title=d.title, gist=d.gist, body=d.body)
        )
    store.write(nodes)


def test_one_level_with_a_second_pass_reads_the_graph_once(
    store: Store, monkeypatch: pytest.MonkeyPatch, opens: list[str]
):
    monkeypatch.setenv("ROSE_RECALL_MAX_CANDIDATES", "5")
    monkeypatch.setenv("ROSE_RECALL_APEX_CHUNKS", "2")
    monkeypatch.setenv("ROSE_RECALL_SECOND_LOOK", "always")
    monkeypatch.setenv("ROSE_RECALL_SECOND_LOOK_CALLS", "1")
    world = World.generate(0)
    _world_store(store, world, 9)
    monkeypatch.setenv("ROSE_RECALL_MAX_PACK_TOKENS", str(store.view()["total_tokens"] // 2))
    opened = Store.open()
    opened.view()  # indexed: what is left is recall's own reading
    del opens[:]
    judge = Judge(SimulatedBackend(world), cache_path=None, events_path=None)
    res = recall_mod.recall(opened, world.tasks[0].prompt, judge=judge)
    assert not res.degraded and res.calls == 2, res.decisions
    assert res.second_calls == 1 and res.chosen, res.decisions
    assert len(opens) == 1, f"{len(opens)} opens of the graph"
    # served as a fresh read renders it
    fresh = recall_mod._materialise(opened, recall_mod.RecallResult(), [
        {k: v for k, v in i.items() if k != "full"} for i in res.chosen
    ])  # fmt: skip
    assert fresh == res.chosen


def test_second_pass_shows_the_first_passs_lessons_in_full(
    store: Store, monkeypatch: pytest.MonkeyPatch
):
    """The rows read ahead are the lessons' own: the second pass shows their bodies."""
    monkeypatch.setenv("ROSE_RECALL_MAX_CANDIDATES", "5")
    monkeypatch.setenv("ROSE_RECALL_SECOND_LOOK", "always")
    world = World.generate(0)
    _world_store(store, world, 9)
    monkeypatch.setenv("ROSE_RECALL_MAX_PACK_TOKENS", str(store.view()["total_tokens"] // 2))
    res = recall_mod.recall(Store.open(), world.tasks[0].prompt, judge=Judge(
        SimulatedBackend(world), cache_path=None, events_path=None))  # fmt: skip
    found = [i for i, v in {v.id: v.verdict for v in res.verdicts}.items()
             if v in ("relevant", "maybe")]  # fmt: skip
    shown = recall_mod._found(res, found, 10_000)
    assert shown and all(s["body"] == res.rows[s["id"]]["body"] != "" for s in shown)


def test_sources_among_agrees_with_each_subtree(store: Store):
    store.write(
        [
            lesson("n_src00001", "Port 5433.", family="dev"),
            lesson("n_src00002", "Use make test.", family="dev"),
            lesson("n_src00003", "Styles use tokens.", family="ui"),
            lesson("n_mid00001", "Local dev.", level=1, derived_from=["n_src00001", "n_src00002"]),
            lesson("n_top00001", "Working.", level=2, derived_from=["n_mid00001", "n_src00003"]),
        ]
    )
    ids = ["n_top00001", "n_mid00001", "n_src00001"]
    with store.graph() as g:
        rows = {r["lesson"]["id"]: r["lesson"] for r in store.lesson_rows(ids, g)}
        one = {
            i: sorted(r["id"] for r in g.q("subtree", id=i) if r["id"] != i and not r["level"])
            for i in ids
        }
        shared = recall_view.sources_among(g, rows)  # the view renders with it too
        res = recall_mod.RecallResult()
        recall_mod._read_in(store, g, res, ids)
    assert {i: sorted(shared.get(i, [])) for i in ids} == one
    assert one["n_top00001"] == ["n_src00001", "n_src00002", "n_src00003"]
    assert {i: sorted(res.sources[i]) for i in ids} == one
    assert set(res.rows) == set(ids) and res.shown and "n_top00001" in res.shown


def test_the_rows_read_are_reused_not_read_again(store: Store, opens: list[str], tmp_path: Path):
    store.write([lesson("n_once00001", "Read once.", family="dev")])
    res = recall_mod.RecallResult()
    recall_mod._read(store, res, ["n_once00001"])
    before = len(opens)
    recall_mod._read(store, res, ["n_once00001"])
    assert len(opens) == before
    assert recall_mod._materialise(store, res, [{"id": "n_once00001"}])[0]["full"]
    assert len(opens) == before


def test_a_family_walk_reads_what_it_asks_about_while_the_model_answers(
    store: Store, monkeypatch: pytest.MonkeyPatch, opens: list[str]
):
    """Past one level, the lessons each level asks about are read on a side thread during
    its questions: the second pass and the rendering of what is served open nothing more."""
    monkeypatch.setenv("ROSE_RECALL_MAX_CANDIDATES", "5")
    monkeypatch.setenv("ROSE_RECALL_APEX_CHUNKS", "1")
    monkeypatch.setenv("ROSE_RECALL_SECOND_LOOK", "always")
    world = World.generate(0)
    _world_store(store, world, 24, topics_n=6)  # six families of four
    monkeypatch.setenv("ROSE_RECALL_MAX_PACK_TOKENS", str(store.view()["total_tokens"] // 3))
    opened = Store.open()
    opened.view()
    del opens[:]
    judge = Judge(SimulatedBackend(world), cache_path=None, events_path=None)
    res = recall_mod.recall(opened, world.tasks[0].prompt, judge=judge)
    assert not res.degraded and res.calls >= 2 and res.second_calls == 1, res.decisions
    assert any(c["id"].startswith("family:") for c in res.rounds[0]), res.rounds
    assert res.chosen and all("full" in i for i in res.chosen)
    main = [t for t in opens if t != "rose-read-ahead"]
    assert len(main) == 1, opens  # the walk's first open, and no other on the prompt's path
    assert "rose-read-ahead" in opens
    offered = {c["id"] for r in res.rounds for c in r if not c["id"].startswith("family:")}
    assert offered <= set(res.rows)


def test_a_read_ahead_that_fails_is_left_to_the_read_that_needs_it(
    store: Store, monkeypatch: pytest.MonkeyPatch
):
    from rose.errors import StoreLocked

    store.write([lesson("n_ahead0001", "Read ahead.", family="dev")])
    res = recall_mod.RecallResult()
    calls: list[list[str]] = []

    def locked(store_, res_, ids):
        calls.append(ids)
        raise StoreLocked(Path("graph.kuzu"), "another process", 1.0, "locked")

    monkeypatch.setattr(recall_mod, "_read", locked)
    recall_mod.read_ahead(store, res, ["n_ahead0001"])()  # the wait returns: nothing raised
    assert calls == [["n_ahead0001"]] and "n_ahead0001" not in res.rows

    def broken(store_, res_, ids):
        raise ValueError("a bug, not a locked store")

    monkeypatch.setattr(recall_mod, "_read", broken)
    wait = recall_mod.read_ahead(store, res, ["n_ahead0001"])
    with pytest.raises(ValueError, match="a bug"):
        wait()
    monkeypatch.undo()
    recall_mod.read_ahead(store, res, ["n_ahead0001"])()
    assert res.rows["n_ahead0001"]["body"] == "Read ahead."
