"""On the simulated world, rules written after sessions raise selection precision on later
sessions of the same kind of task.

Locks in issue 15's direction where the judge's mistake is systematic: a topic's name used
by another area in its own sense (a homonym: "for ratings search, take the advisory lock"
is the ratings area's search step, not the search topic's work). Every task that names the
borrowed topic alone is served the host's lesson too, since its gist says "ratings,
including ratings search", and never uses it. The tasks naming the borrowed topic
(different verbs, different objects: the same kind of work) are worked one after another
through the real hooks from the world's own lessons. With routing on, each session's
reflection proposes "when the task touches <borrowed>: nothing in the <host> lessons
applies" (what it saw served and unused); the second proposal clears the bar
(`routing.propose_after`: two sessions) and the rule is written, so the later selections
leave the host's lesson out. On those later sessions the selection's precision (used ÷
served, from the episodes) is strictly higher than with `routing.enabled: false` on the
same stream, and its recall (needed facts in the block, by the world's truth) no lower.
With the rules written but never given to the selection (`routing.max_tokens: 0`)
precision is what it is without them: the rise is the judge following the rule, not
something else the routing stage does.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rose.model.registry import simulated_model
from rose.sim import World
from rose.sim.agent import Agent
from rose.sim.hosts import scoreboard
from rose.sim.hosts.drive import HookHost
from rose.sim.hosts.transcript import claude_code
from rose.store.facade import Store
from tests._route_sim import served_and_used

pytestmark = [pytest.mark.graph, pytest.mark.heavy]

SEED = 0
SESSIONS = 3
LATER = 2  # the sessions from here on can be given a rule the first two proposed
# In every arm: one pass of selection, and no counterfactual checks (they only log whether
# attribution agrees, two fresh replay processes a lesson, and decide nothing measured here).
QUIET = {"recall.second_look_calls": "0", "attribute.counterfactual_calls": "0"}


def _work(tmp: Path, settings: dict[str, str]) -> tuple[float, float, Store]:
    """(precision, recall) of the later selections on the borrowed topic's tasks, the store."""
    world = World.generate(SEED)
    borrowed = next(iter(world.homonyms.values()))
    tasks = [t for t in world.tasks if t.topics == (borrowed,) and not t.hidden]
    assert len(tasks) > 1  # the same kind of work, not one task repeated
    model = simulated_model(seed=SEED, size="default", noise=0.0)
    agent = Agent(world, seed=SEED)
    needed = present = 0
    with HookHost(
        tmp, model=model, lessons=scoreboard.seed_lessons(world),
        settings={**QUIET, **settings},
    ) as host:  # fmt: skip
        for i in range(SESSIONS):
            task = tasks[i % len(tasks)]
            sid = f"homonym-{i}"
            answer = host.prompt(sid, scoreboard.plain_prompt(task))
            assert answer["recall"] == "judged"  # the world's lessons outgrow the budget
            block = str(answer.get("block") or "")
            if i >= LATER:
                want = [f for f in task.needs if f not in world.known]
                needed += len(want)
                present += sum(1 for f in want if f in set(world.facts_in(block)))
            session = agent.session(task, block)
            host.end(sid, claude_code(session, session_id=sid, cwd=str(tmp)))
        store = host.store()
    served, used, episodes = served_and_used(store, LATER)
    assert episodes == SESSIONS - LATER
    return used / served, present / needed, store


def test_rules_written_after_sessions_raise_precision_on_later_sessions_of_their_kind(
    tmp_path: Path,
):
    world = World.generate(SEED)
    host_topic, borrowed = next(iter(world.homonyms.items()))
    precision_off, recall_off, _ = _work(tmp_path / "off", {"routing.enabled": "false"})
    precision_on, recall_on, store = _work(tmp_path / "on", {"routing.enabled": "true"})
    rules = [(r.when, r.then) for r in store.rules()[0]]
    assert (f"the task touches {borrowed}", f"nothing in the {host_topic} lessons applies") in rules
    assert precision_on > precision_off, (precision_on, precision_off)
    assert recall_on >= recall_off, (recall_on, recall_off)

    hidden = {"routing.enabled": "true", "routing.max_tokens": "0"}
    precision_unseen, _, unseen = _work(tmp_path / "unseen", hidden)
    assert unseen.rules()[0]  # written, but no selection is given them
    assert precision_unseen == precision_off, (precision_unseen, precision_off)
