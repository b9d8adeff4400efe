"""Atomic, redacted writes: every byte ROSE puts on disk goes through here."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from rose.redact import redact, redact_obj


def write_text(path: Path, text: str, *, redacted: bool = True) -> None:
    """Write `text` to `path` atomically (temp file in the same folder, fsync, rename)."""
    if redacted:
        text = redact(text)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_json(path: Path, data: Any) -> None:
    """Redact every string in `data`, then write it as indented JSON atomically."""
    text = json.dumps(redact_obj(data), indent=2, ensure_ascii=False, sort_keys=True) + "\n"
    write_text(path, text, redacted=False)


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
