"""The simulated agent: it solves a task exactly when every fact the task needs is in its
context (by marker) or already known to it, and otherwise fails with a symptom per
missing fact. A session adds the user: on failure they steer, supplying what was missing.
"""

from __future__ import annotations

from dataclasses import dataclass

from rose.sim.markers import FACT, OUTCOME, SYMPTOM, USER, mark
from rose.sim.world import Task, World


@dataclass(frozen=True)
class Outcome:
    ok: bool
    text: str  # what the agent reports; a success is the task's accepted outcome
    applied: tuple[str, ...]  # needed facts it had
    missing: tuple[str, ...]  # needed facts it lacked


@dataclass(frozen=True)
class Session:
    task: Task
    first: Outcome  # the agent's first attempt
    outcome: Outcome  # the final result
    steered: bool  # the user had to supply what was missing
    digest: str  # the transcript digest the harness would judge


class Agent:
    def __init__(self, world: World):
        self.world = world

    def solve(self, task: Task, context_text: str) -> Outcome:
        """Attempt `task` with `context_text` in context."""
        present = set(self.world.facts_in(context_text)) | self.world.known
        applied = tuple(f for f in task.needs if f in present)
        missing = tuple(f for f in task.needs if f not in present)
        if not missing:
            return Outcome(True, f"{task.accepted} {mark(OUTCOME, 'ok')}", applied, missing)
        symptoms = " ".join(
            f"The {self.world.facts[f].topic} {self.world.facts[f].subject} was wrong "
            f"{mark(SYMPTOM, f)}."
            for f in missing
        )
        relied = f" It relied on {', '.join(mark(FACT, f) for f in applied)}." if applied else ""
        text = f"Could not finish {task.summary}. {symptoms}{relied} {mark(OUTCOME, 'fail')}"
        return Outcome(False, text, applied, missing)

    def session(self, task: Task, context_text: str, *, steer: bool = True) -> Session:
        """One session on `task`: an attempt and, if it fails and `steer`, a corrected one."""
        first = self.solve(task, context_text)
        lines = [f"User: {task.prompt}", f"Agent: {first.text}"]
        if first.ok or not steer:
            return Session(task, first, first, False, "\n".join(lines))
        supplied = " ".join(self.world.facts[f].text for f in first.missing)
        lines.append(f"User: {mark(USER, 'steer')} That is not right. {supplied}")
        final = self.solve(task, f"{context_text}\n{supplied}")
        lines.append(f"Agent: {final.text}")
        return Session(task, first, final, True, "\n".join(lines))


def solve(world: World, task: Task, context_text: str) -> Outcome:
    """What the simulated agent achieves on `task` with `context_text` in its context."""
    return Agent(world).solve(task, context_text)
