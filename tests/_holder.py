"""A separate process holding a store's graph database, as another rose command would."""

from __future__ import annotations

import subprocess
import sys

_HOLDER = """
import sys, time
from pathlib import Path
from rose.graph.engine import open_graph
with open_graph(Path(sys.argv[1]), sys.argv[2]) as g:
    print("held", flush=True)
    time.sleep(float(sys.argv[3]))
"""


def hold(store, seconds: float) -> subprocess.Popen:
    """Start the holder and return once it holds the database (for `seconds`)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(store.graph_path), store.engine, str(seconds)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc
