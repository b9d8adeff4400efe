"""Printing helpers shared by the command modules: JSON and plain tables."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import typer

from rose.text import shorten


def emit_json(data: Any) -> None:
    typer.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def _cell(v: Any) -> str:
    if isinstance(v, (dict, list)):
        return json.dumps(v, ensure_ascii=False, default=str)
    return "" if v is None else str(v)


#: The widest a table's cell is printed; longer text ends at a word, with an ellipsis.
CELL_CHARS = 60


def _fit(text: str) -> str:
    return text if len(text) <= CELL_CHARS else shorten(text, CELL_CHARS)


def table(rows: list[dict]) -> str:
    """Rows as an aligned text table with a header; '(no rows)' when empty."""
    if not rows:
        return "(no rows)"
    cols = list(rows[0])
    cells = [[_cell(r.get(c)) for c in cols] for r in rows]
    cells = [[_fit(v) for v in row] for row in cells]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(cols)]

    def line(vals: list[str]) -> str:
        return "  ".join(v.ljust(w) for v, w in zip(vals, widths, strict=False)).rstrip()

    out = [line(cols), line(["-" * w for w in widths])]
    out += [line(r) for r in cells]
    return "\n".join(out)


def print_attempts(attempts: list, *, as_json: bool, head, nothing: str) -> None:
    """What a run of replay-checked attempts did (`rose compact`, `rose merge`): as JSON, or
    one line each, `head(attempt)` naming what was tried; `nothing` when none was due."""
    if as_json:
        emit_json([_attempt(a) for a in attempts])
        return
    for a in attempts:
        typer.echo(_attempt_line(a, head(a)))
    if not attempts:
        typer.echo(nothing)


def _attempt(a: Any) -> dict:
    out = {f.name: getattr(a, f.name) for f in dataclasses.fields(a)}
    out["replays"] = [r.model_dump() for r in a.replays]
    return out


def _attempt_line(a: Any, head: str) -> str:
    size = f"{a.tokens} -> {a.candidate_tokens} tokens, {a.dropped} claim(s) dropped"
    passed = sum(r.passed for r in a.replays)
    replays = f", {passed}/{len(a.replays)} replays passed" if a.replays else ""
    line = f"{head}: {a.result}" + (f" as {a.new}" if a.new else "")
    line += f" ({size}{replays})" + (f": {a.reason}" if a.reason else "")
    if a.held_out:
        line += f"; held out {a.held_out['passed']}/{a.held_out['total']} passed"
    elif getattr(a, "held_out_note", ""):
        line += f"; {a.held_out_note}"
    return line
