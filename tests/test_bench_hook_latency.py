"""The hook latency benchmark keeps running end to end and keeps its `--json` shape.

It times the real prompt hook as a subprocess against stores it builds itself, with
background writers; a change that breaks the hook's fast path, the store build or the
writers shows up here as a crash or a missing figure. Timings are never asserted.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.graph, pytest.mark.heavy]

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "hook_latency.py"

EXPECTED = {
    "baseline": {"python -c pass", "python -S -c pass"},
    "0": {
        "no-store",
        "no-store+writer-elsewhere",
        "empty-store",
        "empty-store+writer-elsewhere",
        "empty-store+writer-here",
    },
    "20": {
        f"{series}{writer}"
        for series in ("new-session", "same-session")
        for writer in (
            "",
            "+writer-elsewhere",
            "+writer-here",
            "+writer-adding",
            "+writer-adding-user",
        )
    },
}


def test_json_shape_and_positive_figures(tmp_path: Path):
    proc = subprocess.run(
        # One warm-up round (the same-session series needs its first prompt served), not three:
        # the rest were neither timed nor checked, and no timing is asserted.
        [sys.executable, str(SCRIPT), "--sizes", "0,20", "--runs", "2", "--warmup", "1", "--json"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=180,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    figures = json.loads(proc.stdout)
    assert {k: set(v) for k, v in figures.items()} == EXPECTED
    for configs in figures.values():
        for fig in configs.values():
            assert set(fig) == {"median_ms", "p95_ms", "max_ms", "runs", "wrong"}
            assert fig["max_ms"] >= fig["p95_ms"] and fig["wrong"] == 0
            assert fig["runs"] == 2
            assert fig["median_ms"] > 0 and fig["p95_ms"] >= fig["median_ms"]
    assert "WRONG" not in proc.stderr  # every run gave the answer its configuration expects
