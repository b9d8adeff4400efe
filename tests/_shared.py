"""A folder made once per test session and shared by xdist's workers.

Some setups take tens of seconds (a demo run, a built distribution) and are only read by the
tests that use them. A module- or session-scoped fixture is made once a worker, so twice on
two workers; this makes it once a run: the first test to ask makes it under a lock in the
run's temporary folder (the workers' folders sit in it), the others wait and read it.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest


def once(factory: pytest.TempPathFactory, name: str, make: Callable[[Path], None]) -> Path:
    """The folder `name`, filled by `make(folder)` the first time any worker asks for it."""
    base = factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the run's folder, above each worker's own
    folder, done = base / name, base / f"{name}.done"
    with (base / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # let go when the file closes
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)  # a making that failed or skipped
            folder.mkdir()
            make(folder)
            done.touch()
    return folder
