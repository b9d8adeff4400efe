"""A store made through the CLI, for tests that drive `rose` commands on it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from typer.testing import CliRunner

from rose.cli import app


def cli_with(lesson: str) -> Callable[..., Any]:
    """`rose` on a store just made in the working directory, holding one lesson `lesson`:
    call it with a command's arguments (and `input=` for the console)."""
    runner = CliRunner()

    def invoke(*args: str, input: str | None = None) -> Any:
        return runner.invoke(app, list(args), input=input)

    assert invoke("init").exit_code == 0
    assert invoke("add", lesson).exit_code == 0
    return invoke
