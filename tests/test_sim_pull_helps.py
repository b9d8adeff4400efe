"""On the simulated world, pulling through ROSE's own tools rescues work whose needed lesson
the prompt hook did not inject, and costs calls only where an attempt failed.

Locks in the measured direction of issue 17's pull, end to end: a store seeded with the
world's lessons (more than the pack budget, so recall chooses), the real prompt hook
injecting for each task whose prompt does not name every topic it needs (the lesson of a
topic reached only through another lesson's wording is the one recall misses), and the
agent given the MCP server's tools in-process (`HookHost.tools`, `rose.loop.selection.pull.call`).
Without the tools, no first attempt whose block lacked a needed fact holds (nothing else
could supply it); with them, some do, and strictly more than without. An attempt that held
without the tools held with them too, and made no call. The figures are the world's.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rose.model.registry import simulated_model
from rose.sim import Agent, World
from rose.sim.hosts import scoreboard
from rose.sim.hosts.drive import HookHost

pytestmark = pytest.mark.graph

SEED = 1
TASKS = 6  # of the world's tasks with a topic only another lesson's wording reaches


def test_pull_rescues_work_whose_lesson_was_not_injected(tmp_path: Path):
    world = World.generate(SEED)
    lessons = scoreboard.seed_lessons(world)
    agent = Agent(world, seed=SEED)
    hidden = [t for t in world.tasks if t.hidden][:TASKS]
    model = simulated_model(seed=SEED, size="default", noise=0.0)
    lacked = held_without = held_with = pulls = 0
    with HookHost(tmp_path / "h", model=model, lessons=lessons, pull=True) as host:
        for i, task in enumerate(hidden):
            sid = f"pull-{i}"
            block = str(host.prompt(sid, scoreboard.plain_prompt(task))["block"])
            without = agent.session(task, block, steer=False).first
            ledger = scoreboard.Ledger(host.tools(sid))
            with_tools = agent.session(task, block, steer=False, tools=ledger).first
            calls = [p for p in with_tools.pulls if p.tool in ("recall", "show")]
            if without.ok:
                assert with_tools.ok and not with_tools.pulls
                continue
            assert calls, "a failed attempt with the tools pulled nothing"
            pulls += len(calls)
            needed = [f for f in task.needs if f not in world.known]
            if all(f in world.facts_in(block) for f in needed):
                continue
            lacked += 1
            held_without += without.ok
            held_with += with_tools.ok
    assert lacked >= 3, "the hook injected what these tasks need: nothing to measure"
    assert held_without == 0
    assert held_with > held_without and pulls > 0
