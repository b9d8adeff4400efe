"""The CLI's exit codes and `--json` shapes: errors are one line on stderr with exit 1, never a
traceback; `--json` output parses and has the documented keys."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from rose.cli import app

pytestmark = pytest.mark.graph


@pytest.fixture
def run():
    runner = CliRunner()

    def invoke(*args: str, input: str | None = None):
        return runner.invoke(app, list(args), input=input)

    return invoke


def test_commands_before_init_fail_cleanly(run):
    res = run("status")
    assert res.exit_code == 1
    assert "rose init" in res.output
    assert "Traceback" not in res.output


def test_init_add_status_json(run, project):
    assert run("init").exit_code == 0
    assert (project / ".rose" / ".gitignore").exists()
    res = run("add", "Use port 5433 for the test database. It moved.", "--family", "DB Ports")
    assert res.exit_code == 0, res.output
    assert "db-ports" in res.output
    res = run("add", "-", "--title", "From stdin", input="Body read from stdin.\n")
    assert res.exit_code == 0, res.output

    res = run("status", "--json")
    assert res.exit_code == 0
    data = json.loads(res.output)
    assert set(data) >= {"store", "lessons", "episodes", "families", "levels", "apexes", "health"}
    assert data["lessons"] == 2
    assert {f["family"] for f in data["families"]} == {"db-ports", "general"}
    assert {a["title"] for a in data["apexes"]} == {
        "Use port 5433 for the test database",
        "From stdin",
    }
    assert all({"id", "level", "tokens", "success_rate"} <= set(a) for a in data["apexes"])
    assert data["health"] == {"ok": True, "problems": []}

    text = run("status")
    assert text.exit_code == 0 and "2 active (2 in all) in 2 families" in text.output


def test_add_rejects_empty_body_and_bad_scope(run):
    run("init")
    res = run("add", "   ")
    assert res.exit_code == 1 and "needs a body" in res.output
    res = run("add", "text", "--scope", "galaxy")
    assert res.exit_code == 2


def test_add_to_missing_global_store_creates_it_and_says_so(run, tmp_path):
    run("init")
    res = run("add", "Everywhere lesson.", "--scope", "global")
    assert res.exit_code == 0, res.output
    glob = tmp_path / "home" / ".rose"
    assert f"created the global store {glob}" in res.output
    assert len(list((glob / "nodes").rglob("*.md"))) == 1


def test_query_table_json_errors_and_read_only(run):
    run("init")
    run("add", "First lesson.")
    res = run("query", "MATCH (l:Lesson) RETURN l.title AS title", "--json")
    assert res.exit_code == 0
    assert json.loads(res.output) == [{"title": "First lesson"}]
    res = run("query", "MATCH (l:Lesson) RETURN l.title AS title")
    assert res.exit_code == 0 and "title" in res.output and "First lesson" in res.output
    res = run("query", "MATCH (l:Lesson RETURN l")
    assert res.exit_code == 1 and "Parser exception" in res.output
    res = run("query", "MATCH (l:Lesson) SET l.title = 'x'")
    assert res.exit_code == 1  # read-only without --write
    res = run("query", "MATCH (l:Lesson) SET l.title = 'x' RETURN l.title AS t", "--write")
    assert res.exit_code == 0 and "x" in res.output


def test_query_console_runs_statements_until_eof(run):
    run("init")
    run("add", "Console lesson.")
    res = run("query", input="MATCH (l:Lesson)\nRETURN count(l) AS n;\nMATCH (x RETURN x;\n")
    assert res.exit_code == 0
    assert "n" in res.output and "1" in res.output
    assert "error:" in res.output


def test_tree_text_and_dot(run):
    run("init")
    run("add", "A lesson about retries.", "--family", "retry")
    res = run("tree", "-v")
    assert res.exit_code == 0 and "retry/" in res.output and "gist:" in res.output
    res = run("tree", "--dot")
    assert res.exit_code == 0 and res.output.startswith("digraph rose {")
    res = run("tree", "--family", "none")
    assert res.exit_code == 1 and "the families are: retry" in res.output


def test_config_get_set_list_and_errors(run, project):
    run("init")
    assert run("config", "recall.max_pack_tokens").output.strip() == "2000"
    res = run("config", "recall.max_pack_tokens", "4000")
    assert res.exit_code == 0
    assert "max_pack_tokens: 4000" in (project / ".rose" / "config.yaml").read_text()
    assert run("config", "recall.max_pack_tokens").output.strip() == "4000"
    listing = json.loads(run("config", "--json").output)
    row = next(r for r in listing if r["key"] == "recall.max_pack_tokens")
    assert row["value"] == 4000 and row["default"] == 2000
    res = run("config", "recall.max_pack_tokens", "lots")
    assert res.exit_code == 1 and "recall.max_pack_tokens" in res.output
    res = run("config", "no.such_key")
    assert res.exit_code == 1 and "unknown key" in res.output


def test_events_and_reindex(run):
    run("init")
    run("add", "Lesson one.")
    res = run("events", "--json")
    kinds = [e["kind"] for e in json.loads(res.output)]
    assert "add" in kinds and "write" in kinds
    assert [e["kind"] for e in json.loads(run("events", "--kind", "add", "--json").output)] == [
        "add"
    ]
    res = run("reindex")
    assert res.exit_code == 0 and "reindexed 1 files" in res.output


def test_doctor_reports_store_engine_and_backends(run):
    run("init")
    res = run("doctor", "--json")
    names = [c["name"] for c in json.loads(res.output)["checks"]]
    assert "store" in names and "graph engine" in names
    assert any(n.startswith("backend") for n in names)


def test_doctor_warns_when_the_budget_exceeds_what_the_host_passes_on(run):
    run("init")
    checks = {c["name"]: c for c in json.loads(run("doctor", "--json").output)["checks"]}
    assert checks["recall budget"]["level"] == "ok"
    run("config", "recall.max_pack_tokens", "6000")
    checks = {c["name"]: c for c in json.loads(run("doctor", "--json").output)["checks"]}
    assert checks["recall budget"]["level"] == "warn"
    assert "preview" in checks["recall budget"]["detail"]
