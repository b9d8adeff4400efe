"""Stores of lessons used together on successful work, for the merge tests.

`pair`: two topic lessons of a small simulated world, the pair its tasks serve together
most often (answered by `judge`, a simulated model of that world);
each episode of theirs is recorded with both lessons used, and every other successful
episode serving one of them with that one alone, so their regression sets overlap without
being equal. `plain`: lessons of plain prose and hand-written episodes, for the tests that
script the model's answers.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

from rose import config
from rose.judge.calls import Judge
from rose.loop.abstraction import replay as _replay
from rose.models import Episode, Node, Span
from rose.sim import SimulatedBackend, World, examples
from rose.store.facade import Store


@dataclass
class Pair:
    store: Store
    world: World
    a: Node
    b: Node
    together: list[Episode]  # both used
    apart: list[Episode]  # one of them used


def pair(project: Path, seed: int = 0, *, verbose: bool = False, co_uses: int = 3) -> Pair:
    """The two lessons, `co_uses` episodes using both (at most as many as the world has),
    and the episodes using one; each episode's load-bearing spans are the lesson sentences
    stating what its accepted outcome states, as reflection would quote them."""
    world, eps = _worked(seed)
    by_pair: dict[tuple[str, ...], list] = {}
    for ep in eps:
        ids = tuple(sorted(lesson["id"] for lesson in ep.served))
        if len(ids) == 2:
            by_pair.setdefault(ids, []).append(ep)
    ids, both = max(sorted(by_pair.items()), key=lambda kv: len(kv[1]))
    facts = {s["id"]: world.facts_in(s["body"]) for ep in both for s in ep.served if s["id"] in ids}
    shown = {i: examples.lesson(world, f"{i}_l", facts[i], verbose=verbose) for i in ids}
    nodes = [
        Node(id=s["id"], title=s["title"], gist=s["gist"], body=s["body"], family=i[2:])
        for i, s in shown.items()
    ]
    store = _opened(project)
    together = [_episode(world, nodes, ep.task.prompt, ep.accepted) for ep in both[:co_uses]]
    apart = [
        _episode(world, [n], ep.task.prompt, ep.accepted)
        for ep in eps
        if ep not in both
        for n in nodes
        if n.id[:-2] in {s["id"] for s in ep.served}
    ]
    store.write(nodes, together + apart)
    return Pair(store, world, store.get(nodes[0].id), store.get(nodes[1].id), together, apart)


def _opened(project: Path) -> Store:
    """The project's store, made if need be, with claims free to go from the first merge
    (`compress.claims_after` 0): these pin replay, holders and refusals. Groups are counted
    by use within a scope, three episodes deep, and a parent weighed against its children's
    bodies (`merge.together: used`, `within: scope`, `budget: bodies`): the mechanics these
    tests pin are the same under serving (tests/test_merge_gathers.py has those defaults)."""
    if not (project / ".rose").is_dir():
        Store.init(project)
    path = Store.open(project).primary.config
    for key, value in (("compress.claims_after", "0"), ("merge.together", "used"),
                       ("merge.within", "scope"), ("merge.budget", "bodies"),
                       ("merge.min_co_uses", "3")):  # fmt: skip
        config.set_override(path, key, value)
    return Store.open(project)


@cache
def _worked(seed: int) -> tuple[World, list]:
    # Without homonyms: a lesson served beside another for a borrowed name is co-served
    # without being co-used, and these pin merging lessons that work together.
    world = World.generate(seed, size="small", homonyms=0)
    return world, [ep for ep in examples.episodes(world) if ep.accepted]


def _episode(world: World, nodes: list[Node], prompt: str, accepted: str) -> Episode:
    ids = [n.id for n in nodes]
    stated = set(world.stated(accepted))
    spans = [
        Span(lesson=n.id, span=s)
        for n in nodes
        for s in n.body.replace(". ", ".\n").splitlines()
        if s.strip() and stated & set(world.facts_in(s))
    ]
    return Episode(prompt=prompt, outcome="success", served=ids, used=ids,
                   accepted_summary=accepted, load_bearing=spans)  # fmt: skip


def more_together(p: Pair, n: int = 1) -> list[Episode]:
    """`n` more successful episodes using both lessons (the first pieces of work again)."""
    eps = [
        Episode(
            prompt=e.prompt,
            outcome="success",
            served=e.served,
            used=e.used,
            accepted_summary=e.accepted_summary,
            load_bearing=e.load_bearing,
        )  # fmt: skip
        for e in p.together[:n]
    ]
    p.store.write([], eps)
    return eps


def judge(p: Pair, **knobs: float) -> Judge:
    backend = SimulatedBackend(p.world, seed=p.world.seed, **knobs)
    return Judge(backend, cache_path=None, events_path=p.store.primary.events)


def prober(j: Judge) -> _replay.Prober:
    return _replay.in_process(j)


BODIES = (
    "Retry only idempotent calls, with backoff. A timeout is not proof the call failed.",
    "S3 answers 200 with an error in the body on some calls. Parse the body, not the status.",
    "The staging database listens on 5433, not 5432. Its migrations run on deploy.",
    "Feature flags are read once at start-up. A changed flag needs a restart to apply.",
    "The CI cache is keyed on the lock file. Bump it when the toolchain changes.",
)


def plain(project: Path, n: int = 2, *, co_uses: int = 3, scope: str = "project") -> list[Node]:
    """`n` lessons of plain prose, used all together on `co_uses` successful episodes."""
    store = _opened(project)
    nodes = [Node(id=f"n_plain{i}x", title=f"Lesson {i}", gist=f"Lesson {i}.", body=BODIES[i],
                  family="plain", scope=scope)  # type: ignore[arg-type]
             for i in range(n)]  # fmt: skip
    store.write(nodes, used_by(nodes, co_uses), scope=scope)
    return [store.get(x.id) for x in nodes]


def used_by(nodes: list[Node], k: int, tag: str = "") -> list[Episode]:
    """`k` successful episodes that used every one of `nodes`."""
    ids = [n.id for n in nodes]
    return [
        Episode(
            prompt=f"task {tag}{i} on {' and '.join(ids)}",
            outcome="success",
            served=ids,
            used=ids,
            accepted_summary=f"did task {tag}{i}",
        )  # fmt: skip
        for i in range(k)
    ]
