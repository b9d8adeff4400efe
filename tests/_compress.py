"""A store holding one simulated topic lesson and the successful episodes it was used on."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rose import config
from rose.judge.calls import Judge
from rose.loop.abstraction import replay as _replay
from rose.models import Episode, Node, Span
from rose.sim import SimulatedBackend, World, examples
from rose.store.facade import Store


@dataclass
class Family:
    store: Store
    world: World
    node: Node
    work: list[tuple[str, str]]  # (prompt, accepted outcome) of each episode


def family(
    project: Path,
    seed: int = 0,
    *,
    min_work: int = 3,
    pieces: int | None = None,
    verbose: bool = False,
    spans: bool = True,
) -> Family:
    """The topic lesson whose work needs the least of it (of those with `min_work` pieces of
    successful work stating its facts), stored with
    one episode per piece of work, the lesson used on each.

    Not `verbose`: written without filler (a verbose lesson's filler alone is a cut that
    declares no claim). With `spans`, each episode records as load-bearing the lesson's
    sentences of the facts its accepted outcome states, as reflection would quote them."""
    # the world these families were chosen in: a quarter of its tasks bridge tasks, so
    # that the family picked (and the work on it) stays the same as the world's default moves
    world = World.generate(seed, bridge_share=0.25)
    by_topic: dict[str, list] = {}
    for ep in examples.episodes(world):
        for lesson in ep.served:
            if ep.accepted and set(world.stated(ep.accepted)) & set(world.facts_in(lesson["body"])):
                by_topic.setdefault(lesson["id"], []).append(ep)

    def needed_share(item: tuple[str, list]) -> tuple[float, str]:
        lesson = next(s for s in item[1][0].served if s["id"] == item[0])
        held = set(world.facts_in(lesson["body"]))
        stated = {f for ep in item[1] for f in world.stated(ep.accepted)} & held
        return len(stated) / len(held), item[0]

    enough = [kv for kv in by_topic.items() if len(kv[1]) >= min_work]
    lesson_id, eps = min(enough, key=needed_share)
    lesson = next(s for s in eps[0].served if s["id"] == lesson_id)
    facts = world.facts_in(lesson["body"])
    lesson = examples.lesson(world, lesson_id, facts, verbose=verbose)
    store = Store.init(project)
    config.set_override(store.primary.config, "agent", "simulated")
    config.set_override(store.primary.config, "model", f"seed={seed}")
    # claims may go from the first compression: these pin replay, hints and refusals
    config.set_override(store.primary.config, "compress.claims_after", "0")
    store = Store.open(project)
    node = Node(
        id=lesson["id"], title=lesson["title"], gist=lesson["gist"], body=lesson["body"],
        family=lesson["id"][2:].replace("_", "-"),
    )  # fmt: skip
    work = [(ep.task.prompt, ep.accepted) for ep in eps][:pieces]
    episodes = succeed(node.id, work)
    if spans:
        with_spans(world, node, episodes)
    store.write([node], episodes)
    return Family(store, world, store.get(node.id), work)


def succeed(node_id: str, work: list[tuple[str, str]]) -> list[Episode]:
    """One new successful episode per piece of work, `node_id` served and used."""
    return [
        Episode(prompt=p, outcome="success", served=[node_id], used=[node_id], accepted_summary=a)
        for p, a in work
    ]


def with_spans(world: World, node: Node, episodes: list[Episode]) -> list[Episode]:
    """Each episode's load-bearing spans: the sentences of `node` stating the facts its
    accepted outcome states, as reflection would quote them."""
    held = world.facts_in(node.body)
    sentences = [s for s in node.body.replace(". ", ".\n").splitlines() if s.strip()]
    for ep in episodes:
        stated = [f for f in world.stated(ep.accepted_summary) if f in held]
        ep.load_bearing = [
            Span(lesson=node.id, span=s)
            for s in sentences
            if any(f in world.facts_in(s) for f in stated)
        ]
    return episodes


def judge(f: Family, **knobs: float) -> Judge:
    backend = SimulatedBackend(f.world, seed=f.world.seed, **knobs)
    return Judge(backend, cache_path=None, events_path=f.store.primary.events)


def prober(j: Judge) -> _replay.Prober:
    return _replay.in_process(j)
