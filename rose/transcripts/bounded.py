"""A transcript's lines read with bounds: only from a regular file, from a byte offset, at
most so many bytes, until a deadline.

A transcript's path comes from the host's hook payload: a device (`/dev/zero`), a FIFO
with no writer or a sparse file of a gigabyte must not hang a hook or fill memory. What a
bound leaves unread is reported (`cut`, `offset`) so the caller can say so and read on from
`offset` next time: nothing written later is lost to the bound.

Standard library only: the Stop hook reads through it.
"""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

from rose.errors import TranscriptError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import BinaryIO

#: Bytes the Stop hook reads of one turn's growth. The stored real transcripts hold whole
#: sessions in 3 KB to 515 KB, and a turn that pastes a screenshot adds about 1-2 MB of
#: base64: 32 MiB is many such turns, and is counted in about 0.4 s here.
HOOK_BYTES = 32 << 20
#: Seconds the Stop hook may spend reading: far below the host's hook timeout (60 s).
HOOK_SECONDS = 2.0
#: Bytes a detached job reads at a time (`Windows`): eight times the longest sessions seen
#: (tens of MB), and a bounded share of memory. A longer session is read on in more windows.
JOB_BYTES = 256 << 20
#: Seconds a job may spend reading a transcript: a fifth of its runner's deadline (300 s).
JOB_SECONDS = 60.0

_CHUNK = 1 << 20
_KINDS = (
    (stat.S_ISDIR, "is a folder, not a file"),
    (stat.S_ISFIFO, "is a FIFO, not a regular file"),
    (stat.S_ISCHR, "is a character device, not a regular file"),
    (stat.S_ISBLK, "is a block device, not a regular file"),
    (stat.S_ISSOCK, "is a socket, not a regular file"),
)


def _refusal(mode: int) -> str:
    if stat.S_ISREG(mode):
        return ""
    return next((why for is_kind, why in _KINDS if is_kind(mode)), "is not a regular file")


def _unreadable(path: Path, exc: OSError) -> TranscriptError:
    return TranscriptError(path, f"cannot be read ({exc.strerror or exc})")


def open_regular(path: Path) -> BinaryIO:
    """`path` opened for reading if it is a regular file; TranscriptError says why not.

    Checked before opening (opening a device can act on it) and again on what was opened (a
    swap in between); opened non-blocking so a FIFO can never hold the open."""
    try:
        why = _refusal(os.stat(path).st_mode)
        if why:
            raise TranscriptError(path, why)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise TranscriptError(path, "no such file") from None
    except OSError as exc:
        raise _unreadable(path, exc) from None
    why = _refusal(os.fstat(fd).st_mode)
    if why:
        os.close(fd)
        raise TranscriptError(path, why)
    return os.fdopen(fd, "rb")


class Lines:
    """The lines of the regular file at `path` from byte `start`, each with the offset just
    after it; at most `limit` bytes, until `seconds` have passed.

    A line still being written (no newline at the end of the file) is yielded only with
    `partial`. After the loop `cut` is "" when the file was read to its end, else "cap" or
    "deadline"; `offset` is where the next read should start and `unread` the bytes after it.
    A single line longer than `limit` is passed over, not read again and again: `offset`
    then moves past the bytes read, and the line's rest is read next time as a line that is
    not JSON."""

    def __init__(self, path: Path, start: int, limit: int, seconds: float, *, partial: bool):
        self.path = path
        self.start = start
        self.limit = limit
        self.seconds = seconds
        self.partial = partial
        self.size = 0
        self.offset = start
        self.cut = ""

    @property
    def unread(self) -> int:
        return max(0, self.size - self.offset)

    def __iter__(self) -> Iterator[tuple[int, bytes]]:
        until = time.monotonic() + self.seconds
        with open_regular(self.path) as f:
            self.size = os.fstat(f.fileno()).st_size
            if not 0 <= self.start <= self.size:
                self.start = self.offset = 0  # shorter than the offset: replaced, read anew
            f.seek(self.start)
            try:
                yield from self._read(f, until)
            except OSError as exc:
                raise _unreadable(self.path, exc) from None

    def _read(self, f: BinaryIO, until: float) -> Iterator[tuple[int, bytes]]:
        pos = self.start  # the offset just after the last complete line
        held: list[bytes] = []  # the pieces of a line not yet complete
        taken = 0
        while True:
            if time.monotonic() >= until:
                self.cut = "deadline"
                break
            want = min(_CHUNK, self.limit - taken)
            chunk = f.read(want) if want > 0 else b""
            taken += len(chunk)
            if not chunk:
                self.cut = "cap" if want <= 0 and f.read(1) else ""
                break
            if b"\n" not in chunk:
                held.append(chunk)  # joined once the line ends, not at every chunk
                continue
            lines = chunk.split(b"\n")
            lines[0] = b"".join([*held, lines[0]])
            held = [lines.pop()]
            for raw in lines:
                pos += len(raw) + 1
                self.offset = pos
                yield pos, raw + b"\n"
                if time.monotonic() >= until:
                    self.cut = "deadline"
                    return
        rest = b"".join(held)
        if self.cut == "cap" and pos == self.start:
            self.offset = self.start + taken  # one line longer than the cap: passed over
        elif not self.cut and rest and self.partial:
            self.offset = pos + len(rest)
            yield self.offset, rest


class Windows:
    """The lines of the regular file at `path` from byte `start` to its end, read as `Lines`
    windows of at most `limit` bytes each (each from the offset the last one reached), all
    within `seconds`; each line with its number (1-based from `start`) and its end offset.

    No single read holds more than `limit` bytes, and what lies past the first `limit` bytes
    is read all the same. After the loop `cut` is "deadline" when time ran out before the
    end (`offset` is where it stopped, `unread` the bytes after it), else "cap" when a line
    longer than `limit` was passed over (`unread` the bytes of it not read), else ""."""

    def __init__(self, path: Path, start: int, limit: int, seconds: float, *, partial: bool):
        self.path = path
        self.limit = max(1, limit)
        self.seconds = seconds
        self.partial = partial
        self.offset = start
        self.cut = ""
        self.size = 0
        self.passed = 0  # bytes of lines longer than `limit`, passed over

    @property
    def unread(self) -> int:
        return max(0, self.size - self.offset) if self.cut == "deadline" else self.passed

    def __iter__(self) -> Iterator[tuple[int, int, bytes]]:
        until = time.monotonic() + self.seconds
        n = 0
        while True:
            window = Lines(self.path, self.offset, self.limit, until - time.monotonic(),
                           partial=self.partial)  # fmt: skip
            before = n
            for pos, raw in window:
                n += 1
                yield n, pos, raw
            self.size = window.size
            if window.cut == "cap" and n == before:  # one line longer than the cap
                self.passed += window.offset - window.start
            self.offset = window.offset
            if window.cut != "cap":
                self.cut = window.cut or ("cap" if self.passed else "")
                return
