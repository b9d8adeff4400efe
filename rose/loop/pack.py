"""Packing recalled lessons into the injected block, with the standard library only.

Shared by the prompt hook's fast path (which reads the recall view) and the full
recall (which chose the lessons with the model): per-session served state decides
full body, one-line reminder or skip; the block is the view's pre-rendered pieces
joined in a stable order; the status line says what happened.
"""

from __future__ import annotations

import json
import os

from rose import tokens
from rose.atomic import write_json


class Pack:
    """What one prompt gets: lessons in full, refreshed, or skipped as still in context."""

    def __init__(self, note: str = ""):
        self.full: list[dict] = []
        self.refreshed: list[dict] = []
        self.fresh: list[dict] = []  # still in context: skipped
        self.block = ""
        self.tokens = 0
        self.note = note  # e.g. why recall degraded

    @property
    def status(self) -> str:
        n = len(self.full)
        parts = [f"ROSE · {n} lesson{'s' if n != 1 else ''} · {self.tokens} tok"]
        if self.full:
            titles = [item["title"] for item in self.full]
            shown = ", ".join(titles[:3]) + (f" +{len(titles) - 3}" if len(titles) > 3 else "")
            parts[0] += f" — {shown}"
        extra = []
        if self.refreshed:
            extra.append(f"{len(self.refreshed)} refreshed")
        if self.fresh:
            extra.append(f"{len(self.fresh)} already in context")
        if extra:
            parts.append(", ".join(extra))
        if self.note:
            parts.append(self.note)
        return " · ".join(parts)


def session_path(store_root: str, session_id: str) -> str:
    safe = "".join(c for c in session_id if c.isalnum() or c in "-_")[:80] or "default"
    return os.path.join(store_root, "sessions", f"{safe}.json")


def load_session(path: str, session_id: str) -> dict:
    try:
        with open(path, encoding="utf-8") as fh:
            rec = json.load(fh)
        if isinstance(rec, dict) and isinstance(rec.get("served"), dict):
            return rec
    except (OSError, ValueError):
        pass
    return {"session": session_id, "turn": 0, "served": {}}


def save_session(path: str, rec: dict) -> None:
    from pathlib import Path

    write_json(Path(path), rec, compact=True, durable=False)  # scratch: rebuilt if lost


def pack(view: dict, chosen: list[dict], session: dict, *, turn: int) -> Pack:
    """Decide each chosen lesson's form from the session record, and update the record."""
    fresh_turns = int(view.get("fresh_turns", 8))
    served = session.setdefault("served", {})
    out = Pack()
    pieces: list[str] = []
    for item in chosen:
        seen = served.get(item["id"])
        if seen is None:
            out.full.append(item)
            pieces.append(item["full"])
            served[item["id"]] = {"turn": turn, "form": "full"}
        elif turn - int(seen.get("turn", 0)) < fresh_turns:
            out.fresh.append(item)
        else:
            out.refreshed.append(item)
            pieces.append(item["refresher"])
            served[item["id"]] = {"turn": turn, "form": "refresher"}
    if pieces:
        out.block = "\n\n".join([view["head"], *pieces, view["tail"]])
        out.tokens = tokens.count(out.block)
    return out
