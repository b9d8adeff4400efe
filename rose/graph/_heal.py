"""Deleting a graph database, and moving a damaged one aside for the files to rebuild it.

A graph server holding the database (`rose.graph.server`) is asked to let go first.
"""

from __future__ import annotations

import os
import time
from contextlib import AbstractContextManager
from pathlib import Path

from rose.errors import GraphDamaged
from rose.graph._notes import dead_notes
from rose.graph.engine import (
    buffer_pool_bytes,
    engine_module,
    file_identity,
    holder_file,
    is_lock,
    live_holder,
)
from rose.graph.synced import forget

_SIDE_FILES = (".wal", ".shadow")


def remove_database(path: Path) -> None:
    """Delete a database and its side files; the lesson files can always rebuild it."""
    from rose.graph import server

    server.stop(path)
    for p in (path, *(path.with_name(path.name + s) for s in (*_SIDE_FILES, ".holder"))):
        _remove(p)


def _remove(p: Path) -> None:
    import shutil

    if p.is_dir() and not p.is_symlink():
        shutil.rmtree(p, ignore_errors=True)
    else:
        p.unlink(missing_ok=True)


def drop_orphans(path: Path) -> bool:
    """Remove the log and shadow file of a database whose file is gone or empty (deleted or
    truncated to nothing by hand): the engine would replay that log into a new, empty file,
    which fails (or, for a log holding only the latest writes, builds half a graph). Whether
    any were removed; none while another live process holds the database."""
    from rose.graph import server

    def empty() -> bool:
        try:
            return os.stat(path).st_size == 0
        except FileNotFoundError:
            return not os.path.lexists(path)  # a dangling link is no one's to clean
        except OSError:
            return False

    if not (empty() and any(os.path.lexists(p) for p in _with_sides(path)[1:])):
        return False
    try:
        server.stop(path)  # a server still holding the deleted file lets go of it first
        with _healing(path):
            if not empty() or live_holder(path) is not None:
                return False
            for side in _with_sides(path)[1:]:
                _remove(side)
    except OSError:  # a folder it cannot write: the open says so
        return False
    return True


# -- healing: a damaged database is moved aside; the files rebuild it ---------------------------

#: How many damaged databases are kept beside the store, newest first, for a post-mortem.
KEEP_DAMAGED = 2


def set_aside(path: Path, engine: str, damage: GraphDamaged) -> Path | None:
    """Move the damaged database and its side files to `<name>.damaged-<time>`.

    Returns where it went, or None when (checked again under a lock that only healers take)
    it is no longer the file found damaged, someone holds it, or it opens now: another
    process healed it first. Keeps the newest `KEEP_DAMAGED` damaged copies. An OSError
    (the move failed) reaches the caller.
    """
    from rose.graph import server

    server.stop(path)  # a graph server holding it lets go first
    with _healing(path):
        if file_identity(path) != damage.ident or live_holder(path) is not None:
            return None
        if damage.probe and not _still_damaged(path, engine):
            return None
        stamp = path.with_name(f"{path.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
        target, n = stamp, 1
        while any(os.path.lexists(p) for p in _with_sides(target)):
            n += 1
            target = stamp.with_name(f"{stamp.name}-{n}")
        for src, dst in zip(_with_sides(path), _with_sides(target), strict=True):
            if os.path.lexists(src):
                os.rename(src, dst)
        for note, _, _ in dead_notes(path):
            note.unlink(missing_ok=True)
        holder_file(path).unlink(missing_ok=True)
        forget(path)  # what the record says of the database went with it: not "missing" next
        _prune_damaged(path)
        return target


def _with_sides(path: Path) -> list[Path]:
    return [path, *(path.with_name(path.name + s) for s in _SIDE_FILES)]


def _healing(path: Path) -> AbstractContextManager[None]:
    """Only one process at a time decides to move the database aside."""
    from rose.disk.atomic import exclusive

    return exclusive(path.with_name(path.name + ".heal"))


def _still_damaged(path: Path, engine: str) -> bool:
    mod = engine_module(engine)
    try:
        db = mod.Database(str(path), buffer_pool_size=buffer_pool_bytes(path))
    except (RuntimeError, MemoryError) as exc:
        return not is_lock(str(exc))
    db.close()
    return False


def _prune_damaged(path: Path) -> None:
    prefix = path.name + ".damaged-"

    def age(p: Path) -> tuple[str, int]:  # <prefix>YYYYmmdd-HHMMSS, then -2, -3 on a clash
        rest = p.name[len(prefix) :]
        return rest[:15], int(rest[16:]) if rest[16:].isdigit() else 1

    copies = [p for p in path.parent.glob(prefix + "*") if not p.name.endswith(_SIDE_FILES)]
    for old in sorted(copies, key=age)[:-KEEP_DAMAGED]:
        for p in _with_sides(old):
            _remove(p)
