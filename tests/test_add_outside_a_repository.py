"""Outside a repository, `rose add` asks before it creates the global store, and a notice
kept in the global store about one folder shows only in that folder's status line.

Locks in: `rose add` in a folder with no repository and no store used to create `~/.rose`
unasked. Now a terminal is asked first (no: nothing added), and with no terminal it
refuses and names `rose init --scope global`; `--scope global` is the choice made. And the
"filed globally: no repository" notice a lesson outside a repository leaves was kept in the
global store, which every project's prompt hook reads: project B's status line said what
happened in folder A. It is kept for folder A's prompts only.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from rose.cli import app
from rose.cli.lessons import lesson_cmds
from rose.files import notices
from rose.files.layout import global_root
from rose.loop.reflection import _land

LESSON = "Use port 5433 for the test database."


def _add(*args: str, input: str | None = None):
    return CliRunner().invoke(app, ["add", LESSON, *args], input=input)


def test_with_no_terminal_it_refuses_and_names_the_command(project: Path):
    res = _add()
    assert res.exit_code == 1
    assert "rose init --scope global" in res.stderr and "nothing added" in res.stderr
    assert not global_root().exists()


@pytest.mark.graph
def test_on_a_terminal_it_asks_first(project: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(lesson_cmds, "_interactive", lambda: True)
    no = _add(input="n\n")
    assert no.exit_code == 1 and "Create it?" in no.stdout
    assert not global_root().exists()
    yes = _add(input="y\n")
    assert yes.exit_code == 0, yes.output
    assert len(list((global_root() / "nodes").rglob("*.md"))) == 1


@pytest.mark.graph
def test_scope_global_is_the_choice_made(project: Path):
    res = _add("--scope", "global", "--no-reconcile")
    assert res.exit_code == 0, res.output
    assert len(list((global_root() / "nodes").rglob("*.md"))) == 1


def test_in_a_repository_or_with_a_global_store_nothing_is_asked(project: Path):
    assert _land.creates_global(None, project) == global_root()
    (project / ".git").mkdir()
    assert _land.creates_global(None, project) is None
    (project / ".git").rmdir()
    assert _land.creates_global("global", project) is None


def test_a_notice_about_one_folder_shows_only_there(tmp_path: Path):
    glob, a, b = tmp_path / "home" / ".rose", tmp_path / "a", tmp_path / "b"
    notices.keep(glob, "filed globally: no repository", about=a)
    notices.keep(glob, "for everyone")
    assert notices.take([str(glob)], str(b)) == ["for everyone"]
    assert notices.take([str(glob)], str(b / "sub")) == []
    assert notices.take([str(glob)], str(a / "sub")) == ["filed globally: no repository"]
    assert notices.take([str(glob)], str(a)) == []  # handed out once


def test_a_lesson_filed_globally_keeps_its_notice_for_its_folder(tmp_path: Path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    _land.store_for(None, "project", a)
    glob = str(global_root())
    assert notices.take([glob], str(b)) == []
    assert notices.take([glob], str(a)) == ["filed globally: no repository"]
