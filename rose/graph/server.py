"""A graph server: one process that keeps a store's database open between the processes
that use it, so a command, a hook or a job asks it over a unix socket instead of opening
the engine itself (the open and close cost ~25-45 ms at 10,000 lessons, and every open
starts on a cold buffer pool).

The engine lets one process hold the database, so the server serves one session at a
time: a process's `open_graph` becomes a session (its statements, transactions included,
run on the server's connection), and the next waits for it as it would wait for a lock.
A session that ends with a transaction open (its process died, or let go half way) is
rolled back. The holder note beside the database (`<db>.holder`) names the server and its
socket: that is how every process finds it, whatever its environment. While a session
runs, the server leaves `<db>.serving-<pid>`: a server that dies in a session is taken for
a crash with the database in hand (the next open rebuilds it from the files), one that
dies between sessions held nothing.

Started by a process that opened the database itself (`launch`, when `graph.keep_open_s`
> 0 and `ROSE_KEEP_WARM` is not 0); it ends after that many seconds without a session, on
SIGTERM, when asked (`stop`: before the database is moved aside or deleted), when its
buffer pool no longer fits the database, or after a statement finds the database
damaged. One is up a store at most: its socket's lock is held for its life.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import pickle
import selectors
import signal
import socket
import sys
import time
from collections import deque
from pathlib import Path
from typing import Any

from rose.graph.engine import (
    buffer_pool_bytes,
    defer_checkpoint,
    file_identity,
    is_storage_damage,
    live_holder,
    release_holder,
    serving_note,
)
from rose.processes import detach, kept

KIND = "graph"
_OPEN_S = 15.0  # how long a new server waits for the database (its starter holds it)
_FIRST_S = 2.0  # a connection's first message comes within this
_CHECK_S = 5.0  # an idle server checks this often that its database and socket are in place
_STOP_S = 10.0  # `stop` waits this long for the server to let go
_ROOT = Path(__file__).resolve().parents[1]  # the `rose` package
_BOOT = (
    "import sys; sys.path.insert(0, sys.argv.pop(1)); "
    "from rose.graph.server import main; sys.exit(main())"
)


def enabled() -> bool:
    return not kept.off("graph")


def key(path: Path, engine: str) -> str:
    blob = json.dumps([os.path.realpath(path), engine, sys.executable])
    import hashlib  # a process that only asks a server never needs it (~3 ms)

    return hashlib.sha256(blob.encode("utf-8", "surrogateescape")).hexdigest()[:24]


# The wire and the client side live in `_served`, named here for their callers.
from rose.graph._served import HEAD as HEAD  # noqa: E402
from rose.graph._served import MAGIC as MAGIC  # noqa: E402
from rose.graph._served import ServedGraph as ServedGraph  # noqa: E402
from rose.graph._served import changes as changes  # noqa: E402
from rose.graph._served import connect as connect  # noqa: E402
from rose.graph._served import holder_note as holder_note  # noqa: E402
from rose.graph._served import recv as recv  # noqa: E402
from rose.graph._served import send as send  # noqa: E402
from rose.graph._served import serving as serving  # noqa: E402


def launch(path: Path, engine: str, keep_s: float) -> bool:
    """Start a server for the database at `path` unless one is up or starting; whether one
    was started. Never raises: a server is only ever a saving. A process run in the
    background (a job) starts none: the server would inherit its lowered threads for life,
    and the prompt hook's slow path waits on it; the next process that is not starts one."""
    if not enabled() or keep_s <= 0 or detach.lowered():
        return False
    try:
        addr = kept.address(KIND, key(path, engine))
        if addr is None or not _lock_free(addr):
            return False
        spec = json.dumps({"path": str(path), "engine": engine, "keep_s": keep_s})
        detach.spawn([sys.executable, "-c", _BOOT, str(_ROOT.parent), spec], dict(os.environ))
        return True
    except Exception:
        return False


def _lock_free(addr: Path) -> bool:
    try:
        with open(kept.lock_path(addr), "a+b") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def stop(path: Path) -> bool:
    """Ask the server holding `path` (of either engine) to let it go, and wait until it
    has (at most `_STOP_S`: one in a long session may not); whether it let go (False
    also when none held it)."""

    info = live_holder(path)
    if info is None or not isinstance(info.get("serve"), str):
        return False
    pid = info.get("pid")
    if kept.tell(Path(info["serve"]), {"stop": True}) is None and isinstance(pid, int):
        # It did not answer (a server of an older wire, say): SIGTERM lets it go as well.
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)
    end = time.monotonic() + _STOP_S
    while time.monotonic() < end:
        now = live_holder(path)
        if now is None or now.get("pid") != pid:
            return True
        time.sleep(0.01)
    return False


def status(path: Path) -> dict | None:
    """What the server holding `path` says of itself (pid, seconds idle and left), or None."""

    info = live_holder(path)
    if info is None or not isinstance(info.get("serve"), str):
        return None
    return kept.tell(Path(info["serve"]), {"status": True})


def stop_under(root: Path) -> int:
    """Ask each graph server of this user whose database lies under `root` to let go (a
    benchmark's stores, before their folder is removed); how many were asked."""
    base = os.path.realpath(root) + os.sep
    asked = 0
    for path, reply in kept.tell_each(KIND, {"status": True}):
        if str(reply.get("path") or "").startswith(base):
            kept.tell(path, {"stop": True})
            asked += 1
    return asked


def status_all() -> list[dict[str, Any]]:
    """What each graph server of this user says of itself (`Server.status`)."""
    return [r for _, r in kept.tell_each(KIND, {"status": True}) if "pid" in r]


def stop_all() -> int:
    """Ask every graph server of this user to exit; how many were asked."""
    return sum(1 for _, r in kept.tell_each(KIND, {"stop": True}) if r.get("stopped"))


# -- the server ----------------------------------------------------------------------------


def outgrown(pool: int, wanted: int) -> bool:
    """Whether a server opened with buffer pool `pool` should let go, the database now
    wanting `wanted` (`buffer_pool_bytes`: four times its size, or a floor): once it has
    doubled, the pool holds it only twice. Any growth at all would end a server after every
    write once a store is past the floor (~13,000 lessons), and each open after it would
    open the engine and scan every folder again."""
    return bool(pool) and wanted > 2 * pool


class Server:
    def __init__(self, path: Path, engine: str, keep_s: float, mod: Any, db: Any, pool: int):
        self.path, self.engine, self.keep_s = path, engine, keep_s
        self.mod, self.db, self.pool = mod, db, pool
        self.conn = self._connection()
        self.ident = file_identity(path)  # the database file it holds, to tell when it moved
        self.addr: Path | None = None
        self.session: socket.socket | None = None
        self.serving_pid: int | None = None  # the process whose session runs
        self.read_only = False
        self.waiting: deque[tuple[socket.socket, dict]] = deque()
        self.idle_since = time.monotonic()
        self.started = time.monotonic()
        self.sessions = 0
        self.stopping = False
        self.open = True
        self.sel: selectors.BaseSelector | None = None
        self.watch: Any = None  # what changed in the store's folders (`_watch`), once asked
        self.watch_tried = False

    def _connection(self) -> Any:
        conn = self.mod.Connection(self.db)
        defer_checkpoint(conn, self.path)
        return conn

    def held_still(self) -> bool:
        """Whether the database it holds is still where processes find it, and they can
        reach the server: a store moved (the engine reopens its log by the old path) or a
        socket removed (a runtime folder cleaned) makes it let go."""
        if file_identity(self.path) != self.ident:
            kept.say("graph server", f"{self.path} moved or went: letting go")
            return False
        if self.addr is not None and not self.addr.exists():
            kept.say("graph server", "its socket was removed: letting go")
            return False
        return True

    def status(self) -> dict[str, Any]:
        idle = 0.0 if self.session else time.monotonic() - self.idle_since
        return {"pid": os.getpid(), "path": str(self.path), "engine": self.engine,
                "busy": self.session is not None, "serving": self.serving_pid,
                "waiting": len(self.waiting),
                "sessions": self.sessions, "idle_s": round(idle, 1),
                "exits_in_s": round(max(0.0, self.keep_s - idle), 1),
                "watched": sorted(self.watch.tops) if self.watch else [],
                "unwatched": dict(self.watch.refused) if self.watch else {}}  # fmt: skip

    def serve(self, listener: socket.socket, wake: int) -> None:
        sel = self.sel = selectors.DefaultSelector()
        sel.register(listener, selectors.EVENT_READ, "accept")
        sel.register(wake, selectors.EVENT_READ, "wake")
        while self.open:
            if self.session is None:
                self._next(sel)
            if self.session is None:
                if self.stopping or time.monotonic() - self.idle_since >= self.keep_s:
                    break
                if not self.held_still():
                    self.stopping = True
                    continue
                left = self.keep_s - (time.monotonic() - self.idle_since)
                timeout: float | None = min(left, _CHECK_S)
            else:
                timeout = None
            for sk, _ in sel.select(timeout):
                if sk.data == "accept":
                    with contextlib.suppress(OSError):
                        conn, _ = listener.accept()
                        self._first(conn)
                elif sk.data == "wake":
                    with contextlib.suppress(OSError):
                        os.read(wake, 512)
                elif sk.data == "session" and self.session is not None:
                    self._step(sel)
                elif sk.data == "watch":
                    self.watch.drain()  # as events come: the kernel's queue never fills
        sel.close()
        if self.watch is not None:
            self.watch.close()

    def _first(self, conn: socket.socket) -> None:
        """A new connection's first message: a question (status, stop, changes) answered
        now, or a session's hello, queued."""
        conn.settimeout(_FIRST_S)
        try:
            message = recv(conn)
        except Exception:  # not a frame (unpickling can raise anything): dropped
            conn.close()
            return
        if len(message) != 2 or not isinstance(message[1], dict):
            conn.close()
        elif message[0] == "ask":
            self._answer(conn, message[1])
        elif message[0] != "hello" or self.stopping:
            conn.close()  # once this server has let go, it opens the database itself
        else:
            conn.settimeout(None)
            self.waiting.append((conn, message[1]))

    def _answer(self, conn: socket.socket, request: dict) -> None:
        with conn:
            if request.get("stop"):
                self.stopping = True
                if self.session is None:  # let go before the answer: the asker waits on it
                    self.close_engine()
                reply: dict[str, Any] = {"stopped": True, "pid": os.getpid()}
            elif isinstance(request.get("changes"), dict):
                reply = self._changes(request["changes"])
            else:
                reply = self.status()
            with contextlib.suppress(OSError):
                send(conn, ("answer", reply))

    def _changes(self, request: dict) -> dict[str, Any]:
        """What changed under the store folders asked about (`changes`)."""
        if not self.watch_tried:
            from rose.graph._watch import Watch

            self.watch_tried = True
            self.watch = None if kept.off("watch") else Watch.open()
            if self.watch is not None and self.sel is not None:
                self.sel.register(self.watch.fd, selectors.EVENT_READ, "watch")
        tops = request.get("tops")
        if self.watch is None or not (
            isinstance(tops, list) and all(isinstance(t, str) for t in tops)
        ):
            return {"unwatched": True}
        return self.watch.changes(tops, request.get("since"))

    def _next(self, sel: selectors.BaseSelector) -> None:
        if self.waiting and not self.held_still():
            self.stopping = True
        while self.waiting and self.session is None and self.open and not self.stopping:
            conn, hello = self.waiting.popleft()

            with contextlib.suppress(OSError):  # a store moved meanwhile: no note, no harm
                serving_note(self.path, os.getpid()).touch()
            try:
                send(conn, ("ready", os.getpid()))
            except OSError:  # it gave up waiting
                conn.close()
                serving_note(self.path, os.getpid()).unlink(missing_ok=True)
                continue
            self.session, self.read_only = conn, bool(hello.get("read_only"))
            pid = hello.get("pid")
            self.serving_pid = pid if isinstance(pid, int) else None
            self.sessions += 1
            sel.register(conn, selectors.EVENT_READ, "session")
        if self.stopping:
            for conn, _ in self.waiting:
                conn.close()
            self.waiting.clear()

    def _step(self, sel: selectors.BaseSelector) -> None:
        conn = self.session
        assert conn is not None
        try:
            message = recv(conn, limit=None)  # a statement's parameters may be any size
        except Exception:  # the session ended, or sent what cannot be read: it ends here
            self._end(sel)
            return
        if message[0] != "run" or len(message) != 3:
            self._end(sel)
            return
        reply, damaged = self._run(str(message[1]), message[2])
        if damaged:  # let go first: the store moves the database aside once it hears
            kept.say("graph server", f"{self.path.name}: damage: {reply[1]}")
            self.close_engine()
        try:
            send(conn, reply)
        except OSError:
            self._end(sel)
        except (pickle.PicklingError, TypeError, AttributeError, RecursionError) as exc:
            with contextlib.suppress(OSError):  # a value the wire cannot carry
                send(conn, ("error", f"the graph server could not send the result: {exc}"))

    def _run(self, statement: str, params: Any) -> tuple[tuple, bool]:
        if self.read_only:
            from rose.graph.readonly import session_refusal

            refused = session_refusal(statement, self.engine)
            if refused:
                return ("error", refused), False
        try:
            if self.read_only:
                self.conn.execute("BEGIN TRANSACTION READ ONLY")
            try:
                res = self.conn.execute(statement, params if isinstance(params, dict) else {})
                results = res if isinstance(res, list) else [res]
                payload = [(r.get_column_names(), r.get_all()) for r in results]
            finally:
                if self.read_only:
                    with contextlib.suppress(RuntimeError):
                        self.conn.execute("ROLLBACK")
        except RuntimeError as exc:
            message = str(exc).strip()
            return ("error", message), is_storage_damage(message)
        except UnicodeDecodeError as exc:
            return ("unicode", str(exc)), False
        except Exception as exc:  # a parameter the engine cannot take, say
            return ("error", f"{type(exc).__name__}: {exc}"), False
        return ("rows", payload), False

    def _end(self, sel: selectors.BaseSelector) -> None:
        """End the session. The next gets a connection of its own: closing this one rolls
        back a transaction it left open, and drops any setting it made (`CALL x=...`)."""

        conn = self.session
        if conn is None:
            return
        with contextlib.suppress(KeyError, ValueError):
            sel.unregister(conn)
        conn.close()
        if self.open:
            self.conn.close()
            self.conn = self._connection()
        self.session, self.serving_pid = None, None
        serving_note(self.path, os.getpid()).unlink(missing_ok=True)
        self.idle_since = time.monotonic()
        if outgrown(self.pool, buffer_pool_bytes(self.path)):
            kept.say("graph server", "the database outgrew the buffer pool: ending")
            self.stopping = True

    def close_engine(self) -> None:
        """Close the connection and the database and say so in the holder note (once)."""

        if not self.open:
            return
        self.open = False
        try:
            self.conn.close()
            self.db.close()
        finally:
            release_holder(self.path)
            serving_note(self.path, os.getpid()).unlink(missing_ok=True)


def serve(spec: dict[str, Any]) -> int:
    """Hold the database of `spec` (from `launch`) and serve it until idle; its exit code."""
    from rose.errors import RoseError
    from rose.graph import engine as eng

    path, engine, keep_s = Path(spec["path"]), str(spec["engine"]), float(spec["keep_s"])
    addr = kept.address(KIND, key(path, engine))
    if addr is None:
        return 0
    # Listening from the start: a process finds the server by its holder note, written once
    # it holds the database, and may connect at once (waiting sessions queue on the socket).
    listening = kept.listen(addr, backlog=64)
    if listening is None:
        return 0  # another server for it got there first
    lock, listener = listening
    kept.log_to(addr.with_suffix(".log"))
    if eng.crash_note(path) or not path.exists():
        addr.unlink(missing_ok=True)
        return 0  # the next open heals it (or builds it) first
    mod = eng.engine_module(engine)
    stop_early: list[int] = []  # a SIGTERM inside the engine's open: let go once it is done
    signal.signal(signal.SIGTERM, lambda *_: stop_early.append(1))
    try:
        pool = eng.buffer_pool_bytes(path)
        db = eng.open_database(mod, path, False, _OPEN_S)
    except RoseError as exc:
        _say(f"{path.name}: not held ({exc})")
        addr.unlink(missing_ok=True)
        listener.close()
        return 0
    server = Server(path, engine, keep_s, mod, db, pool)
    server.addr, server.stopping = addr, bool(stop_early)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGTERM, lambda *_: setattr(server, "stopping", True))
    eng.claim_holder(path, cmd="graph server", serve=str(addr), engine=engine)
    _say(f"holding {path}")
    try:
        server.serve(listener, wake_r)
    finally:
        addr.unlink(missing_ok=True)  # new processes open it themselves from here on
        listener.close()
        server.close_engine()
        for conn_, _ in server.waiting:
            conn_.close()
        lock.close()
    _say(f"let go of {path.name} after {server.sessions} session(s)")
    return 0


def _say(text: str) -> None:
    kept.say("graph server", text)


def main() -> int:
    # Not lowered to the background (rose.processes.detach.background) as jobs are: the prompt
    # hook's slow path and every command wait on its statements, so it answers
    # everyone at the priority of the user who started it.
    return kept.run("graph server", serve)


if __name__ == "__main__":
    sys.exit(main())
