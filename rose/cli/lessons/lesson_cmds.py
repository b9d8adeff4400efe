"""Lesson commands: add, tree, archive."""

from __future__ import annotations

import sys

import typer


def register(app: typer.Typer) -> None:
    app.command("add")(add)
    app.command("tree")(tree)
    app.command("archive")(archive)


_LATER = {
    "queued": "; a job reconciles it later",
    "duplicate": "; a job reconciles it later",
    "dropped": "; the job queue is full: the next lesson stored queues it",
}


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
        None,
        help="project: this repository's store; global: ~/.rose, for every repo. "
        "Default: the model decides (project with --no-reconcile).",
        show_default=False,
    ),
    no_reconcile: bool = typer.Option(
        False, "--no-reconcile", help="Store it as it is, without comparing it to known lessons."
    ),
    source: str = typer.Option(
        "user",
        "--source",
        help="Who is teaching it: user, or reflector (an agent reflecting on its session).",
    ),
    provenance: str = typer.Option(
        None,
        "--from",
        help="Where its content came from: user (your own words; the default), repository "
        "(this repository and the work in it) or outside (a fetched page, a document or tool "
        "result from elsewhere: kept in this project's store until you `rose accept` it). "
        "Required with --source reflector.",
        show_default=False,
    ),
    session: str = typer.Option(
        None,
        "--session",
        "-s",
        help="The session it was learnt in: noted in that session's log, so its reflection "
        "counts as having found something.",
    ),
) -> None:
    """Teach ROSE a lesson, reconciled with what it knows before it is stored.

    The model decides its scope (unless --scope says) and how it relates to the lessons on
    its subject: a duplicate is not stored, a refinement is folded into the lesson it
    refines (or kept as a lesson of its own when it brings a subject that lesson's title
    and gist do not name), a contradiction keeps both and asks you (`rose conflicts`). When
    the model is unavailable the lesson is stored as it is, and a job reconciles it later;
    so too when another rose process holds the store's database for more than a few
    seconds ("stored; reconciliation deferred"): what you type is on disk first. A
    store is created where the lesson belongs if there is none yet (outside a repository,
    the global store only once you confirm it, or say --scope global). A reflector's lesson
    that repeats outside content its session read waits for your review (`rose review`).
    """
    from rose.jobs.capture import add as teach

    if scope not in (None, "project", "global"):
        raise typer.BadParameter("must be project or global", param_hint="--scope")
    if source not in ("user", "reflector"):
        raise typer.BadParameter("must be user or reflector", param_hint="--source")
    if provenance not in (None, "user", "repository", "outside"):
        raise typer.BadParameter("must be user, repository or outside", param_hint="--from")
    if source == "reflector" and provenance is None:
        raise typer.BadParameter(
            "say where a reflector's lesson came from: user, repository or outside",
            param_hint="--from",
        )
    _may_create_global(scope, reads_stdin=body == "-")
    text = sys.stdin.read() if body == "-" else body
    done = teach(
        text,
        title=title,
        family=family,
        scope=scope,
        reconcile=not no_reconcile,
        source=source,
        provenance=provenance or "",
        session=session,
    )
    later = _LATER.get(done.job, "") if done.relation == "unreconciled" else ""
    typer.echo(done.line() + later)
    why = done.store.too_big(done.lesson) if done.lesson is not None else ""
    if why:
        typer.echo(f"rose: warning: {why}", err=True)


def _interactive() -> bool:
    return sys.stdin.isatty()


def _may_create_global(scope: str | None, *, reads_stdin: bool) -> None:
    """Outside any repository with no store yet, the lesson would create the global store:
    asked first on a terminal; refused without one, naming the commands that would do it."""
    from rose.loop.reflection.consolidate import creates_global

    glob = creates_global(scope)
    if glob is None:
        return
    where = f"not in a git repository, and there is no ROSE store: the lesson would create {glob}"
    if not reads_stdin and _interactive():
        if typer.confirm(f"rose: {where}, the global store for every project. Create it?"):
            return
        typer.echo("rose: nothing added", err=True)
        raise typer.Exit(1)
    typer.echo(
        f"rose: {where}; nothing added. Create it with `rose init --scope global` (or add with "
        "`rose add --scope global ...`), or run `rose init` in your project's folder first",
        err=True,
    )
    raise typer.Exit(1)


def tree(
    family: str = typer.Option(
        None, "--family", "-f", help="Only this family (spelled as for `rose add`)."
    ),
    verbose: bool = typer.Option(
        False,
        "-v",
        "--verbose",
        help="Show each lesson's gist, its patches, and each dropped claim's rescues.",
    ),
    recent: bool = typer.Option(False, "--recent", help="Most recently changed first, with ages."),
    dot: bool = typer.Option(False, "--dot", help="Print Graphviz DOT instead of text."),
) -> None:
    """The lesson graph from its apexes down, with what each compression dropped."""
    from rose.inspect.tree import build, render_dot, render_text
    from rose.models import slug
    from rose.store.facade import Store

    family = slug(family) if family is not None else None
    store = Store.open()
    dag = build(store, family)
    if family is not None and not dag:
        known = sorted({str(r["family"]) for r in store.read("families")})
        typer.echo(
            f"rose: no family {family!r} in this store; the families are: "
            f"{', '.join(known) or 'none yet'}",
            err=True,
        )
        raise typer.Exit(1)
    if dot:
        typer.echo(render_dot(dag))
    elif not dag:
        typer.echo("no lessons yet")
    else:
        typer.echo(render_text(dag, verbose=verbose, recent=recent))


def archive(
    lesson_id: str = typer.Argument(..., metavar="ID", help="The lesson (a unique prefix)."),
) -> None:
    """Archive a lesson by hand: recall never serves it again.

    It stays on disk and in `rose tree`. The lessons it was derived from keep their status
    (served through it, they go with it). Edit its `status` back to serve it again; ROSE
    never archives a lesson itself.
    """
    from rose.loop.reflection.archive import archive as put_away
    from rose.store.facade import Store

    done = put_away(Store.open(), lesson_id)
    typer.echo(f"archived {done.id}  {done.title}  (was {done.was}); recall no longer serves it")
