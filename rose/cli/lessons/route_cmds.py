"""Selection rules: route (list, teach one by hand, forget one)."""

from __future__ import annotations

import typer

from rose.cli._out import emit_json


def register(app: typer.Typer) -> None:
    app.command("route")(route)


def route(
    when: str = typer.Option("", "--when", help="The kind of task the rule applies to."),
    then: str = typer.Option("", "--then", help="Where to look for it, or what to skip."),
    forget: str = typer.Option("", "--forget", metavar="ID", help="Delete the rule ID."),
    as_json: bool = typer.Option(False, "--json", help="Print the rules as JSON."),
) -> None:
    """The selection rules, each with its record, and the growth ratio of rules to lessons.

    A rule is knowledge about where the knowledge was, for recall's selection questions:
    `--when "the task runs the integration tests" --then "read the testing lessons"`
    teaches one, after a model judges its form (a rule naming no kind of task, or a
    verdict on one lesson, is refused with the reason) and settles it against any rule in
    use that says the opposite for the same kind of task (yours wins). `--forget ID`
    deletes one. A rule's record counts its misses: lessons work needed that it turned
    away. A rule retired for its misses, or for a rule that replaced it, is listed last
    with the reason; it is never given to selection again.
    """
    from rose.errors import RoseError
    from rose.loop.selection import route as routing
    from rose.store.facade import Store

    store = Store.open()
    if forget:
        routing.forget(store, forget)
        typer.echo(f"forgot {forget}")
        return
    if when or then:
        if not (when and then):
            raise RoseError("teach a rule with both --when and --then")
        rule = routing.teach(store, when, then)
        typer.echo(f"stored {rule.id}: {rule.text()}")
        return
    rules, problems = store.rules()
    rec = routing.records(store)
    if as_json:
        emit_json(
            [
                {**r.model_dump(mode="json"), "record": vars(rec.get(r.id, routing.Record()))}
                for r in rules
            ]
        )
        return
    given = {r.id for r in routing.for_selection(store)}
    for r in sorted(rules, key=lambda r: bool(r.retired)):  # in use first, as they were
        x = rec.get(r.id, routing.Record())
        mark = (
            f"  (retired: {r.retired})"
            if r.retired
            else ""
            if r.id in given
            else "  (over routing.max_tokens: left out)"
        )
        typer.echo(f"{r.id}  {r.text()}{mark}")
        missed = f", {x.misses} miss{'es' if x.misses != 1 else ''}"
        typer.echo(
            f"  {r.origin}; {x.selections} selection(s), {x.used} of {x.served} served used{missed}"
        )
    for p in problems:
        typer.echo(f"unreadable: {p.path}: {p.reason}", err=True)
    typer.echo(routing.ratio_line(store))
