"""Merge commands: merge."""

from __future__ import annotations

import dataclasses

import typer

from rose.cli._out import emit_json, print_attempts


def register(app: typer.Typer) -> None:
    app.command("merge")(merge)


def merge(
    list_all: bool = typer.Option(
        False,
        "--list",
        help="List the groups of lessons served together and why each is or is not due; "
        "merge nothing.",
    ),
    limit: int = typer.Option(None, "--limit", min=1, help="Merge at most this many groups."),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Make and replay the parents, but write nothing."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Give lessons served together a shared parent: each parent must pass replay.

    A group of 2 to merge.max_children apexes of one family (merge.within) is due when they
    were served together on at least merge.min_co_uses successful episodes that used one
    of them (merge.together: served; used: episodes that used every one), share no merge
    parent (a demoted one aside), were seen together again since their last attempt, and
    one has recorded episodes to replay (a member with none keeps its every claim). The
    parent must be smaller than its children as served (merge.budget), name for
    every claim it leaves out the child that holds it, and pass replay over the union of
    their regression sets; a share is held out and checked after acceptance, and a parent
    a held-out replay fails is demoted at once, its children serving again.
    """
    from rose.judge.calls import for_store
    from rose.loop.abstraction import merge as stage
    from rose.store.facade import Store

    store = Store.open()
    if list_all:
        rows = stage.candidates(store)
        if as_json:
            emit_json([dataclasses.asdict(r) for r in rows])
            return
        for r in rows:
            verdict = "due" if r.due else f"not due: {r.reason}"
            uses = f"{r.co_uses} co-use{'s' if r.co_uses != 1 else ''}"
            eps = f"{r.episodes} episode{'s' if r.episodes != 1 else ''}"
            typer.echo(f"{' + '.join(r.members)}  ({uses}, {eps})  {verdict}")
        if not rows:
            typer.echo("no lessons have been served together on work that succeeded")
        return
    attempts = stage.merge_due(store, judge=for_store(store), limit=limit, dry_run=dry_run)
    print_attempts(
        attempts,
        as_json=as_json,
        head=lambda a: " + ".join(a.group),
        nothing="nothing is due (`rose merge --list` says why)",
    )
