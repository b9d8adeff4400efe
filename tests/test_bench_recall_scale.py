"""The recall scale benchmark still runs end to end on a small store and keeps its JSON
shape: per size its setup (lessons, apexes, families, gists written) and, one pass and two,
the per-prompt calls, judge tokens, injected tokens, wall and recall, and with and without
pull the agent's success and what its pulls cost. Locks in the
benchmark not rotting as recall, the hook or the synthetic store change; the calls are
checked against the bound it prints (a store of 200 lessons already walks from families),
the times never are."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.graph

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "recall_scale.py"


def test_recall_scale_json_has_every_figure(tmp_path: Path) -> None:
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--sizes", "200", "--prompts", "2", "--json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    p = result["params"]
    entry = result["sizes"]["200"]
    assert entry["setup"]["apexes"] > p["max_candidates"] and entry["setup"]["gist_calls"] > 0
    assert set(entry["runs"]) == {"one", "two"}
    for name, run in entry["runs"].items():
        assert run["prompts"] == 2 and run["errors"] == 0
        bound = p["judge_calls"] + (p["second_pass_calls"] if name == "two" else 0)
        assert 2 <= run["calls_max"] <= bound  # the family level, then the families opened
        assert run["judge_tokens_median"] > 0 and run["injected_tokens_median"] > 0
        assert run["wall_s_median"] > 0 and 0 <= run["recall"] <= 1
        assert 0 <= run["success_alone"] <= run["success_pull"] <= 1  # pulling only adds
        for row in run["rows"]:  # a prompt that held without tools made no pull
            assert row["pull_calls"] == 0 or not row["ok_alone"]
            assert row["pull_model_calls"] == 0 or row["pull_calls"] > 0
    assert entry["runs"]["one"]["second_pass_calls_median"] == 0
    assert entry["runs"]["two"]["second_pass_calls_median"] == 1
