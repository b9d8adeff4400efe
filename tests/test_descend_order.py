"""Descent rescues a failure after compression in fewer attempts than walking the children.

Locks in: over several seeded worlds, a merged and compressed family (built by hand, see
tests/_descent.py) fails a task because a fact it needs was dropped somewhere below the
apex; `delta-patch` (the apex plus the claims `rank` puts first, judged by the simulated
model from the failure's words only) and `delta-jump` (the holders of those claims) reach
a successful attempt in fewer attempts, summed over the worlds, than `stepwise`, which
ignores the manifest; every strategy ends serving the level-0 originals.
"""

from __future__ import annotations

import pytest

from rose.judge.calls import Judge
from rose.loop import descend
from rose.sim import SimulatedBackend
from rose.store.facade import Store
from tests._descent import attempts_to_rescue, build

pytestmark = [pytest.mark.graph, pytest.mark.heavy]

SEEDS = range(5)


def test_descent_beats_stepwise_over_seeded_worlds(store: Store):
    counts: dict[str, list[int]] = {s: [] for s in descend.STRATEGIES}
    for seed in SEEDS:
        fam = build(store, seed, tag=f"s{seed}")
        judge = Judge(SimulatedBackend(fam.world, seed=seed), cache_path=None, events_path=None)
        for strategy in descend.STRATEGIES:
            attempts = descend.plan(
                store, judge, fam.apex, fam.failure, strategy=strategy, prompt=fam.task.prompt
            )
            assert attempts[-1].level0
            bottom = {i for a in attempts if a.level0 for i in a.serve}
            assert bottom == {i for i, n in fam.nodes.items() if n.level == 0}
            n = attempts_to_rescue(fam, attempts)
            assert n <= len(attempts)  # the level-0 originals rescue it at worst
            counts[strategy].append(n)
    patch, jump, step = (sum(counts[s]) for s in descend.STRATEGIES)
    assert patch < step, counts
    assert jump < step, counts
    assert (
        sum(a <= b for a, b in zip(counts["delta-patch"], counts["stepwise"], strict=True)) >= 4
    ), counts
