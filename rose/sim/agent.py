"""The simulated agent: it works from a context window, and the world decides if the work holds.

The agent is the world acting, so it alone may know the task's true needs: whether code
works is not a judgement. What it can act on is another matter: only what its context
says, read as an agent reads it (fact markers beside the words that state a fact, a
question marker beside a surfaced conflict's question, the steer marker beside the
user's correction). Its context is a list of turns, each with an age; it reads the
injected block (`rose.sim.parse.injected`) lesson by lesson, and

- attends to a lesson with probability ``(1 - decay) ** age``, where a lesson's age is
  that of its latest full text or one-line reminder (a reminder refreshes it);
- knows some principles anyway, and acts on them out of habit, citing no lesson;
- given both variants of a disputed detail, takes one of them, the stale one half the
  time, unless a question about that detail is in context (then it checks, and gets it
  right) or the user has just said which holds;
- cites a lesson it acted on about half the time.

It succeeds when every need was acted on rightly. On failure it reports symptoms (a
subject and the wrong value, never which fact); on success a summary of what it did,
which names details and traps but only some of its principles. A session adds the user,
who steers after a failure by stating what was missing. A session's transcript records
everything; its digest, what a background reflector reads, keeps the tool calls, the
final messages and the cited lines, and only some of the other reasoning.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field

from rose.sim import parse, prose
from rose.sim.draws import Draws
from rose.sim.generate import value
from rose.sim.markers import OUTCOME, QUESTION, USER, find, mark
from rose.sim.vocab import THINGS
from rose.sim.world import Fact, Task, World

CITE = 0.5  # how often the agent cites a lesson it acted on
KEEP_REASONING = 0.3  # how much uncited reasoning a background digest keeps
SUMMARY_HOW = 0.5  # how often a summary of finished work mentions a principle it followed
STEER = mark(USER, "steer")


@dataclass(frozen=True)
class Turn:
    text: str
    age: int = 0  # turns since this text entered the context


Context = str | Sequence[Turn]


@dataclass(frozen=True)
class Outcome:
    ok: bool
    text: str  # what the agent reports: on success, the accepted outcome (a prose summary)
    applied: tuple[str, ...]  # needed facts it acted on rightly
    missing: tuple[str, ...]  # needed facts it lacked, ignored, or took a stale variant of
    used: tuple[str, ...] = ()  # lessons it acted on (not out of habit)
    lines: tuple[tuple[str, str], ...] = ()  # (kind, line): "tool", "reason", "cited"


@dataclass(frozen=True)
class Session:
    task: Task
    first: Outcome  # the agent's first attempt
    outcome: Outcome  # the final result
    steered: bool  # the user had to supply what was missing
    digest: str  # what a background reflector reads
    transcript: str = ""  # the whole session, what a forked reflector sees


@dataclass
class _Source:
    lesson: str  # the lesson id; "" for text outside any lesson
    age: int
    text: str


@dataclass
class _Work:
    """What one attempt has to go on, and what it did."""

    world: World
    have: dict[str, str] = field(default_factory=dict)  # fact -> its lesson ("" if loose)
    told: set[str] = field(default_factory=set)  # facts the user has just stated
    asked: set[str] = field(default_factory=set)  # disputed details whose question is here
    cited: set[str] = field(default_factory=set)  # lessons it will cite when it uses them
    applied: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)  # (need, wrong value or "")
    used: list[str] = field(default_factory=list)
    lines: list[tuple[str, str]] = field(default_factory=list)

    def act(self, fact_id: str) -> None:
        lid = self.have.get(fact_id, "")
        line, tool = prose.acted(self.world.facts[fact_id])
        if lid:
            self.used.append(lid)
        if lid in self.cited:
            self.lines.append(("cited", f"{line} (lesson {lid})"))
        else:
            self.lines.append(("tool" if tool else "reason", line))


def turns_of(context: Context) -> tuple[Turn, ...]:
    return (Turn(context),) if isinstance(context, str) else tuple(context)


class Agent:
    def __init__(self, world: World, *, seed: int = 0, decay: float = 0.05):
        if not 0.0 <= decay <= 1.0:
            raise ValueError(f"decay must be between 0 and 1, not {decay}")
        self.world = world
        self.seed = seed
        self.decay = decay

    def attention(self, age: int) -> float:
        """The chance the agent attends to a lesson `age` turns old."""
        return (1.0 - self.decay) ** max(0, age)

    def _attended(self, turns: tuple[Turn, ...], d: Draws) -> list[_Source]:
        blocks: dict[str, list[tuple[int, str]]] = {}
        reminded: dict[str, int] = {}
        loose: list[_Source] = []
        for turn in turns:
            for form, lid, text in parse.injected(turn.text):
                if form == "lesson":
                    blocks.setdefault(lid, []).append((turn.age, text))
                elif form == "reminder":
                    reminded[lid] = min(turn.age, reminded.get(lid, turn.age))
                else:
                    loose.append(_Source("", turn.age, text))
        sources = [
            _Source(
                lid,
                min([a for a, _ in got] + [reminded.get(lid, 10**9)]),
                "\n".join(t for _, t in got),
            )
            for lid, got in blocks.items()
        ]
        sources += loose
        return [
            s
            for i, s in enumerate(sources)
            if d.unit("attend", s.lesson or f"loose{i}") < self.attention(s.age)
        ]

    def solve(self, task: Task, context: Context) -> Outcome:
        """Attempt `task` with `context` in context."""
        turns = turns_of(context)
        key = f"{task.id}\x1e" + "\x1e".join(f"{t.age}\x1f{t.text}" for t in turns)
        d = Draws(self.seed, "agent", key)
        work = _Work(self.world)
        for s in self._attended(turns, d):
            for f in self.world.facts_in(s.text):
                work.have.setdefault(f, s.lesson)
            if STEER in s.text:
                work.told |= set(self.world.facts_in(s.text))
            work.asked |= set(find(s.text, QUESTION))
        work.cited = {lid for lid in set(work.have.values()) if lid and d.unit("cite", lid) < CITE}
        for need in task.needs:
            self._do(need, work, d)
        w = self.world
        if not work.failed:
            said = [
                prose.summary(w.facts[f])
                for f in work.applied
                if w.facts[f].kind != "principle" or d.unit("summary", f) < SUMMARY_HOW
            ]
            text = " ".join([f"{task.done}.", *said, mark(OUTCOME, "ok")])
        else:
            symptoms = [prose.symptom(w.facts[f], wrong) for f, wrong in work.failed]
            text = " ".join([f"Could not finish {task.summary}.", *symptoms, mark(OUTCOME, "fail")])
        return Outcome(
            not work.failed,
            text,
            tuple(work.applied),
            tuple(f for f, _ in work.failed),
            tuple(dict.fromkeys(work.used)),
            tuple(work.lines),
        )

    def _do(self, need: str, work: _Work, d: Draws) -> None:
        """Act on `need` as well as the context allows."""
        fact = self.world.facts[need]
        if fact.known:
            work.applied.append(need)
            work.lines.append(("reason", prose.habit(fact)))
            return
        variants = [v for v in work.have if self.world.facts[v].base == fact.base]
        stale = [v for v in variants if v != need]
        if not variants:
            guess = self._guess(fact, d)
            work.failed.append((need, guess))
            done = prose.defaulted(fact, guess)
            if done:
                work.lines.append(("tool" if done[1] else "reason", done[0]))
            return
        if stale and need not in work.told:
            if fact.base in work.asked:
                work.lines.append(("reason", prose.checking(fact)))
            elif need not in work.have or d.unit("variant", fact.base) >= 0.5:
                work.failed.append((need, self.world.facts[stale[0]].value))
                work.act(stale[0])
                return
        work.applied.append(need)
        work.act(need)

    def _guess(self, fact: Fact, d: Draws) -> str:
        if fact.kind != "detail":
            return ""
        rng = random.Random(d.unit("guess", fact.id))
        guess = fact.value
        while guess == fact.value:
            guess = value(rng, dict(THINGS)[fact.subject], fact.topic)
        return guess

    def session(self, task: Task, context: Context, *, steer: bool = True) -> Session:
        """One session on `task`: an attempt and, if it fails and `steer`, a corrected one."""
        first = self.solve(task, context)
        record: list[tuple[str, str]] = [("user", f"User: {task.prompt}"), *first.lines]
        record.append(("final", f"Agent: {first.text}"))
        final, steered = first, False
        if not first.ok and steer:
            supplied = " ".join(self.world.facts[f].text for f in first.missing)
            record.append(("user", f"User: {STEER} That is not right. {supplied}"))
            turns = (*turns_of(context), Turn(f"{STEER} {supplied}"))
            final, steered = self.solve(task, turns), True
            record += [*final.lines, ("final", f"Agent: {final.text}")]
        transcript = "\n".join(line for _, line in record)
        d = Draws(self.seed, "digest", transcript)
        digest = "\n".join(
            line
            for i, (kind, line) in enumerate(record)
            if kind != "reason" or d.unit("keep", i) < KEEP_REASONING
        )
        return Session(task, first, final, steered, digest, transcript)


def solve(world: World, task: Task, context: Context) -> Outcome:
    """What the simulated agent achieves on `task` with `context` in its context."""
    return Agent(world).solve(task, context)
