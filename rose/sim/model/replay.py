"""The simulated model's answers to replay: the probe and the judge.

- ``replay_probe`` reads the task's words (the topics it names) and the one lesson it is
  given (its facts' markers, beside the words that state them). It describes an approach
  by restating what the lesson says about the topics the task names, or reaches through
  the lesson's own wording; a lesson about none of them is restated whole, being all the
  probe knows. It never learns the task's true needs: nothing is solved in a probe.
- ``replay_judge`` reads words only (`World.stated`): which facts the accepted outcome
  states, which the proposed approach states, and, when given, which the reference
  approach states (the probe of the lesson the candidate would replace, on the same
  prompt). With a reference, a point of the accepted outcome is the candidate's to keep
  only if the reference reached it too; the rest of that outcome came from other
  lessons or from the user. Without one, the approach must reach all of it. An accepted
  outcome is a summary and mentions only some of what was done, so what it leaves out
  cannot be checked.
- ``counterfactual_probe`` is ``replay_probe`` given every lesson block its prompt shows
  (their facts together), or none: then there is nothing to act on.
- ``counterfactual`` reads the task's words, the one lesson it is about (its facts'
  markers) and the two approaches' words (`World.stated`): the lesson changed the
  approach when the approach with it states one of the lesson's facts that the approach
  without it does not, on a topic the task names or reaches through the lesson's wording.
  It is never told what attribution said, nor whether the lesson was needed.
"""

from __future__ import annotations

from typing import Any

from rose.sim import parse
from rose.sim.draws import Draws
from rose.sim.reading import Reader


def replay_probe(world: Reader, prompt: str, d: Draws) -> dict[str, Any]:
    blocks = parse.lessons(prompt)
    lesson = blocks[0][1] if blocks else ""
    return _approach(world, prompt, world.facts_in(lesson), d)


def counterfactual_probe(world: Reader, prompt: str, d: Draws) -> dict[str, Any]:
    shown = [f for _, block in parse.lessons(prompt) for f in world.facts_in(block)]
    return _approach(world, prompt, list(dict.fromkeys(shown)), d)


def _reach(world: Reader, asked: set[str], facts: list[str]) -> set[str]:
    """The topics the task names, and those the wording of `facts` on them names."""
    return asked | {
        t for f in facts if world.facts[f].topic in asked for t in world.facts[f].mentions
    }


def _approach(world: Reader, prompt: str, facts: list[str], d: Draws) -> dict[str, Any]:
    asked = set(world.topics_in(parse.section(prompt, "task")))
    reach = _reach(world, asked, facts)
    bearing = [f for f in facts if world.facts[f].topic in reach] or facts
    if len(bearing) > 1 and d.flip("forget"):
        bearing.pop(int(d.unit("which") * len(bearing)))
    if not bearing:
        return {
            "approach": "The lesson gives nothing to act on; I would work it out from the code."
        }
    steps = " ".join(world.facts[f].terse for f in bearing)
    return {"approach": f"From the lesson: {steps} The rest I would work out from the code."}


def replay_judge(world: Reader, prompt: str, d: Draws) -> dict[str, Any]:
    accepted = world.stated(parse.section(prompt, "accepted"))
    approach = set(world.stated(parse.section(prompt, "approach")))
    reference = parse.section(prompt, "reference")
    if reference:
        reached = set(world.stated(reference))
        required = [f for f in accepted if f in reached]
    else:
        required = accepted
    missing = [f for f in required if f not in approach]
    passed = not missing
    if d.flip("verdict"):
        passed = not passed
    if passed:
        reason = "it relies on everything of the accepted outcome it is answerable for"
    elif missing:
        reason = "it misses what the accepted outcome relied on: " + " ".join(
            world.facts[f].terse for f in missing
        )
    else:
        reason = "it does not reach the accepted outcome"
    return {"verdict": "pass" if passed else "fail", "reason": reason}


def counterfactual(world: Reader, prompt: str, d: Draws) -> dict[str, Any]:
    blocks = parse.lessons(prompt)
    held = world.facts_in(blocks[0][1]) if blocks else []
    reach = _reach(world, set(world.topics_in(parse.section(prompt, "task"))), held)
    with_it = set(world.stated(parse.section(prompt, "with")))
    without = set(world.stated(parse.section(prompt, "without")))
    gained = [
        f for f in held if f in with_it and f not in without and world.facts[f].topic in reach
    ]
    changed = bool(gained) != d.flip("changed")
    if changed and gained:
        reason = "with the lesson it relies on: " + " ".join(world.facts[f].terse for f in gained)
    elif changed:
        reason = "the lesson changes how the task is approached"
    else:
        reason = "nothing the lesson says changes how this task is approached"
    return {"changed": changed, "reason": reason}
