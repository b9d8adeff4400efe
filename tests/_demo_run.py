"""One `rose demo --json` run of a seed and length per test session, shared by the tests that
read it (tests/test_demo_baselines.py, tests/test_compress_job.py).

Seed 1 over five sessions took 55-60 s a run on a loaded two-core machine, and three tests ran
it. The first test to ask runs it, in its own isolated environment, under a lock in the
session's temporary folder (xdist's workers share its parent); the others wait for it and
read the same figures and store. Readers only: a test that changes the store makes its own.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner


def demo_json(
    factory: pytest.TempPathFactory, *, sessions: int, seed: int
) -> tuple[dict[str, Any], Path]:
    """The figures `rose demo -n <sessions> --seed <seed> --json` printed, and its folder."""
    from rose.cli import app

    base = factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the run's folder, above each worker's own
    name = f"shared-demo-{seed}-{sessions}"
    folder, result = base / name, base / f"{name}.json"
    with (base / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # let go when the file closes
        if not result.exists():
            shutil.rmtree(folder, ignore_errors=True)  # a run that failed before
            args = ["demo", "-n", str(sessions), "--seed", str(seed), "--json"]
            res = CliRunner().invoke(app, [*args, "--dir", str(folder)], prog_name="rose")
            assert res.exit_code == 0, res.output
            json.loads(res.stdout)
            partial = result.with_suffix(".partial")
            partial.write_text(res.stdout)
            partial.rename(result)
    return json.loads(result.read_text()), folder
