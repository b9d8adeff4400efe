"""The hosts that are not ROSE and need no store: no memory at all, and the ceiling.

`Ceiling` is the best any learner could do on a stream: on each session's prompt it serves
exactly the facts the task needs among those taught in earlier sessions (what the user
stated in a correction, what the agent found by itself, or what the arm started with),
as one lesson in the world's own words. It is an oracle, so it lives on the world's side:
the scoreboard briefs it with the task before the prompt (`brief`), which no other host
is given. A task it fails needed a
fact nobody had taught yet (no memory could have served it), or, with the world's
distraction on, lost one it was given among the rest of its context: rarely, its block
being short. Its lesson is framed by the
caller's `render` (a lesson row to the block, as the prompt hook frames one: ROSE's
`rose.sim.hosts.drive.framed`), so its tokens compare with what the other arms inject.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from rose.sim.world import Task, World

#: A lesson row (id, level, scope, title, gist, body, patches, conflict) -> the block.
Render = Callable[[Mapping[str, Any]], str]


class NoMemory:
    """Nothing is injected, ever."""

    def prompt(self, session: str, text: str, *, first: bool = True) -> Mapping[str, Any]:
        return {"block": ""}

    def stop(self, session: str, transcript: str = "") -> Mapping[str, Any]:
        return {}

    def end(self, session: str, transcript: str = "") -> Mapping[str, Any]:
        return {}


class Ceiling(NoMemory):
    """The needed facts among those taught before this session, in full, on its prompt."""

    def __init__(self, world: World, render: Render):
        self.world = world
        self.render = render
        self.facts: list[str] = []

    def brief(self, task: Task, learnt: frozenset[str]) -> None:
        """The task the next prompt asks for, and what had been taught before it."""
        known = self.world.known
        self.facts = [f for f in task.needs if f in learnt and f not in known]

    def prompt(self, session: str, text: str, *, first: bool = True) -> Mapping[str, Any]:
        if not first or not self.facts:  # a reply: the lesson is still in context
            return {"block": ""}
        draft = self.world.lesson(self.facts)
        row = {
            "id": f"c_{session}",
            "level": 0,
            "scope": "project",
            "title": draft.title,
            "gist": draft.gist,
            "body": draft.body,
            "patches": [],
            "conflict": "",
        }
        return {"block": self.render(row)}
