"""Contradictions: conflicts, resolve."""

from __future__ import annotations

import typer

from rose.cli._out import emit_json


def register(app: typer.Typer) -> None:
    app.command("conflicts")(conflicts)
    app.command("resolve")(resolve)


def conflicts(
    as_json: bool = typer.Option(False, "--json", help="Print them as JSON."),
) -> None:
    """Unresolved contradictions: each disputed lesson, what it disputes, and the question.

    Both sides of a contradiction stay servable, the question shown with them, until
    `rose resolve` settles it.
    """
    from rose.loop.reflection.disputes import conflicts as listed
    from rose.store.facade import Store

    rows = listed(Store.open())
    if as_json:
        emit_json(rows)
        return
    if not rows:
        typer.echo("no unresolved contradictions")
        return
    for r in rows:
        typer.echo(f"{r['id']}  {r['title']}  ({r['scope']})")
        for other in r["against"]:
            typer.echo(f"  disputes {other['id']}  {other['title']}")
        if r["question"]:
            typer.echo(f"  Unresolved: {r['question']}")


def resolve(
    lesson_id: str = typer.Argument(..., metavar="ID", help="A disputed lesson (a unique prefix)."),
    drop: bool = typer.Option(
        False, "--drop", help="ID is the wrong one: supersede it and keep what it disputes."
    ),
) -> None:
    """Settle a contradiction: ID holds, and the lessons it disputes are superseded.

    With --drop it is the other way round. The dispute goes from both sides; superseded
    lessons leave recall and stay on disk.
    """
    from rose.loop.reflection.disputes import resolve as settle
    from rose.store.facade import Store

    done = settle(Store.open(), lesson_id, drop=drop)
    typer.echo(f"kept {', '.join(done.kept)}; superseded {', '.join(done.superseded)}")
