"""One `rose demo --json` run of a seed and length per test session, shared by the tests that
read it (tests/test_demo_baselines.py, tests/test_compress_job.py).

Seed 1 over five sessions took 55-60 s a run on a loaded two-core machine, and three tests ran
it. The first test to ask runs it, in its own isolated environment (`tests._shared.once`);
the others read the same figures and store. Readers only: a test that changes the store
makes its own.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests._shared import once


def demo_json(
    factory: pytest.TempPathFactory, *, sessions: int, seed: int
) -> tuple[dict[str, Any], Path]:
    """The figures `rose demo -n <sessions> --seed <seed> --json` printed, and its folder."""

    def run(folder: Path) -> None:
        from rose.cli import app

        args = ["demo", "-n", str(sessions), "--seed", str(seed), "--json"]
        res = CliRunner().invoke(app, [*args, "--dir", str(folder / "demo")], prog_name="rose")
        assert res.exit_code == 0, res.output
        (folder / "figures.json").write_text(res.stdout)

    folder = once(factory, f"demo-{seed}-{sessions}", run)
    return json.loads((folder / "figures.json").read_text()), folder / "demo"
