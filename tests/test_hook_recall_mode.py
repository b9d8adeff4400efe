"""The prompt hook records how recall chose each prompt's lessons, for precision by mode.

Locks in: the ``prompt`` entry of the session log says ``fits`` when everything fit the
budget (the standard-library fast path), ``judged`` when the model chose, ``degraded``
when recall fell back to the budget-ranked apexes, and nothing for an empty store; and
the episode absorbed from it carries the same mode.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from rose import config
from rose.files import sessions
from rose.models import Node
from rose.store.facade import Store
from tests._hookrun import payload, run_hook

pytestmark = pytest.mark.graph


@pytest.fixture
def two(store: Store) -> Store:
    store.write(
        [
            Node(id="n_retry0001", title="Retry policy", gist="Back off.", body="Use 100ms."),
            Node(id="n_cache0001", title="Cache TTLs", gist="TTLs.", body="Profiles 300s."),
        ]
    )
    return store


def _mode(store: Store, project: Path, env: dict | None = None) -> str:
    rc, _, _, err = run_hook(
        "user-prompt-submit", payload("user-prompt-submit", project, session_id="m1"), env=env
    )
    assert rc == 0, err
    (entry,) = [e for e in sessions.read(store.primary.root, "m1") if e["t"] == "prompt"]
    return entry["recall"]


def test_everything_fits(two: Store, project: Path):
    assert _mode(two, project) == "fits"
    (ep,) = two.absorb("m1", final=True)
    assert ep.recall == "fits"


def test_the_model_chose(two: Store, project: Path):
    config.set_override(two.primary.config, "recall.max_pack_tokens", "90")  # one of two fits
    config.set_override(two.primary.config, "agent", "simulated")
    assert _mode(two, project) == "judged"


def test_recall_fell_back(two: Store, project: Path, tmp_path: Path):
    config.set_override(two.primary.config, "recall.max_pack_tokens", "90")
    empty_bin = tmp_path / "bin"  # no model CLI on PATH: the judge cannot answer
    empty_bin.mkdir()
    env = {"PATH": f"{empty_bin}:{Path(sys.executable).parent}"}
    assert _mode(two, project, env) == "degraded"
    (ep,) = two.absorb("m1", final=True)
    assert ep.recall == "degraded" and ep.served


def test_an_empty_store_records_no_mode(store: Store, project: Path):
    store.view()
    assert _mode(store, project) == ""
