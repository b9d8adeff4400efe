"""A table's long cell ends at a word with an ellipsis: `rose jobs` printed a job's reason
as "... (the model did not a", cut mid-word with nothing saying it was cut."""

from __future__ import annotations

from rose.cli._out import CELL_CHARS, table

REASON = "waits for the next runner a hook starts (the model did not answer just now)"


def test_a_long_cell_ends_at_a_word_with_an_ellipsis():
    out = table([{"id": "j1", "reason": REASON}])
    cell = out.splitlines()[2].split("  ", 1)[1].strip()
    assert cell.endswith("…") and len(cell) <= CELL_CHARS
    assert REASON.startswith(cell[:-1])  # nothing but the tail dropped
    assert REASON[len(cell) - 1] == " "  # it stopped before a whole word


def test_short_cells_and_one_long_word_are_kept_or_cut():
    word = "x" * 100
    rows = table([{"a": "short", "b": word}]).splitlines()
    assert rows[2].startswith("short")
    assert rows[2].endswith("x" * (CELL_CHARS - 1) + "…")


def test_columns_stay_aligned():
    out = table([{"a": REASON, "b": "one"}, {"a": "tiny", "b": "two"}]).splitlines()
    assert out[2].index("one") == out[3].index("two") == out[0].index("b")
