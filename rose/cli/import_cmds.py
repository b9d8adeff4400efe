"""`rose import`: teach ROSE a file of notes, split into lessons by the model."""

from __future__ import annotations

from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    app.command("import")(import_file)


def import_file(
    path: str = typer.Argument(
        ..., metavar="FILE", help="The file: a CLAUDE.md, an AGENTS.md or any Markdown."
    ),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Print each lesson it would make, in full; store nothing."
    ),
    provenance: str = typer.Option(
        None,
        "--from",
        help="Where its content came from: user (your own words), repository (default for a "
        "file inside this repository) or outside (default for a file beyond it: its lessons "
        "stay in this project's store until you `rose accept` them).",
        show_default=False,
    ),
    scope: str = typer.Option(
        None,
        help="project or global, for every lesson. Default: the model decides each "
        "(project with --no-reconcile).",
        show_default=False,
    ),
    no_reconcile: bool = typer.Option(
        False, "--no-reconcile", help="Store each as it is, without comparing it to known lessons."
    ),
) -> None:
    """Teach ROSE a file of notes: the model splits it into lessons of one point each, in
    the file's own words where they are precise, and each is then taught as `rose add`
    teaches one (reconciled with what is known: a point already held is not stored again).

    A large file is cut at its headings, then its paragraphs, into parts the model reads one
    at a time. Nothing is stored until the whole file is split: if the model fails, the
    error names the file and nothing of it is kept.
    """
    from rose.jobs.importing import import_file as run

    if scope not in (None, "project", "global"):
        raise typer.BadParameter("must be project or global", param_hint="--scope")
    if provenance not in (None, "user", "repository", "outside"):
        raise typer.BadParameter("must be user, repository or outside", param_hint="--from")
    done = run(
        Path(path), provenance=provenance, scope=scope, reconcile=not no_reconcile, dry_run=dry_run
    )
    calls = f"{done.parts} call{'s' if done.parts != 1 else ''}"
    n = len(done.lessons)
    head = f"{path}: {n} lesson{'s' if n != 1 else ''} ({calls}; from {done.provenance})"
    if dry_run:
        typer.echo(f"{head}; a dry run: nothing stored")
        for k, lesson in enumerate(done.lessons, 1):
            typer.echo(f"\n--- lesson {k} of {n} · {lesson.family} · {lesson.title}")
            typer.echo(f"gist: {lesson.gist}\n\n{lesson.body}")
        return
    typer.echo(head)
    for d in done.done:
        typer.echo(d.line())
