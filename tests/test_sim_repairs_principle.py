"""A principle's failure is explained by a principle of its topic, not by any claim naming it.

Locks in the simulated repair ranker's reading of a symptom that names no subject and no
default ("the <topic> work broke in a way that only showed up later"): a dropped claim
stating a principle of that topic is likely to explain it (0.7 or more), while a claim
that only names the topic, a reason or an anecdote with no way of going about the work
in it, is not (below 0.7: descent's delta-patch does not take it as likely).
"""

from __future__ import annotations

from rose.judge.calls import Judge
from rose.sim import SimulatedBackend, World, prose


def test_a_topic_only_claim_does_not_explain_a_principle_failure():
    world = World.generate(3)
    fact = next(f for f in world.facts.values() if f.kind == "principle" and not f.known)
    judge = Judge(SimulatedBackend(world), cache_path=None, events_path=None)
    claims = [
        {"id": "c1", "claim": fact.terse},
        {"id": "c2", "claim": f"This {fact.topic} point came up during a long review."},
    ]
    answer = judge.ask(
        "rank_repairs",
        {"prompt": "Please fix it.", "failure": prose.symptom(fact), "claims": claims},
    )
    score = {r.id: r.usefulness for r in answer.ranking}
    assert score["c1"] >= 0.7 > score["c2"], score
