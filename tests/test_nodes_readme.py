"""Files in nodes/ that are not lessons are left alone (issue "Never broken, never leaking",
item 11). Locks in: a README.md in nodes/<family>/ was reported as a broken lesson by
`rose status` and `rose doctor`. The rule: README.md (any case) and anything whose name
starts with '.' or '_' (a draft set aside, a private folder) are not lessons."""

from __future__ import annotations

import pytest

from rose.inspect.status import status
from rose.store.facade import Store

pytestmark = pytest.mark.graph


def test_readme_and_set_aside_files_are_not_lessons(store: Store):
    node = store.add("Use port 5433 for the test database.", family="db")
    folder = store.primary.nodes / "db"
    (folder / "README.md").write_text("# Database lessons\n\nWhat this family is about.\n")
    (store.primary.nodes / "readme.md").write_text("About these folders.\n")
    (folder / "_draft.md").write_text("not front matter\n")
    (store.primary.nodes / "_archive").mkdir()
    (store.primary.nodes / "_archive" / "old.md").write_text("no front matter either\n")
    s = status(Store.open())
    assert s["health"] == {"ok": True, "problems": []}
    assert s["lessons"] == 1 and s["apexes"][0]["id"] == node.id


def test_a_broken_lesson_is_still_reported(store: Store):
    store.add("Use port 5433 for the test database.", family="db")
    (store.primary.nodes / "db" / "n_broken1234.md").write_text("no front matter\n")
    problems = status(Store.open())["health"]["problems"]
    assert [p["path"].endswith("n_broken1234.md") for p in problems] == [True]
