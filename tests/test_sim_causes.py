"""Every failed first attempt is put down to exactly one cause, from the world's truth.

Locks in: a fact nobody taught is `never_taught` whatever the arm did; a taught fact no
servable lesson holds is `not_stored`; one a servable lesson held is put down to how the
selection passed it over (the budget, a rule, a title and gist naming none of the task's
subjects, else the relevance judgement), to compression when the lesson was served
without it, and to the agent when its true variant was in the block; an attempt takes the
first cause in `CAUSES`' order among its facts'; the counts cover every cause and sum to
the failures; what a correction taught is read from the user's lines alone. And the ceiling
(the best any learner could do) fails only for want of teaching, never less often than no
memory, and serves only what was taught before the session.
"""

from __future__ import annotations

import pytest

from rose.sim import World
from rose.sim.agent import STEER, Outcome
from rose.sim.hosts import scoreboard
from rose.sim.hosts.arms import Ceiling, NoMemory
from rose.sim.hosts.causes import CAUSES, Selection, Unit, counts, of_attempt, of_fact, taught
from rose.sim.hosts.drive import framed


@pytest.fixture(scope="module")
def world() -> World:
    return World.generate(5, size="small")


def _task(world: World):
    return next(t for t in world.tasks if len(t.needs) >= 2 and not t.hidden)


def _unit(world: World, uid: str, facts: list[str], title: str = "", gist: str = "") -> Unit:
    draft = world.lesson(facts)
    return Unit(uid, title or draft.title, gist or draft.gist, draft.body)


def test_a_fact_nobody_taught_is_never_taught_whatever_the_store_holds(world: World):
    task = _task(world)
    fact = task.needs[0]
    unit = _unit(world, "n_a", [fact])
    held = Selection(stored=unit.text, units=(unit,), unchosen=frozenset({"n_a"}))
    assert of_fact(world, task, fact, "", set(), held) == "never_taught"
    assert of_fact(world, task, fact, "", {fact}, held) != "never_taught"


def test_a_taught_fact_nothing_servable_holds_is_not_stored(world: World):
    task = _task(world)
    fact = task.needs[0]
    assert of_fact(world, task, fact, "", {fact}, None) == "not_stored"
    assert of_fact(world, task, fact, "", {fact}, Selection()) == "not_stored"
    archived = world.lesson([fact]).body  # in the store, but in no servable lesson
    assert of_fact(world, task, fact, "", {fact}, Selection(stored=archived)) == "not_stored"


def test_a_held_lesson_passed_over_is_put_down_to_how_the_selection_passed_it(world: World):
    task = _task(world)
    fact = task.needs[0]
    topic = world.facts[fact].topic
    named = _unit(world, "n_a", [fact])
    assert topic in named.gist  # the world's own gist names the topic
    hidden = _unit(world, "n_a", [fact], title="Misc notes", gist="Assorted things.")

    def cause(unit: Unit, **how: frozenset[str]) -> str:
        return of_fact(world, task, fact, "", {fact}, Selection(unit.text, (unit,), **how))

    only = frozenset({"n_a"})
    assert cause(named, unchosen=only) == "not_recalled_relevance"
    assert cause(hidden, unchosen=only) == "not_recalled_title_gist"
    assert cause(named, unchosen=only, ruled_out=only) == "not_recalled_rule"
    assert cause(hidden, over_budget=only) == "not_recalled_budget"
    assert cause(named, served=only) == "compressed_away"


def test_a_fact_in_the_block_that_was_not_acted_on_is_not_applied(world: World):
    task = _task(world)
    fact = task.needs[0]
    block = framed({"id": "n_a", "level": 0, "scope": "project", "title": "t", "gist": "g",
                    "body": world.facts[fact].text, "patches": [], "conflict": ""})  # fmt: skip
    assert of_fact(world, task, fact, block, {fact}, None) == "not_applied"


def test_an_attempt_takes_the_first_cause_in_order_and_counts_sum_to_failures(world: World):
    task = _task(world)
    a, b = task.needs[0], task.needs[1]
    failed = Outcome(False, "", (), (a, b))
    # a: taught but not stored; b: never taught -> never_taught comes first
    assert of_attempt(world, task, failed, "", {a}, None) == "never_taught"
    assert of_attempt(world, task, failed, "", {a, b}, None) == "not_stored"
    assert of_attempt(world, task, Outcome(True, "", (a, b), ()), "", set(), None) == ""
    tally = counts(["never_taught", "not_stored", "never_taught"])
    assert list(tally) == list(CAUSES) and sum(tally.values()) == 3
    assert tally["never_taught"] == 2


def test_what_a_correction_taught_is_read_from_the_users_lines_only(world: World):
    task = _task(world)
    a, b = task.needs[0], task.needs[1]
    transcript = "\n".join(
        [
            f"User: {task.prompt}",
            f"Agent: I used {world.facts[b].text}",  # the agent's words teach nothing
            f"User: {STEER} That is not right. {world.facts[a].text}",
        ]
    )
    assert taught(world, transcript) == {a}


def test_the_ceiling_fails_only_for_want_of_teaching_and_never_below_no_memory(world: World):
    ceiling = scoreboard.run(world, Ceiling(world, framed), sessions=30, seed=2)
    none = scoreboard.run(world, NoMemory(), sessions=30, seed=2)
    failed = [r for r in ceiling if not r.ok]
    assert failed and all(r.cause == "never_taught" for r in failed)
    assert all(c.ok or not n.ok for c, n in zip(ceiling, none, strict=True))
    assert sum(r.ok for r in ceiling) > sum(r.ok for r in none)
    # what it served was taught before: the first session of the stream gets nothing
    assert ceiling[0].tokens == 0


def test_the_ceiling_serves_exactly_the_needed_taught_facts(world: World):
    task = _task(world)
    host = Ceiling(world, framed)
    host.brief(task, frozenset({task.needs[0], "nothing.9"}))
    block = host.prompt("s", "the prompt")["block"]
    assert set(world.facts_in(block)) == {task.needs[0]} - world.known
    assert host.prompt("s", "a reply", first=False)["block"] == ""
