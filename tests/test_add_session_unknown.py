"""`rose add --session ID` refuses a session with no recorded prompt, storing nothing.

Locks in: a session with no log used to be accepted, the lesson stored, and a `minted`
entry written at turn 0 into a new log. Now, as `rose used` does, it is one line on
stderr and a non-zero exit, before any lesson or log is written; with no store at all no
session can be known either, and no store is created; a known session gets its `minted`
entry at its latest turn.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from rose.cli import app
from rose.files import sessions
from rose.store.facade import Store

pytestmark = pytest.mark.graph

TEXT = "Use port 5433 for the test database."


def _add(*args: str):
    return CliRunner().invoke(app, ["add", TEXT, "--no-reconcile", *args])


def test_an_unknown_session_is_refused_and_nothing_stored(store: Store):
    res = _add("--session", "s-nowhere")
    assert res.exit_code == 1
    assert "session 's-nowhere' has no recorded prompt here" in res.stderr
    assert store.read("lessons_all") == []
    assert sessions.sessions(store.primary.root) == []


def test_with_no_store_at_all_it_is_refused_too(project: Path):
    (project / ".git").mkdir()
    res = _add("--session", "s1")
    assert res.exit_code == 1
    assert "session 's1' has no recorded prompt here: there is no store yet" in res.stderr
    assert not (project / ".rose").exists()


def test_a_known_session_is_noted_at_its_latest_turn(store: Store):
    sessions.append(store.primary.root, "s1", "prompt", turn=3, prompt="p", served=[])
    res = _add("--session", "s1")
    assert res.exit_code == 0, res.output
    (minted,) = [e for e in sessions.read(store.primary.root, "s1") if e["t"] == "minted"]
    assert minted["turn"] == 3 and minted["id"] == store.read("lessons_all")[0]["id"]
