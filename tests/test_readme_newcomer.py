"""What a newcomer reads and is told to run works as written (issue "Never broken, never
leaking", item 12). Locks in: after the README's quickstart `rose` was not on PATH, yet "Using
it" ran a bare `rose`; nothing said to go to your own project, `rose init` and `rose install`;
there was no example of a good lesson; and the `gh issue create` line `rose report` printed
held a literal `<owner>/<repo>` (the package names no repository, so without ROSE_ISSUES_REPO
the line is left out)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rose.cli import app

README = Path(__file__).resolve().parents[1] / "README.md"


def _section(title: str) -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else None]


def _commands(markdown: str) -> list[str]:
    blocks = re.findall(r"```sh\n(.*?)```", markdown, flags=re.S)
    return [line.strip() for block in blocks for line in block.splitlines() if line.strip()]


def test_the_quickstart_puts_rose_on_path_before_running_it():
    commands = _commands(_section("Quickstart"))
    first_bare = next(i for i, c in enumerate(commands) if c.startswith("rose "))
    installs = ("pipx install", "uv tool install", "pip install --user")
    assert any(c.startswith(installs) for c in commands[:first_bare]), commands


def test_the_quickstart_sets_up_your_own_project():
    commands = _commands(_section("Quickstart"))
    order = [next(i for i, c in enumerate(commands) if c.startswith(w)) for w in
             ("cd ", "rose init", "rose install", "rose add")]  # fmt: skip
    assert order == sorted(order), commands


def test_using_it_says_where_and_how_rose_runs():
    using = _section("Using it")
    assert "PATH" in using.split("```")[0]


def test_there_is_an_example_of_a_good_lesson():
    good = _section("A good lesson")
    assert "| instead of | write |" in good
    assert any(c.startswith("rose add ") for c in _commands(_section("Quickstart")))


@pytest.mark.graph
def test_the_report_names_no_placeholder_repository(store, monkeypatch: pytest.MonkeyPatch):
    res = CliRunner().invoke(app, ["report", "--about", "x"])
    assert res.exit_code == 0, res.output
    assert "<owner>/<repo>" not in res.output and "gh issue create --repo" not in res.output
    assert "ROSE_ISSUES_REPO" in res.output and "Nothing was sent" in res.output
    monkeypatch.setenv("ROSE_ISSUES_REPO", "someone/rose")
    res = CliRunner().invoke(app, ["report", "--about", "x"])
    assert res.output.splitlines()[-1].strip().startswith("gh issue create --repo someone/rose ")
