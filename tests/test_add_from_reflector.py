"""`rose add --session ID --source reflector`: what an in-session reflector mints is noted.

Locks in: a lesson added by a reflecting agent (block or fork mode) is recorded in that
session's log as minted, under the session's latest unit of work, so the nudge that asked
for it counts as having produced something (the backoff resets) and the source is the
reflector's; without --session nothing is written to any session's log; a source that is
neither the user nor a reflector is refused.
"""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from rose.cli import app
from rose.files import sessions
from rose.loop.reflection import occasion
from rose.store.facade import Store

pytestmark = pytest.mark.graph


def _add(*args: str):
    return CliRunner().invoke(app, ["add", *args], prog_name="rose")


def test_a_reflectors_lesson_is_noted_in_its_session(store: Store):
    root = store.primary.root
    sessions.append(root, "s1", "prompt", turn=2, prompt="fix it", served=[])
    sessions.append(root, "s1", "nudge", mode="block", why="3 turns", start=0, end=10)
    assert occasion.empty_streak(sessions.read(root, "s1")) == 1
    flags = ("--no-reconcile", "--session", "s1", "--source", "reflector", "--from", "repository")
    res = _add("The api port is 8081.", *flags)
    assert res.exit_code == 0, res.output
    (minted,) = [e for e in sessions.read(root, "s1") if e["t"] == "minted"]
    assert minted["turn"] == 2 and minted["source"] == "reflector"
    assert Store.open().get(minted["id"]).body == "The api port is 8081."
    assert occasion.empty_streak(sessions.read(root, "s1")) == 0


def test_without_a_session_no_log_is_written_and_bad_sources_are_refused(store: Store):
    assert _add("Logs go to /var/log/app.", "--no-reconcile").exit_code == 0
    assert sessions.sessions(store.primary.root) == []
    res = _add("x", "--no-reconcile", "--source", "robot")
    assert res.exit_code == 2 and "user or reflector" in res.output
