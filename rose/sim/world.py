"""A seeded world whose truth is known: topics, facts written as prose, and tasks needing them.

Each fact is one sentence carrying its marker (`rose.sim.markers`). Kinds: a
``principle`` (how to go about something), a ``detail`` (an unguessable value: a port,
a constant, a flag) and a ``trap`` (overrides a wrong default). A few details come in
two conflicting variants (the true one and a stale one); a few principles are already
known to the agent, so a lesson holding only them is redundant. A *bridge* fact of one
topic names another topic, and some tasks need that other topic without their prompt
naming it: they are only reachable through the bridging lesson's wording. A *homonym* is a topic's
name used in another topic's wording in that topic's own sense, as real areas share words
("migrations" of the database and the deploy pipeline's migrations step): a few facts of a
host topic are worded "the deploy migrations port ...", and a lesson holding one says so in
its gist ("What to know about deploy, including deploy migrations"), so a reader matching
the words takes it for a lesson about the other topic. No task needs those facts for that
topic: the tasks naming the borrowed topic need its own facts.

The world also reads prose back, the way a model reads words: `topics_in` finds topics
named as whole words, `facts_in` the facts a text carries (their markers), and `stated`
the facts a marker-free text states in words (a detail's topic, subject and value in one
sentence; a principle's or trap's topic and phrase). Symptoms and accepted summaries are
written without fact markers, so only `stated` can read them.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Literal

from rose import tokens
from rose.sim import vocab
from rose.sim.markers import FACT, TASK, find, mark, strip

if TYPE_CHECKING:
    from rose.sim.agent import Context, Outcome

FactKind = Literal["principle", "detail", "trap"]

#: How the harness's claim kinds name each kind of fact.
CLAIM_KIND: dict[str, str] = {"principle": "principle", "detail": "parameter", "trap": "caveat"}

#: The sizes a world comes in: keyword arguments of `World.generate`. The default world's
#: lessons cost several times `recall.max_pack_tokens` (2,000), so recall has to choose.
SIZES: dict[str, dict[str, int]] = {
    "small": {"topics": 6, "facts_per_topic": 5, "tasks": 24, "conflicts": 2, "known": 3},
    "default": {"topics": 24, "facts_per_topic": 8, "tasks": 64, "conflicts": 4, "known": 6},
    "large": {"topics": 50, "facts_per_topic": 10, "tasks": 160, "conflicts": 8, "known": 12},
}
_BRIDGES = {"small": 2, "default": 4, "large": 8}
#: The share of tasks that are bridge tasks (they need a topic their prompt never names).
#: The standing quality run measures 2 seeds x the last 50 of 100 sessions: at 0.45 (28 of
#: the default world's 64 tasks, spread through the stream's ranking: scoreboard._ranking)
#: it holds 44 bridge attempts an arm on average (sd 4.7; none of 100 seed pairs had fewer
#: than 30), so `bridge_success_rate` rests on enough attempts to mean something.
BRIDGE_SHARE = 0.45
_HOMONYMS = {"small": 1, "default": 3, "large": 6}

_WORD = re.compile(r"[a-z0-9_]+")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


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
    phrase: str = ""  # the words that identify it: a detail's value, an action, an override
    wrong: str = ""  # a trap's wrong default ("treat a 200 status as success")
    homonym: str = ""  # a topic whose name its wording uses in its own topic's sense

    @property
    def marker(self) -> str:
        return mark(FACT, self.id)

    @property
    def cues(self) -> tuple[str, ...]:
        """What one sentence must say, in words, to state this fact."""
        if self.kind == "detail":
            return (self.topic, self.subject, self.value)
        return (self.topic, self.phrase)


@dataclass(frozen=True)
class Topic:
    name: str
    scope: Literal["project", "global"]
    facts: tuple[str, ...]


@dataclass(frozen=True)
class Task:
    id: str
    prompt: str  # the user's words, and the task marker (which no model call sees)
    topics: tuple[str, ...]  # the topics its prompt names
    hidden: tuple[str, ...]  # topics it needs that only another lesson's wording reaches
    needs: tuple[str, ...]  # fact ids
    summary: str  # "the database worker": what the work was about
    done: str = ""  # "Added the database worker": how a summary of finished work opens


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
        size: str = "default",
        topics: int | None = None,
        facts_per_topic: int | None = None,
        tasks: int | None = None,
        conflicts: int | None = None,
        known: int | None = None,
        bridges: int | None = None,
        homonyms: int | None = None,
        bridge_share: float = BRIDGE_SHARE,
    ) -> World:
        """A world drawn from `seed`: the same seed always gives the same world.

        `size` picks a preset from `SIZES`; any count given overrides it.
        """
        from rose.sim.generate import generate

        if size not in SIZES:
            raise ValueError(f"size must be one of {', '.join(SIZES)}, not {size!r}")
        given = {
            "topics": topics,
            "facts_per_topic": facts_per_topic,
            "tasks": tasks,
            "conflicts": conflicts,
            "known": known,
            "bridges": bridges,
            "homonyms": homonyms,
        }
        counts = {**SIZES[size], "bridges": _BRIDGES[size], "homonyms": _HOMONYMS[size]}
        counts.update({k: v for k, v in given.items() if v is not None})
        return generate(cls, seed, bridge_share=bridge_share, **counts)

    # -- lookups ---------------------------------------------------------------------

    @property
    def known(self) -> frozenset[str]:
        return frozenset(f.id for f in self.facts.values() if f.known)

    @property
    def homonyms(self) -> dict[str, str]:
        """Each topic whose facts' wording borrows another topic's name: host -> borrowed."""
        return {f.topic: f.homonym for f in self.facts.values() if f.homonym}

    def task(self, task_id: str) -> Task:
        for task in self.tasks:
            if task.id == task_id:
                return task
        raise KeyError(task_id)

    def task_in(self, text: str) -> Task | None:
        """The task whose marker `text` carries: the world's bookkeeping, never a model's."""
        ids = {t.id for t in self.tasks}
        found = [k for k in find(text, TASK) if k in ids]
        return self.task(found[-1]) if found else None

    def facts_in(self, text: str) -> list[str]:
        """The world's facts whose markers `text` carries."""
        return [f for f in find(text, FACT) if f in self.facts]

    def conflicting(self, a: str, b: str) -> bool:
        return a != b and self.facts[a].base == self.facts[b].base

    def true_variant(self, fact_id: str) -> str:
        """The true fact of `fact_id`'s base (itself, unless it is a stale variant)."""
        fact = self.facts[fact_id]
        if not fact.stale:
            return fact_id
        return next(f.id for f in self.facts.values() if f.base == fact.base and not f.stale)

    # -- reading prose, as a model reads words ---------------------------------------

    def topics_in(self, text: str) -> list[str]:
        """The world's topics `text` names as whole words, in order of first mention."""
        words = _WORD.findall(strip(text).lower())
        return list(dict.fromkeys(w for w in words if w in self.topics))

    def outside_in(self, text: str) -> list[str]:
        """The subjects outside the world (`vocab.OUTSIDE`) `text` names as whole words."""
        words = _WORD.findall(strip(text).lower())
        return list(dict.fromkeys(w for w in words if w in vocab.OUTSIDE))

    def kinds_in(self, text: str) -> set[str]:
        """The kinds of work `text` names: task verbs (in either form, as the base) and the
        objects tasks come in ("worker", "test suite"), as whole words."""
        plain = " ".join(_WORD.findall(strip(text).lower()))
        verbs = {base for base, done in vocab.VERBS if re.search(rf"\b({base}|{done})\b", plain)}
        objects = {o for o in vocab.OBJECTS if re.search(rf"\b{o}\b", plain)}
        return verbs | objects

    def subjects_in(self, text: str) -> set[str]:
        """Topics `text` is about: the topics it names and its facts' topics."""
        return set(self.topics_in(text)) | {self.facts[f].topic for f in self.facts_in(text)}

    def stated(self, text: str) -> list[str]:
        """The facts `text` states in words, with or without markers, sentence by sentence."""
        out: list[str] = []
        for sentence in _SENTENCE.split(strip(text).lower()):
            named = dict.fromkeys(w for w in _WORD.findall(sentence) if w in self.topics)
            for name in named:
                for fid in self.topics[name].facts:
                    if fid not in out and all(p.search(sentence) for p in self._cues[fid]):
                        out.append(fid)
        return out

    @cached_property
    def _cues(self) -> dict[str, list[re.Pattern[str]]]:
        return {
            f.id: [re.compile(rf"(?<![\w-]){re.escape(c.lower())}(?![\w-])") for c in f.cues]
            for f in self.facts.values()
        }

    # -- writing lessons -------------------------------------------------------------

    def gist(self, fact_ids: list[str] | tuple[str, ...], *, every: bool = False) -> str:
        """One sentence, as a writer would put it: it names at most two of the topics (every
        one with `every`: a summary asked to name them all), and the subjects its facts word
        with another topic's name (a homonym) as they word them."""
        names = list(dict.fromkeys(self.facts[f].topic for f in fact_ids))
        if not names:
            return "Notes on nothing in particular."
        if len(names) <= 2:
            about = " and ".join(names)
        elif every:
            about = f"{', '.join(names[:-1])} and {names[-1]}"
        else:
            about = f"{names[0]}, {names[1]} and more"
        named = names if every else names[:2]
        shared = dict.fromkeys(
            f"{fact.topic} {fact.homonym}"
            for fact in (self.facts[f] for f in fact_ids)
            if fact.homonym and fact.topic in named
        )
        if shared:
            about += f", including {' and '.join(shared)}"
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
        family = facts[0].topic
        if verbose:
            rng = random.Random(f"{self.seed}:{salt}:{','.join(ids)}")
            parts = [rng.choice(vocab.FILLER)]
            for fact in facts:
                parts.append(fact.text)
                if rng.random() < 0.6:
                    parts.append(rng.choice(vocab.FILLER))
        else:
            parts = [f.terse for f in facts]
        return Draft(
            f"{family.capitalize()} notes", self.gist(ids), family, " ".join(parts), tuple(ids)
        )

    def lessons(self) -> list[Draft]:
        """The store a user would have once every topic was learnt: one lesson per topic."""
        return [
            self.lesson([f for f in t.facts if not self.facts[f].stale])
            for t in self.topics.values()
        ]

    def tokens(self) -> int:
        """What serving every lesson of `lessons()` in full costs, in tokens."""
        return sum(tokens.count(f"{d.title}\n{d.gist}\n\n{d.body}") for d in self.lessons())

    def solve(self, task: Task, context: Context) -> Outcome:
        """What the simulated agent achieves on `task` with `context` in its context."""
        from rose.sim.agent import Agent

        return Agent(self).solve(task, context)
