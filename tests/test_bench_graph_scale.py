"""The graph scale benchmark still runs end to end on a small store and prints the JSON shape
the README and any tracking rely on: one entry per size, every read query as a median in ms,
plus reindex_s, sync_noop_ms and sync_one_ms (and their CPU time). Locks in the benchmark not
rotting as queries, the file format or the Store API change. Timings are never asserted here."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.graph

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "graph_scale.py"
QUERIES = (
    "apexes",
    "subtree",
    "regression_set",
    "delta_manifest",
    "descent_candidates",
    "ancestors",
    "families",
    "conflicts",
    "co_usage",
    "level_counts",
    "episode_count",
    "lessons_all",
)


def test_graph_scale_json_has_every_figure(tmp_path: Path) -> None:
    run = Path(tempfile.mkdtemp(prefix="rg-", dir="/tmp"))  # a socket's path is short
    env = {**os.environ, "TMPDIR": str(tmp_path), "XDG_RUNTIME_DIR": str(run)}
    env.pop("ROSE_KEEP_WARM", None)  # the opens are timed with a graph server too
    try:
        done = subprocess.run(
            [sys.executable, str(SCRIPT), "--sizes", "200", "--repeat", "2", "--json"],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        left = list(run.glob("rose-*/graph-*.sock"))
    finally:
        shutil.rmtree(run, ignore_errors=True)
    assert not left  # the benchmark stopped the server it started
    assert done.returncode == 0, done.stderr[-2000:]
    figures = json.loads(done.stdout)
    assert list(figures) == ["200"]
    got = figures["200"]
    expected = {*QUERIES, "reindex_s", "sync_noop_ms", "sync_one_ms"}
    expected |= {"sync_noop_cpu_ms", "sync_one_cpu_ms"}
    expected |= {"write_save_lesson_ms", "write_record_episode_ms", "write_next_open_ms"}
    expected |= {"served_noop_ms", "served_one_ms", "served_one_cpu_ms", "served_one_worst_ms"}
    expected |= {"served_save_lesson_ms", "served_next_open_ms"}
    assert set(got) == expected
    for name in expected:
        value = got[name]
        assert isinstance(value, (int, float)) and not isinstance(value, bool), name
        assert value >= 0, name
    assert "] warning:" not in done.stderr, done.stderr[-2000:]
