"""The scoreboard's figures share one window, and each target carries a paired interval.

Locks in: precision is the world's (lessons acted on over lessons in the block) over the
measured window only, warm-up left out, and selection precision the same over the prompts
where recall chose; success has a Wilson interval that stays inside [0, 1]; bridge tasks
are counted apart; failures by cause sum to the window's failures. A target comparing two
arms is paired session by session: two arms that fail and hold on the same sessions have
a difference of exactly 0 with no spread, and one ahead on every session has an interval
clear of 0; a target whose arm was not run says so rather than failing. Sessions of one
task in one stream are resampled as one cluster, since they are not independent.
"""

from __future__ import annotations

from rose.sim.hosts import scoreboard
from rose.sim.hosts.causes import CAUSES
from tests._bench import module

_targets = module("_targets")


def _rec(i: int, ok: bool, **kw) -> scoreboard.Record:
    base = dict(index=i, task=f"t{i}", ok=ok, steered=not ok, retried=False, rescued=False,
                attempts=1, tokens=100, frame=10, lessons=2, needed=2, present=2, calls=1,
                model_tokens=0, background_calls=0)  # fmt: skip
    base.update(kw)
    return scoreboard.Record(**base)


def test_precision_is_counted_over_the_window_alone():
    warm = [_rec(i, False, served=4, used=0) for i in range(10)]
    late = [_rec(10 + i, True, served=2, used=2, selected=i % 2 == 0) for i in range(10)]
    figures = scoreboard.pooled([warm + late])
    assert figures["precision"] == 1.0  # the warm-up's 0 of 40 is not in it
    assert figures["selection_precision"] == 1.0
    assert figures["attempts"] == 10


def test_success_interval_bridges_and_causes():
    records = [
        _rec(i, i % 3 == 0, bridge=i % 2 == 0, cause="" if i % 3 == 0 else "not_stored")
        for i in range(40)
    ]
    figures = scoreboard.pooled([records])
    window = scoreboard.measured(records)
    low, high = figures["success_ci"]
    assert 0.0 <= low < figures["success_rate"] < high <= 1.0
    assert figures["bridge_attempts"] == sum(r.bridge for r in window)
    causes = figures["failures_by_cause"]
    assert list(causes) == list(CAUSES)
    assert sum(causes.values()) == sum(not r.ok for r in window) == causes["not_stored"]
    assert scoreboard.interval(0, 10)[0] == 0.0 and scoreboard.interval(10, 10)[1] == 1.0
    assert scoreboard.interval(0, 0) is None


def _rows(rose: list[bool], other: list[bool], name: str) -> dict[str, list]:
    return {
        "rose": [_rec(i, ok) for i, ok in enumerate(rose)],
        name: [_rec(i, ok) for i, ok in enumerate(other)],
    }


def _target(measure: str):
    return next(t for t in _targets.TARGETS if t.measure == measure)


def test_paired_intervals_follow_the_sessions_not_the_rates():
    same = [i % 2 == 0 for i in range(60)]
    rows = _rows(same, same, "rose-norules")
    assert _targets.interval(_target("success_vs_norules"), rows, 300) == [0.0, 0.0]
    ahead = _rows([True] * 60, [i % 3 == 0 for i in range(60)], "rose-norules")
    low, high = _targets.interval(_target("success_vs_norules"), ahead, 300)
    assert 0 < low <= high


def test_assess_reports_each_target_met_missed_or_not_measured():
    rows = _rows([True] * 40, [i % 2 == 0 for i in range(40)], "ceiling")
    got = {t["measure"]: t for t in _targets.assess(rows, 200)}
    assert len(got) == len(_targets.TARGETS)
    ratio = got["success_vs_ceiling"]
    assert ratio["figure"] == 2.0 and ratio["verdict"] == "met" and ratio["resolved"]
    assert got["seeded_success_vs_flat"]["verdict"].startswith("not measured")
    assert got["model_calls_per_prompt"]["verdict"] == "met"  # one call a prompt: the bound
    assert not got["model_calls_per_prompt"]["resolved"]  # sits on the bound: not clear of it


def test_sessions_of_one_task_are_resampled_together():
    # ten tasks, each worked ten times with the same outcome: ten observations, not 100
    records = [_rec(i, (i // 10) % 2 == 0, task=f"t{i // 10}") for i in range(100)]
    keys = [f"1:{r.task}" for r in records]
    alone = _targets.rate_interval(records, None, 500)
    together = _targets.rate_interval(records, keys, 500)
    assert together[1] - together[0] > 1.5 * (alone[1] - alone[0])
    per_seed = {1: {"rose": records}, 2: {"rose": records}}
    assert _targets.clusters(per_seed)[:2] == ["1:t5", "1:t5"]  # the window: from session 51
