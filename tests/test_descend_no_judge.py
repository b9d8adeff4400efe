"""With no judge, descent ranks what has worked first, then what is cheapest.

Locks in: `rank` on a level-1 compression (its dropped claims held by its level-0 original)
with no judge, or with one whose backend is unavailable, leaves the usefulness term out:
every candidate's score is w_prior * prior - w_cost * cost, so with no record the cheapest
claim comes first; a claim that rescued this lesson before (episodes that restored it and
were rescued by it) has the higher Laplace prior and moves ahead of cheaper ones. With the
simulated judge, the usefulness term is there and read from the failure's words only.
"""

from __future__ import annotations

import pytest

from rose.errors import BackendUnavailable
from rose.judge.calls import Judge
from rose.loop.abstraction import descend
from rose.model.scripted import ScriptedBackend
from rose.models import ClaimRef, Episode
from rose.sim import SimulatedBackend
from rose.store.facade import Store
from tests._descent import level1

pytestmark = pytest.mark.graph


def _formula(store: Store, c: descend.Candidate) -> float:
    w = store.config.descend
    return w.w_prior * c.prior - w.w_cost * c.cost


def test_no_judge_ranks_by_prior_then_cost(store: Store):
    fam = level1(store, 1)
    ranked = descend.rank(store, None, fam.apex, fam.failure, prompt=fam.task.prompt)
    assert len(ranked) == len(fam.nodes[fam.apex].dropped) >= 3
    assert all(c.usefulness is None and c.prior == 0.5 and c.tried == 0 for c in ranked)
    assert [c.tokens for c in ranked] == sorted(c.tokens for c in ranked)  # cheapest first
    assert all(c.score == pytest.approx(_formula(store, c)) for c in ranked)
    down = Judge(
        ScriptedBackend({"rank_repairs": [BackendUnavailable("scripted", "gone")]}),
        cache_path=None, events_path=None,
    )  # fmt: skip
    failed = descend.rank(store, down, fam.apex, fam.failure, prompt=fam.task.prompt)
    assert [c.id for c in failed] == [c.id for c in ranked]


def test_a_claim_that_rescued_before_goes_first(store: Store):
    fam = level1(store, 1)
    dearest = descend.rank(store, None, fam.apex, fam.failure)[-1]
    ref = ClaimRef(lesson=fam.apex, claim=dearest.id)
    for n in range(3):
        store.save_episode(Episode(id=f"e_past{n:04d}", outcome="success", served=[fam.apex],
                                   used=[fam.apex], expansions=[ref], rescues=[ref]))  # fmt: skip
    ranked = descend.rank(store, None, fam.apex, fam.failure)
    assert ranked[0].id == dearest.id
    assert (ranked[0].tried, ranked[0].rescued, ranked[0].prior) == (3, 3, 0.8)
    assert all(c.prior == 0.5 for c in ranked[1:])
    assert [c.score for c in ranked] == sorted((c.score for c in ranked), reverse=True)


def test_the_judge_term_is_read_from_the_failure(store: Store):
    fam = level1(store, 1)
    judge = Judge(SimulatedBackend(fam.world, seed=1), cache_path=None, events_path=None)
    ranked = descend.rank(store, judge, fam.apex, fam.failure, prompt=fam.task.prompt)
    assert all(c.usefulness is not None for c in ranked)
    w = store.config.descend
    for c in ranked:
        assert c.score == pytest.approx(w.w_judge * c.usefulness + _formula(store, c))
