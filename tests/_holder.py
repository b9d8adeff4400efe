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


_UNTIL_CLOSED = """
import sys
from pathlib import Path
from rose.graph.engine import open_graph
with open_graph(Path(sys.argv[1]), sys.argv[2]):
    print("held", flush=True)
    sys.stdin.read()
"""


def hold_until_closed(store) -> subprocess.Popen:
    """Start a holder that lets go when its stdin closes; return once it holds."""
    args = [sys.executable, "-c", _UNTIL_CLOSED, str(store.graph_path), store.engine]
    proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc
