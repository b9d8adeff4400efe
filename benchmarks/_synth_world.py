"""A large store over the simulated world, written straight to disk: the world's own lessons
among synthetic families of lessons about something else, for recall at 1,000 and 10,000.

The world's lessons are what its tasks need: each topic's true facts, two or three to a
lesson, in a family named after the topic (the bridge facts among them, so a bridged task
is only reachable through a found lesson's wording). Everything else is filler with the
shape `_synth.py` gives a store that has lived (families of 20-50 lessons, compression
chains, merges, diamonds), written about subjects outside the world (`vocab.OUTSIDE`), so
the simulated model judges its lines unrelated to every task, as a real model would judge
lessons about another system. Creation times interleave the world's families among the
filler's, so they are not all in the first or the last chunk of a question.
"""

from __future__ import annotations

import json
import random
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from _synth import _BASE_TIME, _Gen, _Lesson  # beside this script, which is run as a file

from rose.files.layout import StoreDir
from rose.files.nodefile import dump_node
from rose.models import Node
from rose.sim import World, vocab

SHAPE_VERSION = 1
_MARKER = "synth-world.json"
_SAFE_VERBS = ("check", "pin", "drain", "flush", "validate", "sort", "round", "restart")
_LINKS = ("before", "after", "whenever", "unless", "once")


@dataclass
class Built:
    """What a benchmark or test needs to know about a generated store."""

    lessons: int
    world_lessons: int
    families: int
    seconds: float = 0.0
    reused: bool = False


class _Filler(_Gen):
    """`_synth`'s shape, in words about subjects outside the world."""

    def sentence(self) -> str:
        r = self.rng
        a, b, c = (r.choice(vocab.OUTSIDE) for _ in range(3))
        verb, link = r.choice(_SAFE_VERBS), r.choice(_LINKS)
        return f"{verb.capitalize()} the {a} {b} {link} the {c} runs {r.randint(2, 900)} times."


def world_lessons(world: World) -> list[tuple[str, str, str, str]]:
    """(family, title, gist, body) for each topic's true facts, two or three a lesson."""
    out = []
    for name, topic in world.topics.items():
        facts = [f for f in topic.facts if not world.facts[f].stale]
        rng = random.Random(f"{world.seed}:{name}")
        while facts:
            k = min(len(facts), rng.choice((2, 3)))
            chunk, facts = facts[:k], facts[k:]
            d = world.lesson(chunk, salt=len(out))
            out.append((name, d.title, d.gist, d.body))
    return out


def generate(root: Path, n: int, world: World, seed: int = 7) -> Built:
    """Write a store of about `n` lessons under `root` (a `.rose` folder); reuse it if there."""
    marker = root / _MARKER
    want = {"shape": SHAPE_VERSION, "lessons": n, "seed": seed, "world": world.seed}
    if marker.is_file():
        saved = json.loads(marker.read_text(encoding="utf-8"))
        if {k: saved.get(k) for k in want} == want:
            return Built(**saved["built"], reused=True)
    t0 = time.monotonic()
    store = StoreDir(root, "project")
    store.create()
    own = world_lessons(world)
    gen = _Filler(max(0, n - len(own)), seed)
    while len(gen.lessons) < gen.n:
        gen.family(min(gen.rng.randint(20, 50), gen.n - len(gen.lessons)))
    gen.statuses()
    names = _rename(gen)
    rng = random.Random(seed)
    slots = len(gen.lessons) + len(own)
    own_at = sorted(rng.sample(range(slots), len(own))) if slots else []
    nodes: list[Node] = []
    filler = iter(gen.lessons.values())
    for i in range(slots):
        when = _BASE_TIME + timedelta(minutes=3 * i)
        if own_at and i == own_at[0]:
            own_at.pop(0)
            fam, title, gist, body = own.pop(0)
            nid = f"n_w{world.seed}{len(nodes):06d}{rng.getrandbits(40):010x}"
            nodes.append(Node(id=nid, family=fam, title=title, gist=gist, body=body, created=when))
        else:
            les: _Lesson = next(filler)
            node = gen.node(les, i)
            nodes.append(node.model_copy(update={"family": names[les.family], "created": when}))
    for node in nodes:
        path = store.node_path(node.family, node.id)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dump_node(node), encoding="utf-8")
    built = Built(
        lessons=len(nodes),
        world_lessons=sum(1 for nd in nodes if nd.family in world.topics),
        families=len({nd.family for nd in nodes}),
        seconds=round(time.monotonic() - t0, 2),
    )
    saved = {k: v for k, v in built.__dict__.items() if k != "reused"}
    marker.write_text(json.dumps({**want, "built": saved}, indent=1), encoding="utf-8")
    return built


def _rename(gen: _Gen) -> dict[str, str]:
    """The filler's family names, in words outside the world (`_synth` draws from its own)."""
    out = {}
    for i, name in enumerate(gen.families):
        a, b = gen.rng.sample(vocab.OUTSIDE, 2)
        out[name] = f"{a}-{b}-{i}"
    return out
