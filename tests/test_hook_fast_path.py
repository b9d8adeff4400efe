"""A prompt with nothing to decide is answered without importing the graph engine, pydantic,
networkx, jinja2, typer or yaml: the fast path reads the recall view with the standard
library alone (importing them costs 250-400 ms, the whole budget of a hook)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from rose.hooks.main import EMPTY_NOTE
from rose.store.facade import Store
from tests._hookrun import payload

pytestmark = pytest.mark.graph

HEAVY = ("kuzu", "ladybug", "pydantic", "networkx", "jinja2", "typer", "yaml")

_PROBE = f"""
import json, sys
sys.argv = ["rose", "hook", "user-prompt-submit"]
from rose._entry import main
try:
    main()
except SystemExit:
    pass
heavy = [m for m in {HEAVY!r} if m in sys.modules]
print("HEAVY=" + json.dumps(heavy), file=sys.stderr)
"""


def _probe(data: dict) -> tuple[dict | None, list[str]]:
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE], input=json.dumps(data), capture_output=True, text=True
    )
    line = next(ln for ln in proc.stderr.splitlines() if ln.startswith("HEAVY="))
    out = json.loads(proc.stdout) if proc.stdout.strip() else None
    return out, json.loads(line[len("HEAVY=") :])


def test_fits_path_imports_nothing_heavy(store: Store, project):
    store.add("A lesson that fits the budget.")
    out, heavy = _probe(payload("user-prompt-submit", project))
    assert out is not None and "hookSpecificOutput" in out  # it really injected
    assert heavy == []


def test_empty_store_path_imports_nothing_heavy(store: Store, project):
    store.view()
    out, heavy = _probe(payload("user-prompt-submit", project))
    assert out == {"systemMessage": f"ROSE · {EMPTY_NOTE}"} and heavy == []


def test_stale_view_takes_the_slow_path(store: Store, project):
    n = store.add("Original.")
    path = store.primary.node_path(n.family, n.id)
    path.write_text(path.read_text().replace("Original.", "Edited."))
    out, heavy = _probe(payload("user-prompt-submit", project))
    assert "Edited." in out["hookSpecificOutput"]["additionalContext"]
    assert "pydantic" in heavy  # the control: the probe does see heavy imports
