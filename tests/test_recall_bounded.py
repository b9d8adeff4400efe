"""Recall's cost per prompt is bounded whatever the store's size: on a generated store of
1,000 lessons (622 apexes, far past one question), every prompt makes at most
`recall.judge_calls` first-pass calls and `recall.second_look_calls` more, and no call
offers more than `recall.max_candidates` lines. Locks in the multi-level path: the first
question offers families (their model-written gists once `families.refresh` wrote them),
the next the apexes of the families opened, and the world's lesson the prompt needs is
chosen through them. With a budget too small for the family level, its chunks are asked
up to the budget and the families left over are served (ranked last, within the pack
budget), never dropped silently. A family's gist is recomputed when its apexes change.

The store is 1,000 lessons, not 10,000: 1,000 is already past `max_candidates` apexes
(the multi-level path), writing and indexing it takes a few seconds once per test run
(a session fixture), and 10,000 is measured by `benchmarks/recall_scale.py` instead.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

from rose.errors import BackendTimeout
from rose.judge.calls import Judge
from rose.loop.selection import families
from rose.loop.selection.recall import recall
from rose.models import Node
from rose.sim import SimulatedBackend, World
from rose.store.facade import Store

pytestmark = [pytest.mark.graph, pytest.mark.heavy]

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
SIZE = 1000


@pytest.fixture(scope="session")
def big(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, World]:
    """A 1,000-lesson store over world 0, written and indexed once per test run."""
    sys.path.insert(0, str(BENCH))
    try:
        synth = importlib.import_module("_synth_world")
    finally:
        sys.path.remove(str(BENCH))
    world = World.generate(0)
    folder = tmp_path_factory.mktemp("big") / "project"
    built = synth.generate(folder / ".rose", SIZE, world)
    assert built.lessons == SIZE
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ROSE_GLOBAL_HOME", str(folder.parent / "home" / ".rose"))
        Store.open(folder).view()  # index once: the tests open it as it is
    return folder, world


def _judge(world: World, cache: Path | None) -> Judge:
    return Judge(SimulatedBackend(world), cache_path=cache, events_path=None)


def _bound(res, store: Store) -> None:
    rc = store.config.recall
    assert res.calls <= rc.judge_calls and res.second_calls <= rc.second_look_calls
    assert len(res.rounds) == res.calls + res.second_calls
    assert all(0 < len(r) <= rc.max_candidates for r in res.rounds)


def test_every_prompt_is_bounded_and_walks_from_families(big, tmp_path: Path):
    folder, world = big
    store = Store.open(folder)
    assert len(store.read("apexes", scope="")) > store.config.recall.max_candidates
    judge = _judge(world, tmp_path / "cache")
    assert families.refresh(store, judge) > 0  # the gists, off the prompt path
    asked = judge.asked
    for task in world.tasks[:12]:
        res = recall(store, task.prompt, judge=judge)
        assert not res.degraded, res.decisions
        _bound(res, store)
        top = res.rounds[0]
        assert all(c["id"].startswith(families.PREFIX) for c in top)
        assert all(c["gist"].startswith("Lessons about") for c in top)  # model-written
        opened = {c["id"] for r in res.rounds[1:2] for c in r}
        assert opened and not any(i.startswith(families.PREFIX) for i in opened)
        chosen = {i["id"] for i in res.chosen}
        needed = {f for f in task.needs if not world.facts[f].known}
        held = {f for i in res.chosen for f in world.facts_in(i.get("full", ""))}
        assert chosen and (needed & held), (task.id, res.decisions)
    # the gists came from the cache: every backend request after refresh was a relevance call
    assert all(call == "relevance" for call, _ in judge.backend.requests[asked:])


def test_a_budget_too_small_serves_the_families_left_over(
    big, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    folder, world = big
    monkeypatch.setenv("ROSE_RECALL_MAX_CANDIDATES", "12")
    monkeypatch.setenv("ROSE_RECALL_JUDGE_CALLS", "3")
    monkeypatch.setenv("ROSE_RECALL_SECOND_LOOK_CALLS", "0")
    store = Store.open(folder)
    n_families = len(families.groups(store.read("apexes", scope=""), {}))
    assert n_families > 3 * 12  # the family level alone needs more than the budget
    backend = SimulatedBackend(world)
    judge = Judge(backend, cache_path=None, events_path=None)
    res = recall(store, world.tasks[0].prompt, judge=judge)
    assert res.calls == 3 and len(backend.requests) == 3  # asked in parallel, all counted
    assert [len(r) for r in res.rounds] == [12, 12, 12]
    unresolved = [v for v in res.verdicts if v.verdict == "unresolved"]
    assert unresolved and all("budget spent" in v.reason for v in unresolved)
    assert any("unresolved" in d and "served" in d for d in res.decisions)
    assert res.chosen  # served within the pack budget
    left_out = [d for d in res.decisions if "left out" in d]
    assert left_out  # said, not silently dropped


def test_offered_oldest_first_so_a_new_lesson_comes_last(
    store: Store, monkeypatch: pytest.MonkeyPatch
):
    """What a new lesson changes comes last: the lines offered before it are the first lines
    offered after it, whether it joins a family or starts one (hosts cache a stable prefix)."""
    monkeypatch.setenv("ROSE_RECALL_MAX_CANDIDATES", "3")
    monkeypatch.setenv("ROSE_RECALL_APEX_CHUNKS", "1")
    world = World.generate(0)
    topics = list(world.topics)[:4]
    drafts = [(t, world.lesson([world.topics[t].facts[n // 4]])) for n, t in enumerate(topics * 2)]
    store.write(
        [
            Node(id=f"n_ord{n:04d}", family=t, title=d.title, gist=d.gist, body=d.body)
            for n, (t, d) in enumerate(drafts)
        ]
    )

    def offered() -> tuple[list[str], dict[str, list[str]]]:
        s = Store.open()
        top = families.top_level(s, s.read("apexes", scope=""), s.read("families"), judge)
        return [i["id"] for i in top], {i["id"]: [m["id"] for m in i["members"]] for i in top
                                        if families.is_family(i)}  # fmt: skip

    judge = _judge(world, None)
    lines, members = offered()
    assert len(lines) == 4 and all(len(m) == 2 for m in members.values())
    d = world.lesson([world.topics[topics[0]].facts[2]])  # joins a family
    store.save(Node(id="n_ord_new1", family=topics[0], title=d.title, gist=d.gist, body=d.body))
    joined, joined_members = offered()
    assert joined == lines
    family = families.PREFIX + topics[0]
    assert joined_members[family] == [*members[family], "n_ord_new1"]
    other = list(world.topics)[5]
    d = world.lesson([world.topics[other].facts[0]])  # starts a family of its own
    store.save(Node(id="n_ord_new2", family=other, title=d.title, gist=d.gist, body=d.body))
    started, _ = offered()
    assert started == [*lines, "n_ord_new2"]


def test_a_family_gist_is_recomputed_when_its_apexes_change(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("ROSE_RECALL_MAX_CANDIDATES", "2")
    monkeypatch.setenv("ROSE_RECALL_APEX_CHUNKS", "1")
    world = World.generate(0)
    topic = next(iter(world.topics))
    drafts = [world.lesson([fact]) for fact in world.topics[topic].facts[:3]]
    store.write(
        [
            Node(id=f"n_fam{n:04d}", family=topic, title=d.title, gist=d.gist, body=d.body)
            for n, d in enumerate(drafts)
        ]
    )
    judge = _judge(world, tmp_path / "cache")
    assert families.refresh(Store.open(), judge) == 0  # the budget holds it: no question asked
    monkeypatch.setenv("ROSE_RECALL_MAX_PACK_TOKENS", "10")
    store = Store.open()
    assert families.refresh(store, judge) == 1
    assert families.refresh(store, judge) == 0  # cached: nothing changed
    edited = store.get("n_fam0001").model_copy(update={"gist": "Another point entirely."})
    store.save(edited)
    assert families.refresh(Store.open(), judge) == 1  # one of its apexes changed: asked again


@pytest.mark.parametrize("chunks, direct", [(2, True), (1, False)])
def test_apexes_that_fit_the_parallel_questions_are_asked_at_once(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunks: int, direct: bool
):
    """Six apexes in three families, three lines a question: within two questions (one
    round trip, asked in parallel) they are offered as they are; allowed one, their
    families come first."""
    monkeypatch.setenv("ROSE_RECALL_MAX_CANDIDATES", "3")
    monkeypatch.setenv("ROSE_RECALL_APEX_CHUNKS", str(chunks))
    monkeypatch.setenv("ROSE_RECALL_MAX_PACK_TOKENS", "10")
    monkeypatch.setenv("ROSE_RECALL_SECOND_LOOK_CALLS", "0")
    world = World.generate(0)
    for n, topic in enumerate(list(world.topics)[:3] * 2):
        d = world.lesson([world.topics[topic].facts[n // 3]])
        store.save(Node(id=f"n_par{n:04d}", family=topic, title=d.title, gist=d.gist, body=d.body))
    res = recall(Store.open(), "Please fix the deploy step", judge=_judge(world, None))
    offered = [i for i in res.items.values()]
    assert any(families.is_family(i) for i in offered) is not direct
    if direct:
        assert res.calls == 2 and [len(r) for r in res.rounds] == [3, 3]


class _FailsOne:
    """The simulated model, except that a call offering the line `poison` fails."""

    name = "fails-one"

    def __init__(self, world: World, poison: str):
        self.inner, self.poison = SimulatedBackend(world), poison
        self.failed = 0

    def complete(self, call, prompt, schema, *, timeout_s):
        if call == "relevance" and self.poison in prompt:
            self.failed += 1
            raise BackendTimeout("fails-one", timeout_s)
        return self.inner.complete(call, prompt, schema, timeout_s=timeout_s)


def test_one_failed_chunk_leaves_the_others_answers_standing(big, monkeypatch: pytest.MonkeyPatch):
    """A level's chunks run in parallel; one that fails is served as left over (ranked
    after everything judged), and recall does not degrade over it."""
    folder, world = big
    monkeypatch.setenv("ROSE_RECALL_MAX_CANDIDATES", "40")
    monkeypatch.setenv("ROSE_RECALL_SECOND_LOOK_CALLS", "0")
    store = Store.open(folder)
    top = families.top_level(store, families.stable(store.read("apexes", scope="")),
                             store.read("families"), _judge(world, None))  # fmt: skip
    assert len(top) > 40  # the family level is asked in two chunks or more
    backend = _FailsOne(world, top[-1]["id"])  # the last chunk's last line
    res = recall(
        store, world.tasks[0].prompt, judge=Judge(backend, cache_path=None, events_path=None)
    )
    assert backend.failed == 1 and not res.degraded
    judged = [v for v in res.verdicts if v.verdict in ("relevant", "maybe", "unrelated")]
    assert judged  # the other chunks' answers stand
    failed = [v for v in res.verdicts if v.reason.startswith("call failed")]
    assert failed and all(v.verdict == "unresolved" for v in failed)


def test_rendering_stops_once_the_picks_overflow_the_budget(big, monkeypatch: pytest.MonkeyPatch):
    """A wide walk picks hundreds of lessons (left over, unjudged) for a block that holds a
    few; rendering costs a query a compressed lesson, so only those that could fit are."""
    from rose.loop.selection import recall as recall_mod

    folder, world = big
    monkeypatch.setenv("ROSE_RECALL_MAX_CANDIDATES", "12")
    monkeypatch.setenv("ROSE_RECALL_JUDGE_CALLS", "3")
    monkeypatch.setenv("ROSE_RECALL_SECOND_LOOK_CALLS", "0")
    rendered: list[int] = []
    real = recall_mod._materialise

    def counting(store, res, chosen):
        rendered.append(len(chosen))
        return real(store, res, chosen)

    monkeypatch.setattr(recall_mod, "_materialise", counting)
    store = Store.open(folder)
    res = recall(store, world.tasks[0].prompt, judge=_judge(world, None))
    picked = sum(1 for v in res.verdicts if v.verdict != "unrelated")
    assert picked > 100 and res.chosen
    assert rendered and rendered[0] < picked / 4
    assert len(res.chosen) <= rendered[0]
