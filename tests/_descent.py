"""A compressed family built by hand from a simulated world, for the descent tests.

Per world: a single-topic task, and three topics (the task's and two others). Each topic has
a verbose level-0 original holding its facts; a level-1 compression keeps a random part of
them in terse form and declares the rest dropped, held by the original; a level-2 merge of
the three keeps a random part of what they hold and declares the rest dropped, each held by
the level-1 node that still has it. The apex fails the task (a fact it needs is dropped
somewhere below it); nothing about which one reaches the harness but the failure's words.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from rose.models import Claim, Node
from rose.sim import Agent, World, examples
from rose.sim.world import CLAIM_KIND, Task
from rose.store.facade import Store


@dataclass(frozen=True)
class Attempt:
    """One try the agent makes: the lessons `serve` in full, `patches` (claim texts, or a
    lesson's whole text) attached to the first of them."""

    serve: tuple[str, ...]
    patches: tuple[str, ...] = ()
    level0: bool = False


@dataclass(frozen=True)
class Family:
    world: World
    task: Task
    apex: str
    failure: str
    nodes: dict[str, Node]


def _facts(world: World, topic: str) -> list[str]:
    t = world.topics[topic]
    return [f for f in t.facts if not world.facts[f].stale and not world.facts[f].known]


def _task(world: World) -> Task:
    for task in world.tasks:
        need = [f for f in task.needs if f not in world.known]
        if (
            len(task.topics) == 1
            and not task.hidden
            and need
            and len(_facts(world, task.topics[0])) >= 3
        ):
            return task
    raise ValueError(f"world {world.seed} has no usable task")


def _terse(world: World, facts: list[str]) -> str:
    return " ".join(world.facts[f].terse for f in facts)


def _claims(world: World, facts: list[str], holder: dict[str, str]) -> list[Claim]:
    kind = CLAIM_KIND
    return [
        Claim(claim=world.facts[f].terse, kind=kind[world.facts[f].kind], holder=holder[f])  # type: ignore[arg-type]
        for f in facts
    ]


def build(store: Store, seed: int, *, tag: str = "") -> Family:
    """Write a family for world `seed` into `store` (ids carry `tag`) and return it."""
    world = World.generate(seed)
    rng = random.Random(f"descent:{seed}")
    task = _task(world)
    topic = task.topics[0]
    others = rng.sample([t for t in world.topics if t != topic and _facts(world, t)], 2)
    topics = [topic, *others]
    need = {f for f in task.needs if f not in world.known}
    nodes: dict[str, Node] = {}
    kept: dict[str, list[str]] = {}
    holder1: dict[str, str] = {}
    for i, t in enumerate(topics):
        facts = _facts(world, t)
        draft = world.lesson(facts, verbose=True)
        l0 = Node(id=f"n_{tag}l0t{i}x", family="descent", title=draft.title, gist=draft.gist,
                  body=draft.body, status="superseded")  # fmt: skip
        keep = [f for f in facts if rng.random() < 0.6] or facts[:1]
        drop = [f for f in facts if f not in keep]
        l1 = Node(id=f"n_{tag}l1t{i}x", family="descent", level=1, origin="compression",
                  title=draft.title, gist=draft.gist, body=_terse(world, keep),
                  status="superseded", derived_from=[l0.id],
                  dropped=_claims(world, drop, dict.fromkeys(drop, l0.id)))  # fmt: skip
        nodes[l0.id], nodes[l1.id] = l0, l1
        kept[l1.id] = keep
        holder1.update(dict.fromkeys(keep, l1.id))
    held = [f for fs in kept.values() for f in fs]
    top = [f for f in held if rng.random() < 0.5]
    if need <= set(top):  # the apex must fail: one fact it needs goes
        top.remove(sorted(need & set(top))[0])
    children = list(kept)
    rng.shuffle(children)
    apex = Node(id=f"n_{tag}apex2x", family="descent", level=2, origin="merge",
                title=f"{topic.capitalize()} and more", gist=world.gist(top or held[:1]),
                body=_terse(world, top) or "Notes.", derived_from=children,
                dropped=_claims(world, [f for f in held if f not in top], holder1))  # fmt: skip
    nodes[apex.id] = apex
    store.write(list(nodes.values()))
    outcome = Agent(world, seed=seed).solve(task, context(nodes, Attempt(serve=(apex.id,))))
    assert not outcome.ok
    return Family(world, task, apex.id, outcome.text, nodes)


def context(nodes: dict[str, Node], attempt: Attempt) -> str:
    """The injected block an attempt serves: its lessons in full, patches on the first."""
    lessons = []
    for n, lid in enumerate(attempt.serve):
        node = nodes[lid]
        body = node.body
        if n == 0 and attempt.patches:
            body += "\n\nAlso:\n" + "\n".join(f"- {p}" for p in attempt.patches)
        lessons.append({"id": node.id, "title": node.title, "gist": node.gist, "body": body})
    return examples.block(lessons)


def attempts_to_rescue(fam: Family, attempts: list[Attempt]) -> int:
    """How many attempts until the agent succeeds (one past the end if none does)."""
    agent = Agent(fam.world, seed=fam.world.seed)
    for i, attempt in enumerate(attempts, 1):
        if agent.solve(fam.task, context(fam.nodes, attempt)).ok:
            return i
    return len(attempts) + 1


def level1(store: Store, seed: int) -> Family:
    """A level-1 compression of one topic's verbose original that fails a task of its topic:
    its dropped claims hold the facts it lost, each held by the original (level 0)."""
    world = World.generate(seed)
    rng = random.Random(f"level1:{seed}")
    task = _task(world)
    facts = _facts(world, task.topics[0])
    need = sorted(f for f in task.needs if f not in world.known and f in facts)
    draft = world.lesson(facts, verbose=True)
    l0 = Node(
        id="n_orig0001", family="descent", title=draft.title, gist=draft.gist, body=draft.body,
        status="superseded",
    )  # fmt: skip
    drop = [f for f in facts if f in need[:1] or rng.random() < 0.4]
    drop += [f for f in facts if f not in drop][: max(0, 3 - len(drop))]  # three at least
    keep = [f for f in facts if f not in drop]
    l1 = Node(
        id="n_comp0001", family="descent", level=1, origin="compression", title=draft.title,
        gist=world.gist(keep or facts), body=_terse(world, keep) or "Notes.",
        derived_from=[l0.id], dropped=_claims(world, drop, dict.fromkeys(drop, l0.id)),
    )  # fmt: skip
    store.write([l0, l1])
    nodes = {l0.id: l0, l1.id: l1}
    outcome = Agent(world, seed=seed).solve(task, context(nodes, Attempt(serve=(l1.id,))))
    assert not outcome.ok
    return Family(world, task, l1.id, outcome.text, nodes)
