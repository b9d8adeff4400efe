"""A seeded world whose truth is known: topics, facts written as prose, and tasks needing them.

Each fact is one sentence carrying its marker (`rose.sim.markers`). Kinds: a
``principle`` (how to go about something), a ``detail`` (an unguessable value: a port,
a constant, a flag) and a ``trap`` (overrides a wrong default). A few details come in
two conflicting variants (the true one and a stale one); a few principles are already
known to the agent, so a lesson holding only them is redundant. A *bridge* fact of one
topic names another topic, and some tasks need that other topic without their prompt
naming it: they are only reachable through the bridging lesson's wording.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from itertools import cycle
from typing import TYPE_CHECKING, Any, Literal

from rose.sim import vocab
from rose.sim.markers import FACT, TASK, TOPIC, find, mark

if TYPE_CHECKING:
    from rose.sim.agent import Outcome

FactKind = Literal["principle", "detail", "trap"]

#: How the harness's claim kinds name each kind of fact.
CLAIM_KIND: dict[str, str] = {"principle": "principle", "detail": "parameter", "trap": "caveat"}


@dataclass(frozen=True)
class Fact:
    id: str  # "database.2", or "database.2a" / "database.2b" for conflicting variants
    base: str  # the id without its variant letter: variants of one base conflict
    topic: str
    kind: FactKind
    subject: str  # what a failure for lack of it looks wrong ("port", "approach", ...)
    text: str  # the verbose sentence, marker included
    terse: str  # the short sentence, marker included
    known: bool = False  # the agent knows it without being told
    stale: bool = False  # the outdated variant of a conflicting pair
    mentions: tuple[str, ...] = ()  # other topics its wording names
    value: str = ""  # a detail's value

    @property
    def marker(self) -> str:
        return mark(FACT, self.id)


@dataclass(frozen=True)
class Topic:
    name: str
    scope: Literal["project", "global"]
    facts: tuple[str, ...]


@dataclass(frozen=True)
class Task:
    id: str
    prompt: str
    topics: tuple[str, ...]  # the topics its prompt names
    hidden: tuple[str, ...]  # topics it needs that only another lesson's wording reaches
    needs: tuple[str, ...]  # fact ids
    accepted: str  # the accepted outcome, naming every fact it relied on
    summary: str  # "the database worker": what the work was about


@dataclass(frozen=True)
class Draft:
    """A lesson written from facts: what a reflection (or a person) would mint."""

    title: str
    gist: str
    family: str
    body: str
    facts: tuple[str, ...] = field(default=(), compare=False)


@dataclass(frozen=True)
class World:
    seed: int
    topics: dict[str, Topic]
    facts: dict[str, Fact]
    tasks: tuple[Task, ...]

    @classmethod
    def generate(
        cls,
        seed: int = 0,
        *,
        topics: int = 6,
        facts_per_topic: int = 5,
        tasks: int = 24,
        conflicts: int = 2,
        known: int = 3,
        bridges: int = 2,
    ) -> World:
        """A world drawn from `seed`: the same seed always gives the same world."""
        if not 1 <= topics <= len(vocab.TOPICS):
            raise ValueError(f"topics must be 1..{len(vocab.TOPICS)}, not {topics}")
        if facts_per_topic < 2:
            raise ValueError("facts_per_topic must be at least 2 (a detail and a principle)")
        rng = random.Random(seed)
        names = rng.sample(vocab.TOPICS, topics)
        facts: dict[str, Fact] = {}
        for name in names:
            kinds = ["detail", "principle"]
            kinds += [
                rng.choice(("detail", "principle", "trap")) for _ in range(facts_per_topic - 2)
            ]
            # Within a topic, no two facts say the same thing about the same subject.
            pools: dict[str, Iterator[Any]] = {
                "detail": cycle(rng.sample(vocab.THINGS, len(vocab.THINGS))),
                "principle": cycle(rng.sample(vocab.ACTIONS, len(vocab.ACTIONS))),
                "trap": cycle(rng.sample(vocab.TRAPS, len(vocab.TRAPS))),
            }
            for i, kind in enumerate(kinds, 1):
                fact = _fact(rng, f"{name}.{i}", name, kind, next(pools[kind]))
                facts[fact.id] = fact
        _add_conflicts(rng, facts, conflicts)
        _mark_known(rng, facts, known)
        pairs = _add_bridges(rng, facts, names, bridges)
        by_topic = {n: tuple(f.id for f in facts.values() if f.topic == n) for n in names}
        world_topics = {
            n: Topic(n, "global" if n in vocab.GLOBAL_TOPICS else "project", by_topic[n])
            for n in names
        }
        world = cls(seed, world_topics, facts, ())
        made = tuple(_task(rng, world, i, pairs) for i in range(tasks))
        return cls(seed, world_topics, facts, made)

    # -- lookups ---------------------------------------------------------------------

    @property
    def known(self) -> frozenset[str]:
        return frozenset(f.id for f in self.facts.values() if f.known)

    def task(self, task_id: str) -> Task:
        for task in self.tasks:
            if task.id == task_id:
                return task
        raise KeyError(task_id)

    def task_in(self, text: str) -> Task | None:
        """The task whose marker `text` carries, if any."""
        ids = {t.id for t in self.tasks}
        found = [k for k in find(text, TASK) if k in ids]
        return self.task(found[-1]) if found else None

    def facts_in(self, text: str) -> list[str]:
        """The world's facts whose markers `text` carries."""
        return [f for f in find(text, FACT) if f in self.facts]

    def topics_in(self, text: str) -> list[str]:
        """The world's topics whose markers `text` carries."""
        return [t for t in find(text, TOPIC) if t in self.topics]

    def subjects_in(self, text: str) -> set[str]:
        """Topics `text` is about: its topic markers and its facts' topics."""
        return set(self.topics_in(text)) | {self.facts[f].topic for f in self.facts_in(text)}

    def conflicting(self, a: str, b: str) -> bool:
        return a != b and self.facts[a].base == self.facts[b].base

    # -- writing lessons -------------------------------------------------------------

    def gist(self, fact_ids: list[str] | tuple[str, ...]) -> str:
        names = list(dict.fromkeys(self.facts[f].topic for f in fact_ids))
        about = " and ".join(f"{n} {mark(TOPIC, n)}" for n in names) or "nothing in particular"
        n = len(fact_ids)
        return f"What to know about {about}: {n} point{'s' if n != 1 else ''}."

    def lesson(
        self, fact_ids: list[str] | tuple[str, ...], *, verbose: bool = True, salt: int = 0
    ) -> Draft:
        """A lesson holding exactly `fact_ids`, as real prose (verbose: with filler)."""
        ids = list(dict.fromkeys(fact_ids))
        if not ids:
            raise ValueError("a lesson needs at least one fact")
        facts = [self.facts[f] for f in ids]
        names = list(dict.fromkeys(f.topic for f in facts))
        title = " and ".join(n.capitalize() for n in names[:3]) + " notes"
        if verbose:
            rng = random.Random(f"{self.seed}:{salt}:{','.join(ids)}")
            parts = [rng.choice(vocab.FILLER)]
            for fact in facts:
                parts.append(fact.text)
                if rng.random() < 0.6:
                    parts.append(rng.choice(vocab.FILLER))
        else:
            parts = [f.terse for f in facts]
        return Draft(title, self.gist(ids), names[0], " ".join(parts), tuple(ids))

    def solve(self, task: Task, context_text: str) -> Outcome:
        """What the simulated agent achieves on `task` with `context_text` in its context."""
        from rose.sim.agent import Agent

        return Agent(self).solve(task, context_text)


# -- generation --------------------------------------------------------------------------


def _value(rng: random.Random, kind: str, topic: str) -> str:
    w1, w2 = rng.sample(vocab.WORDS, 2)
    values = {
        "port": lambda: str(rng.randint(3000, 9899)),
        "ms": lambda: f"{rng.randint(2, 90) * 50}ms",
        "flag": lambda: f"--{w1}-{w2}",
        "int": lambda: str(rng.randint(3, 64)),
        "region": lambda: rng.choice(vocab.REGIONS),
        "name": lambda: f"{w1}-{w2}",
        "header": lambda: f"X-{w1.capitalize()}-{w2.capitalize()}",
        "path": lambda: f"conf/{w1}_{w2}.toml",
        "env": lambda: f"{topic.upper()}_{w1.upper()}_MODE",
    }
    return values[kind]()


def _detail(fid: str, topic: str, thing: str, value: str, **extra) -> Fact:
    m = mark(FACT, fid)
    return Fact(
        id=fid,
        base=extra.pop("base", fid),
        topic=topic,
        kind="detail",
        subject=thing,
        text=(
            f"In this project the {topic} {thing} is {value} {m}, and the values that look "
            "more obvious are wrong here."
        ),
        terse=f"The {topic} {thing} is {value} {m}.",
        value=value,
        **extra,
    )


def _fact(rng: random.Random, fid: str, topic: str, kind: str, pick: Any) -> Fact:
    m = mark(FACT, fid)
    if kind == "detail":
        thing, value_kind = pick
        return _detail(fid, topic, thing, _value(rng, value_kind, topic))
    if kind == "principle":
        action = pick
        text = (
            f"When working on {topic}, always {action} {m}, because skipping it breaks "
            "things in ways that only show up later."
        )
        return Fact(fid, fid, topic, "principle", "approach", text, f"For {topic}, {action} {m}.")
    default, override = pick
    text = (
        f"Most code bases {default}, but {topic} here must {override} {m}; the usual "
        "default fails without any error."
    )
    terse = f"For {topic}, never {default}: {override} {m}."
    return Fact(fid, fid, topic, "trap", "default", text, terse)


def _add_conflicts(rng: random.Random, facts: dict[str, Fact], n: int) -> None:
    """Split `n` details into a true variant (``a``) and a stale one (``b``)."""
    details = [f for f in facts.values() if f.kind == "detail"]
    for old in rng.sample(details, min(n, len(details))):
        value_kind = dict(vocab.THINGS)[old.subject]
        true_value = old.value
        stale_value = true_value
        while stale_value == true_value:
            stale_value = _value(rng, value_kind, old.topic)
        del facts[old.id]
        for suffix, value, stale in (("a", true_value, False), ("b", stale_value, True)):
            fact = _detail(old.id + suffix, old.topic, old.subject, value, base=old.id, stale=stale)
            facts[fact.id] = fact


def _mark_known(rng: random.Random, facts: dict[str, Fact], n: int) -> None:
    principles = [f for f in facts.values() if f.kind == "principle"]
    for f in rng.sample(principles, min(n, len(principles))):
        facts[f.id] = replace(f, known=True)


def _add_bridges(
    rng: random.Random, facts: dict[str, Fact], names: list[str], n: int
) -> list[tuple[str, str, str]]:
    """Add `n` facts of one topic whose wording names another; returns (fact, from, to)."""
    pairs: list[tuple[str, str, str]] = []
    if len(names) < 2:
        return pairs
    for src, dst in [tuple(rng.sample(names, 2)) for _ in range(n)]:
        fid = f"{src}.{sum(1 for f in facts.values() if f.topic == src) + 1}"
        m, t = mark(FACT, fid), mark(TOPIC, dst)
        text = (
            f"Changes to {src} go through {dst} {t} first {m}, so look at how {dst} is set "
            f"up before touching {src}."
        )
        terse = f"{src.capitalize()} changes go through {dst} {t} {m}."
        facts[fid] = Fact(fid, fid, src, "principle", "approach", text, terse, mentions=(dst,))
        pairs.append((fid, src, dst))
    return pairs


def _pick(rng: random.Random, world: World, topic: str, k: int, exclude=()) -> list[str]:
    pool = [
        f
        for f in world.topics[topic].facts
        if not world.facts[f].stale and not world.facts[f].mentions and f not in exclude
    ]
    return rng.sample(pool, min(k, len(pool)))


def _task(rng: random.Random, world: World, i: int, pairs: list[tuple[str, str, str]]) -> Task:
    names = list(world.topics)
    hidden: tuple[str, ...] = ()
    if pairs and i % 4 == 3:
        bridge, src, dst = pairs[(i // 4) % len(pairs)]
        shown: tuple[str, ...] = (src,)
        hidden = (dst,)
        needs = [bridge, *_pick(rng, world, src, rng.randint(1, 2))]
        needs += _pick(rng, world, dst, rng.randint(1, 2))
    else:
        shown = tuple(rng.sample(names, 2 if len(names) > 1 and rng.random() < 0.3 else 1))
        needs = [f for t in shown for f in _pick(rng, world, t, rng.randint(1, 3))]
    verb, verbed = rng.choice(vocab.VERBS)
    obj = rng.choice(vocab.OBJECTS)
    tid = f"t{i}"
    prompt = f"Please {verb} the {shown[0]} {mark(TOPIC, shown[0])} {obj}"
    if len(shown) > 1:
        prompt += f" and check how it interacts with {shown[1]} {mark(TOPIC, shown[1])}"
    prompt += f". {mark(TASK, tid)}"
    relied = ", ".join(mark(FACT, f) for f in needs)
    summary = f"the {shown[0]} {obj}"
    accepted = f"{verbed.capitalize()} {summary}, relying on {relied}."
    return Task(tid, prompt, shown, hidden, tuple(needs), accepted, summary)
