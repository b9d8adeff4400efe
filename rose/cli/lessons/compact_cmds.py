"""Compression commands: compact, repair."""

from __future__ import annotations

import dataclasses

import typer

from rose.cli._out import emit_json, print_attempts


def register(app: typer.Typer) -> None:
    app.command("compact")(compact)
    app.command("repair")(repair)


def compact(
    list_all: bool = typer.Option(
        False, "--list", help="List every apex and why it is or is not due; compress nothing."
    ),
    due: bool = typer.Option(False, "--due", help="List only the apexes due; compress nothing."),
    node: str = typer.Option(None, "--node", help="Compress this lesson only (it must be due)."),
    limit: int = typer.Option(None, "--limit", min=1, help="Compress at most this many."),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Make and replay the candidates, but write nothing."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Compress the lessons that have earned it: each candidate must pass replay.

    A lesson is due when it is an active apex below compress.max_level, with at least
    compress.min_successes attributed successes, a new one since its last attempt, and
    recorded episodes to replay. The candidate must declare what it dropped, be at most
    compress.ratio of the original, and pass replay of every sampled episode; a share is
    held out and checked after acceptance (`rose status` reports the pass rate), and a
    compression a held-out replay fails is demoted at once, its original serving again.
    """
    from rose.judge.calls import for_store
    from rose.loop.abstraction import compress as stage
    from rose.store.facade import Store

    store = Store.open()
    if list_all or due:
        rows = [r for r in stage.eligible(store) if r.eligible or not due]
        if as_json:
            emit_json([dataclasses.asdict(r) for r in rows])
            return
        for r in rows:
            verdict = "due" if r.eligible else f"not due: {r.reason}"
            typer.echo(f"L{r.level} {r.id}  {r.title}  ({r.successes} successes, "
                       f"{r.episodes} episodes)  {verdict}")  # fmt: skip
        if not rows:
            typer.echo("nothing is due" if due else "no apex in the store")
        return
    judge = for_store(store)
    if node:
        attempts = [stage.compress(store, node, judge=judge, dry_run=dry_run)]
    else:
        attempts = stage.compress_due(store, judge=judge, limit=limit, dry_run=dry_run)
    print_attempts(
        attempts,
        as_json=as_json,
        head=lambda a: a.node,
        nothing="nothing is due (`rose compact --list` says why)",
    )


def repair(
    dry_run: bool = typer.Option(False, "--dry-run", help="Say what is due; change nothing."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Fold back into its lesson each dropped claim that keeps rescuing it.

    A claim is due when it rescued an apex compress.repair_after times (failures it turned,
    successful uses it was served on as the apex's patch). It is appended to the lesson's
    body and leaves its manifest and its patches. The learning jobs do this at each
    session's end, for the lessons its episodes name; this runs it over every apex.
    """
    from rose.loop.abstraction import repair as stage
    from rose.store.facade import Store

    done = stage.repair(Store.open(), dry_run=dry_run)
    if as_json:
        emit_json([dataclasses.asdict(r) for r in done])
        return
    verb = "due" if dry_run else "folded back"
    for r in done:
        where = "a patch" if not r.owner else f"dropped by {r.owner}, held by {r.holder}"
        typer.echo(f"{r.lesson}: {verb} ({r.rescues} rescues; {where}): {r.text}")
    if not done:
        typer.echo("nothing to repair: no dropped claim has rescued a lesson often enough")
