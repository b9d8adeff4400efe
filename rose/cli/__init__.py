"""The `rose` command: one module per command group, each a thin call into the library."""

from __future__ import annotations

import sys
from typing import Any

import typer
from typer.core import TyperGroup

from rose.errors import RoseError


class _RoseGroup(TyperGroup):
    """Turns a RoseError into one line on stderr and exit code 1, never a traceback."""

    def invoke(self, ctx: Any):  # a click Context: typer vendors click in some releases
        try:
            return super().invoke(ctx)
        except RoseError as exc:
            typer.echo(f"rose: {exc}", err=True)
            ctx.exit(1)


app = typer.Typer(
    cls=_RoseGroup,
    help="ROSE: a memory for coding agents whose lessons compress as they prove useful.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Plain help, as docs/cli.md shows it: typer's rich panels label every flag `<bool>`.
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _print_version(wanted: bool) -> None:
    if wanted:
        import rose

        typer.echo(f"rose {rose.__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False,
        "--version",
        callback=_print_version,
        is_eager=True,
        expose_value=False,
        help="Print the version and exit.",
    ),
) -> None:
    """ROSE: a memory for coding agents whose lessons compress as they prove useful."""


# One module per command group, each with register(app); listed in `rose --help` order
# (under `lessons/` the commands over lessons, under `records/` those over what happened).
_GROUPS = (
    "demo_cmds",
    "store_cmds",
    "jobs_cmds",
    "lessons.lesson_cmds",
    "lessons.view_cmds",
    "lessons.search_cmds",
    "import_cmds",
    "lessons.review_cmds",
    "lessons.compact_cmds",
    "lessons.merge_cmds",
    "lessons.conflict_cmds",
    "lessons.route_cmds",
    "records.episode_cmds",
    "records.query_cmds",
    "config_cmds",
    "install_cmds",
    "mcp_cmds",
    "records.recall_cmds",
    "records.report_cmds",
    "records.digest_cmds",
)


def _register() -> None:
    import importlib

    for name in _GROUPS:
        importlib.import_module(f"rose.cli.{name}").register(app)


_register()


def main() -> None:
    sys.exit(app())
