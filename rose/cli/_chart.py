"""Rates as bars of block characters, for a trend a reader takes in without colour.

A bar is `width` cells on a dotted track: a full block per whole cell, an eighth block for
the part cell, so a terminal with no colour (or a pasted log) still shows which row is
higher. The demo draws its arms side by side with these, one row per slice of sessions.
"""

from __future__ import annotations

from collections.abc import Sequence

FULL = "█"
PARTS = " ▏▎▍▌▋▊▉"  # 0/8 .. 7/8 of a cell
TRACK = "·"  # an empty cell: the bar's length stays readable at 0 %


def bar(rate: float | None, width: int = 10) -> str:
    """`rate` (0..1) as `width` cells, then the percentage; blanks where it is unknown."""
    if rate is None:
        return " " * width + "    —"
    eighths = round(max(0.0, min(1.0, rate)) * width * 8)
    whole, part = divmod(eighths, 8)
    cells = FULL * whole + (PARTS[part] if part else "")
    return cells + TRACK * (width - len(cells)) + f" {rate:>4.0%}"


def rows(
    labels: Sequence[str],
    columns: Sequence[Sequence[str]],
    *,
    header: Sequence[str],
    right: Sequence[bool] = (),
    indent: str = "  ",
) -> list[str]:
    """`labels` down the left and one column of cells each beside them, under `header` (its
    first entry names the labels); each column as wide as its widest cell, flush right where
    `right` says so (one flag a column, the labels' included), so figures line up."""
    table = [
        list(header),
        *([label, *cells] for label, *cells in zip(labels, *columns, strict=True)),
    ]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    flush = list(right) + [False] * (len(header) - len(right))
    return [
        indent
        + "   ".join(
            cell.rjust(w) if r else cell.ljust(w)
            for cell, w, r in zip(row, widths, flush, strict=True)
        ).rstrip()
        for row in table
    ]
