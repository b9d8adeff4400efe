"""A rule is learnt from work the user corrected in a reply, from the request that opened it.

From an empty store, a task whose prompt names one topic but whose work needs another
(world 0's bridged tasks: "Please tune the reports endpoint" needs the flags facts) fails,
and the user replies with what was missing; the reply names both topics. The reflection at
the session's end reflects on the reply's unit, and is shown the session's earlier requests:
the kind of task is the opening request's ("the task touches reports"), so it proposes
"also read the flags lessons". Told only the reply, it would take flags for a topic the task
named and propose nothing. Two such sessions clear `routing.propose_after`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rose.model.registry import simulated_model
from rose.sim import World
from rose.sim.agent import Agent
from rose.sim.hosts import scoreboard
from rose.sim.hosts.drive import HookHost
from rose.sim.hosts.scoreboard import _Replies
from rose.sim.hosts.transcript import claude_code

pytestmark = pytest.mark.graph


def test_two_corrected_sessions_of_a_bridged_kind_write_the_read_rule(tmp_path: Path):
    world = World.generate(0)
    bridged = [t for t in world.tasks if t.topics == ("reports",) and t.hidden == ("flags",)]
    # Two sessions whose hidden needs differ: the second still lacks a flags fact that the
    # first session's lesson does not hold, so its user has to supply one too.
    flags = {t.id: {f for f in t.needs if world.facts[f].topic == "flags"} for t in bridged}
    first = bridged[0]
    second = next(t for t in bridged[1:] if flags[t.id] - flags[first.id])
    agent = Agent(world, seed=0)
    with HookHost(tmp_path, model=simulated_model(seed=0)) as host:
        for i, task in enumerate((first, second)):
            sid = f"replies-{i}"
            block = str(host.prompt(sid, scoreboard.plain_prompt(task)).get("block") or "")
            replies = _Replies(host, task, sid, str(tmp_path))
            session = agent.session(task, block, follow_up=replies)
            assert session.steered  # the user had to say what was missing, in a reply
            host.end(sid, claude_code(session, session_id=sid, cwd=str(tmp_path)))
        store = host.store()
    rules = [(r.when, r.then) for r in store.rules()[0]]
    assert ("the task touches reports", "also read the flags lessons") in rules, rules
