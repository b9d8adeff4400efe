"""What the graph was last synced to, kept beside the database, so that an open with nothing
changed needs no database and a sync after an edit need not read every file's row back.

`<db>.synced` (small JSON) holds the fingerprint of the files the graph was built from, the
files that failed to parse, the recall view's key and file identity, and the identity
(inode, size, mtime, ctime) of the database and its log when it was written. The process
holding the database writes it just before closing; any later write to the database, by
any process, changes that identity (the engine writes the log at every commit), so a record
whose identity matches the files on disk describes the database as it is. A record that does
not match is ignored, and the store opens the database as before.

`<db>.files` (marshal, behind a checksum) holds the last scan of the files
(`rose.files.scan.Survey`: each folder's listing and each lesson file's stat) with its
fingerprint. Any scan may take a
folder's names from it (each is checked against the folder itself); a sync takes what
changed from it only when that fingerprint is the one the database itself holds (its meta
record), so it can never stand for another database state. Both are machine-local caches:
deleting them costs one ordinary open.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rose.disk.atomic import uncached, write_bytes, write_json
from rose.errors import WriteFailed
from rose.files.scan import file_identity as file_identity  # the prompt hook's too

FORMAT = 1
_SIDES = ("", ".wal", ".shadow")


def _record_path(db: Path) -> Path:
    return db.with_name(db.name + ".synced")


def _states_path(db: Path) -> Path:
    return db.with_name(db.name + ".files")


def identity(db: Path) -> list[list[int] | None]:
    """The database file's identity with its log's and shadow file's."""
    return [file_identity(str(db) + side) for side in _SIDES]


def read(db: Path) -> dict[str, Any] | None:
    """The record, or None when it is missing, unreadable or of another format."""
    try:
        rec = json.loads(_record_path(db).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return rec if isinstance(rec, dict) and rec.get("format") == FORMAT else None


def write(db: Path, rec: dict[str, Any]) -> None:
    """Write the record (call it while holding the database, after its last write)."""
    # Redacted like every record: a parse error's reason may quote the file.
    try:
        write_json(_record_path(db), {"format": FORMAT, **rec}, compact=True, durable=False)
    except WriteFailed as exc:  # a cache: the next open scans and opens the database
        uncached(exc, "the record of the index")


def forget(db: Path) -> None:
    for p in (_record_path(db), _states_path(db)):
        p.unlink(missing_ok=True)


def listing_path(db: Path) -> Path:
    """Where the last scan is kept beside the database (`read_listing`)."""
    return _states_path(db)


def read_listing(db: Path) -> dict | None:
    """The survey kept beside the database (`rose.files.scan.record`), or None."""
    from rose.files.scan import read_kept

    return read_kept(str(_states_path(db)))


def write_listing(db: Path, fingerprint: str, survey: Any) -> None:
    """Keep `survey` (a `rose.files.scan.Survey`) with the fingerprint it has: a later scan
    takes unchanged folders' names from it, and a sync whose graph holds that fingerprint
    takes what changed from it."""
    from rose.files.scan import kept_bytes

    try:
        write_bytes(_states_path(db), kept_bytes(survey, fingerprint))
    except WriteFailed as exc:  # a cache: the next scan lists every folder
        uncached(exc, "the file scan")
