"""A miss is evidence: the lesson work needed, held and not served, changes what happens next.

On a world of the tests' own (seed 0's topics and facts, a store of its lessons that
outgrows the pack budget, so the model chooses), a task is worked through the real hooks
with the user supplying what was missing, and the closing reflection's lesson is a
duplicate of a lesson the store held:

- turned away by a selection rule ("when the task touches A: nothing in the B lessons
  applies", and the lesson holding A's facts leads with B): the miss cites the rule, the
  episode records it, and after `routing.retire_after_misses` misses the rule retires; the
  next session of that kind is served the lesson and holds;
- passed over by the judgement (the lesson's line names only the topic the task never
  names): the miss rewrites its gist to name the task's topic, its title (the user's) kept,
  and the next session of that kind is served it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rose.loop.selection import route
from rose.model.registry import simulated_model
from rose.models import Miss
from rose.sim import World
from rose.sim.agent import Agent
from rose.sim.hosts import scoreboard
from rose.sim.hosts.drive import HookHost
from rose.sim.hosts.transcript import claude_code
from rose.sim.world import Task
from rose.store.facade import Store

pytestmark = pytest.mark.graph

SEED = 0


def _needed(world: World, task: Task, topic: str) -> list[str]:
    return [f for f in task.needs if world.facts[f].topic == topic and f not in world.known]


def _work(host: HookHost, agent: Agent, task: Task, sid: str, folder: Path) -> tuple[str, bool]:
    """One session of `task`: (the block its prompt was served, whether the first attempt
    held)."""
    block = str(host.prompt(sid, scoreboard.plain_prompt(task)).get("block") or "")
    session = agent.session(task, block)
    host.end(sid, claude_code(session, session_id=sid, cwd=str(folder)))
    return block, session.first.ok


def _episode_misses(store: Store, sid: str) -> list[Miss]:
    rows = store.query(f"MATCH (e:Episode) WHERE e.session = '{sid}' RETURN e.id AS id")[0]
    return [m for r in rows for m in store.get_episode(r["id"]).misses]


def _rule_world(world: World) -> tuple[Task, str, str]:
    """A task naming one project topic A, needing facts of A the agent lacks, and a topic B
    (project) the lesson holding them will lead with."""
    for task in world.tasks:
        if len(task.topics) != 1 or task.hidden:
            continue
        a = task.topics[0]
        if world.topics[a].scope != "project" or not _needed(world, task, a):
            continue
        b = next(t for t in world.topics if t != a and world.topics[t].scope == "project")
        return task, a, b
    raise AssertionError("seed 0 has no task of the kind this test needs")


@pytest.mark.parametrize("retire_after", [1, 2])
def test_a_rule_that_turns_needed_work_away_retires_and_the_lesson_is_served(
    tmp_path: Path, retire_after: int
):
    world = World.generate(SEED)
    task, a, b = _rule_world(world)
    seeded = scoreboard.seed_lessons(world)
    held = [*world.topics[b].facts, *world.topics[a].facts]  # B first: its title leads with B
    draft = world.lesson(held, verbose=False)
    both = {"id": "n_bothbothboth", "title": f"Working with {b} and {a}",
            "gist": f"{b} and {a} notes.", "family": b, "body": draft.body}  # fmt: skip
    others = [s for s in seeded if s["family"] not in (a, b)]
    settings = {
        "routing.retire_after_misses": str(retire_after),
        "recall.second_look_calls": "0",
        "attribute.counterfactual_calls": "0",
    }
    agent = Agent(world, seed=SEED)
    model = simulated_model(seed=SEED, noise=0.0)
    with HookHost(tmp_path, model=model, lessons=[*others, both], settings=settings) as host:
        store = host.store()
        skip = route.teach(store, f"the task touches {a}", f"nothing in the {b} lessons applies")
        held_first: list[bool] = []
        for i in range(retire_after + 1):
            block, ok = _work(host, agent, task, f"rule-{i}", tmp_path)
            held_first.append(ok)
            if i < retire_after:
                assert "n_bothbo" not in block  # the rule turned it away
                (miss,) = _episode_misses(host.store(), f"rule-{i}")
                assert miss == Miss(lesson="n_bothbothboth", by="rule", rules=[skip.id])
                retired = {r.id: r.retired for r in host.store().rules()[0]}[skip.id]
                assert bool(retired) == (i + 1 >= retire_after), retired
            else:
                assert set(_needed(world, task, a)) <= set(world.facts_in(block))
        store = host.store()
    assert held_first == [False] * retire_after + [True]
    assert route.records(store)[skip.id].misses == retire_after
    assert route.for_selection(store) == []


def test_a_lesson_passed_over_on_its_line_is_relined_and_served_next_time(tmp_path: Path):
    world = World.generate(SEED)
    task = next(
        t
        for t in world.tasks
        if len(t.topics) == 1
        and len(t.hidden) == 1
        and world.topics[t.hidden[0]].scope == "project"
        and _needed(world, t, t.hidden[0])
    )
    named, hidden = task.topics[0], task.hidden[0]
    seeded = scoreboard.seed_lessons(world)
    lesson = next(s for s in seeded if s["family"] == hidden)
    settings = {
        "routing.enabled": "false",  # the line alone: no rule is written
        "recall.second_look_calls": "0",
        "attribute.counterfactual_calls": "0",
    }
    agent = Agent(world, seed=SEED)
    model = simulated_model(seed=SEED, noise=0.0)
    with HookHost(tmp_path, model=model, lessons=seeded, settings=settings) as host:
        first, _ = _work(host, agent, task, "line-0", tmp_path)
        assert lesson["id"][:8] not in first
        (miss,) = _episode_misses(host.store(), "line-0")
        assert miss == Miss(lesson=lesson["id"], by="relevance")
        relined = host.store().get(lesson["id"])
        assert relined.title == lesson["title"]  # the user's title stays
        assert named in relined.gist and hidden in relined.gist and relined.gist != lesson["gist"]
        second, _ = _work(host, agent, task, "line-1", tmp_path)
    assert set(_needed(world, task, hidden)) <= set(world.facts_in(second))


def test_status_counts_misses_by_cause_with_relines_and_retirements(tmp_path: Path):
    from rose.cli.store_cmds import _miss_lines
    from rose.events import append_event
    from rose.inspect.status import misses

    events = tmp_path / "events.jsonl"
    assert misses(events)["misses"] == 0 and _miss_lines(misses(events)) == []
    for by in ("rule", "rule", "relevance"):
        append_event(events, "miss", {"lesson": "n_abcd", "by": by, "rules": []})
    append_event(events, "reline", {"lesson": "n_abcd", "gist": "g"})
    append_event(events, "route", {"retired": "r_1", "reason": "two misses"})
    append_event(events, "route", {"proposed": "r_1", "retired": True})  # not a retirement
    got = misses(events)
    assert got == {"misses": 3, "by": {"rule": 2, "relevance": 1, "budget": 0}, "relined": 1,
                   "rules_retired": 1}  # fmt: skip
    assert _miss_lines(got) == [
        "misses     3 lesson(s) the work needed left out (2 by rule, 1 by relevance): "
        "1 line(s) rewritten, 1 rule(s) retired"
    ]
