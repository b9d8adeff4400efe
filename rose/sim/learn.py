"""The simulated model's answers to the calls that learn from work: assess, reflect,
rank_repairs, replay_probe and replay_judge. Each reads the rendered prompt (the task's
marker, the digest, lessons' facts, failure symptoms) and answers from the world's truth.
"""

from __future__ import annotations

from typing import Any

from rose.sim import parse
from rose.sim.agent import Agent
from rose.sim.draws import Draws
from rose.sim.markers import FACT, OUTCOME, SYMPTOM, USER, find, last, mark
from rose.sim.world import World


def assess(world: World, prompt: str, d: Draws) -> dict[str, Any]:
    digest = parse.section(prompt, "digest")
    task = world.task_in(parse.section(prompt, "task"))
    if task is not None:
        needed = set(task.needs)
    else:
        needed = set(world.facts_in(digest)) | set(find(digest, SYMPTOM))
    learnable = needed - world.known
    steer = mark(USER, "steer")
    final_part = digest.rsplit(steer, 1)[-1]
    if last(digest, OUTCOME) == "ok":
        outcome = "success"
    elif len(find(final_part, SYMPTOM)) * 2 < len(needed):
        outcome = "partial"
    else:
        outcome = "failure"
    if d.flip("outcome"):
        outcome = "failure" if outcome == "success" else "success"
    steered = (steer in digest) != d.flip("steered")
    lessons = []
    for lid, block in parse.lessons(parse.section(prompt, "served")):
        supplied = set(world.facts_in(block)) & learnable
        used = bool(supplied) != d.flip("used", lid)
        reason = (
            f"it supplied {len(supplied)} fact(s) the work needed"
            if supplied
            else "nothing in it was needed that the agent did not already know"
        )
        lessons.append({"id": lid, "used": used, "reason": reason})
    return {
        "outcome": outcome,
        "steered": steered,
        "reason": f"{len(needed)} fact(s) were needed; the final attempt was {outcome}",
        "lessons": lessons,
    }


def reflect(world: World, prompt: str, d: Draws) -> dict[str, Any]:
    digest = parse.section(prompt, "digest")
    steer = mark(USER, "steer")
    taught = [
        f
        for line in digest.splitlines()
        if steer in line
        for f in world.facts_in(line)
        if not world.facts[f].known
    ]
    taught = list(dict.fromkeys(taught))
    if not taught or d.flip("found"):
        return {"found": False, "reason": "nothing here was new to the agent", "lesson": None}
    draft = world.lesson(taught, verbose=True, salt=int(d.unit("salt") * 1_000_000))
    return {
        "found": True,
        "reason": f"the user had to supply {len(taught)} fact(s)",
        "lesson": {
            "title": draft.title,
            "gist": draft.gist,
            "family": draft.family,
            "body": draft.body,
        },
    }


def rank_repairs(world: World, prompt: str, d: Draws) -> dict[str, Any]:
    symptoms = set(find(parse.section(prompt, "failure"), SYMPTOM))
    ranking = []
    for cid, claim in parse.items(parse.section(prompt, "claims")):
        explains = bool(set(world.facts_in(claim)) & symptoms)
        spread = 0.2 * d.unit("score", cid)
        score = 0.8 + spread if explains else spread
        if d.flip(cid):
            score = 1 - score
        reason = "its absence explains the failure" if explains else "unrelated to the failure"
        ranking.append({"id": cid, "usefulness": round(score, 3), "reason": reason})
    return {"ranking": ranking}


def replay_probe(world: World, prompt: str, d: Draws) -> dict[str, Any]:
    blocks = parse.lessons(prompt)
    lesson = blocks[0][1] if blocks else ""
    facts = world.facts_in(lesson)
    if facts and d.flip("forget"):
        lesson = lesson.replace(mark(FACT, facts[int(d.unit("which") * len(facts))]), "")
    task = world.task_in(parse.section(prompt, "task"))
    if task is None:
        steps = " ".join(world.facts[f].terse for f in world.facts_in(lesson))
        return {"approach": f"I would follow the lesson. {steps}".strip()}
    outcome = Agent(world).solve(task, lesson)
    return {"approach": f"I would work from the lesson. {outcome.text}"}


def replay_judge(world: World, prompt: str, d: Draws) -> dict[str, Any]:
    accepted = set(world.facts_in(parse.section(prompt, "accepted")))
    approach = parse.section(prompt, "approach")
    missing = accepted - set(world.facts_in(approach))
    passed = not missing if accepted else last(approach, OUTCOME) == "ok"
    if d.flip("verdict"):
        passed = not passed
    if passed:
        reason = "it relies on everything the accepted outcome did"
    elif missing:
        reason = "it misses what the accepted outcome relied on: " + " ".join(
            world.facts[f].terse for f in sorted(missing)
        )
    else:
        reason = "it does not reach the accepted outcome"
    return {"verdict": "pass" if passed else "fail", "reason": reason}
