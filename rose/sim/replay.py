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
"""

from __future__ import annotations

from typing import Any

from rose.sim import parse
from rose.sim.draws import Draws
from rose.sim.world import World


def replay_probe(world: World, prompt: str, d: Draws) -> dict[str, Any]:
    blocks = parse.lessons(prompt)
    lesson = blocks[0][1] if blocks else ""
    asked = set(world.topics_in(parse.section(prompt, "task")))
    facts = world.facts_in(lesson)
    reach = asked | {
        t for f in facts if world.facts[f].topic in asked for t in world.facts[f].mentions
    }
    bearing = [f for f in facts if world.facts[f].topic in reach] or facts
    if len(bearing) > 1 and d.flip("forget"):
        bearing.pop(int(d.unit("which") * len(bearing)))
    if not bearing:
        return {
            "approach": "The lesson gives nothing to act on; I would work it out from the code."
        }
    steps = " ".join(world.facts[f].terse for f in bearing)
    return {"approach": f"From the lesson: {steps} The rest I would work out from the code."}


def replay_judge(world: World, prompt: str, d: Draws) -> dict[str, Any]:
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
