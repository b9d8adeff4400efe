"""Lesson commands: add, tree."""

from __future__ import annotations

import sys

import typer


def register(app: typer.Typer) -> None:
    app.command("add")(add)
    app.command("tree")(tree)


def add(
    body: str = typer.Argument(..., help="The lesson text, or '-' to read it from stdin."),
    title: str = typer.Option(None, "--title", "-t", help="Title (default: its first line)."),
    family: str = typer.Option(
        None,
        "--family",
        "-f",
        help="Family (folder) to file it under; normalised: 'My Family' is my-family.",
    ),
    scope: str = typer.Option(
        "project", help="project: this repository's store; global: ~/.rose, for every repo."
    ),
    no_reconcile: bool = typer.Option(
        False,
        "--no-reconcile",
        help="(not built yet) Accepted and ignored: no lesson is compared to known ones yet.",
    ),
) -> None:
    """Teach ROSE a lesson: stored at once, verbatim, as a level-0 lesson.

    It is not compared with the lessons already known: reconciling is not built yet.
    """
    from rose.store.facade import Store

    if scope not in ("project", "global"):
        raise typer.BadParameter("must be project or global", param_hint="--scope")
    text = sys.stdin.read() if body == "-" else body
    store = Store.open()
    node = store.add(text, title=title, family=family, scope=scope)
    typer.echo(f"added {node.id} · {node.family} · {node.title}")
    why = store.too_big(node)
    if why:
        typer.echo(f"rose: warning: {why}", err=True)


def tree(
    family: str = typer.Option(
        None, "--family", "-f", help="Only this family (spelled as for `rose add`)."
    ),
    verbose: bool = typer.Option(False, "-v", "--verbose", help="Show each lesson's gist."),
    recent: bool = typer.Option(False, "--recent", help="Most recently changed first, with ages."),
    dot: bool = typer.Option(False, "--dot", help="Print Graphviz DOT instead of text."),
) -> None:
    """The lesson graph from its apexes down, with what each compression dropped."""
    from rose.inspect.tree import build, render_dot, render_text
    from rose.models import slug
    from rose.store.facade import Store

    family = slug(family) if family is not None else None
    dag = build(Store.open(), family)
    if dot:
        typer.echo(render_dot(dag))
    elif not dag:
        typer.echo("no lessons yet" + (f" in family {family}" if family else ""))
    else:
        typer.echo(render_text(dag, verbose=verbose, recent=recent))
