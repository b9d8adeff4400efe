"""Settings and telemetry: config, events."""

from __future__ import annotations

import typer

from rose.cli._out import emit_json


def register(app: typer.Typer) -> None:
    app.command("config")(config)
    app.command("events")(events)


def config(
    key: str = typer.Argument(None, help="A key such as recall.max_pack_tokens."),
    value: str = typer.Argument(None, help="New value; written to the store's config.yaml."),
    scope: str = typer.Option("project", help="Which store's config.yaml to write."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Show every setting, one setting, or change one (ROSE_SECTION_KEY env vars win).

    A setting marked (not built yet) is validated and stored, but no code reads it yet.
    """
    from rose import config as cfg
    from rose.store.facade import Store

    store = Store.open()
    if value is not None:
        new = cfg.set_override(store.dir_for(scope).config, key, value)
        store.log("config", {"key": key, "scope": scope})
        note = f"  {cfg.NOT_BUILT_LABEL}: nothing reads it yet" if cfg.not_built(key) else ""
        typer.echo(f"{key} = {new}  ({store.dir_for(scope).config}){note}")
        return
    effective = store.config
    if key:
        v = cfg.get(effective, key)
        emit_json(v) if as_json else typer.echo(v)
        return
    rows = []
    for k, (default, help_) in cfg.keys().items():
        v = cfg.get(effective, k)
        rows.append(
            {"key": k, "value": v, "default": default, "help": help_, "built": not cfg.not_built(k)}
        )
    if as_json:
        emit_json(rows)
        return
    for r in rows:
        mark = "" if r["value"] == r["default"] else f"   (default {r['default']})"
        mark += "" if r["built"] else f"   {cfg.NOT_BUILT_LABEL}"
        typer.echo(f"{r['key']} = {r['value']}{mark}")


def events(
    kind: str = typer.Option(None, "--kind", "-k", help="Only events of this kind."),
    limit: int = typer.Option(20, "--limit", "-n", help="How many of the newest to show."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """The newest entries of the event log (events.jsonl), oldest first."""
    import json

    from rose.events import read_events
    from rose.store.facade import Store

    rows = read_events(Store.open().primary.events, kind=kind, limit=limit)
    if as_json:
        emit_json(rows)
        return
    for e in rows:
        rest = {k: v for k, v in e.items() if k not in ("time", "kind")}
        typer.echo(f"{e.get('time', '?')}  {e.get('kind', '?'):8} {json.dumps(rest, default=str)}")
