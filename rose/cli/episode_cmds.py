"""What was observed: attribution during a session (`rose used`) and its absorption."""

from __future__ import annotations

from typing import Annotated, Literal

import typer

from rose.cli._out import emit_json


def register(app: typer.Typer) -> None:
    app.command("used")(used)
    app.command("absorb")(absorb)


def _ids(value: str | None) -> list[str]:
    return [v for v in (value or "").replace(",", " ").split() if v]


def used(
    session: str = typer.Option(..., "--session", "-s", help="The session the work is in."),
    used_ids: str = typer.Option(
        None, "--used", help="Lessons that bore on the work (ids, comma- or space-separated)."
    ),
    unused_ids: str = typer.Option(
        None, "--unused", help="Lessons that were served but did not bear on the work."
    ),
    load_bearing: Annotated[
        list[str] | None,
        typer.Option(
            "--load-bearing",
            metavar="ID=TEXT",
            help="A sentence of a lesson that did work (repeatable); that lesson was used.",
        ),
    ] = None,
    turn: int = typer.Option(
        None, "--turn", min=1, help="The prompt (unit of work) this is about; default: the latest."
    ),
    source: Literal["rose used", "reflector"] = typer.Option(
        "rose used", "--source", help="Who is reporting: the agent in the session, or a fork."
    ),
) -> None:
    """Report which served lessons actually bore on the work of a session.

    Appended to the session's scratch log and folded into the unit's episode when the
    session is absorbed. Be strict: a lesson on the topic, read and found irrelevant, or
    served and then contradicted was not used. A lesson served but unused scores neither
    success nor failure; this report outranks the digest judge's for the lessons it names.
    """
    from rose.store.facade import Store

    spans = [_span(v) for v in load_bearing or []]
    n = Store.open().attribute(
        session, _ids(used_ids), _ids(unused_ids), load_bearing=spans, turn=turn, source=source
    )
    typer.echo(f"recorded for session {session}, prompt {n}")


def _span(value: str) -> tuple[str, str]:
    lesson, sep, text = value.partition("=")
    if not sep or not lesson.strip() or not text.strip():
        raise typer.BadParameter(f"{value!r} is not ID=TEXT", param_hint="--load-bearing")
    return lesson.strip(), text.strip()


def absorb(
    session: str = typer.Option(..., "--session", "-s", help="The session to absorb."),
    final: bool = typer.Option(
        False, "--final", help="The session has ended: absorb its last unit of work too."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the episodes written as JSON."),
) -> None:
    """Write a session's complete units of work as episodes (each once; hooks do this)."""
    from rose.store.facade import Store

    written = Store.open().absorb(session, final=final)
    if as_json:
        emit_json([e.model_dump(mode="json") for e in written])
    else:
        typer.echo(f"{len(written)} episode{'s' if len(written) != 1 else ''} written")
