"""`rose query` without --write reads the graph and nothing else: a statement that is not a
read query (an allow-list of clauses, CALL procedures and settings) is refused before any
statement runs, whatever its case, comments, whitespace or backquotes, and the refusal says to
add --write. `LOAD FROM` a file prints nothing of it (plain, --json, the console). Several
`;`-separated statements print every result; rows and the console's history file go through
redaction."""

from __future__ import annotations

import json

import pytest

from rose.graph.readonly import WriteRefused, statements
from tests._cli_store import cli_with

KEY = "sk-ant-api03-" + "k" * 40

REFUSED = [
    "COPY (MATCH (l:Lesson) RETURN l.body) TO 'out.csv'",
    "copy (match (l:Lesson) return l.body) to 'out.csv'",
    "/* harmless */ CoPy\n\t(MATCH (l:Lesson) RETURN l.body)\nTO 'out.csv'",
    "// a comment line\nCOPY(RETURN 1) TO 'out.csv'",
    "RETURN 1; COPY (RETURN 1) TO 'out.csv'",
    "RETURN 'a;b' ;\u00a0COPY (RETURN 1) TO 'out.csv'",
    "PROFILE COPY (RETURN 1) TO 'out.csv'",
    "EXPLAIN LOGICAL COPY (RETURN 1) TO 'out.csv'",
    "COPY Lesson FROM 'lessons.csv'",
    "EXPORT DATABASE 'dump'",
    "export /* x */ database 'dump' (format='csv')",
    "IMPORT DATABASE 'dump'",
    "INSTALL httpfs",
    "FORCE INSTALL httpfs FROM 'http://example.invalid/'",
    "UNINSTALL httpfs",
    "UPDATE httpfs",
    "LOAD EXTENSION json",
    "load json",
    "LOAD '/tmp/anything.so'",
    "LOAD `FROM`",
    "ATTACH 'other.kz' AS other (dbtype kuzu)",
    "DETACH other",
    "use other",
    "CHECKPOINT",
    "CALL create_fts_index('Lesson', 'idx', ['body'])",
    "MATCH (l:Lesson) CALL drop_vector_index('Lesson', 'v') RETURN 1",
    "CALL `CREATE_VECTOR_INDEX`('Lesson', 'v', 'emb')",
    "RETURN 1 /* x **/ ; COPY (RETURN 1) TO 'out.csv'",  # `**/` does not end a kuzu comment
    "RETURN '\\q; COPY (RETURN 1) TO 'out.csv' //'",  # a bad escape: no string for kuzu
    "MATCH (l:Lesson) SET l.title = 'x'",
    "MATCH (l:Lesson) DETACH DELETE l",
    "LOAD FROM '/etc/passwd' (file_format='csv', delim=':') RETURN *",
    "LoAd FrOm '/etc/passwd' RETURN *",
    "LOAD WITH HEADERS (a STRING) FROM 'rows.csv' RETURN *",
    "LOAD FROM GLOB('/home/*/.aws/credentials') RETURN *",
    "/* RETURN 1 */ LOAD/**/FROM ['a.csv'] RETURN *",
    "UNWIND [1] AS x LOAD FROM '/etc/passwd' RETURN *",
    "CALL show_tables() WITH * LOAD FROM '/etc/passwd' RETURN *",
    "MATCH (l:Lesson) RETURN l.id UNION LOAD FROM 'f' RETURN column0",
    "WITH 1 AS as LOAD FROM '/etc/passwd' RETURN *",  # `as` the name, then the clause
    "MATCH (l:Lesson) RETURN l AS load",  # a clause's word as a bare alias
    "CALL read_csv_serial('/etc/passwd') RETURN *",
    "CALL `READ_PARQUET`('x.parquet') RETURN *",
    "CALL json_scan('x.json') RETURN *",
    "CALL current_setting('home_directory') RETURN *",
    "CALL project_graph('g', ['Lesson'], [])",
    "CALL home_directory = '/'",
    "CALL file_search_path = '/etc'",
    "CALL",
    "(RETURN 1)",
    "SHOW TABLES",
]

ALLOWED = [
    "MATCH (l:Lesson) RETURN l.title",
    "MATCH (l:Lesson) WHERE l.body CONTAINS 'COPY (x) TO; EXPORT DATABASE' RETURN l.id",
    'RETURN "LOAD json; ATTACH" AS s',
    "MATCH (`copy`:Lesson) RETURN `copy`.title AS `load`",
    "MATCH (load:Lesson) RETURN load.set, {use: load.update} AS m, $copy",
    "MATCH (l:Lesson) WHERE l.body CONTAINS 'LOAD FROM /etc/passwd' RETURN l.id",
    "RETURN \"x'; LOAD FROM '/etc/passwd' RETURN *; //\" AS s",
    "// LOAD FROM '/etc/passwd'\nRETURN 1",
    "RETURN 1 /* ; LOAD FROM 'f' */",
    "CALL table_info('Lesson') RETURN *",
    "CALL `show_tables`() RETURN *",
    "OPTIONAL MATCH (l:Lesson) WITH l ORDER BY l.id SKIP 1 LIMIT 2 RETURN l.id",
    "// COPY (RETURN 1) TO 'out.csv'\nRETURN 1",
    "/* EXPORT DATABASE 'd'; */ RETURN 1",
    "CALL show_tables() RETURN *",
    "CALL threads = 2",
    "call TimeOut=1000",
    "EXPLAIN MATCH (l:Lesson) RETURN l",
]


@pytest.mark.parametrize("text", REFUSED)
def test_statements_that_write_outside_the_graph_are_refused(text):
    with pytest.raises(WriteRefused, match="refused: .*add --write to run it"):
        statements(text)
    with pytest.raises(WriteRefused):
        statements(text, engine="ladybug")
    assert statements(text, write=True)  # --write lets it through


@pytest.mark.parametrize("text", ALLOWED)
def test_reading_statements_pass(text):
    assert statements(text) == [text]


def test_statements_split_on_semicolons_outside_strings_and_comments():
    text = "RETURN 1 AS a; RETURN 'x;y' AS b /* ; */ ;\n// trailing ; comment\n"
    assert statements(text) == ["RETURN 1 AS a", "RETURN 'x;y' AS b /* ; */"]
    assert statements("RETURN 1;") == ["RETURN 1"]
    assert statements("RETURN 'it''s'; RETURN 2", engine="ladybug") == [
        "RETURN 'it''s'",
        "RETURN 2",
    ]


def test_a_refusal_names_the_statement_among_several():
    with pytest.raises(WriteRefused) as err:
        statements("RETURN 1; EXPORT DATABASE 'd'")
    assert str(err.value) == (
        "statement 2: refused: EXPORT DATABASE writes the whole database to files, "
        "and `rose query` is read-only; add --write to run it"
    )


# -- through the CLI, on a real store -----------------------------------------------------


@pytest.fixture
def run(project):
    return cli_with(f"Deploy with key {KEY} only from CI.")


@pytest.mark.graph
def test_copy_to_and_export_write_nothing_without_write(run, project):
    res = run("query", "COPY (MATCH (l:Lesson) RETURN l.body) TO 'out.csv'")
    assert res.exit_code == 1
    assert res.output.strip() == (
        "rose: refused: COPY ... TO writes a file, and `rose query` is read-only; "
        "add --write to run it"
    )
    res = run("query", "EXPORT DATABASE 'dump'")
    assert res.exit_code == 1 and "add --write" in res.output
    res = run("query", "MATCH (l:Lesson) RETURN count(l) AS n; EXPORT DATABASE 'dump'")
    assert res.exit_code == 1 and "statement 2: refused" in res.output
    assert not (project / "out.csv").exists() and not (project / "dump").exists()


@pytest.mark.graph
def test_with_write_copy_to_runs(run, project):
    res = run("query", "COPY (MATCH (l:Lesson) RETURN l.title) TO 'out.csv'", "--write")
    assert res.exit_code == 0, res.output
    assert (project / "out.csv").exists()


@pytest.mark.graph
def test_a_graph_write_without_write_says_to_add_it(run):
    res = run("query", "MATCH (l:Lesson) SET l.title = 'x'")
    assert res.exit_code == 1
    assert "changes the graph" in res.output and "add --write" in res.output
    assert "Traceback" not in res.output


@pytest.mark.graph
def test_several_statements_print_every_result(run):
    res = run("query", "RETURN 1 AS a; MATCH (l:Lesson) RETURN count(l) AS lessons, 7 AS b")
    assert res.exit_code == 0, res.output
    first, second = res.output.strip().split("\n\n")
    assert first.split() == ["a", "-", "1"]
    assert second.split() == ["lessons", "b", "-------", "-", "1", "7"]
    res = run("query", "RETURN 1 AS a; RETURN 2 AS b", "--json")
    assert json.loads(res.output) == [[{"a": 1}], [{"b": 2}]]
    res = run("query", "RETURN 1 AS a;", "--json")
    assert json.loads(res.output) == [{"a": 1}]


@pytest.mark.graph
def test_the_console_history_is_redacted(run, project):
    stmt = f"MATCH (l:Lesson) WHERE l.body CONTAINS '{KEY}' RETURN count(l) AS n;"
    res = run("query", input=f"{stmt}\nCOPY (RETURN 1) TO 'out.csv';\n")
    assert res.exit_code == 0
    assert "add --write" in res.output and not (project / "out.csv").exists()
    history = (project / ".rose" / "query-history").read_text(encoding="utf-8")
    assert KEY not in history
    assert history.splitlines() == [
        "MATCH (l:Lesson) WHERE l.body CONTAINS '[REDACTED:anthropic-key]' RETURN count(l) AS n;",
        "COPY (RETURN 1) TO 'out.csv';",
    ]
    run("query", input="RETURN 1 AS one;\n")  # the next session keeps what was there
    assert len((project / ".rose" / "query-history").read_text().splitlines()) == 3
