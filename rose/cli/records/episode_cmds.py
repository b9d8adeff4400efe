"""What was observed: attribution during a session (`rose used`), its absorption, and the
counterfactual check of attribution (`rose attribute`)."""

from __future__ import annotations

from typing import Annotated, Literal

import typer

from rose.cli._out import emit_json


def register(app: typer.Typer) -> None:
    app.command("used")(used)
    app.command("absorb")(absorb)
    app.command("attribute")(attribute)


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
    failed: str = typer.Option(
        None,
        "--failed",
        metavar="TEXT",
        help="The work failed, and how (the errors, the symptoms): ROSE restores detail its"
        " compressed lessons left out, for the rest of the session.",
    ),
) -> None:
    """Report which served lessons actually bore on the work of a session.

    Appended to the session's scratch log and folded into the unit's episode when the
    session is absorbed. Be strict: a lesson on the topic, read and found irrelevant, or
    served and then contradicted was not used. A lesson served but unused scores neither
    success nor failure; this report outranks the digest judge's for the lessons it names.
    With --failed (alone or beside them), a detached job restores the detail that may
    explain the failure to the compressed lessons the work was served.
    """
    from rose.jobs.learning import report_failure
    from rose.store.facade import Store

    spans = [_span(v) for v in load_bearing or []]
    store = Store.open()
    said = bool(used_ids or unused_ids or spans)
    if said or not failed:
        turn = store.attribute(
            session, _ids(used_ids), _ids(unused_ids), load_bearing=spans, turn=turn, source=source
        )
        typer.echo(f"recorded for session {session}, prompt {turn}")
    if failed:
        turn = report_failure(store, session, failed, turn=turn)
        typer.echo(
            f"failure noted for session {session}, prompt {turn}: descent will restore detail"
        )


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


def attribute(
    run: bool = typer.Option(
        False, "--counterfactual", help="First check a sample of served lessons (model calls)."
    ),
    calls: int = typer.Option(
        None,
        "--calls",
        min=0,
        help="With --counterfactual: calls to spend (default attribute.counterfactual_calls).",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the checks and the summary as JSON."),
) -> None:
    """How often counterfactual checks agree with attribution; --counterfactual checks more.

    A check takes a lesson a recorded episode served and probes the episode's prompt in
    fresh processes, with everything the episode served and without that lesson; a judge
    says whether the approach changed because of it. Attribution agrees when a lesson it
    called used changed the approach, or one it called unused did not. A disagreement
    corrects the episode's record of the lesson to the check's verdict (a correction file
    beside the episode), so the lesson's successes and failures follow it. Pairs already
    checked or corrected are not redone; each probe and judgement counts against the
    budget. The session end queues a check as a job; `rose status` reports the agreement
    and the corrections too.
    """
    import dataclasses

    from rose.loop.reflection import counterfactual as stage
    from rose.store.facade import Store

    if calls is not None and not run:
        raise typer.BadParameter(
            "spends model calls only with --counterfactual", param_hint="--calls"
        )
    store = Store.open()
    checks: list[stage.Check] = []
    if run:
        from rose.judge.calls import for_store

        checks = stage.counterfactual(store, judge=for_store(store), calls=calls)
    summary = stage.agreement(store)
    if as_json:
        emit_json({"checks": [dataclasses.asdict(c) for c in checks], "summary": summary})
        return
    for c in checks:
        typer.echo(_check_line(c))
    if run and not checks:
        typer.echo("nothing checked: no pair is left, or the budget is too small")
    typer.echo(stage.text(summary))


def _check_line(c) -> str:
    head = f"{c.episode} {c.lesson}: "
    if c.error:
        return head + f"not checked: {c.error}"
    moved = "changed" if c.changed else "did not change"
    said = "used" if c.used else "unused"
    return (
        head
        + f"{moved} the approach; attribution said {said}, so it "
        + ("agrees" if c.agree else "disagrees")
        + ("; the record is corrected" if c.corrected else "")
    )
