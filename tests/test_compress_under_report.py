"""A candidate that shrank materially while declaring no dropped claim is rejected.

Locks in: with the simulated compressor leaving every dropped claim undeclared
(`under_report`), the candidate is refused as under-reported before any replay is spent on
it, and the original stays as it was; a candidate still longer than `compress.ratio` of
the original is refused as too long.
"""

from __future__ import annotations

from rose.loop.abstraction import compress as c
from tests._compress import family, judge, prober


def test_an_under_reporting_compressor_is_rejected(project):
    f = family(project, seed=1)
    j = judge(f, under_report=1.0)
    (attempt,) = c.compress_due(f.store, judge=j, prober=prober(j))
    assert attempt.result == "rejected" and attempt.reason.startswith("under-reported")
    assert attempt.dropped == 0 and attempt.replays == []
    assert f.store.get(f.node.id).status == "active"


def test_a_candidate_over_the_ratio_is_rejected_as_too_long(project):
    f = family(project, seed=1, spans=False)  # no evidence: it compresses conservatively
    j = judge(f)
    (attempt,) = c.compress_due(f.store, judge=j, prober=prober(j))
    assert attempt.result == "rejected" and attempt.reason.startswith("too long")
    assert attempt.replays == []
