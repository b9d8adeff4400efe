"""`hook_latency.py --rose` times a user's own install, beside that install's interpreter.

An editable checkout install loads a finder (and `pathlib` with it) at every interpreter
start, which a wheel install does not, so the benchmark can time the `rose` script of
another install; its baseline is then the interpreter that script runs on, read from the
script's `#!` line.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.syspath_prepend(str(BENCH))
    import hook_latency

    return hook_latency


def _script(tmp_path: Path, first: str) -> str:
    path = tmp_path / "rose"
    path.write_text(f"{first}\nimport sys\n")
    path.chmod(0o755)
    return str(path)


def test_the_baseline_is_the_interpreter_the_script_names(bench, tmp_path: Path):
    assert bench.interpreter(_script(tmp_path, "#!/opt/wheel/bin/python3.11")) == (
        "/opt/wheel/bin/python3.11"
    )


@pytest.mark.parametrize("first", ["#!/bin/sh", "import sys", ""])
def test_a_script_naming_no_python_falls_back_to_this_one(bench, tmp_path: Path, first: str):
    assert bench.interpreter(_script(tmp_path, first)) == sys.executable


def test_the_given_script_is_what_is_timed(bench, tmp_path: Path):
    script = _script(tmp_path, "#!/usr/bin/python3")
    cmd, label = bench.hook_command(script)
    assert cmd == [script, "hook", "user-prompt-submit"] and script in label
    assert bench.hook_command()[0][-2:] == ["hook", "user-prompt-submit"]


def test_a_script_that_is_not_executable_is_refused(tmp_path: Path):
    missing = tmp_path / "no-such-rose"
    proc = subprocess.run(
        [sys.executable, str(BENCH / "hook_latency.py"), "--rose", str(missing)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and "not an executable file" in proc.stderr
