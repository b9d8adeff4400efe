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


# One module per command group, each with register(app); listed in `rose --help` order.
_GROUPS = (
    "demo_cmds",
    "store_cmds",
    "jobs_cmds",
    "lesson_cmds",
    "view_cmds",
    "search_cmds",
    "import_cmds",
    "review_cmds",
    "compact_cmds",
    "merge_cmds",
    "conflict_cmds",
    "route_cmds",
    "episode_cmds",
    "query_cmds",
    "config_cmds",
    "install_cmds",
    "mcp_cmds",
    "recall_cmds",
    "report_cmds",
    "digest_cmds",
)


def _register() -> None:
    import importlib

    for name in _GROUPS:
        importlib.import_module(f"rose.cli.{name}").register(app)


_register()


def main() -> None:
    sys.exit(app())
