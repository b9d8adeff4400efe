"""Shortening text for a person to read: one line, cut at a word, with an ellipsis.
Standard library only: the prompt hook's status line uses it."""

from __future__ import annotations


def shorten(text: str, most: int) -> str:
    """`text` on one line within `most` characters: cut after the last whole word that
    leaves room for "…" (mid-word only when that would keep less than half of `most`)."""
    flat = " ".join(text.split())
    if len(flat) <= most:
        return flat
    cut = flat[: max(most - 1, 0)]
    space = cut.rfind(" ") if flat[len(cut)] != " " else len(cut)
    kept = cut[:space] if space > most // 2 else cut
    return kept.rstrip(" ,;:(") + "…"
