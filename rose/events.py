"""The machine-local event log (`events.jsonl`): append-only, one JSON object a line."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

from rose.disk.atomic import append_line

#: The event of a deadline that passed where no judge logged it (a replay process that
#: gave no answer in time); a judgement that timed out is a `judge` event with that error.
TIMEOUT = "timeout"


def now_iso() -> str:
    """UTC now as ISO-8601 with milliseconds (no `datetime`: this is on the hook's path)."""
    t = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t % 1 * 1000):03d}+00:00"


def append_event(path: Path, kind: str, data: dict | None = None) -> None:
    """Record one event; `data` is redacted on the way to disk like everything else."""
    record = {"time": now_iso(), "kind": kind, **(data or {})}
    append_line(path, json.dumps(record, ensure_ascii=False, sort_keys=True, default=str))


def read_events(path: Path, *, kind: str | None = None, limit: int | None = None) -> list[dict]:
    """The newest `limit` events (oldest first), optionally of one kind; bad lines are skipped."""
    out = [e for e in _iter(path) if kind is None or e.get("kind") == kind]
    return out[-limit:] if limit else out


def _iter(path: Path) -> Iterator[dict]:
    try:
        fh = path.open(encoding="utf-8")
    except FileNotFoundError:
        return
    with fh:
        for line in fh:
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(rec, dict):
                yield rec
