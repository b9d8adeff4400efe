"""Packing recalled lessons into the injected block, with the standard library only.

Shared by the prompt hook's fast path (which reads the recall view) and the full
recall (which chose the lessons with the model): per-session served state decides
full body, one-line reminder or skip; the block is the view's pre-rendered pieces
joined in a stable order, never past the token budget nor what the host passes on
whole; the status line says what happened, in one short line.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence

from rose import tokens
from rose.disk.atomic import write_json
from rose.files.sessions import safe_id
from rose.text import shorten

TYPE_CHECKING = False  # `typing` costs the prompt hook ~4 ms to import: only for the checker
if TYPE_CHECKING:
    from typing import Any

    from rose.store.facade import Row

# What each host hands the model whole, in the unit it measures; anything longer is
# replaced, without telling the user. Claude Code keeps additionalContext up to 10,000
# characters (JavaScript length: UTF-16 code units) and serves a 2,000-character preview
# of anything longer. Codex keeps hook output up to 2,500 tokens counted as
# ceil(UTF-8 bytes / 4), so 10,000 bytes, and spills the rest to a file.
HOSTS: dict[str, tuple[str, int, str]] = {
    "claude": ("Claude Code", 10_000, "utf-16-le"),
    "codex": ("Codex", 10_000, "utf-8"),
}
# A host we cannot tell gets the stricter bound: UTF-8 bytes are never fewer than UTF-16 units.
UNKNOWN_HOST = ("the host", 10_000, "utf-8")

STATUS_CHARS = 100  # the status line fits under a prompt
TITLE_CHARS = 24  # a title in the status line, ellipsis included
TITLE_LEAST = 12  # shorter than this a title says little: "+N" instead


def host_bound(host: str | None) -> tuple[str, int, str]:
    """(name, most units passed whole, encoding that counts them) for `host`."""
    return HOSTS.get(host or "", UNKNOWN_HOST)


def _size(text: str, encoding: str) -> int:
    units = len(text.encode(encoding, "surrogatepass"))
    return units // 2 if encoding.startswith("utf-16") else units


def _tokens(chars: int) -> int:
    """`rose.tokens.count` of a text `chars` long, to fit pieces before joining them."""
    return max(1, (chars + 3) // 4) if chars else 0


def _unit(encoding: str) -> str:
    return "characters" if encoding.startswith("utf-16") else "bytes"


class Pack:
    """What one prompt gets: lessons in full, refreshed, skipped as still in context, or cut."""

    def __init__(self, note: str = ""):
        self.full: list[Row] = []
        self.refreshed: list[Row] = []
        self.fresh: list[Row] = []  # still in context: skipped
        self.held: dict[str, list[str]] = {}  # fresh through what it was made from: id -> those
        self.deferred: list[Row] = []  # did not fit this time: not served, eligible next prompt
        self.too_big: list[Row] = []  # does not fit even alone: never served as things stand
        self.restored: list[Row] = []  # detail descent restored this session, served now
        self.cut_by = ""  # what the deferred did not fit: "budget", or the host's "size limit"
        self.host, self.most, encoding = UNKNOWN_HOST  # whom the block is for, and its bound
        self.unit = _unit(encoding)
        self.budget: int | None = None
        self.block = ""
        self.tokens = 0
        self.size = 0  # the block in the host's own unit
        self.note = note  # e.g. why recall degraded

    @property
    def status(self) -> str:
        """Counts, tokens and a few short titles in about 100 characters (`rose trace` has all)."""
        n = len(self.full)
        head = f"ROSE · {n} lesson{'s' if n != 1 else ''} · {self.tokens} tok"
        rest = []
        if self.restored:
            rest.append(f"{len(self.restored)} restored")
        if self.refreshed:
            rest.append(f"{len(self.refreshed)} refreshed")
        if self.fresh:
            rest.append(f"{len(self.fresh)} in context")
        if self.deferred:
            rest.append(f"{len(self.deferred)} deferred ({self.cut_by})")
        if self.too_big:
            rest.append(f"{len(self.too_big)} too big (rose status)")
        tail = "".join(f" · {p}" for p in rest)
        if self.note:
            tail += " · " + shorten(self.note, max(STATUS_CHARS - len(head) - len(tail) - 3, 24))
        titles = _titles([i["title"] for i in self.full], STATUS_CHARS - len(head) - len(tail) - 3)
        return head + (f" — {titles}" if titles else "") + tail


def _titles(titles: list[str], room: int) -> str:
    """As many shortened titles as fit `room`, then "+N" for the rest ("" when none fits)."""
    shown: list[str] = []
    for i, title in enumerate(titles):
        left = len(titles) - i - 1
        used = len(", ".join(shown)) + (2 if shown else 0) + (len(f" +{left}") if left else 0)
        most = min(TITLE_CHARS, room - used)
        if most < TITLE_LEAST:
            break
        shown.append(shorten(title, most))
    if not shown:
        return ""
    left = len(titles) - len(shown)
    return ", ".join(shown) + (f" +{left}" if left else "")


def _held(served: dict[str, Any]) -> dict[str, int]:
    """Each lesson the session's context holds, and the latest turn it was served at: the
    lessons served, and the level-0 lessons each of them was made from."""
    held: dict[str, int] = {}
    for lesson, seen in served.items():
        at = int(seen.get("turn", 0))
        for one in (lesson, *(seen.get("sources") or ())):
            held[one] = max(held.get(one, at), at)
    return held


def _seen_in(item: Row, held: dict[str, int]) -> dict[str, Any] | None:
    """When a lesson never served counts as served: once every lesson it was made from is
    in context (Claude Code and Codex replay earlier hook context on every later turn, so a
    lesson served on turn 1 is still there), as of the oldest of them; else never."""
    sources = item.get("sources") or ()
    if not sources or any(s not in held for s in sources):
        return None
    return {"turn": min(held[s] for s in sources), "form": "sources"}


def session_path(store_root: str, session_id: str) -> str:
    return os.path.join(store_root, "sessions", f"{safe_id(session_id)}.json")


def load_session(path: str, session_id: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as fh:
            rec = json.load(fh)
        if isinstance(rec, dict) and isinstance(rec.get("served"), dict):
            return rec
    except (OSError, ValueError):
        pass
    return {"session": session_id, "turn": 0, "served": {}}


def save_session(path: str, rec: dict[str, Any]) -> None:
    from pathlib import Path

    write_json(Path(path), rec, compact=True, durable=False)  # scratch: rebuilt if lost


class _Fit:
    """The block's size as pieces join it, in characters (tokens) and in the host's unit."""

    SEP = 2  # "\n\n" between pieces: two characters, two units in either encoding

    def __init__(self, view: dict[str, Any], host: str | None):
        self.host, self.most, self.encoding = host_bound(host)
        budget = view.get("budget")
        self.budget = int(budget) if isinstance(budget, int) else None
        self.chars = len(view["head"]) + len(view["tail"]) + self.SEP
        self.size = _size(view["head"], self.encoding) + _size(view["tail"], self.encoding)
        self.size += self.SEP
        self.frame = (self.chars, self.size)

    def why_not(self, piece: str, *, alone: bool = False) -> str:
        """What `piece` would break if added ("" when it fits): the budget or the host's limit."""
        chars, size = self.frame if alone else (self.chars, self.size)
        chars += len(piece) + self.SEP
        size += _size(piece, self.encoding) + self.SEP
        if self.budget is not None and _tokens(chars) > self.budget:
            return "budget"
        return "size limit" if size > self.most else ""

    def add(self, piece: str) -> None:
        self.chars += len(piece) + self.SEP
        self.size += _size(piece, self.encoding) + self.SEP


def pack(
    view: dict[str, Any],
    chosen: list[Row],
    session: dict[str, Any],
    *,
    turn: int,
    host: str | None = None,
    restored: Sequence[Row] = (),
) -> Pack:
    """Decide each chosen lesson's form from the session record, and update the record.

    Pieces join in the chosen order while the block stays within the view's token budget
    and what `host` passes on whole ("claude", "codex"; unknown: the stricter). A lesson
    left out is not marked served, so it stays eligible on the next prompt. Then what
    descent restored this session (`rose.files.sessions.restored`) joins, each piece once,
    and again after its lesson is served in full afresh (its full form does not carry it).
    """
    fresh_turns = int(view.get("fresh_turns", 8))
    served = session.setdefault("served", {})
    out = Pack()
    fit = _Fit(view, host)
    out.host, out.most, out.unit, out.budget = fit.host, fit.most, _unit(fit.encoding), fit.budget
    pieces: list[str] = []
    held = _held(served)
    for item in chosen:
        seen = served.get(item["id"]) or _seen_in(item, held)
        if seen is not None and turn - int(seen.get("turn", 0)) < fresh_turns:
            out.fresh.append(item)
            if item["id"] not in served:
                out.held[item["id"]] = list(item.get("sources") or [])
            continue
        form = "full" if seen is None else "refresher"
        piece = item[form]
        why = fit.why_not(piece)
        if why:
            if fit.why_not(piece, alone=True):
                out.too_big.append(item)
            else:
                out.deferred.append(item)
                out.cut_by = out.cut_by or why
            continue
        fit.add(piece)
        pieces.append(piece)
        (out.full if form == "full" else out.refreshed).append(item)
        served[item["id"]] = {"turn": turn, "form": form}
        if item.get("sources"):
            served[item["id"]]["sources"] = list(item["sources"])
    delivered = session.setdefault("restored", {})
    for item in out.full:
        delivered.pop(item["id"], None)
    for r in restored:
        if r["patch"] in delivered.get(r["lesson"], []) or fit.why_not(r["piece"]):
            continue
        fit.add(r["piece"])
        pieces.append(r["piece"])
        out.restored.append(r)
        delivered.setdefault(r["lesson"], []).append(r["patch"])
    if pieces:
        out.block = "\n\n".join([view["head"], *pieces, view["tail"]])
        out.tokens = tokens.count(out.block)
        out.size = fit.size
    return out
