"""Atomic, redacted writes: every byte ROSE puts on disk goes through here; and the one way
ROSE holds a lock file."""

from __future__ import annotations

import contextlib
import errno
import functools
import json
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

from rose.errors import WriteFailed
from rose.redaction.redact import redact, redact_obj
from rose.redaction.redact_files import redact_file

TYPE_CHECKING = False  # `typing` costs the prompt hook ~4 ms to import: only for the checker
if TYPE_CHECKING:
    from typing import Any, TypeVar

    _F = TypeVar("_F", bound=Callable[..., Any])

#: For tests: `ROSE_WRITE_FAULT=ENOSPC` (or `EROFS`, `EACCES`) fails every write made here
#: with that error, as a full or read-only disk would.
FAULT_ENV = "ROSE_WRITE_FAULT"
#: What a disk says when it will not take a write: these become a `WriteFailed` naming the file.
_REFUSED = {errno.EROFS, errno.ENOSPC, errno.EDQUOT, errno.EACCES, errno.EPERM}


def fault() -> int | None:
    """The errno the fault hook (`FAULT_ENV`) sets for every write, or None."""
    code = getattr(errno, os.environ.get(FAULT_ENV) or "-", None)
    return code if isinstance(code, int) else None


def _refusals(fn: _F) -> _F:
    """A write to the path in the first argument that the disk refuses raises `WriteFailed`."""

    @functools.wraps(fn)
    def wrapper(path: Path, *args: Any, **kwargs: Any) -> Any:
        try:
            if (code := fault()) is not None:
                raise OSError(code, os.strerror(code), str(path))
            return fn(path, *args, **kwargs)
        except WriteFailed:
            raise
        except OSError as exc:
            if exc.errno not in _REFUSED:
                raise
            raise WriteFailed(path, exc) from None

    return wrapper  # type: ignore[return-value]


_told = False


def tell_once(line: str) -> None:
    """One line a process on stderr, the first time ROSE goes on without a write."""
    global _told
    if not _told:
        _told = True
        print(f"rose: {line}", file=sys.stderr)


def uncached(exc: WriteFailed, what: str) -> None:
    """Say (once a process) that `what` could not be cached at its path; nothing is raised."""
    tell_once(f"could not cache {what} at {exc.path} ({exc.what}); went on without it")


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


@_refusals
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


@_refusals
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
