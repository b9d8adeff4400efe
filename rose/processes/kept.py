"""The process ROSE keeps between commands, reached over a unix socket in the user's folder.

One kind lives there: the graph server (`rose.graph.server`: a store's database held open,
at most one a store). It listens on `<kind>-<key>.sock` in `folder()` (mode 0700: only its
owner can reach it), holds `<kind>-<key>.lock` for its life, and takes one question or
one session per connection. What is here is the plumbing around it: the folder, binding a
socket, the wire (frames of a pickled tuple: both ends are the same user's processes),
asking one process or each of a kind, whether one is switched off, and the log it writes
what it prints to (`log_to`), redacted as every write is.

One wire carries everything: a question (`tell`: its status, stop, what changed) is the
frame `("ask", {...})`, answered by `("answer", {...})`; a graph session opens with
`("hello", {...})` and runs statements (`rose.graph._served`).
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import json
import os
import pickle
import socket
import struct
import sys
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

CONNECT_S = 0.5
MAX_REPLY = 16 * 1024 * 1024


#: What `ROSE_KEEP_OFF` may name, each a saving measured by `benchmarks/keepers.py`; the
#: first two are the kept process (or part of one), the rest start CLIs within a process.
MECHANISMS = ("graph", "watch", "spares")
_KEPT = MECHANISMS[:2]


def off(mechanism: str) -> bool:
    """Whether `mechanism` is switched off: `ROSE_KEEP_WARM=0` switches off every kept
    process, `ROSE_KEEP_OFF` (comma-separated, from `MECHANISMS`) the ones it names."""
    if mechanism in _KEPT and os.environ.get("ROSE_KEEP_WARM") == "0":
        return True
    return mechanism in os.environ.get("ROSE_KEEP_OFF", "").split(",")


def folder() -> Path | None:
    """The user's own folder for the sockets, made if missing; None when it cannot be made
    or is not the user's alone (another user could then reach what is kept)."""
    import tempfile  # only where no runtime folder is set: ~3 ms of a hook's start

    base = os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir()
    path = Path(base) / f"rose-{os.getuid()}"
    try:
        path.mkdir(mode=0o700, exist_ok=True)
        st = path.lstat()
    except OSError:
        return None
    if not path.is_dir() or path.is_symlink() or st.st_uid != os.getuid() or st.st_mode & 0o077:
        return None
    return path


def address(kind: str, key: str) -> Path | None:
    """The socket of the `kind` process for `key` (None: no folder, or too long to bind)."""
    base = folder()
    if base is None:
        return None
    path = base / f"{kind}-{key}.sock"
    return path if len(os.fsencode(path)) < 100 else None


def lock_path(path: Path) -> Path:
    return path.with_suffix(".lock")


def listen(path: Path, backlog: int = 16) -> tuple[IO[bytes], socket.socket] | None:
    """Hold the lock of the socket at `path` and listen on it; None when another process
    holds the lock (it got there first). The caller keeps both open for its life."""
    lock = open(lock_path(path), "a+b")  # noqa: SIM115 - held for the process's life
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        lock.close()
        return None
    path.unlink(missing_ok=True)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        server.bind(str(path))
    finally:
        os.umask(old)
    server.listen(backlog)
    return lock, server


MAGIC = b"RG"
HEAD = struct.Struct(">2sI")


def send(sock: socket.socket, message: tuple) -> None:
    body = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    sock.sendall(HEAD.pack(MAGIC, len(body)) + body)


def _exactly(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise EOFError("the connection ended")
        buf += chunk
    return bytes(buf)


def recv(sock: socket.socket, limit: int | None = MAX_REPLY) -> tuple:
    """One message; a frame past `limit` bytes (a request to the server) is refused."""
    magic, size = HEAD.unpack(_exactly(sock, HEAD.size))
    if magic != MAGIC or (limit is not None and size > limit):
        raise EOFError("not a kept process's frame")
    message = pickle.loads(_exactly(sock, size))
    if not isinstance(message, tuple) or not message:
        raise EOFError("not a kept process's message")
    return message


def clear_stale(path: Path) -> None:
    """Remove a socket no process holds (its lock is free), so the next prompt starts one."""
    with contextlib.suppress(OSError), open(lock_path(path), "a+b") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return  # a process holds it: it is binding the socket right now
        path.unlink(missing_ok=True)


def tell(path: Path, request: dict[str, Any]) -> dict | None:
    """The answer of the process at `path` to `request`; None when there is none (a socket
    nobody listens on is cleared once its lock is free)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(CONNECT_S)
        try:
            sock.connect(str(path))
            send(sock, ("ask", request))
            reply = recv(sock)
        except OSError:
            clear_stale(path)
            return None
        except Exception:  # not a kept process's answer (unpickling can raise anything)
            return None
    answer = reply[1] if len(reply) == 2 and reply[0] == "answer" else None
    return answer if isinstance(answer, dict) else None


def tell_each(kind: str, request: dict[str, Any]) -> list[tuple[Path, dict]]:
    """Each `kind` process's socket with its reply to `request`."""
    paths = sorted(base.glob(f"{kind}-*.sock")) if (base := folder()) else []
    told = [(path, tell(path, request)) for path in paths]
    return [(path, reply) for path, reply in told if reply is not None]


_HOLD_LINES = 200  # a private key's block held back at most this many lines


class RedactedLog(io.TextIOBase):
    """What a kept process prints, redacted a line at a time before it reaches its log; a
    private key's block is held back until its END line and redacted whole. A line not yet
    ended waits for its end (a process that dies meanwhile loses it, never leaks it)."""

    def __init__(self, fd: int):
        self.fd = fd
        self.part = ""
        self.held: list[str] = []

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        *lines, self.part = (self.part + text).split("\n")
        for line in lines:
            if self.held or "-----BEGIN" in line:
                self.held.append(line)
                if "-----END" in line or len(self.held) >= _HOLD_LINES:
                    self._out("\n".join(self.held))
                    self.held = []
            else:
                self._out(line)
        return len(text)

    def _out(self, text: str) -> None:
        from rose.redaction.redact import redact

        os.write(self.fd, (redact(text) + "\n").encode("utf-8", "replace"))


def log_to(path: Path) -> None:
    """From now on, what this process (and what it forks) prints goes to the log at `path`,
    redacted; what is written below Python to its standard output and error (a library's
    own messages) goes to the null device, never to the disk unredacted."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    os.close(null)
    sys.stdout = sys.stderr = RedactedLog(fd)


def say(who: str, text: str) -> None:
    """One line to this kept process's log (`log_to`), redacted as every write is."""
    from rose.redaction.redact import redact

    print(redact(f"rose {who} {os.getpid()}: {text}"), file=sys.stderr, flush=True)


def run(who: str, serve: Callable[[dict[str, Any]], int]) -> int:
    """A kept process's main: `serve` the JSON spec its starter passed as its argument;
    its exit code (1, the error logged, when serving raised)."""
    try:
        return serve(json.loads(sys.argv[1]))
    except Exception as exc:
        say(who, repr(exc))
        return 1
