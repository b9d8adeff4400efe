"""`rose conflicts` lists unresolved contradictions with their questions; `rose resolve`
settles one.

Locks in: both sides are listed with the question and what each disputes (text and JSON);
`rose resolve ID` keeps ID (active, no question) and supersedes the other, out of recall
and still on disk, with the dispute gone from both; `--drop` does the opposite; a short
id works; a lesson in no dispute is a one-line error; and once settled nothing is listed.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from rose.cli import app
from rose.store.facade import Store
from tests._reconcile import lesson

pytestmark = pytest.mark.graph

QUESTION = "Is 5434 the port now, or was 5433 only taken that day?"


@pytest.fixture
def disputed(store: Store) -> Store:
    store.write(
        [
            lesson(
                "n_port0001",
                "The test database listens on 5433.",
                family="db",
                status="disputed",
                conflict=QUESTION,
                disputes=["n_sock0002"],
            ),
            lesson(
                "n_sock0002",
                "The test database listens on 5434.",
                family="db",
                status="disputed",
                conflict=QUESTION,
                disputes=["n_port0001"],
            ),
            lesson("n_other001", "Unrelated.", family="misc"),
        ]
    )
    return store


def _run(*args: str):
    return CliRunner().invoke(app, list(args))


def test_conflicts_lists_both_sides_with_the_question(disputed: Store):
    res = _run("conflicts")
    assert res.exit_code == 0, res.output
    assert res.output.count(f"Unresolved: {QUESTION}") == 2
    assert "disputes n_sock0002" in res.output and "disputes n_port0001" in res.output
    rows = json.loads(_run("conflicts", "--json").output)
    assert [(r["id"], [a["id"] for a in r["against"]], r["question"]) for r in rows] == [
        ("n_port0001", ["n_sock0002"], QUESTION),
        ("n_sock0002", ["n_port0001"], QUESTION),
    ]


def test_resolve_keeps_id_and_supersedes_the_other(disputed: Store):
    res = _run("resolve", "n_sock0002")
    assert res.exit_code == 0, res.output
    assert res.output.strip() == "kept n_sock0002; superseded n_port0001"
    fresh = Store.open()
    kept, gone = fresh.get("n_sock0002"), fresh.get("n_port0001")
    assert (kept.status, kept.conflict, kept.disputes) == ("active", "", [])
    assert (gone.status, gone.conflict, gone.disputes) == ("superseded", "", [])
    assert fresh.primary.node_path("db", "n_port0001").exists()
    assert {r["id"] for r in fresh.read("apexes", scope="")} == {"n_sock0002", "n_other001"}
    assert _run("conflicts").output.strip() == "no unresolved contradictions"


def test_resolve_drop_supersedes_id_and_keeps_the_other(disputed: Store):
    res = _run("resolve", "n_sock0002", "--drop")
    assert res.output.strip() == "kept n_port0001; superseded n_sock0002"
    fresh = Store.open()
    assert (fresh.get("n_port0001").status, fresh.get("n_sock0002").status) == (
        "active",
        "superseded",
    )
    assert json.loads(_run("conflicts", "--json").output) == []


def test_a_short_id_works_and_an_undisputed_lesson_is_an_error(disputed: Store):
    res = _run("resolve", "n_other001")
    assert res.exit_code == 1
    assert res.output.strip().splitlines() == [
        "rose: n_other001 disputes no lesson: nothing to resolve; `rose conflicts` lists the "
        "contradictions still open"
    ]
    res = _run("resolve", "n_sock00")  # a unique prefix, as the injected block shows ids
    assert res.output.strip() == "kept n_sock0002; superseded n_port0001"
    assert _run("conflicts", "--json").output.strip() == "[]"
