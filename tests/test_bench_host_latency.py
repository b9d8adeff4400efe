"""The host latency benchmark's arithmetic and its refusal without a CLI. Running it needs
the real Claude Code CLI and minutes (`python benchmarks/host_latency.py`); here its report
is checked on given runs: medians, what each configuration adds over the bare CLI's time to
the first reply, and the target's verdict on the model-decided rows only."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.syspath_prepend(str(BENCH))
    import host_latency

    return host_latency


def _config(bench, name: str, size: int | None, replies: list[float], calls: int = 0):
    c = bench.Config(name, Path("/nowhere") / name, size, {})
    c.runs = [
        {
            "wall_ms": r + 500,
            "start_ms": 30.0,
            "hook_ms": r - 80,
            "reply_ms": r,
            "recall_calls": calls,
            "in_time": max(0, calls - 1),  # one question of each run ran out of time
            "late": min(1, calls),
        }
        for r in replies
    ]
    c.setup = {"lessons": size or 0, "apexes": size or 0}
    return c


def test_added_time_is_over_bare_and_the_target_judges_model_rows_only(bench):
    configs = [
        _config(bench, "bare", None, [90, 100, 400]),
        _config(bench, "view", 0, [300, 350, 9000]),
        _config(bench, "model 1q", 0, [900, 1000, 1100], calls=1),
        _config(bench, "model 0", 0, [1500, 1600, 1700], calls=3),
    ]
    result = bench.summarise(configs)
    assert result["bare"]["reply_ms"] == 100 and result["bare"]["added_ms"] == 0
    assert result["view"]["added_ms"] == 250  # medians, so one slow run does not decide
    assert result["model 1q"]["added_ms"] == 900 and result["model 1q"]["recall_calls"] == 1
    assert result["model 0"]["added_ms"] == 1500
    lines = {
        ln.split()[0] + " " + ln.split()[1]: ln
        for ln in bench.render(result, "c", "v", (2.0, 50.0)).splitlines()
        if ln.strip()
    }
    assert result["model 0"]["relevance_in_time"] == 6 and result["model 0"]["relevance_late"] == 3
    assert " 6/9 " in lines["model 0"] and "2 s + 50 tokens/s" in bench.render(
        result, "c", "v", (2.0, 50.0)
    )
    assert lines["model 1q"].endswith("met")
    assert lines["model 0"].endswith("MISSED")
    assert "met" not in lines["view 0"] and "MISSED" not in lines["view 0"]


def test_without_a_cli_it_says_how_to_get_one(tmp_path: Path):
    done = subprocess.run(
        [sys.executable, str(BENCH / "host_latency.py"), "--claude", str(tmp_path / "none")],
        capture_output=True, text=True, timeout=60,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )  # fmt: skip
    assert done.returncode == 2
    assert "npm install" in done.stderr and done.stdout == ""
