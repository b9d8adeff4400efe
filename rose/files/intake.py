"""What `rose add` was asked to store, on disk before any graph open or model call.

A lesson typed is the user's record before it is anything else, so `rose add` (and the MCP
`add` tool) first writes it, with its options, to `jobs/intake/<lesson id>.json` (atomic,
redacted, fsynced) and holds an flock on that file while it reconciles and stores the
lesson; once the lesson's own file is written (or reconciled into another), the record is
removed. A record whose writer is gone (killed by a host's timeout, a crash) is left
unlocked: the kernel drops an flock with its holder. `leftover` finds those, and the
`reconcile` job stores each as an unreconciled lesson (`rose.loop.reflection.consolidate`), so what
was typed is never lost however the command ended.

Machine-local scratch (`jobs/` is git-ignored). Standard library only.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator
from pathlib import Path

from rose.disk.atomic import write_json
from rose.errors import RoseError
from rose.events import now_iso
from rose.files.layout import StoreDir

#: The options a record keeps beside the text (`rose add`'s, by name).
FIELDS = ("title", "family", "scope", "reconcile", "source", "provenance", "session")


def folder(store_dir: StoreDir) -> Path:
    return store_dir.jobs / "intake"


def _lock(path: Path, *, wait: bool) -> int | None:
    """An flock on the record's lock file (made if missing), or None when another holds it."""
    fd = os.open(path.with_suffix(".lock"), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
    except OSError:
        os.close(fd)
        return None
    return fd


def _drop(path: Path, fd: int) -> None:
    """Remove the record, then its lock file, then let go (in that order: whoever takes the
    lock next finds no record)."""
    path.unlink(missing_ok=True)
    path.with_suffix(".lock").unlink(missing_ok=True)
    os.close(fd)


@contextlib.contextmanager
def recorded(store_dir: StoreDir, lesson_id: str, text: str, **options: object) -> Iterator[Path]:
    """Write the record of a lesson being added and hold it for the body of the `with`; it is
    removed when the body returns (the lesson is stored) or refuses it (a `RoseError`, which
    the command reports), kept when anything else ends the body (the job takes it in). The
    lock is taken before the record exists, so nobody finds it unheld while its writer lives."""
    path = folder(store_dir) / f"{lesson_id}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = _lock(path, wait=True)
    assert fd is not None
    try:
        write_json(path, {"id": lesson_id, "text": text, "time": now_iso(), **options})
        yield path
    except RoseError:
        _drop(path, fd)
        raise
    except BaseException:
        os.close(fd)
        raise
    _drop(path, fd)


@contextlib.contextmanager
def leftover(store_dir: StoreDir) -> Iterator[list[dict]]:
    """The records whose writer is gone, each held for the body of the `with` and removed
    when the body returns; a record whose writer is at work is not among them."""
    held: list[tuple[Path, int]] = []
    out: list[dict] = []
    try:
        for path in waiting(store_dir):
            fd = _lock(path, wait=False)
            if fd is None:
                continue  # its writer is at work on it
            held.append((path, fd))
            try:
                record = json.loads(path.read_text(encoding="utf-8"))
            except FileNotFoundError:
                continue  # stored and removed while we looked
            except (OSError, ValueError):
                record = None
            if isinstance(record, dict) and isinstance(record.get("text"), str):
                out.append(record)
            else:  # not one of ours (ours are written whole): set aside for a person
                path.rename(path.with_suffix(".unreadable"))
        yield out
        for path, fd in held:
            _drop(path, fd)
        held = []
    finally:
        for _path, fd in held:
            os.close(fd)


def waiting(store_dir: StoreDir) -> list[Path]:
    """Every record on disk, its writer at work or gone, oldest name first."""
    try:
        names = os.listdir(folder(store_dir))
    except FileNotFoundError:
        return []
    return sorted(folder(store_dir) / n for n in names if n.endswith(".json") and n[0] != ".")


def unattended(store_dir: StoreDir) -> bool:
    """Whether a record waits whose writer is gone (its lock is free; it is not taken)."""
    for path in waiting(store_dir):
        fd = _lock(path, wait=False)
        if fd is not None:
            os.close(fd)
            return True
    return False
