"""A fork or in-session reflector reports a failure with `rose used --failed`, and descent
restores detail for the rest of the session, as it does for the background reflector.

Locks in: `--failed` alone (no lesson named) is accepted and queues one `restore` job for
the unit (the latest by default; the same report twice is one job); the job restores to the
compressed lesson that unit was served (no judge reachable: by prior and cost) and logs the
expansion; an empty report or a session with no prompt is refused with the reason.
"""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from rose.cli import app
from rose.files import sessions
from rose.jobs import queue as jobs
from rose.store.facade import Store
from tests._descent import level1

pytestmark = pytest.mark.graph


def test_a_reported_failure_restores_detail_for_the_session(store: Store):
    fam = level1(store, 2)
    root = store.primary.root
    sessions.append(root, "s1", "prompt", turn=1, prompt="p", served=[fam.apex])
    runner = CliRunner()
    with jobs.held():
        args = ["used", "-s", "s1", "--source", "reflector", "--failed", "the checks still fail"]
        for _ in range(2):
            out = runner.invoke(app, args)
            assert out.exit_code == 0, out.output
            assert "failure noted for session s1, prompt 1" in out.output
        queued = [r for r in jobs.jobs(store.primary) if r["kind"] == "restore"]
        assert len(queued) == 1
        assert jobs.run_here(store.primary) == 1
    (entry, *_more) = sessions.restored(root, "s1")
    assert entry["lesson"] == fam.apex
    assert entry["text"] in {c.claim for c in store.get(fam.apex).dropped}
    assert any(e["t"] == "expand" for e in sessions.read(root, "s1"))


def test_an_empty_report_or_an_unknown_session_is_refused(store: Store):
    runner = CliRunner()
    out = runner.invoke(app, ["used", "-s", "nobody", "--failed", "it broke"])
    assert out.exit_code != 0 and "has no prompt on record" in out.output
    sessions.append(store.primary.root, "s2", "prompt", turn=1, prompt="p", served=[])
    out = runner.invoke(app, ["used", "-s", "s2", "--failed", "  "])
    assert out.exit_code != 0 and "names no failure" in out.output
