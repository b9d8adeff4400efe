"""Atomic, redacted writes: every byte ROSE puts on disk goes through here; and the one way
ROSE holds a lock file."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path

from rose.redact import redact, redact_file, redact_obj


def write_text(path: Path, text: str, *, redacted: bool = True, durable: bool = True) -> None:
    """Write `text` to `path` atomically: a temp file in the same folder, then a rename.

    Redaction keeps the file's syntax: YAML, and a lesson's front matter, stay YAML of the
    same shape (see `redact_file`). `durable` adds an fsync before the rename; scratch that
    is rebuilt anyway skips it. (No `tempfile` here: this module sits on the prompt hook's
    import path.)
    """
    if redacted:
        text = redact_file(path.name, text)
    _write(path, text.encode("utf-8"), durable)


def write_bytes(path: Path, data: bytes, *, durable: bool = False) -> None:
    """Write `data` atomically, unredacted: only for machine-local caches of what ROSE itself
    computed from file names and stats (no text a person or a model wrote passes here)."""
    _write(path, data, durable)


def _write(path: Path, data: bytes, durable: bool) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_json(path: Path, data: object, *, compact: bool = False, durable: bool = True) -> None:
    """Redact every string in `data`, then write it as JSON atomically (indented unless compact)."""
    if compact:  # hot paths: one pass over the text (it stays valid JSON) beats a tree walk
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        write_text(path, redact(text) + "\n", redacted=False, durable=durable)
        return
    else:
        text = json.dumps(redact_obj(data), indent=2, ensure_ascii=False, sort_keys=True)
    write_text(path, text + "\n", redacted=False, durable=durable)


def append_line(path: Path, line: str) -> None:
    """Append one redacted line with a single write() on an O_APPEND descriptor.

    Concurrent appenders each land whole lines: the kernel positions every
    O_APPEND write at the end of the file, so nobody loses an update.
    """
    data = (redact(line.rstrip("\n")) + "\n").encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


@contextlib.contextmanager
def exclusive(path: Path) -> Iterator[None]:
    """Hold an exclusive flock on `path` (made, with its folder, if missing) for the body of
    the `with`, waiting for it; closing drops the lock, as its holder's death does."""
    import fcntl

    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
