"""Settings and telemetry: config, events."""

from __future__ import annotations

import os

import typer

from rose.cli._out import emit_json


def register(app: typer.Typer) -> None:
    app.command("config")(config)
    app.command("events")(events)


def config(
    key: str = typer.Argument(
        None, help="A key such as recall.max_pack_tokens, or a section such as recall."
    ),
    value: str = typer.Argument(None, help="New value; written to the store's config.yaml."),
    scope: str = typer.Option("project", help="Which store's config.yaml to write."),
    unset: bool = typer.Option(
        False, "--unset", help="Remove KEY from that config.yaml (an unknown key too)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Show or change settings: all, a section, or one key (ROSE_SECTION_KEY env vars win).

    A setting that cannot be used (an unknown key, an invalid value, a config.yaml that is
    not YAML) is ignored with a warning naming where it came from, and the key keeps the value
    it would have without it (in the end its default).
    Setting a key always works, whatever else the file holds: other entries are kept as they
    are, and a file that is not YAML is replaced, its text kept beside it as
    config.yaml.broken. A setting marked (not built yet) is validated and stored, but no code
    reads it yet.
    """
    from rose import config as cfg
    from rose.store.facade import Store

    store = Store.open()
    if unset or value is not None:
        if not key:
            raise typer.BadParameter("name the key to change", param_hint="KEY")
        _change(store, scope, key, None if unset else value)
        return
    effective = store.config
    if key and key not in cfg.sections():
        v = cfg.get(effective, key)
        emit_json(v) if as_json else typer.echo(v)
        _warn(effective.problems)
        return
    rows = []
    for k, (default, help_) in cfg.keys().items():
        if key and not k.startswith(key + "."):
            continue
        v = cfg.get(effective, k)
        rows.append(
            {"key": k, "value": v, "default": default, "help": help_, "built": not cfg.not_built(k)}
        )
    if as_json:
        emit_json(rows)
    else:
        for r in rows:
            mark = "" if r["value"] == r["default"] else f"   (default {r['default']})"
            mark += "" if r["built"] else f"   {cfg.NOT_BUILT_LABEL}"
            typer.echo(f"{r['key']} = {r['value']}{mark}")
    _warn(effective.problems)


def _change(store, scope: str, key: str, value: str | None) -> None:
    """Write (or, with no value, remove) one key in `scope`'s config.yaml and say so."""
    from rose import config as cfg

    path = store.dir_for(scope).config
    if value is None:
        removed = cfg.unset_override(path, key)
        store.log("config", {"key": key, "scope": scope, "unset": True})
        typer.echo(f"{key} removed from {path}" if removed else f"{key} is not set in {path}")
    else:
        broken = cfg.unreadable(path)
        new = cfg.set_override(path, key, value)
        store.log("config", {"key": key, "scope": scope})
        note = f"  {cfg.NOT_BUILT_LABEL}: nothing reads it yet" if cfg.not_built(key) else ""
        typer.echo(f"{key} = {new}  ({path}){note}")
        if broken:
            kept = cfg.broken_copy(path)
            typer.echo(f"  it replaced an unreadable file ({broken}); the old text is in {kept}")
        if cfg.env_name(key) in os.environ:
            typer.echo(f"  note: {cfg.env_name(key)} is set, and wins over the file", err=True)
    _warn(cfg.load([path]).problems)


def _warn(problems: list) -> None:
    for p in problems:
        typer.echo(f"rose: warning: {p.message}", err=True)


def events(
    kind: str = typer.Option(None, "--kind", "-k", help="Only events of this kind."),
    limit: int = typer.Option(20, "--limit", "-n", min=1, help="How many of the newest to show."),
    everything: bool = typer.Option(False, "--all", help="Every event the log holds."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """The newest entries of the event log (events.jsonl), oldest first.

    When no event is of the --kind asked for, says so and lists the kinds the log holds.
    """
    import json

    from rose.events import read_events
    from rose.store.facade import Store

    path = Store.open().primary.events
    rows = read_events(path, kind=kind, limit=None if everything else limit)
    if kind and not rows:
        kinds = sorted({str(e.get("kind")) for e in read_events(path)})
        typer.echo(
            f"no {kind!r} events in {path}; the kinds it holds: {', '.join(kinds) or 'none'}",
            err=True,
        )
    if as_json:
        emit_json(rows)
        return
    for e in rows:
        rest = {k: v for k, v in e.items() if k not in ("time", "kind")}
        typer.echo(f"{e.get('time', '?')}  {e.get('kind', '?'):8} {json.dumps(rest, default=str)}")
