"""The Cypher console knows `help`, `exit` and `quit`, and `help` prints the schema.

Locks in: typing `help` or `exit` at `rose> ` was taken as the start of a statement (the
prompt turned to `... ` and waited for a `;`), and nothing in the console said what tables
there are. Now `help` prints every node table with its columns and every relationship
(from the schema file, so it never goes stale), and `exit` or `quit` ends the console.
"""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from rose.cli import app
from rose.store.facade import Store

pytestmark = pytest.mark.graph


def test_help_prints_the_schema_and_quit_ends_the_console(store: Store):
    res = CliRunner().invoke(
        app, ["query"], input="help\nRETURN 1 AS one;\nquit\nRETURN 2 AS two;\n"
    )
    assert res.exit_code == 0, res.output
    out = res.output
    assert "Node tables:" in out and "Lesson: id (key), scope, family, title" in out
    assert (
        "DERIVED_FROM: Lesson → Lesson" in out and "PATCH_RESCUED: Episode → Lesson (patch)" in out
    )
    assert "one" in out and "two" not in out  # nothing after `quit` ran
    assert "error:" not in out


@pytest.mark.parametrize("word", ["exit", "exit;", "QUIT"])
def test_exit_ends_it_too(store: Store, word: str):
    res = CliRunner().invoke(app, ["query"], input=f"{word}\nRETURN 2 AS two;\n")
    assert res.exit_code == 0 and "two" not in res.output
