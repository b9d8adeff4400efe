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
which names details and traps but only some of its principles; a failed attempt has run
its checks and seen them fail, once or twice (tool calls that failed). A session adds the
user, who replies to a failure: half the time by stating what was missing, else first
only that it is not right (the next attempt then has only what the host injects with the
reply to go on), stating what was missing only when that attempt fails too. A session's
transcript records everything; its digest, what a background reflector reads, keeps the
tool calls, the final messages and the cited lines, and only some of the other reasoning.
Given the memory's tools (`Tools`: what `rose mcp` serves), it may pull after a failed
check and try once more in the same turn (`rose.sim.pulling` says when, and how it asks).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rose import tokens
from rose.sim import parse, prose, realism
from rose.sim.draws import Draws
from rose.sim.generate import value
from rose.sim.markers import DISCOVERY, OUTCOME, QUESTION, USER, find, mark
from rose.sim.vocab import THINGS
from rose.sim.world import Fact, Task, World

CITE = 0.5  # how often the agent cites a lesson it acted on
KEEP_REASONING = 0.3  # how much uncited reasoning a background digest keeps
SUMMARY_HOW = 0.5  # how often a summary of finished work mentions a principle it followed
STEER = mark(USER, "steer")
FOUND = mark(DISCOVERY, "found")  # the agent saying what it found out by looking
EXPLAINS = 0.5  # how often a user who sees a failure says what was missing
RERUN = 0.5  # how often a failed attempt runs its checks a second time before it reports


@dataclass(frozen=True)
class Turn:
    text: str
    age: int = 0  # turns since this text entered the context
    about: str = ""  # the lesson a pulled `show` answered about: its loose text is that lesson's


#: A tool call as an MCP client makes it: (tool, arguments) -> the text the tool answered.
Tools = Callable[[str, Mapping[str, Any]], str]


@dataclass(frozen=True)
class Pulled:
    """One call the agent made to the memory's tools, and what it read back."""

    tool: str  # recall | show | used
    argument: str  # the query, the lesson id, or the ids reported
    text: str  # the answer


Context = str | Sequence[Turn]


@dataclass(frozen=True)
class Outcome:
    ok: bool
    text: str  # what the agent reports: on success, the accepted outcome (a prose summary)
    applied: tuple[str, ...]  # needed facts it acted on rightly
    missing: tuple[str, ...]  # needed facts it lacked, ignored, or took a stale variant of
    used: tuple[str, ...] = ()  # lessons it acted on (not out of habit)
    lines: tuple[tuple[str, str], ...] = ()  # (kind, line): "tool", "reason", "cited"
    pulls: tuple[Pulled, ...] = ()  # the tool calls it made to the memory, in order


@dataclass(frozen=True)
class Session:
    task: Task
    first: Outcome  # the agent's first attempt
    outcome: Outcome  # the final result
    steered: bool  # the user had to reply after a failure
    digest: str  # what a background reflector reads
    transcript: str = ""  # the whole session, what a forked reflector sees
    retried: bool = False  # the user's first reply said only that it was not right
    attempts: int = 1  # the agent's attempts at the work, the first included
    discovered: tuple[str, ...] = ()  # facts it found by itself after its first attempt failed
    replies: int = 0  # the user's replies to a failure


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
    lost: set[str] = field(default_factory=set)  # needed facts lost among unrelated context

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
    def __init__(
        self,
        world: World,
        *,
        seed: int = 0,
        decay: float = 0.05,
        explains: float = EXPLAINS,
        discovery: float = 0.0,
        distraction: float = 0.0,
    ):
        for name, v in (("decay", decay), ("explains", explains), ("discovery", discovery)):
            if not 0.0 <= v <= 1.0:
                raise ValueError(f"{name} must be between 0 and 1, not {v}")
        if distraction < 0:
            raise ValueError(f"distraction must be at least 0, not {distraction}")
        self.world = world
        self.seed = seed
        self.decay = decay
        self.explains = explains  # how often the user, replying to a failure, says what was missing
        self.discovery = discovery  # the chance it finds a missing fact itself after a failure
        self.distraction = distraction  # how fast unrelated context costs it attention

    def attention(self, age: int) -> float:
        """The chance the agent attends to a lesson `age` turns old."""
        return (1.0 - self.decay) ** max(0, age)

    def _attended(self, turns: tuple[Turn, ...], d: Draws) -> list[_Source]:
        blocks: dict[str, list[tuple[int, str]]] = {}
        reminded: dict[str, int] = {}
        loose: list[_Source] = []
        for turn in turns:
            for form, lid, text in parse.injected(turn.text):
                if form == "loose" and turn.about:  # a shown lesson reads as that lesson
                    form, lid = "lesson", turn.about
                if form in ("lesson", "restored"):  # restored detail reads as its lesson's
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

    def solve(self, task: Task, context: Context, *, pulled: Sequence[Turn] = ()) -> Outcome:
        """Attempt `task` with `context` in context, and what it `pulled` since it was read.

        What was pulled is read after the context, its attention drawn apart, so that an
        attempt after a pull differs from the one before it only by what the pull brought.
        """
        turns = turns_of(context)
        key = f"{task.id}\x1e" + "\x1e".join(f"{t.age}\x1f{t.text}" for t in turns)
        d = Draws(self.seed, "agent", key)
        work = _Work(self.world)
        sources = self._attended(turns, d)
        if pulled:
            seen = key + "\x1d" + "\x1e".join(f"{t.about}\x1f{t.text}" for t in pulled)
            sources += self._attended(tuple(pulled), Draws(self.seed, "pulled", seen))
        for s in sources:
            for f in self.world.facts_in(s.text):
                work.have.setdefault(f, s.lesson)
            if STEER in s.text or FOUND in s.text:  # just said, or just found: what holds
                work.told |= set(self.world.facts_in(s.text))
            work.asked |= set(find(s.text, QUESTION))
        work.cited = {lid for lid in set(work.have.values()) if lid and d.unit("cite", lid) < CITE}
        if self.distraction:
            keep = realism.retention(self._unrelated(task, turns, pulled), self.distraction)
            work.lost = {f for f in task.needs if d.unit("distract", f) >= keep}
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
            checks = f"run the checks for {task.summary}"
            failing = f"{len(work.failed)} of {len(task.needs)} checks failed"
            for _ in range(1 + (d.unit("rerun") < RERUN)):  # ran them, and again after a fix
                work.lines.append(("failed", f"Tool: {checks} (failed: {failing})"))
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

    def _unrelated(self, task: Task, turns: Sequence[Turn], pulled: Sequence[Turn]) -> int:
        """The tokens of context around the task's facts: all of it but the sentences that
        state one of them (`realism.retention` turns this into a chance to act on a fact)."""
        text = "\n".join(t.text for t in (*turns, *pulled))
        needed = set(task.needs)
        related = sum(
            tokens.count(sentence)
            for sentence in parse.sentences(text)
            if needed & set(self.world.facts_in(sentence))
        )
        return max(0, tokens.count(text) - related)

    def _do(self, need: str, work: _Work, d: Draws) -> None:
        """Act on `need` as well as the context allows."""
        fact = self.world.facts[need]
        if fact.known:
            work.applied.append(need)
            work.lines.append(("reason", prose.habit(fact)))
            return
        # lost among unrelated context, it reads as if it had never been given
        have = [v for v in work.have if v not in work.lost or v in work.told]
        variants = [v for v in have if self.world.facts[v].base == fact.base]
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
            elif need not in have or d.unit("variant", fact.base) >= 0.5:
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

    def session(
        self,
        task: Task,
        context: Context,
        *,
        steer: bool = True,
        follow_up: FollowUp | None = None,
        tools: Tools | None = None,
        key: str = "",
    ) -> Session:
        """One session on `task`: an attempt and, if it fails and `steer`, the user's replies.

        Replying to a failure, the user says what was missing (`explains` of the time, drawn
        per task), or first only that it is not right, and says what was missing only if the
        next attempt fails too. `follow_up`, given the transcript so far and a reply, is the
        host's turn: it returns what the host injected with the reply (lessons, or detail
        restored to a lesson that failed), which the next attempt reads too. With `tools`,
        an attempt whose checks fail may pull and try again (`rose.sim.pulling.attempt`);
        what it pulled stays in its context for the rest of the session.
        """
        from rose.sim import pulling

        asked: set[tuple[str, str]] = set()  # what it pulled already: never asked twice
        turns = turns_of(context)

        found_turns: tuple[Turn, ...] = ()  # what it found itself: read apart, as a pull is

        def attempt() -> Outcome:
            nonlocal turns
            if tools is None:
                return self.solve(task, turns, pulled=found_turns)
            outcome, got = pulling.attempt(self, task, (*turns, *found_turns), tools, asked)
            turns = (*turns, *got)
            return outcome

        first = attempt()
        record: list[tuple[str, str]] = [("user", f"User: {task.prompt}"), *_lines(first)]
        record.append(("final", f"Agent: {first.text}"))
        final, retried = first, False
        found = self._discover(first, key or task.id)
        if found:  # it looks for what it lacked, and tries again, before the user says a word
            for fact in found:
                record += prose.discovered(self.world.facts[fact])
            found_turns = (Turn("\n".join(line for kind, line in record if kind == "found")),)
            final = attempt()
            record.extend([*_lines(final), ("final", f"Agent: {final.text}")])

        def reply(words: str) -> Outcome:
            nonlocal turns
            injected = follow_up(_text(record), words) if follow_up is not None else ""
            record.append(("user", f"User: {words}"))
            turns = (*turns, Turn(f"{injected}\n{words}" if injected else words))
            outcome = attempt()
            record.extend([*_lines(outcome), ("final", f"Agent: {outcome.text}")])
            return outcome

        if not final.ok and steer:
            if Draws(self.seed, "user", task.id).unit("explains") >= self.explains:
                retried = True
                final = reply(f"{STEER} That is not right. It still fails; please try again.")
            if not final.ok:
                final = reply(correction(self.world, final.missing))
        transcript = _text(record)
        d = Draws(self.seed, "digest", transcript)
        digest = "\n".join(
            line
            for i, (kind, line) in enumerate(record)
            if kind != "reason" or d.unit("keep", i) < KEEP_REASONING
        )
        replies = sum(kind == "user" for kind, _ in record[1:])
        attempts = 1 + replies + bool(found)
        return Session(
            task, first, final, replies > 0, digest, transcript, retried, attempts, found, replies
        )

    def _discover(self, attempt: Outcome, key: str) -> tuple[str, ...]:
        """The facts a failed `attempt` lacked that the agent finds by itself: each with the
        chance `discovery`, drawn per session (`key`) and fact, so that every arm working the
        same session finds the same ones."""
        if attempt.ok or not self.discovery:
            return ()
        d = Draws(self.seed, "discover", key)
        return tuple(f for f in attempt.missing if d.unit(f) < self.discovery)


def correction(world: World, missing: Sequence[str]) -> str:
    """The user's reply to a failure that says what was missing: the facts, in words."""
    supplied = " ".join(world.facts[f].text for f in missing)
    return f"{STEER} That is not right. {supplied}"


#: (the transcript so far, the user's reply) -> what the host injected with the reply.
FollowUp = Callable[[str, str], str]


def _text(record: Sequence[tuple[str, str]]) -> str:
    return "\n".join(line for _, line in record)


def _lines(outcome: Outcome) -> list[tuple[str, str]]:
    """An attempt's lines as the transcript has them (each already says who: "Tool: ...",
    with " (failed: error)" after a check that failed, or "Agent: ...")."""
    return list(outcome.lines)


def solve(world: World, task: Task, context: Context) -> Outcome:
    """What the simulated agent achieves on `task` with `context` in its context."""
    return Agent(world).solve(task, context)
