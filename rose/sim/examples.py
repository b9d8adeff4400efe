"""Realistic material built from a world: a context per semantic call, injected blocks,
repair claims with distractors, and recorded episodes.

The contexts are plain dicts shaped like the judge's context models, so they can be
rendered through the real templates and answered by the simulated backend: this is
what the contract tests, the determinism tests and benchmark smoke runs feed the judge.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from rose import tokens
from rose.sim.agent import Agent, Context, Session
from rose.sim.generate import value
from rose.sim.vocab import ACTIONS, THINGS, TRAPS
from rose.sim.world import CLAIM_KIND, Task, World


def lesson(world: World, lesson_id: str, fact_ids, *, verbose: bool = True) -> dict[str, str]:
    """A lesson dict (id, title, gist, body) holding exactly `fact_ids`."""
    draft = world.lesson(list(fact_ids), verbose=verbose)
    return {"id": lesson_id, "title": draft.title, "gist": draft.gist, "body": draft.body}


def candidate(full: Mapping[str, str]) -> dict[str, str]:
    """The one-line form of a lesson dict."""
    return {"id": full["id"], "title": full["title"], "gist": full["gist"]}


def topic_lessons(world: World) -> dict[str, dict[str, str]]:
    """One lesson per topic, holding its true facts the agent does not already know."""
    out = {}
    for name, topic in world.topics.items():
        facts = [f for f in topic.facts if not world.facts[f].stale and not world.facts[f].known]
        out[name] = lesson(world, f"n_{name}", facts or topic.facts[:1])
    return out


def unknown(world: World, task: Task) -> list[str]:
    """The facts `task` needs that the agent does not already know, details first."""
    facts = [f for f in task.needs if f not in world.known]
    return sorted(facts, key=lambda f: world.facts[f].kind != "detail")


def focus_task(world: World) -> Task:
    """A single-topic task needing at least two unknown facts, one of them a detail."""
    for task in world.tasks:
        facts = unknown(world, task)
        if (
            len(task.topics) == 1
            and not task.hidden
            and len(facts) >= 2
            and world.facts[facts[0]].kind == "detail"
        ):
            return task
    raise ValueError(f"world {world.seed} has no single-topic task needing two unknown facts")


def conflict_pair(world: World) -> tuple[str, str]:
    """(true variant, stale variant) of the first conflicting detail."""
    for fact in world.facts.values():
        if fact.stale:
            return world.true_variant(fact.id), fact.id
    raise ValueError(f"world {world.seed} has no conflicting facts")


def conflict_task(world: World) -> Task:
    """A task needing the true variant of the first conflicting detail (made up if none does)."""
    true, _stale = conflict_pair(world)
    found = next((t for t in world.tasks if true in t.needs), None)
    if found is not None:
        return found
    topic = world.facts[true].topic
    return replace(world.tasks[0], id="t_conflict", topics=(topic,), hidden=(), needs=(true,))


def block(
    lessons: Sequence[Mapping[str, str]],
    *,
    reminders: Sequence[Mapping[str, str]] = (),
    conflicts: Mapping[str, str] | None = None,
) -> str:
    """The block recall would inject: `lessons` in full (with any conflict question), then
    one-line `reminders`, rendered through the real ``prompts/inject`` templates."""
    from rose.judge.calls import environment
    from rose.prompt_files import template_text

    def render(name: str, **ctx: Any) -> str:
        return environment().from_string(template_text(name)).render(**ctx).strip("\n")

    pieces = [
        render(
            "inject/lesson",
            id=item["id"],
            level=0,
            scope="project",
            title=item["title"],
            body=item["body"],
            patches=[],
            conflict=(conflicts or {}).get(item["id"], ""),
        )
        for item in lessons
    ]
    pieces += [
        render("inject/refresher", id=r["id"], title=r["title"], gist=r["gist"]) for r in reminders
    ]
    return "\n\n".join([render("inject/head"), *pieces, render("inject/tail")])


# -- repairs ---------------------------------------------------------------------------


def decoy(world: World, fact_id: str, salt: int = 0) -> str:
    """A claim sharing `fact_id`'s topic and subject that is not it: another value, another
    way of going about it, another default. A symptom's words cannot tell them apart."""
    fact = world.facts[fact_id]
    rng = random.Random(f"{world.seed}:{salt}:{fact_id}")
    if fact.kind == "detail":
        other = [v for v in world.facts.values() if v.base == fact.base and v.id != fact.id]
        if other:
            return other[0].terse
        guess = fact.value
        while guess == fact.value:
            guess = value(rng, dict(THINGS)[fact.subject], fact.topic)
        return f"The {fact.topic} {fact.subject} is {guess}."
    phrases = {world.facts[f].phrase for f in world.topics[fact.topic].facts}
    if fact.kind == "trap":
        default, override = rng.choice([t for t in TRAPS if t[1] not in phrases] or list(TRAPS))
        return f"For {fact.topic}, never {default}: {override}."
    action = rng.choice([a for a in ACTIONS if a not in phrases] or list(ACTIONS))
    return f"For {fact.topic}, {action}."


def repair_claims(
    world: World, real: Sequence[str], *, salt: int = 0
) -> tuple[list[dict[str, str]], dict[str, str]]:
    """Claims a repair ranking would see for a failure whose cause is among `real`: each
    real claim, a decoy sharing its topic and subject, and another fact of its topic,
    shuffled. Returns (claims, claim id -> the real fact it states)."""
    rng = random.Random(f"{world.seed}:{salt}:{','.join(real)}")
    texts: list[tuple[str, str, str]] = []  # (text, kind, real fact or "")
    for f in real:
        fact = world.facts[f]
        texts.append((fact.terse, CLAIM_KIND[fact.kind], f))
        texts.append((decoy(world, f, salt), CLAIM_KIND[fact.kind], ""))
        near = [
            g
            for g in world.topics[fact.topic].facts
            if g not in real and world.facts[g].base != fact.base
        ]
        if near:
            g = rng.choice(near)
            texts.append((world.facts[g].terse, CLAIM_KIND[world.facts[g].kind], ""))
    rng.shuffle(texts)
    claims = [{"id": f"c{i}", "claim": t, "kind": k} for i, (t, k, _) in enumerate(texts)]
    return claims, {f"c{i}": f for i, (_, _, f) in enumerate(texts) if f}


# -- episodes --------------------------------------------------------------------------


@dataclass(frozen=True)
class Episode:
    """One unit of work: the lessons served, and the session that came of them."""

    task: Task
    served: tuple[dict[str, str], ...]
    session: Session

    @property
    def accepted(self) -> str:
        """The accepted outcome: the agent's closing summary, when the work succeeded."""
        return self.session.outcome.text if self.session.outcome.ok else ""


def episodes(world: World, agent: Agent | None = None) -> list[Episode]:
    """Every task worked once, each served the topic lessons of the topics it needs (by
    default the user, replying to a failure, says what was missing)."""
    agent = agent or Agent(world, explains=1.0)
    by_topic = topic_lessons(world)
    out = []
    for task in world.tasks:
        topics = dict.fromkeys([*task.topics, *task.hidden])
        served = tuple(by_topic[t] for t in topics)
        context: Context = block(served)
        out.append(Episode(task, served, agent.session(task, context)))
    return out


# -- one context per call --------------------------------------------------------------


def contexts(world: World) -> dict[str, dict[str, Any]]:
    """A context for every call, about `focus_task(world)`."""
    task = focus_task(world)
    topic = task.topics[0]
    others = [t for t in world.topics if t != topic]
    by_topic = topic_lessons(world)
    cands = [candidate(v) for v in by_topic.values()]
    facts = unknown(world, task)
    key = facts[0]  # a detail: what the failures below lack
    agent = Agent(world, explains=1.0)  # the user says what was missing
    needed = lesson(world, "n_needed", [key])
    session = agent.session(task, block([needed]))
    failed = agent.solve(task, " ".join(world.facts[f].text for f in facts[1:]))
    done = agent.solve(task, " ".join(world.facts[f].text for f in facts))
    claims, _ = repair_claims(world, [key])
    true, stale = conflict_pair(world)
    conflict_topic = world.facts[true].topic
    keep = [f for f in world.topics[conflict_topic].facts if f != stale]
    full = " ".join(world.facts[f].terse for f in facts)
    thin = " ".join(world.facts[f].terse for f in facts[1:])
    return {
        "relevance": {"prompt": task.prompt, "candidates": cands},
        "family_gist": {"family": topic, "lessons": [candidate(by_topic[topic]), *cands[:2]]},
        "related": {"lesson": lesson(world, "n_new", facts[:1]), "candidates": cands},
        "reconcile": {
            "lesson": lesson(world, "n_new", [stale]),
            "existing": [lesson(world, "n_old", keep), by_topic[others[0]]],
        },
        "scope": {"lesson": by_topic[topic], "project": "acme-shop"},
        "assess": {
            "prompt": task.prompt,
            "digest": session.digest,
            "served": [needed, by_topic[others[0]]],
        },
        "reflect": {"prompt": task.prompt, "digest": session.digest, "known": cands[:2]},
        "rank_repairs": {"prompt": task.prompt, "failure": failed.text, "claims": claims},
        "gist": {"lesson": by_topic[others[0]], "task": task.prompt},
        "rule_conflict": {
            "new": {
                "id": "r_new",
                "text": f"when the task touches {topic}: "
                f"nothing in the {others[0]} lessons applies",
            },
            "existing": [
                {
                    "id": "r_old",
                    "text": f"when the task touches {topic}: also read the {others[0]} lessons",
                }
            ],
        },
        "rule_form": {
            "when": f"the task touches {topic}",
            "then": f"also read the {others[0]} lessons",
        },
        "compress": {
            "lesson": lesson(world, "n_task", facts),
            "evidence": [world.facts[key].terse],
            "preserve": [],
        },
        "replay_probe": {"prompt": task.prompt, "lesson": lesson(world, "n_task", facts)},
        "replay_judge": {
            "prompt": task.prompt,
            "accepted": done.text,
            "approach": f"From the lesson: {thin}",
            "reference": f"From the lesson: {full}",
        },
        "counterfactual_probe": {
            "prompt": task.prompt,
            "lessons": [lesson(world, "n_task", facts), by_topic[others[0]]],
        },
        "counterfactual": {
            "prompt": task.prompt,
            "lesson": needed,
            "with_lesson": f"From the lesson: {full}",
            "without_lesson": f"From the lesson: {thin}",
        },
        "split": {
            "name": "AGENTS.md",
            "text": "# Notes for agents\n\n"
            + "\n\n".join(f"## {t}\n\n{by_topic[t]['body']}" for t in (topic, others[0])),
        },
        "merge": {
            "lessons": [by_topic[topic], by_topic[others[0]]],
            "budget_tokens": sum(tokens.count(by_topic[t]["body"]) for t in (topic, others[0])) - 1,
        },
    }
