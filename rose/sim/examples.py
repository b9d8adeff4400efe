"""One realistic context per semantic call, built from a world.

The contexts are plain dicts shaped like the judge's context models, so they can be
rendered through the real templates and answered by the simulated backend: this is
what the contract tests, the determinism tests and benchmark smoke runs feed the judge.
"""

from __future__ import annotations

from typing import Any

from rose.sim.agent import Agent
from rose.sim.markers import TOPIC, mark
from rose.sim.world import Task, World


def lesson(world: World, lesson_id: str, fact_ids, *, verbose: bool = True) -> dict[str, str]:
    """A lesson dict (id, title, gist, body) holding exactly `fact_ids`."""
    draft = world.lesson(list(fact_ids), verbose=verbose)
    return {"id": lesson_id, "title": draft.title, "gist": draft.gist, "body": draft.body}


def candidate(full: dict[str, str]) -> dict[str, str]:
    """The one-line form of a lesson dict."""
    return {"id": full["id"], "title": full["title"], "gist": full["gist"]}


def topic_lessons(world: World) -> dict[str, dict[str, str]]:
    """One lesson per topic, holding its true facts the agent does not already know."""
    out = {}
    for name, topic in world.topics.items():
        facts = [f for f in topic.facts if not world.facts[f].stale and not world.facts[f].known]
        out[name] = lesson(world, f"n_{name}", facts or topic.facts[:1])
    return out


def focus_task(world: World) -> Task:
    """A single-topic task needing at least two facts the agent does not know."""
    for task in world.tasks:
        unknown = [f for f in task.needs if f not in world.known]
        if len(task.topics) == 1 and not task.hidden and len(unknown) >= 2:
            return task
    raise ValueError(f"world {world.seed} has no single-topic task needing two unknown facts")


def conflict_pair(world: World) -> tuple[str, str]:
    """(true variant, stale variant) of the first conflicting detail."""
    for fact in world.facts.values():
        if fact.stale:
            return fact.base + "a", fact.id
    raise ValueError(f"world {world.seed} has no conflicting facts")


def contexts(world: World) -> dict[str, dict[str, Any]]:
    """A context for every call, about `focus_task(world)`."""
    task = focus_task(world)
    topic = task.topics[0]
    others = [t for t in world.topics if t != topic]
    by_topic = topic_lessons(world)
    cands = [candidate(v) for v in by_topic.values()]
    unknown = [f for f in task.needs if f not in world.known]
    agent = Agent(world)
    session = agent.session(task, "")
    failed = agent.solve(task, " ".join(world.facts[f].text for f in unknown[1:]))
    true, stale = conflict_pair(world)
    conflict_topic = world.facts[true].topic
    keep = [f for f in world.topics[conflict_topic].facts if f != stale]
    return {
        "relevance": {"prompt": task.prompt, "candidates": cands},
        "related": {"lesson": lesson(world, "n_new", unknown[:1]), "candidates": cands},
        "reconcile": {
            "lesson": lesson(world, "n_new", [stale]),
            "existing": [lesson(world, "n_old", keep), by_topic[others[0]]],
        },
        "scope": {"lesson": by_topic[topic], "project": "acme-shop"},
        "assess": {
            "prompt": task.prompt,
            "digest": session.digest,
            "served": [lesson(world, "n_needed", unknown[:1]), by_topic[others[0]]],
        },
        "reflect": {"prompt": task.prompt, "digest": session.digest, "known": cands[:2]},
        "rank_repairs": {
            "prompt": task.prompt,
            "failure": failed.text,
            "claims": [
                {"id": f"c{i}", "claim": world.facts[f].terse, "kind": "detail"}
                for i, f in enumerate(unknown)
            ],
        },
        "select": {
            "prompt": task.prompt,
            "candidates": cands,
            "rules": [
                f"when the task touches {topic} {mark(TOPIC, topic)}, also read "
                f"{others[0]} {mark(TOPIC, others[0])}"
            ],
        },
        "compress": {
            "lesson": lesson(world, "n_task", unknown),
            "evidence": [world.facts[unknown[0]].terse],
            "preserve": [],
        },
        "replay_probe": {"prompt": task.prompt, "lesson": lesson(world, "n_task", unknown)},
        "replay_judge": {
            "prompt": task.prompt,
            "accepted": task.accepted,
            "approach": failed.text,
        },
        "merge": {"lessons": [by_topic[topic], by_topic[others[0]]]},
    }
