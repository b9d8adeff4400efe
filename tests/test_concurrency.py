"""Many processes on one store: concurrent writers lose nothing and none fails; a reader that
arrives while a writer holds the database waits and then succeeds; a holder that never lets go
gives an error naming the database file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rose.errors import StoreLocked
from rose.graph.engine import open_graph
from rose.store.facade import Store
from tests._holder import hold

pytestmark = pytest.mark.graph


def _rose(*args: str, cwd: Path, **kw) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "rose", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ.copy(),
        **kw,
    )


@pytest.mark.heavy
def test_concurrent_writers_lose_nothing(store: Store, project: Path):
    """Four `rose add` processes: on two cores they wait on each other's lock as eight did."""
    writers = 4
    procs = [
        _rose("add", f"Lesson number {i} says something.", cwd=project) for i in range(writers)
    ]
    errors = [p.communicate(timeout=120)[1] for p in procs]
    assert [p.returncode for p in procs] == [0] * writers, errors
    files = list(store.primary.nodes.rglob("*.md"))
    assert len(files) == writers
    titles = {r["title"] for r in store.read("lessons_all")}
    assert titles == {f"Lesson number {i} says something" for i in range(writers)}


def test_reader_waits_for_writer_then_succeeds(store: Store, project: Path):
    store.add("A lesson to count.")
    holder = hold(store, 1.5)
    start = time.monotonic()
    reader = _rose("status", "--json", cwd=project)
    out, err = reader.communicate(timeout=60)
    holder.communicate(timeout=10)
    assert reader.returncode == 0, err
    assert json.loads(out)["lessons"] == 1
    assert time.monotonic() - start >= 1.0  # it really waited for the holder


def test_lock_held_past_deadline_names_the_file(store: Store):
    holder = hold(store, 3)
    try:
        with (
            pytest.raises(StoreLocked) as info,
            open_graph(store.graph_path, store.engine, deadline_s=0.5),
        ):
            pass
    finally:
        holder.communicate(timeout=10)
    msg = str(info.value)
    assert str(store.graph_path) in msg
    assert "pid" in msg  # the holder is named (ours, or the engine's own report)
    assert info.value.waited_s >= 0.5
