"""A seeded synthetic store of realistic shape, written straight to disk for the scale benchmark.

Lessons come in families of 20-50. Most are level 0; the rest are compression
chains (each step `derived_from` the one below, dropping 1-4 claims held lower
down) up to level 6, forks merged back together (diamonds), merges across a
family, and a few disputed pairs. About one episode per two lessons records
what was served and used and how it went; lessons cover the successful
episodes that used them. Files are written with `rose.files.nodefile` directly:
going through `Store.save` would re-check the whole DAG on every write.
"""

from __future__ import annotations

import json
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

from rose.files.layout import StoreDir
from rose.files.nodefile import dump_episode, dump_node
from rose.models import Claim, Episode, Node

#: Bump when the generated shape changes, so a kept store is rebuilt rather than reused.
SHAPE_VERSION = 1
MAX_LEVEL = 6
_MARKER = "synth.json"

_WORDS = (
    "retry", "cache", "deploy", "rollout", "database", "queue", "logging", "build", "search",
    "billing", "metrics", "email", "storage", "scheduler", "gateway", "webhook", "export",
    "session", "upload", "indexer", "ledger", "sandbox", "pipeline", "migration", "profile",
    "report", "worker", "timeout", "header", "region", "bucket", "token", "schema", "replica",
    "lock", "batch", "cursor", "payload", "signature", "config", "fixture", "snapshot",
)  # fmt: skip
_VERBS = (
    "check", "pin", "drain", "flush", "retry", "validate", "invalidate", "sort", "log",
    "round", "lock", "revalidate", "batch", "restart", "rebuild", "measure", "skip", "parse",
)  # fmt: skip
_LINKS = ("before", "after", "whenever", "unless", "so that", "because", "while", "once")
_KINDS = ("parameter", "detail", "step", "example", "caveat", "principle", "other")
_OUTCOMES = (("success", 60), ("failure", 20), ("partial", 10), ("unknown", 10))
_CHAIN_LENGTHS = ((1, 34), (2, 24), (3, 15), (4, 11), (5, 9), (6, 7))
_BASE_TIME = datetime(2025, 1, 1, tzinfo=timezone.utc)


@dataclass
class _Lesson:
    id: str
    family: str
    level: int
    origin: str = "manual"
    status: str = "active"
    conflict: str = ""
    disputes: list[str] = field(default_factory=list)
    derived: list[str] = field(default_factory=list)
    parents: list[str] = field(default_factory=list)
    covers: list[str] = field(default_factory=list)
    dropped: list[tuple[str, str, str]] = field(default_factory=list)  # claim, kind, holder
    served: int = 0
    successes: int = 0
    failures: int = 0
    last_used: datetime | None = None


@dataclass
class Synth:
    """What the benchmark needs to know about a generated store."""

    lessons: int
    episodes: int
    claims: int
    families: int
    max_level: int
    deep: list[str]  # high-level lessons to ask downward questions of
    bases: list[str]  # level-0 lessons under a high apex, to ask ancestors of
    touch: list[str]  # lesson files to rewrite for the incremental sync
    seconds: float = 0.0
    reused: bool = False


def _progress(label: str) -> Callable[[int, int], None]:
    start = time.monotonic()
    last = [start]

    def tick(done: int, total: int) -> None:
        now = time.monotonic()
        if done == total or now - last[0] >= 5.0:
            last[0] = now
            print(f"  {label}: {done:,}/{total:,} ({now - start:.1f} s)", file=sys.stderr)

    return tick


def _third(verb: str) -> str:
    if verb.endswith(("sh", "ch", "x", "s")):
        return verb + "es"
    return verb[:-1] + "ies" if verb.endswith("y") else verb + "s"


class _Gen:
    def __init__(self, n: int, seed: int):
        self.n = n
        self.rng = random.Random(seed)
        self.lessons: dict[str, _Lesson] = {}
        self.families: dict[str, list[str]] = {}

    # -- text ------------------------------------------------------------------------------

    def _id(self, prefix: str) -> str:
        return f"{prefix}_{self.rng.getrandbits(80):020x}"

    def sentence(self) -> str:
        r = self.rng
        words = [r.choice(_VERBS), "the", r.choice(_WORDS), r.choice(_WORDS), r.choice(_LINKS)]
        words += [
            "the",
            r.choice(_WORDS),
            _third(r.choice(_VERBS)),
            f"{r.randint(2, 900)}",
            "times",
        ]
        return " ".join(words).capitalize() + "."

    def prose(self, sentences: int) -> str:
        return " ".join(self.sentence() for _ in range(sentences))

    # -- lessons ---------------------------------------------------------------------------

    def _new(self, family: str, level: int, origin: str, below: list[str]) -> _Lesson:
        les = _Lesson(self._id("n"), family, level, origin=origin, derived=list(below))
        for b in below:
            self.lessons[b].parents.append(les.id)
        for _ in range(self.rng.randint(1, 4) if below else 0):
            holder = self._walk_down(self.rng.choice(below))
            les.dropped.append((self.sentence(), self.rng.choice(_KINDS), holder))
        self.lessons[les.id] = les
        self.families[family].append(les.id)
        return les

    def _walk_down(self, start: str) -> str:
        """A lesson somewhere below-or-at `start`: a dropped claim's holder."""
        cur = start
        while self.lessons[cur].derived and self.rng.random() < 0.4:
            cur = self.rng.choice(self.lessons[cur].derived)
        return cur

    def _tops(self, family: str, max_level: int) -> list[str]:
        return [
            i
            for i in self.families[family]
            if not self.lessons[i].parents and self.lessons[i].level <= max_level
        ]

    def _chain(self, family: str, budget: int) -> int:
        tops = self._tops(family, MAX_LEVEL - 1)
        if not tops:
            return 0
        level0 = [t for t in tops if self.lessons[t].level == 0]
        cur = self.rng.choice(level0 if level0 and self.rng.random() < 0.8 else tops)
        (length,) = self.rng.choices(*zip(*_CHAIN_LENGTHS, strict=True))
        length = min(length, budget, MAX_LEVEL - self.lessons[cur].level)
        for _ in range(length):
            cur = self._new(family, self.lessons[cur].level + 1, "compression", [cur]).id
        return length

    def _merge(self, family: str) -> int:
        tops = self._tops(family, MAX_LEVEL - 1)
        if len(tops) < 2:
            return 0
        picks = self.rng.sample(tops, min(len(tops), self.rng.randint(2, 3)))
        level = max(self.lessons[p].level for p in picks) + 1
        self._new(family, level, "merge", picks)
        return 1

    def _diamond(self, family: str) -> int:
        tops = self._tops(family, MAX_LEVEL - 2)
        if not tops:
            return 0
        base = self.rng.choice(tops)
        level = self.lessons[base].level
        left = self._new(family, level + 1, "compression", [base]).id
        right = self._new(family, level + 1, "compression", [base]).id
        self._new(family, level + 2, "merge", [left, right])
        return 3

    def _dispute(self, family: str) -> None:
        level0 = [i for i in self.families[family] if self.lessons[i].level == 0]
        if len(level0) < 2:
            return
        a, b = (self.lessons[i] for i in self.rng.sample(level0, 2))
        first, then = self.rng.sample(_WORDS, 2)
        question = f"Does the {first} have to settle before the {then} runs, or after?"
        for one, other in ((a, b), (b, a)):
            one.status, one.conflict, one.disputes = "disputed", question, [other.id]

    def family(self, size: int) -> None:
        name = f"{self.rng.choice(_WORDS)}-{self.rng.choice(_WORDS)}-{len(self.families)}"
        self.families[name] = []
        n0 = max(1, min(size, round(size * self.rng.uniform(0.55, 0.7))))
        for _ in range(n0):
            self._new(name, 0, self.rng.choice(("manual", "reflection")), [])
        budget = size - n0
        while budget > 0:
            r = self.rng.random()
            if r < 0.12:
                made = self._merge(name)
            elif r < 0.2 and budget >= 3:
                made = self._diamond(name)
            else:
                made = self._chain(name, budget)
            if not made:
                break
            budget -= made
        if self.rng.random() < 0.3:
            self._dispute(name)

    def statuses(self) -> None:
        """A few lessons retired one way or another, as a store that has lived would have."""
        for les in self.lessons.values():
            if les.status == "active" and self.rng.random() < 0.04:
                les.status = self.rng.choice(("superseded", "demoted", "archived"))

    # -- episodes --------------------------------------------------------------------------

    def episodes(self) -> list[Episode]:
        out: list[Episode] = []
        names = list(self.families)
        outcomes, weights = zip(*_OUTCOMES, strict=True)
        for i in range(self.n // 2):
            fam = self.families[self.rng.choice(names)]
            served = self.rng.sample(fam, min(len(fam), self.rng.randint(2, 6)))
            if self.rng.random() < 0.15:
                other = self.families[self.rng.choice(names)]
                served += self.rng.sample(other, min(len(other), self.rng.randint(1, 2)))
            served = list(dict.fromkeys(served))
            used = self.rng.sample(served, self.rng.randint(0, min(3, len(served))))
            (outcome,) = self.rng.choices(outcomes, weights)
            when = _BASE_TIME + timedelta(minutes=7 * i)
            ep = Episode(
                id=self._id("e"),
                prompt=self.prose(2),
                outcome=outcome,
                served=served,
                used=used,
                accepted_summary=self.prose(1) if outcome == "success" else "",
                session=f"s{i // 12:06d}",
                time=when,
            )
            for lid in served:
                self.lessons[lid].served += 1
            for lid in used:
                les = self.lessons[lid]
                les.last_used = when
                if outcome == "success":
                    les.successes += 1
                    if len(les.covers) < 8:
                        les.covers.append(ep.id)
                elif outcome == "failure":
                    les.failures += 1
            out.append(ep)
        return out

    def node(self, les: _Lesson, index: int) -> Node:
        sentences = self.rng.randint(6, 14) if les.level == 0 else max(2, 8 - les.level)
        created = _BASE_TIME + timedelta(minutes=3 * index)
        return Node(
            id=les.id,
            family=les.family,
            title=self.prose(1)[:60].rstrip(" .") or "Lesson",
            gist=self.sentence(),
            body=self.prose(sentences),
            level=les.level,
            status=les.status,
            origin=les.origin,
            conflict=les.conflict,
            disputes=les.disputes,
            derived_from=les.derived,
            parents=les.parents,
            dropped=[Claim(claim=c, kind=k, holder=h) for c, k, h in les.dropped],
            created=created,
            updated=created + timedelta(hours=self.rng.randint(0, 400)),
        )

    # -- what the benchmark asks about -----------------------------------------------------

    def picks(self, limit: int = 64) -> tuple[list[str], list[str]]:
        """High apexes (deepest first) and level-0 lessons under them, shuffled."""
        apexes = [les for les in self.lessons.values() if not les.parents and les.level > 0]
        apexes.sort(key=lambda les: (-les.level, les.id))
        deep = [les.id for les in apexes[:limit]] or [next(iter(self.lessons))]
        bases: list[str] = []
        for top in deep:
            stack, seen = [top], set()
            while stack:
                cur = stack.pop()
                if cur in seen:
                    continue
                seen.add(cur)
                les = self.lessons[cur]
                if les.level == 0:
                    bases.append(cur)
                    break
                stack.extend(les.derived)
        self.rng.shuffle(deep)
        self.rng.shuffle(bases)
        return deep, list(dict.fromkeys(bases))[:limit] or deep[:1]


def generate(root: Path, n: int, seed: int = 7) -> Synth:
    """Write a store of `n` lessons under `root` (a `.rose` folder); reuse it if already there."""
    marker = root / _MARKER
    want = {"shape": SHAPE_VERSION, "lessons": n, "seed": seed}
    if marker.is_file():
        saved = json.loads(marker.read_text(encoding="utf-8"))
        if {k: saved.get(k) for k in want} == want:
            return Synth(**saved["synth"], reused=True)
    t0 = time.monotonic()
    store = StoreDir(root, "project")
    store.create()
    gen = _Gen(n, seed)
    while len(gen.lessons) < n:
        gen.family(min(gen.rng.randint(20, 50), n - len(gen.lessons)))
    gen.statuses()
    episodes = gen.episodes()
    tick = _progress(f"{n:,}: writing episode files")
    for i, ep in enumerate(episodes, 1):
        path = store.episode_path(ep.id)
        path.write_text(json.dumps(dump_episode(ep), indent=1), encoding="utf-8")
        tick(i, len(episodes))
    tick = _progress(f"{n:,}: writing lesson files")
    for fam in gen.families:
        (store.nodes / fam).mkdir(parents=True, exist_ok=True)
    for i, les in enumerate(gen.lessons.values(), 1):
        path = store.node_path(les.family, les.id)
        path.write_text(dump_node(gen.node(les, i)), encoding="utf-8")
        tick(i, n)
    deep, bases = gen.picks()
    touch = [str(store.node_path(gen.lessons[i].family, i).relative_to(root)) for i in bases[:8]]
    synth = Synth(
        lessons=n,
        episodes=len(episodes),
        claims=sum(len(les.dropped) for les in gen.lessons.values()),
        families=len(gen.families),
        max_level=max(les.level for les in gen.lessons.values()),
        deep=deep,
        bases=bases,
        touch=touch,
        seconds=round(time.monotonic() - t0, 2),
    )
    saved = {k: v for k, v in synth.__dict__.items() if k != "reused"}
    marker.write_text(json.dumps({**want, "synth": saved}, indent=1), encoding="utf-8")
    return synth
