"""Printing helpers shared by the command modules: JSON and plain tables."""

from __future__ import annotations

import json
from typing import Any

import typer


def emit_json(data: Any) -> None:
    typer.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def _cell(v: Any) -> str:
    if isinstance(v, (dict, list)):
        return json.dumps(v, ensure_ascii=False, default=str)
    return "" if v is None else str(v)


def table(rows: list[dict]) -> str:
    """Rows as an aligned text table with a header; '(no rows)' when empty."""
    if not rows:
        return "(no rows)"
    cols = list(rows[0])
    cells = [[_cell(r.get(c)) for c in cols] for r in rows]
    widths = [min(60, max(len(c), *(len(row[i]) for row in cells))) for i, c in enumerate(cols)]

    def line(vals: list[str]) -> str:
        return "  ".join(v[:60].ljust(w) for v, w in zip(vals, widths, strict=False)).rstrip()

    out = [line(cols), line(["-" * w for w in widths])]
    out += [line(r) for r in cells]
    return "\n".join(out)
