"""Why a first attempt failed, from the world's truth: one cause per failure.

The scoreboard asks this of every failed first attempt, so that a table can say whether an
arm lost a task for want of a chance to learn (nobody had taught the fact yet) or through
its own machinery (the fact was stored but not chosen, chosen but over the budget, served
in a compressed form that dropped it, in the block but not acted on). Each fact the attempt
missed gets the first cause below that applies to it; the attempt gets the first cause, in
`CAUSES`' order, among its facts' causes. So the counts of an arm sum to its failures.

What an arm's store held and how it chose is the arm's to say (`Selection`): the world
reads the facts in those texts, as it reads the injected block. An arm that says nothing
(no memory, the ceiling) held nothing but what it served.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rose.sim import parse
from rose.sim.agent import FOUND, STEER, Outcome
from rose.sim.world import Task, World

#: The causes, in the order the first that applies is taken.
CAUSES = (
    "never_taught",  # no earlier session (nor the seed) taught or found it: no learner had it
    "not_stored",  # taught, and no lesson the arm could serve holds it
    "not_recalled_relevance",  # a servable lesson held it; the judgement passed it over
    "not_recalled_rule",  # ... a selection rule turned the judgement away from it
    "not_recalled_budget",  # ... chosen, then left out over the token budget
    "not_recalled_title_gist",  # ... passed over, its title and gist naming none of the
    # task's subjects
    "compressed_away",  # a lesson holding it was served in a form that dropped it
    "not_applied",  # its true variant was in the block, and the agent did not act on it
)


@dataclass(frozen=True)
class Unit:
    """One thing a selection could serve: a lesson (an apex), with every text serving it
    can bring (its body, what was restored to it, and what descent can reach below it)."""

    id: str
    title: str
    gist: str
    text: str


@dataclass(frozen=True)
class Selection:
    """What an arm held and chose on one prompt, as the arm knows it.

    `stored`: every lesson text in the store, whatever its status; `units`: the servable
    lessons; `served`: the units whose text (or a part of it) is in the block; `unchosen`:
    units the relevance judgement did not choose; `ruled_out`: units it would have chosen
    without the selection rules; `over_budget`: units chosen and left out for the budget.
    """

    stored: str = ""
    units: tuple[Unit, ...] = ()
    served: frozenset[str] = frozenset()
    unchosen: frozenset[str] = frozenset()
    ruled_out: frozenset[str] = frozenset()
    over_budget: frozenset[str] = frozenset()


def taught(world: World, transcript: str) -> set[str]:
    """The facts a session taught: what the user stated in a correction, and what the agent
    says it found by looking (a learner could have kept either)."""
    out: set[str] = set()
    for line in transcript.splitlines():
        if (line.startswith("User: ") and STEER in line) or (
            line.startswith("Agent: ") and FOUND in line
        ):
            out.update(world.facts_in(line))
    return out


def subjects(world: World, task: Task) -> set[str]:
    """The topics a task is about: those its prompt names, those it needs without naming
    them, and those of the facts it needs."""
    return {*task.topics, *task.hidden, *(world.facts[f].topic for f in task.needs)}


def of_fact(
    world: World,
    task: Task,
    fact: str,
    block: str,
    learnt: Iterable[str],
    selection: Selection | None,
) -> str:
    """The cause a missed `fact` counts under (see `CAUSES`)."""
    if fact not in set(learnt):
        return "never_taught"
    if fact in world.facts_in(block):
        return "not_applied"
    if selection is None or fact not in world.facts_in(selection.stored):
        return "not_stored"
    holders = [u for u in selection.units if fact in world.facts_in(u.text)]
    if not holders:
        return "not_stored"  # held only by what cannot be served (archived, superseded)
    ids = {u.id for u in holders}
    if ids & selection.served:
        return "compressed_away"
    if ids & selection.over_budget:
        return "not_recalled_budget"
    if ids & selection.ruled_out:
        return "not_recalled_rule"
    about = subjects(world, task)
    if not any(about & set(world.topics_in(f"{u.title}\n{u.gist}")) for u in holders):
        return "not_recalled_title_gist"
    return "not_recalled_relevance"


def of_attempt(
    world: World,
    task: Task,
    attempt: Outcome,
    block: str,
    learnt: Iterable[str],
    selection: Selection | None,
) -> str:
    """The one cause a failed attempt counts under: the first, in `CAUSES`' order, among
    the causes of the facts it missed ("" for an attempt that held)."""
    if attempt.ok:
        return ""
    known = set(learnt)
    found = {of_fact(world, task, f, block, known, selection) for f in attempt.missing}
    return next((c for c in CAUSES if c in found), "not_applied")


def counts(causes: Sequence[str]) -> dict[str, int]:
    """Failures by cause: every key of `CAUSES`, each failure once."""
    return {c: sum(1 for x in causes if x == c) for c in CAUSES}


def lessons_in(block: str) -> list[str]:
    """The ids of the lessons a block holds, in any form (full, restored, a reminder)."""
    return list(dict.fromkeys(lid for form, lid, _ in parse.injected(block) if form != "loose"))
