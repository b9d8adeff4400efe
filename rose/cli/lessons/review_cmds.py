"""Review commands: review, accept, reject (lessons from outside content)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    app.command("review")(review)
    app.command("accept")(accept)
    app.command("reject")(reject)


def review() -> None:
    """What waits for you: lessons held from recall, and lessons from outside kept local.

    A lesson is held (stored, never served) when it carries instructions from outside
    content: the reflector said so, or it repeats word for word what a session fetched (a
    web page, another server's MCP tool, a file beyond the repository). A lesson from
    outside content with no instruction is served, in this project's store only, until you
    accept it. `rose accept ID` or `rose reject ID` settles each.
    """
    from rose.loop.reflection.review import waiting
    from rose.store.facade import Store

    rows = waiting(Store.open())
    if not rows:
        typer.echo("nothing waits for review")
        return
    held = [w for w in rows if w.is_held]
    kept = [w for w in rows if not w.is_held]
    if held:
        typer.echo(f"held, never served until you accept them ({len(held)}):")
        for w in held:
            typer.echo(f"  {w.id}  {w.title}\n      why: {w.held}\n      file: {w.path}")
    if kept:
        typer.echo(f"from outside content, served in this project only ({len(kept)}):")
        for w in kept:
            typer.echo(f"  {w.id}  {w.title}\n      file: {w.path}")
    typer.echo("`rose accept ID` or `rose reject ID` settles each")


def accept(
    lesson_id: str = typer.Argument(..., metavar="ID", help="The lesson (a unique prefix)."),
) -> None:
    """Accept a lesson from review: served from now on, and filed where its scope belongs.

    It is reconciled with what is known now (when the model is away, a job does it later),
    and its scope judged: a lesson true anywhere may go to the global store. It asks you to
    confirm, in a terminal: an agent's command, with none, is refused.
    """
    from rose.jobs.capture import settle_accepted
    from rose.loop.reflection.review import accept as take
    from rose.store.facade import Store

    store = Store.open()
    node = store.get(lesson_id)
    if not at_a_terminal():
        typer.echo(
            f"rose: accepting a lesson held from recall is yours to do, in a terminal: run "
            f"`rose accept {node.id}` there (an agent's command has none)",
            err=True,
        )
        raise typer.Exit(1)
    if not typer.confirm(f"serve {node.id} ({node.title}) from now on?", default=False):
        raise typer.Exit(1)
    node = take(store, node.id)
    typer.echo(f"accepted {node.id}  {node.title}; {settle_accepted(store)}")


def at_a_terminal() -> bool:
    """Whether a person is at the keyboard: a held lesson came from a stranger's text, which
    may well tell the agent to run `rose accept`; an agent's commands have no terminal."""
    import sys

    return sys.stdin.isatty()


def reject(
    lesson_id: str = typer.Argument(..., metavar="ID", help="The lesson (a unique prefix)."),
) -> None:
    """Reject a lesson from review: archived, on disk and in `rose tree`, never served."""
    from rose.loop.reflection.review import reject as drop
    from rose.store.facade import Store

    node = drop(Store.open(), lesson_id)
    typer.echo(f"rejected {node.id}  {node.title}; archived, recall never serves it")
