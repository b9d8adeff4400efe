"""`rose query`: run Cypher against the lesson graph, once or in a console."""

from __future__ import annotations

import contextlib
from pathlib import Path
from types import ModuleType

import typer

from rose.cli._out import emit_json, table

#: How many statements the console's history file keeps.
HISTORY_SIZE = 500


def register(app: typer.Typer) -> None:
    app.command("query")(query)


def query(
    cypher: str = typer.Argument(
        None, help="Cypher: one statement, or several separated by ';'. Omit for a console."
    ),
    as_json: bool = typer.Option(
        False,
        "--json",
        help="Print a JSON array, one object a row (several statements: one array each).",
    ),
    write: bool = typer.Option(
        False,
        "--write",
        help="Allow statements that change the graph or reach outside it: files read or "
        "written, extensions installed, other databases attached.",
    ),
) -> None:
    """Query the lesson graph with Cypher (read-only unless --write).

    The schema is in the README (in the console, `help` prints it; `exit` or `quit` ends
    it). Without --write a statement may only read the graph: it
    begins with MATCH, OPTIONAL MATCH, UNWIND, WITH, RETURN or CALL (of show_tables,
    table_info and the like), and one that reads a file (LOAD FROM), writes anywhere,
    loads an extension or attaches a database is refused before any runs; a clause's
    keyword used as a name goes in backquotes. Rows are printed redacted. Changes made
    with --write last until the next reindex: the lesson files are the record.
    """
    from rose.store.facade import Store

    store = Store.open()
    if cypher:
        _show(store.query(cypher, write=write), as_json)
        return
    _console(store, as_json, write)


def _show(results: list[list[dict]], as_json: bool) -> None:
    if as_json:
        emit_json(results[0] if len(results) == 1 else results)
    else:
        typer.echo("\n\n".join(table(rows) for rows in results) if results else table([]))


_HELP_TAIL = (
    "Times are ISO-8601 strings; a variable-length path needs an upper bound of at most 30.\n"
    "What each column holds, and examples: README.md, 'Graph schema'."
)


def _help() -> str:
    from rose.queries.named import schema_text

    return f"{schema_text()}\n{_HELP_TAIL}"


def _console(store, as_json: bool, write: bool) -> None:
    """Read statements until EOF; the database is opened per statement, never while waiting."""
    from rose.errors import RoseError

    readline: ModuleType | None
    try:
        import readline
    except ImportError:  # pragma: no cover - not every platform has it
        readline = None
    path = store.primary.root / "query-history"
    history = _read_history(path)
    if readline is not None:
        for stmt in history:
            readline.add_history(stmt)
    typer.echo(
        "Cypher console: one statement a line, end with ';' to run. "
        "`help` shows the schema; `exit`, `quit` or Ctrl-D quits."
    )
    buf: list[str] = []
    while True:
        try:
            line = input("... " if buf else "rose> ")
        except EOFError:
            typer.echo()
            break
        word = line.strip().rstrip(";").strip().lower()
        if not buf and word in ("exit", "quit"):
            break
        if not buf and word == "help":
            typer.echo(_help())
            continue
        buf.append(line)
        stmt = " ".join(buf).strip()
        if not stmt.endswith(";") and line.strip():
            continue
        buf = []
        if not stmt.rstrip(";").strip():
            continue
        history.append(stmt)
        try:
            _show(store.query(stmt, write=write), as_json)
        except RoseError as exc:
            typer.echo(f"error: {exc}", err=True)
    _write_history(path, history)


def _read_history(path: Path) -> list[str]:
    try:
        return [ln for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]
    except (OSError, UnicodeDecodeError):
        return []


def _write_history(path: Path, history: list[str]) -> None:
    """One statement a line, redacted like everything ROSE writes (never readline's own file)."""
    from rose.disk.atomic import write_text

    with contextlib.suppress(OSError):
        write_text(path, "".join(s + "\n" for s in history[-HISTORY_SIZE:]), durable=False)
