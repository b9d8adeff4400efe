"""The one door to the embedded graph engine (kuzu, or its fork ladybug).

No other module imports either package. Opens are short: open, do one unit of
work, close. Under kuzu any open locks every other process out, so every open
retries with jittered backoff until a deadline and then names the file and,
where known, the process holding it.
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from decimal import Decimal
from pathlib import Path
from typing import Any

from rose.errors import QueryError, RoseError, StoreLocked

ENGINES = ("kuzu", "ladybug")


def _module(engine: str) -> Any:
    if engine == "kuzu":
        import kuzu

        return kuzu
    if engine == "ladybug":
        try:
            import ladybug
        except ImportError:
            raise RoseError(
                "graph engine 'ladybug' is not installed: pip install 'rose-memory[ladybug]'"
            ) from None
        return ladybug
    raise RoseError(f"unknown graph engine {engine!r}; choose one of {', '.join(ENGINES)}")


def version(engine: str) -> str:
    mod = _module(engine)
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
        except RuntimeError as exc:
            raise QueryError(name, str(exc).strip()) from None
        results = res if isinstance(res, list) else [res]
        rows: list[dict] = []
        for r in results:
            cols = r.get_column_names()
            # One call for all rows (converting them row by row costs three times as much).
            for values in r.get_all():
                rows.append({c: _plain(v) for c, v in zip(cols, values, strict=False)})
        return rows

    def q(self, name: str, **params: Any) -> list[dict]:
        """Run the named statement from `rose/queries/<name>.cypher` with `params`."""
        from rose.graph.queries import load

        return self.run(load(name), params, name=name)

    @contextmanager
    def transaction(self) -> Iterator[Graph]:
        self._conn.execute("BEGIN TRANSACTION")
        try:
            yield self
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")


# The engine reserves most of the machine's memory for its buffer pool by default, which
# makes every open cost ~35 ms at 10,000 lessons; a store's graph is far smaller than this.
BUFFER_POOL_BYTES = 256 * 1024 * 1024


def _holder_file(path: Path) -> Path:
    return path.with_name(path.name + ".holder")


def _describe_holder(path: Path, message: str) -> str | None:
    if "held by PID" in message:  # ladybug names the holder itself
        return "pid " + message.split("held by PID", 1)[1].split(")")[0].strip()
    try:
        info = json.loads(_holder_file(path).read_text(encoding="utf-8"))
        pid = int(info["pid"])
        os.kill(pid, 0)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return f"pid {pid} ({info.get('cmd', '?')}, since {info.get('since', '?')})"


def _claim_holder(path: Path) -> None:
    """Leave a note saying who holds the database, for the error another process will show."""
    info = {
        "pid": os.getpid(),
        "cmd": " ".join(Path(a).name if i == 0 else a for i, a in enumerate(sys.argv[:4]))[:120],
        "since": time.strftime("%H:%M:%S"),
    }
    with suppress(OSError):
        _holder_file(path).write_text(json.dumps(info), encoding="utf-8")


def _release_holder(path: Path) -> None:
    try:
        hf = _holder_file(path)
        if json.loads(hf.read_text(encoding="utf-8")).get("pid") == os.getpid():
            hf.unlink()
    except (OSError, ValueError):
        pass


def remove_database(path: Path) -> None:
    """Delete a database and its side files; the lesson files can always rebuild it."""
    import shutil

    for p in (path, *(path.with_name(path.name + s) for s in (".wal", ".shadow", ".holder"))):
        if p.is_dir():
            shutil.rmtree(p, ignore_errors=True)
        else:
            p.unlink(missing_ok=True)


@contextmanager
def open_graph(
    path: Path, engine: str, *, read_only: bool = False, deadline_s: float = 30.0
) -> Iterator[Graph]:
    """Open the database at `path`, retrying any open error until `deadline_s` has passed.

    Contention shows up as lock errors and as transient `.wal`/`.shadow` errors,
    so every open error is retried; the last one is reported with the holder.
    """
    mod = _module(engine)
    path.parent.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    delay = 0.005
    while True:
        try:
            db = mod.Database(str(path), read_only=read_only, buffer_pool_size=BUFFER_POOL_BYTES)
            break
        except RuntimeError as exc:
            waited = time.monotonic() - start
            if waited >= deadline_s:
                msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                raise StoreLocked(path, _describe_holder(path, str(exc)), waited, msg) from None
            time.sleep(min(delay * (0.5 + random.random()), max(0.0, deadline_s - waited)))
            delay = min(delay * 2, 0.25)
    if not read_only:
        _claim_holder(path)
    conn = None
    try:
        conn = mod.Connection(db)
        yield Graph(conn, path)
    finally:
        if conn is not None:
            conn.close()  # the connection must close before the database
        db.close()
        if not read_only:
            _release_holder(path)
