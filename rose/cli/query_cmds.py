"""`rose query`: run Cypher against the lesson graph, once or in a console."""

from __future__ import annotations

import contextlib
from types import ModuleType

import typer

from rose.cli._out import emit_json, table


def register(app: typer.Typer) -> None:
    app.command("query")(query)


def query(
    cypher: str = typer.Argument(None, help="One Cypher statement; omit for a console."),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON array, one object a row."),
    write: bool = typer.Option(False, "--write", help="Allow statements that change the graph."),
) -> None:
    """Query the lesson graph with Cypher (read-only unless --write).

    The schema is in the README. Changes made with --write last until the next
    reindex: the lesson files are the record.
    """
    from rose.store.facade import Store

    store = Store.open()
    if cypher:
        _show(store.query(cypher, write=write), as_json)
        return
    _console(store, as_json, write)


def _show(rows: list[dict], as_json: bool) -> None:
    if as_json:
        emit_json(rows)
    else:
        typer.echo(table(rows))


def _console(store, as_json: bool, write: bool) -> None:
    """Read statements until EOF; the database is opened per statement, never while waiting."""
    from rose.errors import RoseError

    readline: ModuleType | None
    try:
        import readline
    except ImportError:  # pragma: no cover - not every platform has it
        readline = None
    history = store.primary.root / "query-history"
    if readline is not None:
        with contextlib.suppress(OSError):
            readline.read_history_file(history)
    typer.echo("Cypher console: one statement a line, end with ';' to run. Ctrl-D quits.")
    buf: list[str] = []
    while True:
        try:
            line = input("... " if buf else "rose> ")
        except EOFError:
            typer.echo()
            break
        buf.append(line)
        stmt = " ".join(buf).strip()
        if not stmt.endswith(";") and line.strip():
            continue
        buf = []
        if not stmt.rstrip(";").strip():
            continue
        try:
            _show(store.query(stmt, write=write), as_json)
        except RoseError as exc:
            typer.echo(f"error: {exc}", err=True)
    if readline is not None:
        with contextlib.suppress(OSError):
            readline.write_history_file(history)
