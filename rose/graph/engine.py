"""The one door to the embedded graph engine (kuzu, or its fork ladybug).

No other module imports either package. Opens are short: open, do one unit of
work, close. Under kuzu any open locks every other process out, so an open that
meets another process retries with jittered backoff until a deadline and then
names the file and, where known, the process holding it. An open that fails with
nobody else there is damage: reported at once, so the store can move the
database aside and rebuild it from the files.
"""

from __future__ import annotations

import errno
import importlib
import json
import os
import random
import sys
import time
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from decimal import Decimal
from pathlib import Path
from typing import Any

from rose.errors import GraphDamaged, QueryError, RoseError, StoreLocked, StoreReadOnly

ENGINES = ("kuzu", "ladybug")


def engine_module(engine: str) -> Any:
    if engine == "kuzu":
        return _import("kuzu")
    if engine == "ladybug":
        try:
            return _import("ladybug")
        except ImportError:
            raise RoseError(
                "graph engine 'ladybug' is not installed: pip install 'rose-memory[ladybug]'"
            ) from None
    raise RoseError(f"unknown graph engine {engine!r}; choose one of {', '.join(ENGINES)}")


class _NoAsync:
    """Stands in for the engine's AsyncConnection, which ROSE never uses (`_import`)."""

    def __init__(self, *args: Any, **kwargs: Any):
        raise RoseError("the graph engine's async connection is not loaded inside ROSE")


def _import(name: str) -> Any:
    """The engine's package, imported without its async connection module: both engines'
    packages import it at once, and it imports asyncio, ~60 ms of every process that opens
    the graph (measured on 2 cores: `import kuzu` 84 ms, 7 ms with asyncio loaded). A
    package that wants more of that module than the class is imported whole."""
    if name in sys.modules:
        return sys.modules[name]
    sub = f"{name}.async_connection"
    planted = sub not in sys.modules
    if planted:
        stub = types.ModuleType(sub, "ROSE's stand-in: the async connection is never used")
        setattr(stub, "AsyncConnection", _NoAsync)  # noqa: B010 - a module made here
        sys.modules[sub] = stub
    try:
        return importlib.import_module(name)
    except ImportError:
        for loaded in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
            del sys.modules[loaded]
        if not planted:
            raise
        return importlib.import_module(name)


def version(engine: str) -> str:
    mod = engine_module(engine)
    return str(getattr(mod, "__version__", "?"))


_SCALARS = (str, int, float, bool, type(None))


def _plain(value: Any) -> Any:
    """Engine values as plain Python: Decimal → int/float, ladybug's `_ID`/`_LABEL` lower-cased."""
    if type(value) in _SCALARS:  # the common case, first: rows are mostly strings and numbers
        return value
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {
            ("_id" if k == "_ID" else "_label" if k == "_LABEL" else k): _plain(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


class Graph:
    """An open connection. `run` returns rows as dicts keyed by the RETURN names."""

    def __init__(self, conn: Any, path: Path):
        self._conn = conn
        self.path = path

    def run(self, statement: str, params: dict[str, Any] | None = None, *, name: str) -> list[dict]:
        try:
            res = self._conn.execute(statement, params or {})
            results = res if isinstance(res, list) else [res]
            rows: list[dict] = []
            for r in results:
                cols = r.get_column_names()
                # One call for all rows (converting them row by row costs three times as much).
                for values in r.get_all():
                    rows.append({c: _plain(v) for c, v in zip(cols, values, strict=False)})
        except RuntimeError as exc:
            message = str(exc).strip()
            raise QueryError(name, message, damaged=is_storage_damage(message)) from None
        except UnicodeDecodeError as exc:  # a string the engine stored is no longer UTF-8
            text = f"unreadable text in the database ({exc})"
            raise QueryError(name, text, damaged=True) from None
        return rows

    def q(self, name: str, **params: Any) -> list[dict]:
        """Run the named statement from `rose/queries/<name>.cypher` with `params`."""
        from rose.queries.named import load

        return self.run(load(name), params, name=name)

    @contextmanager
    def transaction(self) -> Iterator[Graph]:
        self._conn.execute("BEGIN TRANSACTION")
        try:
            yield self
        except BaseException:
            # The engine may have rolled back itself (a full buffer pool does): then this
            # raises, and must not hide the error that caused it.
            with suppress(RuntimeError):
                self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")


class LazyGraph(Graph):
    """A graph whose database is opened by its first statement, through `opener`.

    The store hands one out when the files say nothing changed since the graph was last
    synced: a command that then asks nothing of the graph never opens the database.
    """

    def __init__(self, path: Path, opener: Callable[[], Graph]):
        self.path = path
        self._opener = opener
        self._opened: Graph | None = None

    @property
    def opened(self) -> bool:
        return self._opened is not None

    @property
    def _conn(self) -> Any:
        if self._opened is None:
            self._opened = self._opener()
        return self._opened._conn


# The engine reserves 80% of the machine's memory for its buffer pool by default, which
# makes every open cost ~25 ms more at 10,000 lessons. A pool a few times the database's
# size opens fast; too small a pool makes checkpoints fail (the WAL then grows, and every
# close spends ~130 ms trying again), so it grows with the database and has a floor.
_POOL_FLOOR = 512 * 1024 * 1024


def buffer_pool_bytes(path: Path) -> int:
    """The buffer pool for the database at `path` (0: the engine's own default).

    A database not built yet gets the engine's default: its first sync loads every file in
    one transaction, which at 100,000 lessons overflows the floor (measured: "Unable to
    allocate memory! The buffer pool is full")."""
    if not os.path.lexists(path):
        return 0
    size = 0
    for p in (path, path.with_name(path.name + ".wal")):
        with suppress(OSError):
            size += p.stat().st_size if p.is_file() else 0
    want = max(_POOL_FLOOR, 4 * size)
    try:
        ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (OSError, ValueError, AttributeError):
        return 0
    return 0 if want >= ram * 0.8 else want


def holder_file(path: Path) -> Path:
    return path.with_name(path.name + ".holder")


def _alive(pid: int) -> bool:
    from rose.processes.detach import reap

    reap()  # a graph server this process started, ended since, is not taken for alive
    try:
        os.kill(pid, 0)
    except PermissionError:  # it exists, under another user
        return True
    except OSError:
        return False
    return not _zombie(pid)


process_alive = _alive  # for the graph server's client: did the server end, or a session


def _zombie(pid: int) -> bool:
    """Whether `pid` has ended and waits to be reaped: another process's child, or one
    reparented to an init that reaps late (a container's), answers a signal 0 until then."""
    return process_state(pid) == "Z"


def process_state(pid: int) -> str | None:
    """The state letter of process `pid` (R, S, D, T for stopped, Z...), None when it has
    gone; "?" where there is no /proc to tell (it exists)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0].decode("ascii", "replace")
    except FileNotFoundError:
        return None if not os.path.isdir("/proc/self") else "?"
    except (OSError, IndexError):
        return "?"


def live_holder(path: Path) -> dict | None:
    """The holder note of another live process, if one holds (or is closing) the database."""
    try:
        info = json.loads(holder_file(path).read_text(encoding="utf-8"))
        pid = int(info["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return info if pid != os.getpid() and _alive(pid) else None


def _others_there(path: Path) -> bool:
    """Another live process holds the database, or is inside the engine's open of it (a
    writer's open replays the log, which a reader meanwhile sees as recovery pending)."""
    if live_holder(path) is not None:
        return True
    prefix = opening_prefix(path)
    with suppress(OSError):
        for entry in os.scandir(path.parent):
            tail = entry.name[len(prefix) :]
            if entry.name.startswith(prefix) and tail.isdigit():
                pid = int(tail)
                if pid != os.getpid() and _alive(pid):
                    return True
    return False


def _describe_holder(path: Path, message: str) -> str | None:
    if "held by PID" in message:  # ladybug names the holder itself
        return "pid " + message.split("held by PID", 1)[1].split(")")[0].strip()
    info = live_holder(path)
    if info is None:
        return None
    return f"pid {info['pid']} ({info.get('cmd', '?')}, since {info.get('since', '?')})"


def claim_holder(path: Path, **extra: Any) -> None:
    """Leave a note saying who holds the database, for the error another process will show
    (a graph server adds where it listens: `rose.graph.server`)."""
    info = {
        "pid": os.getpid(),
        # The program and its subcommand only: the rest of a command line may hold a secret.
        "cmd": " ".join(
            [Path(sys.argv[0]).name if sys.argv else "?"]
            + [a for a in sys.argv[1:2] if len(a) <= 24 and a.lstrip("-").isidentifier()]
        ),
        "since": time.strftime("%H:%M:%S"),
        **extra,
    }
    with suppress(OSError):
        holder_file(path).write_text(json.dumps(info), encoding="utf-8")


def release_holder(path: Path) -> None:
    try:
        hf = holder_file(path)
        if json.loads(hf.read_text(encoding="utf-8")).get("pid") == os.getpid():
            hf.unlink()
    except (OSError, ValueError):
        pass


# -- telling a lock from damage -----------------------------------------------------------------
#
# What the engines say (kuzu 0.11.3 and ladybug 0.22, tests/test_graph_damage.py produces each):
#   another process holds it:  "IO exception: Could not set lock on file : <db>"
#                              (ladybug adds "(Lock is held by PID <n>)")
#   a truncated file:          kuzu "Runtime exception: Reading past the end of the file <db>
#                              ..."; ladybug "Runtime exception: Cannot read checkpoint: catalog
#                              page range ... outside the database file ... The database may be
#                              checkpointing; please retry later."
#   random bytes:              "Runtime exception: Unable to open database. The file is not a valid
#                              Kuzu database file!" (ladybug: "... Lbug database file!")
#   a directory in its place:  "Runtime exception: Database path cannot be a directory: <db>"
#   no write permission:       "IO exception: Cannot open file <db>: Permission denied"
# While another process writes, an open can also fail without naming a lock: kuzu "Cannot open
# file <db>.shadow: No such file or directory", "Couldn't replay shadow pages under read-only
# mode", "Error removing directory or file <db>.wal"; ladybug "Cannot open database in read-only
# mode while checkpoint recovery is pending", "... open it in write mode to complete recovery
# before reopening read-only" (while a writer's open replays the log), "Checksum verification
# failed, the WAL file is corrupted", "Primary-key index contains an invalid local node offset".
# The messages alone cannot tell these from damage, so the notes decide: while another live
# process holds the database (or is opening or closing it), any error is contention and is
# retried until the deadline; with nobody there, an error that survives one retry after a pause
# is damage.

#: How long a failed open waits, with nobody holding the database, before its one retry: a
#: writer's transient files settle within milliseconds.
SETTLE_S = 0.1


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:300] if text else type(exc).__name__


def _damage(exc: BaseException, path: Path) -> str:
    """The engine's reason, short: without its exception class, the file by its name."""
    text = _first_line(exc).replace(str(path), path.name)
    head, sep, rest = text.partition(" exception: ")
    return rest if sep and " " not in head else text


def is_storage_damage(message: str) -> bool:
    """A query failed because the engine cannot read its own pages (seen under ladybug:
    "Storage exception: String dictionary index is outside the offset table.")."""
    return message.startswith("Storage exception") or "may be corrupted" in message


def file_identity(path: Path | str) -> tuple[int, int] | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def query_damage(path: Path, exc: QueryError) -> GraphDamaged:
    """The damage a query met in the database at `path` (it opens, so it is not reopened to
    check: `probe` is off)."""
    return GraphDamaged(path, exc.message, ident=file_identity(path), probe=False)


def is_lock(message: str) -> bool:
    return "Could not set lock" in message


def _is_denied(message: str) -> bool:
    return "Permission denied" in message or "Read-only file system" in message


def _check_writable(path: Path) -> None:
    """A store that cannot be written is named at once, never waited on as if it were locked."""
    from rose.disk.atomic import fault

    if (code := fault()) in (errno.EROFS, errno.EACCES):  # the writer's fault hook, for tests
        raise StoreReadOnly(path.parent, "read-only file system" if code == errno.EROFS else "")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except PermissionError as exc:
        raise StoreReadOnly(exc.filename or path.parent) from None
    except OSError as exc:
        if exc.errno == errno.EROFS:
            raise StoreReadOnly(exc.filename or path.parent, "read-only file system") from None
        raise
    for p in (path.parent, path):
        if os.path.lexists(p) and not os.access(p, os.W_OK):
            mounted_ro = bool(os.statvfs(p).f_flag & os.ST_RDONLY)
            raise StoreReadOnly(p, "read-only file system" if mounted_ro else "permission denied")


class _Served(Exception):
    """A graph server took the database while this process waited for it: ask it instead."""


@contextmanager
def open_graph(
    path: Path,
    engine: str,
    *,
    read_only: bool = False,
    deadline_s: float = 30.0,
    keep_s: float = 0.0,
) -> Iterator[Graph]:
    """Open the database at `path`: a lock is waited on until `deadline_s`, damage is reported.

    Where a graph server holds the database (`rose.graph.server`), the graph is a session
    of that server's, waited for until the deadline like a lock; otherwise the process opens
    it itself and, with `keep_s` > 0, starts a server that keeps it open that long after
    its last session. An open that fails because another process holds the database (a
    lock error, or any error while another live process holds or is opening it) is retried
    with jittered backoff until the deadline, then `StoreLocked` names the file and the
    holder. An open that fails with nobody else there is retried once after `SETTLE_S`;
    failing again, it raises `GraphDamaged` (the store moves it aside and rebuilds it). No
    write permission raises `StoreReadOnly` at once.
    """
    from rose.graph import server

    if not read_only:
        _check_writable(path)
    end = time.monotonic() + deadline_s
    pause = 0.005  # a server letting go may still be named for a moment; one in a long
    while True:  # session while it stops turns the next away: wait longer each time
        served = server.connect(path, engine, read_only, end - time.monotonic())
        if served is not None:
            try:
                yield served
            finally:
                served.close()
            return
        own = _open_own(path, engine, read_only, end)
        if own is not None:
            break
        time.sleep(min(pause, max(0.0, end - time.monotonic())))
        pause = min(pause * 2, 0.1)
    mod, db = own
    for note, _, _ in dead_notes(path):
        if note.name.startswith(opening_prefix(path)):  # it opens: that one was killed
            note.unlink(missing_ok=True)
    if not read_only:
        claim_holder(path)
    conn = None
    try:
        conn = mod.Connection(db)
        if not read_only:
            defer_checkpoint(conn, path)
        yield Graph(conn, path)
    finally:
        if conn is not None:
            conn.close()  # the connection must close before the database
        db.close()
        if not read_only:
            release_holder(path)
    if keep_s > 0 and not read_only:
        server.launch(path, engine, keep_s)


@contextmanager
def open_memory(path: Path, engine: str) -> Iterator[Graph]:
    """A database in memory, named after the one at `path` that could not be opened for
    writing: it is built from the files, and nothing of it reaches the disk."""
    mod = engine_module(engine)
    db = mod.Database(":memory:")
    conn = mod.Connection(db)
    try:
        yield Graph(conn, path)
    finally:
        conn.close()
        db.close()


def _open_own(path: Path, engine: str, read_only: bool, end: float) -> tuple[Any, Any] | None:
    """(the engine's module, its Database) opened by this process; None when a graph server
    took the database meanwhile (ask it instead)."""
    mod = engine_module(engine)
    crashed = crash_note(path)
    if crashed and live_holder(path) is None:  # one who holds it now opened it fine
        raise GraphDamaged(path, crashed, ident=file_identity(path), probe=False)
    try:
        return mod, open_database(mod, path, read_only, end - time.monotonic(), engine)
    except _Served:
        return None


# A checkpoint folds the write-ahead log into the database file. By default the engine runs
# one at every close, and it rewrites each string column a write touched whole: after one
# edited lesson at 10,000 lessons that is ~200 ms and ~16 MB more file (measured, kuzu
# 0.11.3). So a close leaves the log for the next process, and the engine checkpoints at the
# commit that takes the log past `WAL_LIMIT`. The limit is small because every open replays
# the whole log (~0.15 ms a KB here): a log this size costs an open a few milliseconds.
WAL_LIMIT = 64 * 1024


def defer_checkpoint(conn: Any, path: Path) -> None:
    """Leave the log for the next open instead of checkpointing at close (see `WAL_LIMIT`)."""
    try:
        conn.execute("CALL force_checkpoint_on_close=false")
    except RuntimeError as exc:  # an engine without the setting checkpoints as before
        print(f"rose: {path.name}: checkpoints stay on close ({_first_line(exc)})", file=sys.stderr)


def open_database(
    mod: Any, path: Path, read_only: bool, deadline_s: float, engine: str | None = None
) -> Any:
    """The engine's Database: a lock waited on until the deadline, damage after one retry.
    With `engine`, a graph server of that engine found holding it raises `_Served`."""
    from rose.graph import server

    start = time.monotonic()
    delay = 0.005
    strikes = 0  # failures in a row with nobody else holding the database
    while True:
        try:
            with _opening(path):
                pool = buffer_pool_bytes(path)
                return mod.Database(
                    str(path),
                    read_only=read_only,
                    buffer_pool_size=pool,
                    checkpoint_threshold=WAL_LIMIT,
                )
        except (RuntimeError, MemoryError) as exc:  # MemoryError: a corrupt size read as huge
            message = str(exc)
            if _is_denied(message):
                raise StoreReadOnly(path, _damage(exc, path)) from None
            if not is_lock(message) and not _others_there(path):
                strikes += 1
                if strikes > 1:
                    raise GraphDamaged(
                        path, _damage(exc, path), ident=file_identity(path)
                    ) from None
                time.sleep(SETTLE_S)
                continue
            strikes = 0
            waited = time.monotonic() - start
            if waited >= deadline_s:
                holder = _describe_holder(path, message)
                raise StoreLocked(path, holder, waited, _first_line(exc)) from None
            if engine is not None and server.serving(path, engine):
                raise _Served from None
            time.sleep(min(delay * (0.5 + random.random()), max(0.0, deadline_s - waited)))
            delay = min(delay * 2, 0.25)


# An engine can crash the process on a damaged file where no error can be caught: kuzu 0.11.3
# segfaults opening or querying a file with a page of random bytes. Each open leaves a note
# `<db>.opening-<pid>` for the length of the engine's open call, and the holder note stays for
# as long as the database is open; a note whose process is gone means that process died with
# the database in its hands. The next open takes that as damage (rebuilding costs a sync from
# the files; opening it again could crash again), without reopening it to check.


def opening_prefix(path: Path) -> str:
    return path.name + ".opening-"


@contextmanager
def _opening(path: Path) -> Iterator[None]:
    note = path.with_name(f"{opening_prefix(path)}{os.getpid()}")
    try:
        note.touch()
        made = True
    except OSError:  # a read-only folder (a read-only open): no note, nothing to learn
        made = False
    try:
        yield
    finally:
        if made:
            note.unlink(missing_ok=True)


# Deleting a database and moving a damaged one aside live in `_heal`, and what a process that
# died with the database left behind in `_notes`: named here for callers.
from rose.graph._heal import KEEP_DAMAGED as KEEP_DAMAGED  # noqa: E402
from rose.graph._heal import drop_orphans as drop_orphans  # noqa: E402
from rose.graph._heal import remove_database as remove_database  # noqa: E402
from rose.graph._heal import set_aside as set_aside  # noqa: E402
from rose.graph._notes import crash_note as crash_note  # noqa: E402
from rose.graph._notes import dead_notes as dead_notes  # noqa: E402
from rose.graph._notes import serving_note as serving_note  # noqa: E402
