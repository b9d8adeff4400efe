"""`rose add` reconciles by default; `--no-reconcile` skips it; no model never loses a lesson.

Locks in: with the default agent (claude) and no claude to run, `rose add` still stores the
lesson, unreconciled, queues the reconcile job without starting a runner, and says so in
one line; in a repository with no store at all it creates `.rose/` at the root first and
says so; `--no-reconcile` stores it plainly, asks no model and queues nothing; with a model
(the simulated world) a duplicate is not stored and the one line says of what.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from rose import config
from rose.cli import app
from rose.events import read_events
from rose.jobs import queue as jobs
from rose.model.registry import simulated_model
from rose.sim import World
from rose.store.facade import Store

pytestmark = pytest.mark.graph


def _add(*args: str):
    return CliRunner().invoke(app, ["add", *args])


def _reconcile_jobs(store: Store) -> list[dict]:
    return [r for r in jobs.jobs(store.primary) if r["kind"] == "reconcile"]


def test_without_a_model_the_lesson_is_stored_and_a_job_queued(store: Store):
    res = _add("Use port 5433 for the test database.")
    assert res.exit_code == 0, res.output
    (line,) = res.stdout.strip().splitlines()
    assert (
        line.startswith("added n_") and " · general · Use port 5433 for the test database" in line
    )
    assert "not reconciled yet (model backend 'claude' is unavailable" in line
    assert line.endswith("; a job reconciles it later")
    (node,) = [Store.open().get(r["id"]) for r in store.read("lessons_all")]
    assert node.provisional == ["title", "gist", "scope", "reconcile"]
    (rec,) = _reconcile_jobs(store)
    assert (rec["state"], rec["pid"]) == ("queued", None)


def test_in_a_repository_with_no_store_it_creates_one_at_the_root(project: Path):
    (project / ".git").mkdir()
    (project / "app").mkdir()
    res = CliRunner().invoke(app, ["add", "Run the linter before pushing."], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert f"created a project store at {project / '.rose'}" in res.stderr
    assert len(list((project / ".rose" / "nodes").rglob("*.md"))) == 1
    assert _reconcile_jobs(Store.open())[0]["state"] == "queued"


def test_no_reconcile_stores_it_plainly_and_asks_nothing(store: Store):
    res = _add("Use port 5433 for the test database.", "--no-reconcile", "--family", "db")
    assert res.exit_code == 0, res.output
    assert res.stdout.strip().startswith("added n_") and " · db · " in res.stdout
    (row,) = store.read("lessons_all")
    assert Store.open().get(row["id"]).provisional == ["title", "gist"]
    assert read_events(store.primary.events, kind="judge") == []
    assert _reconcile_jobs(store) == []
    (event,) = read_events(store.primary.events, kind="add")
    assert (event["source"], event["relation"]) == ("user", "not reconciled")


def test_with_a_model_a_duplicate_is_not_stored(store: Store):
    world = World.generate(2, size="small")
    config.set_override(store.primary.config, "agent", "simulated")
    config.set_override(store.primary.config, "model", simulated_model(seed=2, size="small"))
    topic = next(iter(world.topics.values()))
    facts = [f for f in topic.facts if not world.facts[f].stale]
    first = _add(world.lesson(facts).body, "--scope", "project")
    assert first.exit_code == 0, first.output
    (kept,) = [r["id"] for r in store.read("lessons_all")]
    res = _add(world.lesson(facts[:2], salt=1).body, "--scope", "project")
    assert res.exit_code == 0, res.output
    assert res.stdout.strip() == f"not added: it says nothing {kept} does not already say"
    assert [r["id"] for r in store.read("lessons_all")] == [kept]
    assert Store.open().get(kept).provisional == []  # the first one was reconciled: written
