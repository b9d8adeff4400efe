"""The scoreboard's figures are the world's, so a host cannot make itself look good.

Locks in: success is the agent's first attempt on the world's task, whatever the host
reports about itself (a host that injects nothing scores what no memory scores, and one
that claims success changes nothing); the host is handed the prompt a person would type,
never a world marker; recall counts the needed facts the block holds, unknown ones only;
the frame is the block less the lessons' own text; rates are measured after warm-up (the
second half of each stream) and pooled over seeds; the host's figures win where it gives
them (None for a stage not built), but for precision, which the world counts over the
window (the host's all-time figure is kept beside); a task is "made worse" when the arm
failed it and the baseline solved it at the same place in the same stream.
"""

from __future__ import annotations

from typing import Any

import pytest

from rose import tokens
from rose.sim import World, examples
from rose.sim.hosts import scoreboard
from rose.sim.markers import OPEN


@pytest.fixture(scope="module")
def world() -> World:
    return World.generate(5, size="small")


class Recording:
    """A host that serves a fixed block and records what it was handed."""

    def __init__(self, block: str = "", **claims: Any):
        self.block = block
        self.claims = claims
        self.prompts: list[str] = []
        self.replies: list[str] = []
        self.stopped: list[str] = []
        self.ended: list[str] = []

    def prompt(self, session: str, text: str, *, first: bool = True) -> dict[str, Any]:
        if not first:
            self.replies.append(text)
            return {"block": ""}
        self.prompts.append(text)
        return {"block": self.block, "calls": 1, "model_tokens": 10, **self.claims}

    def stop(self, session: str, transcript: str = "") -> dict[str, Any]:
        self.stopped.append(transcript)
        return {"calls": 1}

    def end(self, session: str, transcript: str = "") -> dict[str, Any]:
        self.ended.append(session)
        return {"calls": 2, "ok": True}


def _everything(world: World) -> str:
    lessons = [examples.lesson(world, f"n_{t}", world.topics[t].facts) for t in world.topics]
    return examples.block([{**x} for x in lessons])


def test_success_is_the_agents_and_a_host_cannot_claim_it(world: World):
    empty = scoreboard.run(world, Recording(success=True, ok=True), sessions=12, seed=1)
    none = scoreboard.run(world, Recording(), sessions=12, seed=1)
    full = scoreboard.run(world, Recording(_everything(world)), sessions=12, seed=1)
    assert [r.ok for r in empty] == [r.ok for r in none]
    assert sum(r.ok for r in full) > sum(r.ok for r in none)
    assert all(r.present == 0 for r in none) and all(r.tokens == 0 for r in none)


def test_the_host_gets_plain_prompts_and_every_session_ends(world: World):
    host = Recording()
    records = scoreboard.run(world, host, sessions=6, seed=2)
    assert len(host.prompts) == len(host.ended) == 6
    assert all(OPEN not in p for p in host.prompts)
    stream = scoreboard.stream(world, 6, 2)
    assert host.prompts == [scoreboard.plain_prompt(t) for t in stream]
    assert [r.task for r in records] == [t.id for t in stream]
    # a failed attempt: the turn's stop (one call each), then the user's reply as a prompt
    assert [r.background_calls for r in records] == [1 + r.attempts for r in records]
    assert len(host.stopped) == len(host.replies) == sum(r.attempts - 1 for r in records) > 0
    assert all(OPEN not in p and "not right" in p for p in host.replies)


def test_recall_counts_needed_unknown_facts_in_the_block(world: World):
    task = next(t for t in world.tasks if any(f not in world.known for f in t.needs))
    needed = [f for f in task.needs if f not in world.known]
    half = examples.block([examples.lesson(world, "n_half", needed[:1])])

    class One(Recording):
        def prompt(self, session: str, text: str, *, first: bool = True) -> dict[str, Any]:
            return {"block": half}

    records = scoreboard.run(world, One(), sessions=40, seed=3)
    mine = [r for r, t in zip(records, scoreboard.stream(world, 40, 3), strict=True) if t == task]
    assert mine, "the stream should meet the task"
    assert all(r.needed == len(needed) and r.present == 1 for r in mine)


def test_frame_is_the_block_less_the_lessons_text(world: World):
    lessons = [examples.lesson(world, f"n_{t}", world.topics[t].facts) for t in list(world.topics)]
    block = examples.block(lessons[:2])
    bodies = sum(tokens.count(x["body"]) for x in lessons[:2])
    frame = scoreboard.frame_tokens(block)
    assert abs(frame - (tokens.count(block) - bodies)) <= 2  # rounding, a token a piece
    assert 0 < frame < tokens.count(block)
    assert scoreboard.frame_tokens("") == 0


def test_rates_are_after_warm_up_pooled_over_seeds_and_the_host_wins(world: World):
    full = _everything(world)
    flip = [Recording(), Recording(full)]

    class Halves(Recording):
        """Nothing for the first half of the stream, everything after."""

        n = 0

        def prompt(self, session: str, text: str, *, first: bool = True) -> dict[str, Any]:
            self.n += first
            return flip[self.n > 5].prompt(session, text, first=first)

    runs = [scoreboard.run(world, Halves(), sessions=10, seed=s) for s in (1, 2)]
    after = [r for run in runs for r in run[5:]]
    claims = {"precision": 0.99, "lessons": 7, "recall": 0.5}
    figures = scoreboard.metrics(runs, claims)
    assert list(figures)[: len(scoreboard.KEYS)] == list(scoreboard.KEYS)
    assert figures["sessions"] == 20 and figures["measured_from"] == 6
    assert figures["tokens_per_prompt"] == tokens.count(full)
    assert figures["success_rate"] == round(sum(r.ok for r in after) / len(after), 4)
    assert figures["lessons"] == 7
    # precision is the world's, over the window: the host's own is kept beside, not taken
    served = sum(r.served for r in after)
    assert figures["precision"] == round(sum(r.used for r in after) / served, 4)
    assert figures["attributed_precision"] == 0.99
    assert figures["recall"] == 0.5  # the host's figure wins over the world's
    assert figures["model_calls_per_prompt"] == 1 and figures["model_tokens_per_prompt"] == 10
    assert [b["tokens_per_prompt"] for b in figures["over_time"]][:5] == [0] * 5


def test_worse_than_counts_tasks_the_baseline_solved(world: World):
    none = scoreboard.run(world, Recording(), sessions=20, seed=4)
    full = scoreboard.run(world, Recording(_everything(world)), sessions=20, seed=4)
    assert scoreboard.worse_than(full, full) == []
    assert scoreboard.worse_than(none, none) == []
    worse = scoreboard.worse_than(none, full)
    assert worse == sorted(
        {r.task for r, f in zip(none[10:], full[10:], strict=True) if f.ok and not r.ok},
        key=lambda t: (len(t), t),
    )
    assert worse, "no memory should fail some task every lesson in full solves"
