"""Helpers for the job runner's tests: a store whose jobs may be of the test kinds
(tests/_jobkinds.py), and waiting on the ledger."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from rose.files.layout import StoreDir
from rose.jobs import queue as jobs

REPO = Path(__file__).resolve().parents[1]


def make_ledger(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> StoreDir:
    """The project store, with the test kinds registered for every process it starts."""
    monkeypatch.setenv(jobs.TEST_KINDS_ENV, "tests._jobkinds")
    path = os.pathsep.join(filter(None, [str(REPO), os.getenv("PYTHONPATH")]))
    monkeypatch.setenv("PYTHONPATH", path)
    d = StoreDir(tmp_path / "project" / ".rose", "project")
    d.create()
    return d


def record(d: StoreDir, job_id: str) -> dict:
    return json.loads((d.jobs / f"{job_id}.json").read_text())


def wait_for(check, timeout: float = 8.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if result := check():
            return result
        time.sleep(0.02)
    raise AssertionError(f"timed out after {timeout}s")


def finished(d: StoreDir, job_id: str) -> dict | None:
    rec = record(d, job_id)
    return rec if rec["state"] in ("done", "failed") else None
