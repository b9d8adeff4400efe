"""`rose search`: find lessons by their words."""

from __future__ import annotations

import typer

from rose.cli._out import emit_json

#: The words argument, spelled once at module level (ruff B008 refuses a call in a default).
_WORDS = typer.Argument(..., help="The words to look for.")


def register(app: typer.Typer) -> None:
    app.command("search")(search)


def search(
    words: list[str] = _WORDS,
    limit: int = typer.Option(20, "--limit", "-n", min=1, help="Show at most this many."),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON array, one object a hit."),
) -> None:
    """Find lessons by their words, in every scope: one line each (short id, scope, family,
    title, and the text around the first match).

    Ranked by how often the words occur, a hit in the title weighing most, then the gist,
    then the body; a word also finds the words it begins. Lessons recall may serve come
    first, then the rest with their status said (superseded, archived, held for review).
    A search for people: recall never ranks lessons by their words, the model chooses them.
    """
    from rose.store.facade import Store
    from rose.store.search import report
    from rose.store.search import search as find

    query = " ".join(words)
    hits = find(Store.open(), query, limit=limit)
    if as_json:
        emit_json([h.as_json() for h in hits])
    else:
        typer.echo(report(hits, query))
