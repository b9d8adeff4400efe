"""What the user types lands while another process holds the graph database.

Locks in: `rose add` with the database held elsewhere past its short deadline exits 0, says
"stored; reconciliation deferred" in one line, and has the lesson's file on disk; the next
prompt's hook, the holder gone, serves it (the file made the recall view stale); the
queued reconcile job indexes and reconciles it, and it is in the recall view. `rose used`
under the same hold records its verdict in the session's log, ids resolved from the lesson
files, and absorption folds it in. A `rose add` that died after recording its text leaves
it to the reconcile job, which stores it. With the database free, `rose add` says "added"
as before and leaves no record behind.
"""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from rose import config
from rose.cli import app
from rose.files import intake, sessions
from rose.jobs import queue as jobs
from rose.jobs.capture import queue_intake
from rose.model.registry import simulated_model
from rose.store.facade import Store
from tests._holder import hold_until_closed
from tests._hookrun import payload, run_hook

pytestmark = pytest.mark.graph

TEXT = "Run the flaky integration suite with --retries 3; the CI runners drop sockets."


@pytest.fixture
def busy(store: Store, monkeypatch: pytest.MonkeyPatch) -> Store:
    """A store reconciling against the simulated world, whose opens give up after 0.5 s."""
    config.set_override(store.primary.config, "agent", "simulated")
    config.set_override(store.primary.config, "model", simulated_model(seed=2, size="small"))
    monkeypatch.setenv("ROSE_GRAPH_LOCK_TIMEOUT_S", "0.5")
    store.view()  # built once, as a store in use has it
    return Store.open()


def _files(store: Store) -> list[str]:
    return [p.read_text() for p in store.primary.nodes.rglob("*.md")]


def test_an_add_while_the_database_is_held_is_stored_and_finished_by_the_job(busy: Store):
    holder = hold_until_closed(busy)
    try:
        with jobs.held():
            res = CliRunner().invoke(app, ["add", TEXT, "--scope", "project"])
    finally:
        holder.communicate("")  # let go: it closes the database and exits
    assert res.exit_code == 0, res.output
    (line,) = res.stdout.strip().splitlines()
    assert line.startswith("stored; reconciliation deferred: n_")
    (text,) = _files(busy)
    assert TEXT in text and "reconcile" in text
    assert intake.waiting(busy.primary) == []
    (rec,) = [r for r in jobs.jobs(busy.primary) if r["kind"] == "reconcile"]
    assert rec["state"] == "queued"

    assert jobs.run_here(busy.primary) == 1
    (rec,) = [r for r in jobs.jobs(busy.primary) if r["kind"] == "reconcile"]
    assert rec["state"] == "done", rec["reason"]
    store = Store.open()
    (row,) = store.read("lessons_all")
    assert store.get(row["id"]).provisional == []  # reconciled: title and gist written
    assert [i["id"] for i in store.view()["lessons"]] == [row["id"]]


def test_the_next_prompt_serves_a_lesson_stored_without_the_database(busy: Store):
    holder = hold_until_closed(busy)
    try:
        with jobs.held():
            res = CliRunner().invoke(app, ["add", TEXT, "--scope", "project", "--no-reconcile"])
    finally:
        holder.communicate("")
    assert res.exit_code == 0 and res.stdout.startswith("stored; indexing deferred"), res.output
    # No job has run: the lesson file alone makes the view stale, and the hook reads it in.
    rc, out, raw, err = run_hook(
        "user-prompt-submit", payload("user-prompt-submit", busy.primary.root.parent)
    )
    assert rc == 0, err
    assert out is not None and "--retries 3" in raw


def test_used_while_the_database_is_held_lands_in_the_session_log(busy: Store):
    kept = busy.add(TEXT)
    root = busy.primary.root
    sessions.append(root, "s1", "prompt", turn=1, prompt="p", served=[kept.id])
    holder = hold_until_closed(busy)
    try:
        res = CliRunner().invoke(app, ["used", "-s", "s1", "--used", kept.id[:10]])
    finally:
        holder.communicate("")
    assert res.exit_code == 0, res.output
    assert res.stdout.strip() == "recorded for session s1, prompt 1"
    (entry,) = [e for e in sessions.read(root, "s1") if e["t"] == "used"]
    assert entry["used"] == [kept.id]  # the prefix resolved from the lesson files
    (ep,) = Store.open().absorb("s1", final=True)
    assert ep.used == [kept.id]


class _Killed(Exception):
    """Stands for whatever ends a command without a word (a host's timeout, a crash)."""


def test_a_lesson_whose_add_died_is_taken_in_by_the_job(store: Store):
    lid = "n_00112233445566778899"
    options = {"scope": "project", "reconcile": False, "source": "user", "session": None}
    with pytest.raises(_Killed), intake.recorded(store.primary, lid, TEXT, **options):
        with intake.leftover(store.primary) as found:
            assert found == []  # its writer is at work on it
        raise _Killed
    with jobs.held():
        assert queue_intake(store.primary) == "queued"
    assert jobs.run_here(store.primary) == 1
    assert Store.open().get(lid).body == TEXT
    assert intake.waiting(store.primary) == []


def test_with_the_database_free_an_add_is_added_as_before(busy: Store):
    res = CliRunner().invoke(app, ["add", TEXT, "--scope", "project"])
    assert res.exit_code == 0, res.output
    assert res.stdout.startswith("added n_") and "deferred" not in res.stdout
    assert intake.waiting(busy.primary) == []
    assert [r for r in jobs.jobs(busy.primary) if r["kind"] == "reconcile"] == []


def test_an_add_the_engine_fails_under_is_kept_and_finished_by_the_job(busy: Store):
    """The engine's own failure (an IO error removing its log, seen under contention) after
    the lesson was recorded: the command exits 0 and says so; the job stores the lesson."""
    import rose.jobs.capture as capture_mod

    def crash(*args, **kwargs):
        raise RuntimeError("IO exception: Error removing graph.kuzu.wal")

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(capture_mod, "capture", crash)
        done = CliRunner().invoke(app, ["add", TEXT])
    assert done.exit_code == 0, done.output
    assert "stored; reconciliation deferred" in done.output and "RuntimeError" in done.output
    assert len(intake.waiting(busy.primary)) == 1
    assert list(busy.primary.nodes.glob("*/*.md"))  # its id names a lesson at once
    assert jobs.run_here(busy.primary) == 1
    assert intake.waiting(busy.primary) == []
    assert any(TEXT[:40] in i["full"] for i in Store.open().view()["lessons"])
