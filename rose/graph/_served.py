"""A graph server's sessions as the processes that ask it see them (`rose.graph.server`):
a session as a `Graph`, over the kept process's wire (`rose.processes.kept`), and the
question of what changed in the store's folders (`rose.graph._watch`).
"""

from __future__ import annotations

import os
import pickle
import select
import socket
import time
from pathlib import Path
from typing import Any

from rose.graph.engine import Graph, live_holder, process_alive, process_state
from rose.processes import kept

_STALL_S = 0.5  # a session's client checks this often that the server is not stopped
MAGIC, HEAD, send, recv = kept.MAGIC, kept.HEAD, kept.send, kept.recv


def _readable(sock: socket.socket, timeout: float) -> bool:
    poll = select.poll()
    poll.register(sock, select.POLLIN)
    return bool(poll.poll(timeout * 1000))


# -- the client: `open_graph` asks a server that holds the database ---------------------------


class _Result:
    """One statement's result, as the engine's QueryResult offers it to `Graph.run`."""

    def __init__(self, columns: list[str], rows: list[list[Any]]):
        self.columns, self.rows = columns, rows

    def get_column_names(self) -> list[str]:
        return self.columns

    def get_all(self) -> list[list[Any]]:
        return self.rows


class _Connection:
    """The engine's Connection, as `Graph` uses it, over a session of a graph server."""

    def __init__(self, sock: socket.socket, pid: int, path: Path, stall_s: float):
        self.sock, self.pid, self.path, self.stall_s = sock, pid, path, stall_s

    def _reply(self) -> tuple:
        """The server's answer, however long the statement runs, unless the server stays
        stopped (SIGSTOP, a debugger) for `stall_s`: then `StoreLocked`, as for a lock."""
        stopped_s = 0.0
        while not _readable(self.sock, _STALL_S):
            state = process_state(self.pid)
            if state is None:
                raise EOFError("the graph server is gone")
            stopped_s = stopped_s + _STALL_S if state in ("T", "t") else 0.0
            if stopped_s >= self.stall_s:
                from rose.errors import StoreLocked

                holder = f"pid {self.pid} (graph server, stopped)"
                raise StoreLocked(self.path, holder, stopped_s, "it stopped during a statement")
        return recv(self.sock, limit=None)

    def execute(self, statement: str, params: dict[str, Any] | None = None) -> Any:
        try:
            body = pickle.dumps(("run", statement, params or {}), protocol=pickle.HIGHEST_PROTOCOL)
        except (pickle.PicklingError, TypeError, AttributeError) as exc:
            raise RuntimeError(f"the statement's parameters cannot be sent: {exc}") from None
        try:
            self.sock.sendall(HEAD.pack(MAGIC, len(body)) + body)
            reply = self._reply()
        except (OSError, EOFError, pickle.UnpicklingError) as exc:
            if process_alive(self.pid):  # it ended this session, not itself: no damage
                raise RuntimeError(
                    f"the graph server (pid {self.pid}) ended the session during a statement "
                    f"({exc}); run the command again"
                ) from None
            # As when a process dies with the database open: taken for damage, rebuilt.
            raise RuntimeError(
                f"Storage exception: the graph server (pid {self.pid}) ended during a "
                f"statement ({exc})"
            ) from None
        if reply[0] == "rows":
            results = [_Result(cols, rows) for cols, rows in reply[1]]
            return results[0] if len(results) == 1 else results
        if reply[0] == "unicode":
            raise UnicodeDecodeError("utf-8", b"", 0, 1, str(reply[1]))
        raise RuntimeError(str(reply[1]) if len(reply) > 1 else "the graph server refused")

    def close(self) -> None:
        self.sock.close()


def holder_note(path: Path, engine: str) -> dict | None:
    """The holder note of a live graph server of `engine` holding `path`, or None."""

    info = live_holder(path)
    if info is None or not isinstance(info.get("serve"), str) or info.get("engine") != engine:
        return None
    return info


def serving(path: Path, engine: str) -> bool:
    """Whether a graph server of `engine` holds the database at `path`."""
    return holder_note(path, engine) is not None


class ServedGraph(Graph):
    """A session of a graph server: the graph as `Graph` offers it; `close` ends it."""

    def close(self) -> None:
        self._conn.close()


def connect(path: Path, engine: str, read_only: bool, wait_s: float) -> ServedGraph | None:
    """A session of the server holding `path` as a `Graph` (close it to end the session),
    or None when no server holds it (or it ended meanwhile). Waits for the session before
    it until `wait_s`, then raises `StoreLocked` naming the server."""
    info = holder_note(path, engine)
    if info is None:
        return None
    t0 = time.monotonic()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(kept.CONNECT_S)
        sock.connect(info["serve"])
        send(sock, ("hello", {"read_only": read_only, "pid": os.getpid()}))
    except OSError:  # gone, or not answering at all: the process opens it itself
        sock.close()
        return None
    try:
        sock.settimeout(max(0.05, wait_s))
        reply = recv(sock)
    except TimeoutError:
        sock.close()
        from rose.errors import StoreLocked

        told = kept.tell(Path(info["serve"]), {"status": True}) or {}
        whom = f"pid {told['serving']}" if told.get("serving") else "another process"
        holder = f"pid {info['pid']} (graph server, serving {whom})"
        raise StoreLocked(path, holder, time.monotonic() - t0, "its session did not end") from None
    except (OSError, EOFError, pickle.PickleError):
        sock.close()
        return None
    if reply[0] != "ready":
        sock.close()
        return None
    sock.settimeout(None)
    return ServedGraph(_Connection(sock, int(info["pid"]), path, max(1.0, wait_s)), path)


def changes(path: Path, tops: list[str], since: Any) -> dict[str, Any] | None:
    """What the graph server holding `path` saw change in the folders `tops` since the
    token `since` (`rose.graph._watch.Watch.changes`: a new `token`, the `fresh` tops and
    the `dirty` folders), or None when no server holds it or it watches nothing."""
    info = live_holder(path)
    if info is None or not isinstance(info.get("serve"), str):
        return None
    reply = kept.tell(Path(info["serve"]), {"changes": {"tops": tops, "since": since}})
    if reply is None or not all(
        isinstance(reply.get(k), list) for k in ("token", "fresh", "dirty")
    ):
        return None
    return reply
