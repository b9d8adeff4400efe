"""A lesson that keeps succeeding is compressed level after level, every replay passing.

Locks in, on the simulated world: each accepted compression is a new lesson one level up,
derived from the one it replaces, which is superseded (kept, not served) with the new one
as its parent, both in one write; every dropped claim names the original as its holder,
and the apex inherits the whole manifest below it; the shorter form is at most
`compress.ratio` of the original and passed every replay.
"""

from __future__ import annotations

from rose.loop.abstraction import compress as c
from rose.store import dag
from tests._compress import family, judge, prober, succeed, with_spans


def test_a_family_is_compressed_over_several_levels(project):
    f = family(project, seed=0)
    j = judge(f)
    chain = [f.node.id]
    for _ in range(2):
        (attempt,) = c.compress_due(f.store, judge=j, prober=prober(j))
        assert attempt.result == "accepted", attempt.reason
        assert attempt.replays and all(r.passed for r in attempt.replays)
        assert attempt.candidate_tokens <= attempt.tokens * f.store.config.compress.ratio
        new, old = f.store.get(attempt.new), f.store.get(chain[-1])
        assert (new.level, new.origin, new.derived_from) == (old.level + 1, "compression", [old.id])
        assert old.status == "superseded" and new.id in old.parents
        assert new.dropped and all(claim.holder == old.id for claim in new.dropped)
        chain.append(new.id)
        f.store.write([], with_spans(f.world, new, succeed(new.id, f.work)))
    apex = f.store.get(chain[-1])
    assert apex.level == 2
    assert [a["id"] for a in dag.apexes(f.store)] == [apex.id]
    holders = {r["holder"] for r in dag.delta_manifest(f.store, apex.id)}
    assert holders == set(chain[:-1])  # the apex knows what every level below it dropped
