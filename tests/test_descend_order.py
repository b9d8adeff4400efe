"""Descent rescues a failure after compression in fewer attempts than walking the children.

Locks in: over several seeded worlds, a merged and compressed family (built by hand, see
tests/_descent.py) fails a task because a fact it needs was dropped somewhere below the
apex, and keeps failing until it is rescued. Each failure takes one step of descent as
production takes it (`descend.after_failure`): `delta-patch` attaches the claims the
simulated model, from the failure's words only, finds likely to explain it (or the best
one), `delta-jump` the text of the best claim's holder, `stepwise` the next lesson below,
whatever the manifest says. The first two reach a successful attempt in fewer attempts,
summed over the worlds, than `stepwise`; every strategy ends serving the level-0 originals.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from rose import config
from rose.files import sessions
from rose.judge.calls import Judge
from rose.loop.abstraction import descend
from rose.sim import SimulatedBackend
from rose.store.facade import Store
from tests._descent import Attempt, Family, attempts_to_rescue, build

pytestmark = [pytest.mark.graph, pytest.mark.heavy]

SEEDS = range(3)


def _tries(store: Store, judge: Judge, fam: Family, sid: str) -> list[Attempt]:
    """What the agent is served as the apex keeps failing: the apex with what each
    failure's step of descent attached, then the level-0 originals it escalates to."""
    prompt, tries = fam.task.prompt, []
    for turn in itertools.count(1):
        sessions.append(store.primary.root, sid, "prompt", turn=turn, prompt=prompt,
                        served=[fam.apex])  # fmt: skip
        (done,) = descend.after_failure(
            store, judge, session_id=sid, turn=turn, prompt=prompt, failure=fam.failure,
            served=[store.get(fam.apex)], used=[],
        )  # fmt: skip
        assert done["kind"] == "descend", done
        if "escalate" in done:
            return [*tries, Attempt(serve=tuple(done["escalate"]), level0=True)]
        tries.append(Attempt(serve=(fam.apex,), patches=tuple(store.get(fam.apex).patches)))
    raise AssertionError("unreachable")


def test_descent_beats_stepwise_over_seeded_worlds(tmp_path: Path):
    counts: dict[str, list[int]] = {s: [] for s in descend.STRATEGIES}
    for strategy in descend.STRATEGIES:  # a store each: each starts with no patch attached
        first = Store.init(tmp_path / strategy)
        config.set_override(first.primary.config, "recall.strategy", strategy)
        store = Store.open(tmp_path / strategy)
        for seed in SEEDS:
            fam = build(store, seed, tag=f"s{seed}")
            judge = Judge(SimulatedBackend(fam.world, seed=seed), cache_path=None, events_path=None)
            attempts = _tries(store, judge, fam, f"s{seed}")
            assert attempts[-1].level0
            bottom = {i for a in attempts if a.level0 for i in a.serve}
            assert bottom == {i for i, n in fam.nodes.items() if n.level == 0}
            n = attempts_to_rescue(fam, attempts)
            assert n <= len(attempts)  # the level-0 originals rescue it at worst
            counts[strategy].append(n)
    patch, jump, step = (sum(counts[s]) for s in descend.STRATEGIES)
    assert patch < step, counts
    assert jump < step, counts
    no_worse = sum(a <= b for a, b in zip(counts["delta-patch"], counts["stepwise"], strict=True))
    assert no_worse >= len(SEEDS) - 1, counts
