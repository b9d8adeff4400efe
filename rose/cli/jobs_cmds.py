"""`rose jobs`: the detached jobs of this store, read from the ledger under .rose/jobs/."""

from __future__ import annotations

import typer

from rose.cli._out import emit_json, table

_COLUMNS = ("id", "kind", "state", "attempt", "submitted", "seconds", "exit_code", "reason")
_TAIL_SHOWN = 5


def register(app: typer.Typer) -> None:
    app.command("jobs")(jobs)


def jobs(
    everything: bool = typer.Option(
        False, "--all", help="Every job the ledger holds, old finished ones too."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the full records as JSON."),
) -> None:
    """Detached jobs, newest first: queued, running, failed, and those done in the last day.

    Hooks hand slow work to jobs that run beside the agent, at most `jobs.max_concurrent` at
    once per store. A failed job keeps its payload and log in .rose/jobs/ (its id names the
    files); delete them there to forget it. Finished jobs are pruned after `jobs.keep_days`.
    """
    from rose.host.jobs import jobs as ledger
    from rose.store.facade import Store

    records = ledger(Store.open().primary, everything=everything)
    if as_json:
        emit_json(records)
        return
    if not records:
        typer.echo("no jobs" if everything else "no recent jobs (`rose jobs --all` lists all)")
        return
    rows = [{c: _shown(c, r.get(c)) for c in _COLUMNS} for r in records]
    typer.echo(table(rows))
    for rec in records:
        if rec.get("state") == "failed" and rec.get("tail"):
            typer.echo(f"\n{rec['id']} failed: {rec.get('reason')}")
            typer.echo("\n".join(f"  | {line}" for line in rec["tail"][-_TAIL_SHOWN:]))


def _shown(column: str, value: object) -> object:
    if column == "submitted" and isinstance(value, str):
        return value[:19].replace("T", " ")  # UTC, to the second
    if column == "seconds" and isinstance(value, float):
        return f"{value:.1f}"
    return value
