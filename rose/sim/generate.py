"""Drawing a world from a seed: topics, their facts in prose, conflicts, bridges, tasks, and
homonyms (a topic's name used in another topic's wording, in that topic's own sense)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import replace
from itertools import cycle
from typing import TYPE_CHECKING, Any

from rose.sim import vocab
from rose.sim.markers import FACT, TASK, mark

if TYPE_CHECKING:
    from rose.sim.world import Fact, Task, World


def generate(
    cls: type[World],
    seed: int,
    *,
    topics: int,
    facts_per_topic: int,
    tasks: int,
    conflicts: int,
    known: int,
    bridges: int,
    homonyms: int = 0,
    bridge_share: float = 0.25,
) -> World:
    from rose.sim.world import Topic

    if not 1 <= topics <= len(vocab.TOPICS):
        raise ValueError(f"topics must be 1..{len(vocab.TOPICS)}, not {topics}")
    if facts_per_topic < 2:
        raise ValueError("facts_per_topic must be at least 2 (a detail and a principle)")
    if not 0.0 <= bridge_share <= 1.0:
        raise ValueError(f"bridge_share must be between 0 and 1, not {bridge_share}")
    rng = random.Random(seed)
    names = rng.sample(vocab.TOPICS, topics)
    facts: dict[str, Fact] = {}
    for name in names:
        kinds = ["detail", "principle"]
        kinds += [rng.choice(("detail", "principle", "trap")) for _ in range(facts_per_topic - 2)]
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
        n: Topic(n, "global" if n in vocab.GLOBAL_TOPICS else "project", by_topic[n]) for n in names
    }
    world = cls(seed, world_topics, facts, ())
    made = tuple(_task(rng, world, i, pairs, bridge_share) for i in range(tasks))
    # Homonyms only reword facts, from a draw of their own: the rest of the world is the same
    # with or without them.
    _add_homonyms(random.Random(f"homonyms:{seed}"), facts, made, homonyms)
    return cls(seed, world_topics, facts, made)


def value(rng: random.Random, kind: str, topic: str) -> str:
    """A value of `kind` ("port", "ms", ...) for a detail of `topic`."""
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


def detail_text(topic: str, thing: str, val: str, marker: str) -> tuple[str, str]:
    """(verbose, terse) sentences stating that `topic`'s `thing` is `val`."""
    verbose = (
        f"In this project the {topic} {thing} is {val} {marker}, and the values that look "
        "more obvious are wrong here."
    )
    return verbose, f"The {topic} {thing} is {val} {marker}."


def _detail(fid: str, topic: str, thing: str, val: str, **extra: Any) -> Fact:
    from rose.sim.world import Fact

    text, terse = detail_text(topic, thing, val, mark(FACT, fid))
    base = extra.pop("base", fid)
    return Fact(fid, base, topic, "detail", thing, text, terse, value=val, phrase=val, **extra)


def principle_text(about: str, action: str, marker: str) -> tuple[str, str]:
    """(verbose, terse) sentences saying that work on `about` must `action`."""
    verbose = (
        f"When working on {about}, always {action} {marker}, because skipping it breaks "
        "things in ways that only show up later."
    )
    return verbose, f"For {about}, {action} {marker}."


def trap_text(about: str, default: str, override: str, marker: str) -> tuple[str, str]:
    """(verbose, terse) sentences saying that `about` must `override`, not `default`."""
    verbose = (
        f"Most code bases {default}, but {about} here must {override} {marker}; the usual "
        "default fails without any error."
    )
    return verbose, f"For {about}, never {default}: {override} {marker}."


def _fact(rng: random.Random, fid: str, topic: str, kind: str, pick: Any) -> Fact:
    from rose.sim.world import Fact

    m = mark(FACT, fid)
    if kind == "detail":
        thing, value_kind = pick
        return _detail(fid, topic, thing, value(rng, value_kind, topic))
    if kind == "principle":
        action = pick
        text, terse = principle_text(topic, action, m)
        return Fact(fid, fid, topic, "principle", "approach", text, terse, phrase=action)
    default, override = pick
    text, terse = trap_text(topic, default, override, m)
    return Fact(fid, fid, topic, "trap", "default", text, terse, phrase=override, wrong=default)


def _add_conflicts(rng: random.Random, facts: dict[str, Fact], n: int) -> None:
    """Split `n` details into a true variant (``a``) and a stale one (``b``)."""
    details = [f for f in facts.values() if f.kind == "detail"]
    for old in rng.sample(details, min(n, len(details))):
        value_kind = dict(vocab.THINGS)[old.subject]
        true_value = old.value
        stale_value = true_value
        while stale_value == true_value:
            stale_value = value(rng, value_kind, old.topic)
        del facts[old.id]
        for suffix, val, stale in (("a", true_value, False), ("b", stale_value, True)):
            fact = _detail(old.id + suffix, old.topic, old.subject, val, base=old.id, stale=stale)
            facts[fact.id] = fact


def _mark_known(rng: random.Random, facts: dict[str, Fact], n: int) -> None:
    principles = [f for f in facts.values() if f.kind == "principle"]
    for f in rng.sample(principles, min(n, len(principles))):
        facts[f.id] = replace(f, known=True)


def _add_bridges(
    rng: random.Random, facts: dict[str, Fact], names: list[str], n: int
) -> list[tuple[str, str, str]]:
    """Add `n` facts of one topic whose wording names another; returns (fact, from, to)."""
    from rose.sim.world import Fact

    pairs: list[tuple[str, str, str]] = []
    if len(names) < 2:
        return pairs
    for src, dst in [tuple(rng.sample(names, 2)) for _ in range(n)]:
        fid = f"{src}.{sum(1 for f in facts.values() if f.topic == src) + 1}"
        m = mark(FACT, fid)
        text = (
            f"Changes to {src} go through {dst} first {m}, so look at how {dst} is set up "
            f"before touching {src}."
        )
        terse = f"{src.capitalize()} changes go through {dst} {m}."
        facts[fid] = Fact(
            fid, fid, src, "principle", "approach", text, terse, mentions=(dst,),
            phrase=f"through {dst}",
        )  # fmt: skip
        pairs.append((fid, src, dst))
    return pairs


def _add_homonyms(
    rng: random.Random, facts: dict[str, Fact], tasks: tuple[Task, ...], n: int
) -> None:
    """Reword facts of `n` topics so that they name another topic in their own sense ("the
    deploy migrations port": deploy's migrations step, not the migrations topic's work).

    The borrowed name is a topic that tasks name on their own (the most worked first: the
    words an area uses most are the ones other areas come to share), and the reworded facts are
    ones tasks of the host topic need, so both kinds of work happen; a fact is reworded only
    when no fact of the borrowed topic says the same thing (the words would state both).
    """
    alone: dict[str, int] = {}
    for t in tasks:
        if len(t.topics) == 1 and not t.hidden:
            alone[t.topics[0]] = alone.get(t.topics[0], 0) + 1
    order = rng.sample(sorted(alone), len(alone))
    needed = {f for t in tasks for f in t.needs}
    taken: set[str] = set()
    for borrowed in sorted(order, key=lambda t: -alone[t]):  # the most worked names first
        if n <= 0:
            return
        if borrowed in taken:
            continue
        phrases = {f.phrase for f in facts.values() if f.topic == borrowed}
        hosts: dict[str, list[Fact]] = {}
        for f in facts.values():
            if (
                f.id in needed and f.topic not in taken | {borrowed} and f.base == f.id
                and not f.mentions and not f.known and f.phrase not in phrases
            ):  # fmt: skip
                hosts.setdefault(f.topic, []).append(f)
        if not hosts:
            continue
        host = rng.choice(sorted(hosts))
        pool = sorted(hosts[host], key=lambda f: f.id)
        for old in rng.sample(pool, min(len(pool), rng.randint(1, 2))):
            facts[old.id] = _reworded(old, f"{host} {borrowed}", borrowed)
        taken |= {host, borrowed}
        n -= 1


def _reworded(old: Fact, about: str, borrowed: str) -> Fact:
    m = mark(FACT, old.id)
    if old.kind == "detail":
        text, terse = detail_text(about, old.subject, old.value, m)
    elif old.kind == "principle":
        text, terse = principle_text(about, old.phrase, m)
    else:
        text, terse = trap_text(about, old.wrong, old.phrase, m)
    return replace(old, text=text, terse=terse, homonym=borrowed)


def _pick(rng: random.Random, world: World, topic: str, k: int) -> list[str]:
    pool = [
        f
        for f in world.topics[topic].facts
        if not world.facts[f].stale and not world.facts[f].mentions
    ]
    return rng.sample(pool, min(k, len(pool)))


def _is_bridge(i: int, share: float) -> bool:
    """Whether task `i` is a bridge task: spread evenly, `share` of the tasks (a share of
    1/4 makes every fourth one, i % 4 == 3)."""
    return int((i + 1) * share) > int(i * share)


def _task(
    rng: random.Random, world: World, i: int, pairs: list[tuple[str, str, str]], share: float
) -> Task:
    from rose.sim.world import Task

    names = list(world.topics)
    hidden: tuple[str, ...] = ()
    if pairs and _is_bridge(i, share):
        nth = int(i * share)  # the bridge tasks before this one
        bridge, src, dst = pairs[nth % len(pairs)]
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
    prompt = f"Please {verb} the {shown[0]} {obj}"
    if len(shown) > 1:
        prompt += f" and check how it interacts with {shown[1]}"
    prompt += f". {mark(TASK, tid)}"
    summary = f"the {shown[0]} {obj}"
    done = f"{verbed.capitalize()} {summary}"
    return Task(tid, prompt, shown, hidden, tuple(needs), summary, done)
