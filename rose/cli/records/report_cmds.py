"""`rose report`: write and print a redacted defect report; filing it is left to the user."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    app.command("report")(report)


def report(
    about: str = typer.Option(..., "--about", help="What went wrong, in your own words."),
    expected: str = typer.Option("", "--expected", help="What you expected instead."),
    days: int = typer.Option(7, "--days", min=1, help="How many days of the event log to count."),
) -> None:
    """Write and print a redacted defect report; no lessons or paths, nothing sent.

    It holds versions, the platform, the graph engine, backend names, settings that differ
    from the defaults, counts and per-stage timings from the event log, and your own words.
    Saved under .rose/reports/ and printed. With ROSE_ISSUES_REPO=<owner>/<repo> set, the
    last line is the `gh issue create` command that would file it there, for you to read and
    run yourself.
    """
    from rose.inspect.report import report as build
    from rose.inspect.report import shown

    rep = build(about, expected, days=days)
    typer.echo(rep.text)
    if rep.path is None:
        typer.echo("(no ROSE store here, so the report was not saved: copy it from above)")
    else:
        typer.echo(f"saved to {shown(rep.path)}")
    command = rep.file_command()
    if command is None:
        typer.echo(
            "Nothing was sent. To file it, review it and open an issue with it where ROSE's "
            "issues go (set ROSE_ISSUES_REPO to that GitHub repository, as owner/name, for "
            "the `gh issue create` command that does)."
        )
    else:
        typer.echo("Nothing was sent. To file it as a GitHub issue, review it, then run:")
        typer.echo(f"  {command}")
