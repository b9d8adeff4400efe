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
    retry: bool = typer.Option(
        False, "--retry", help="Run failed jobs again with the input they kept (or only JOB)."
    ),
    run: bool = typer.Option(
        False, "--run", help="Run the waiting jobs now, in this terminal, and say how each ended."
    ),
    job_id: str = typer.Argument(
        "", metavar="[JOB]", help="With --retry: the failed job (its id, or a prefix of it)."
    ),
) -> None:
    """Detached jobs, newest first: queued, deferred, running, failed, and those done in the
    last day, each waiting or failed one with its reason.

    Hooks hand slow work to jobs that run beside the agent, at most `jobs.max_concurrent` at
    once per store; past `jobs.queue_max` waiting, a job is deferred (kept, run when there
    is room). A job whose model did not answer waits for the runner the next hook starts;
    `--run` runs every waiting job now (after `rose doctor` shows the model back, say). A
    failed job keeps its payload and log in .rose/jobs/ (its id names the files): `--retry`
    runs it again, or delete them there to forget it. Finished jobs are pruned after
    `jobs.keep_days`.
    """
    from rose.jobs.queue import jobs as ledger
    from rose.jobs.queue import retry as run_again
    from rose.store.facade import Store

    if job_id and not retry:
        raise typer.BadParameter("a job is named only with --retry", param_hint="JOB")
    if run:
        _run_waiting(Store.open().primary)
        return
    if retry:
        again = run_again(Store.open().primary, job_id)
        if not again:
            which = f"no failed job {job_id!r}" if job_id else "no failed job"
            typer.echo(f"{which} to run again (`rose jobs` lists them)")
            raise typer.Exit(1)
        typer.echo(f"queued again: {', '.join(again)}")
        return
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


def _run_waiting(store_dir) -> None:
    """Run what waits in this process, jobs those queue included, then one line a job."""
    from rose.jobs.queue import held, run_here
    from rose.jobs.queue import jobs as ledger

    waiting = [r["id"] for r in ledger(store_dir) if r.get("state") in ("queued", "deferred")]
    if not waiting:
        typer.echo("no job waits (`rose jobs` lists them)")
        return
    typer.echo(f"running {len(waiting)} waiting job{'s' if len(waiting) != 1 else ''}…")
    with held():  # what they queue runs here too, not in a runner beside this one
        ran = run_here(store_dir)
    if not ran:
        typer.echo("every job slot is taken: a runner is at work (`rose jobs` shows it)")
        raise typer.Exit(1)
    done = {r["id"]: r for r in ledger(store_dir, everything=True)}
    failed = 0
    for job in waiting:
        rec = done.get(job, {})
        state = rec.get("state", "gone")
        failed += state == "failed"
        reason = f": {rec['reason']}" if rec.get("reason") else ""
        typer.echo(f"{job} {rec.get('kind', '')} {state}{reason}")
    if ran > len(waiting):
        typer.echo(f"and {ran - len(waiting)} more they queued")
    if failed:
        raise typer.Exit(1)


def _shown(column: str, value: object) -> object:
    if column == "submitted" and isinstance(value, str):
        return value[:19].replace("T", " ")  # UTC, to the second
    if column == "seconds" and isinstance(value, float):
        return f"{value:.1f}"
    return value
