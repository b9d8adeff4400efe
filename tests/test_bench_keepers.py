"""The keepers benchmark's arithmetic and the switches it turns. Running it needs the real
Claude Code CLI and most of an hour (`python benchmarks/keepers.py`); here its savings are
checked on given runs (an arm's median less all's, and its share of all's turn and job), and
`ROSE_KEEP_OFF` is checked to switch off what it names and nothing else."""

from __future__ import annotations

from pathlib import Path

import pytest

from rose.processes import kept

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.syspath_prepend(str(BENCH))
    import keepers

    return keepers


def _runs(wall: float, hook: float, job: float) -> list[dict]:
    return [
        {"wall_ms": wall + d, "hook_ms": hook + d, "reply_ms": hook + 100 + d, "job_ms": job + d}
        for d in (-10.0, 0.0, 10.0)
    ]


def test_a_saving_is_the_arms_median_less_alls_and_its_share_of_alls_wait(bench):
    rows = {("all", 0): _runs(10_000, 1_000, 20_000), ("-graph", 0): _runs(10_500, 1_400, 20_000)}
    result = bench.summarise(rows, ["all", "-graph"], [0])
    arm = result["0"]["-graph"]
    assert arm["median"]["hook_ms"] == 1_400
    assert arm["saving"] == {"wall_ms": 500, "hook_ms": 400, "reply_ms": 400, "job_ms": 0}
    assert arm["share"] == {"hook_pct_of_turn": 4.0, "turn_pct": 5.0, "job_pct": 0.0}
    assert result["0"]["all"]["saving"]["wall_ms"] == 0
    assert "-graph" in bench.render(result, "v", (2.0, 50.0), 3)


def test_keep_off_names_mechanisms_and_keep_warm_0_ends_only_kept_processes(monkeypatch):
    monkeypatch.delenv("ROSE_KEEP_WARM", raising=False)
    monkeypatch.setenv("ROSE_KEEP_OFF", "watch,spares")
    assert [m for m in kept.MECHANISMS if kept.off(m)] == ["watch", "spares"]
    monkeypatch.delenv("ROSE_KEEP_OFF")
    monkeypatch.setenv("ROSE_KEEP_WARM", "0")
    assert [m for m in kept.MECHANISMS if kept.off(m)] == ["graph", "watch"]
