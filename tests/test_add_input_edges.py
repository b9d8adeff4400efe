"""Odd input to `rose add` and `rose resolve` gets a clear answer, not a surprising result.

Locks in: `rose add -` with markdown on stdin (a list item, a quote, a numbered step, a
heading) no longer takes the marker into the title (`Store.draft` stripped only a
heading's `#`), and the gist drops it too, while the body stays verbatim; `--family`
spelling no folder name ("!!!", "") is refused with one line instead of filing the
lesson under `general` unasked; and `rose resolve ""` says no id was given instead of
calling the empty prefix ambiguous and listing every lesson.
"""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from rose.cli import app
from rose.store.facade import Store
from tests._reconcile import lesson

pytestmark = pytest.mark.graph


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("- Use port 5433 for tests.\n- Not 5432.", "Use port 5433 for tests"),
        ("* Use port 5433", "Use port 5433"),
        ("> - Quoted item here", "Quoted item here"),
        ("1. Run the migrations first. Then seed.", "Run the migrations first"),
        ("## Ports\nUse 5433.", "Ports"),
        ("-5 degrees breaks the sensor", "-5 degrees breaks the sensor"),
    ],
)
def test_a_markdown_marker_is_not_part_of_the_title(text: str, title: str):
    node = Store.draft(text)
    assert node.title == title
    assert node.gist.startswith(title)
    assert node.body == text


def test_rose_add_from_stdin_takes_the_title_without_the_dash(store: Store):
    res = CliRunner().invoke(
        app, ["add", "-", "--no-reconcile"], input="- Use port 5433 for tests.\n"
    )
    assert res.exit_code == 0, res.output
    assert " · general · Use port 5433 for tests" in res.stdout
    (row,) = store.read("lessons_all")
    assert row["title"] == "Use port 5433 for tests"


@pytest.mark.parametrize("family", ["!!!", ""])
def test_a_family_that_spells_no_name_is_refused(store: Store, family: str):
    res = CliRunner().invoke(app, ["add", "A lesson.", "--no-reconcile", "--family", family])
    assert res.exit_code == 1
    assert f"family {family!r} has no letter or digit" in res.stderr
    assert store.read("lessons_all") == []


def test_a_family_that_slugs_is_still_taken(store: Store):
    res = CliRunner().invoke(app, ["add", "A lesson.", "--no-reconcile", "-f", "My Family!"])
    assert res.exit_code == 0, res.output
    assert " · my-family · " in res.stdout


def test_resolve_with_an_empty_id_says_so(store: Store):
    store.save(lesson("n_port0001", "The database listens on 5433."))
    store.save(lesson("n_sock0002", "The database listens on 5434."))
    res = CliRunner().invoke(app, ["resolve", ""])
    assert res.exit_code == 1
    assert "no lesson id given" in res.stderr
    assert "ambiguous" not in res.stderr and "n_port0001" not in res.stderr
