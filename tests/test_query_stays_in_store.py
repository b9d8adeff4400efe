"""`rose query` without --write shows the store and nothing else: `LOAD FROM` a file (a fake
credentials file here) exits non-zero and prints not a byte of it, plain, --json or in the
console; a string or comment that only mentions LOAD FROM runs; rows that hold a secret are
printed redacted, with or without --write."""

from __future__ import annotations

import json

import pytest

from tests._cli_store import cli_with

#: An AWS key id the redactor knows, and lines of a credentials file no output may show.
AWS_KEY = "AKIAQ7ZP3XK2M4N8R6TW"
FILE_LINES = ("[default]", "aws_secret_access_key = canary-7f3e9b1d", "region = eu-canary-1")


@pytest.fixture
def run(project):
    return cli_with("Run the migrations before the deploy.")


@pytest.fixture
def secret_file(tmp_path):
    path = tmp_path / "credentials"
    path.write_text("\n".join(FILE_LINES) + "\n", encoding="utf-8")
    return path


def _nothing_of_the_file(output: str) -> None:
    for text in ("canary", "[default]", "aws_secret", "region"):
        assert text not in output


@pytest.mark.graph
@pytest.mark.parametrize("json_flag", [(), ("--json",)])
def test_load_from_a_file_is_refused_and_prints_none_of_it(run, secret_file, json_flag):
    for stmt in (
        f"LOAD FROM '{secret_file}' (file_format='csv', delim=':', header=false) RETURN *",
        f"lOaD /* x */ fRoM '{secret_file}' RETURN *",
        f"MATCH (l:Lesson) WITH count(l) AS n LOAD FROM '{secret_file}' RETURN *",
        f"CALL read_csv_serial('{secret_file}') RETURN *",
    ):
        res = run("query", stmt, *json_flag)
        assert res.exit_code == 1, res.output
        assert "refused" in res.output and "add --write" in res.output
        _nothing_of_the_file(res.output)


@pytest.mark.graph
def test_the_refusal_names_the_clause(run, secret_file):
    res = run("query", f"LOAD FROM '{secret_file}' RETURN *")
    assert res.output.strip() == (
        "rose: refused: LOAD FROM reads a file, and `rose query` is read-only; "
        "add --write to run it"
    )


@pytest.mark.graph
def test_the_console_refuses_load_from_and_prints_none_of_it(run, secret_file):
    res = run("query", input=f"LOAD FROM '{secret_file}' (delim=':') RETURN *;\nRETURN 1 AS one;\n")
    assert "error: refused: LOAD FROM reads a file" in res.output
    assert "rose> one\n---\n1\n" in res.output  # the next statement still ran
    _nothing_of_the_file(res.output)


@pytest.mark.graph
def test_reads_of_the_graph_run(run):
    res = run("query", "MATCH (l:Lesson) RETURN l.title AS title", "--json")
    assert res.exit_code == 0, res.output
    assert [r["title"] for r in json.loads(res.output)] == ["Run the migrations before the deploy"]
    res = run(
        "query",
        "MATCH (l:Lesson) // LOAD FROM '/etc/passwd'\n"
        "WHERE l.gist <> 'LOAD FROM /etc/passwd' RETURN 'LOAD FROM x' AS s, count(l) AS n",
        "--json",
    )
    assert res.exit_code == 0, res.output
    assert json.loads(res.output) == [{"s": "LOAD FROM x", "n": 1}]
    res = run("query", "CALL show_tables() RETURN name")
    assert res.exit_code == 0 and "Lesson" in res.output


@pytest.mark.graph
def test_rows_holding_a_secret_are_printed_redacted(run):
    for flag in ((), ("--json",)):
        res = run("query", f"RETURN 'key {AWS_KEY}' AS k", *flag)
        assert res.exit_code == 0, res.output
        assert AWS_KEY not in res.output and "[REDACTED:aws-key]" in res.output
    # a lesson changed in the graph by hand (the files are the record, not this)
    res = run("query", f"MATCH (l:Lesson) SET l.title = 'use {AWS_KEY}' RETURN l.title", "--write")
    assert res.exit_code == 0, res.output
    assert AWS_KEY not in res.output
    res = run("query", "MATCH (l:Lesson) RETURN l.title AS title", "--json")
    assert json.loads(res.output) == [{"title": "use [REDACTED:aws-key]"}]


@pytest.mark.graph
def test_with_write_a_file_read_runs_and_is_redacted(run, tmp_path):
    path = tmp_path / "rows.csv"
    path.write_text(f"id,key\n1,{AWS_KEY}\n", encoding="utf-8")
    res = run("query", f"LOAD FROM '{path}' (header=true) RETURN key", "--write", "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.output) == [{"key": "[REDACTED:aws-key]"}]
