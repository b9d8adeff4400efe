"""Running test code as an unprivileged user, so file modes mean something.

CI runs as root, which ignores file modes: a 0555 folder or a 0444 file stops nobody. As
root, `as_unprivileged` forks a child that drops to `nobody` (os.setgid/os.setuid) and runs
the function there; otherwise it just calls it. The child cannot import anything the parent
has not (the interpreter may sit under root's 0700 home), so callers import first. Files it
needs live under `world_dir()`, a folder under /tmp that `nobody` owns.
"""

from __future__ import annotations

import os
import pickle
import pwd
import shutil
import tempfile
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = os.geteuid() == 0


@dataclass
class Outcome:
    """What the function returned, or the type and message of what it raised."""

    value: Any = None
    error_type: str | None = None
    error: str | None = None


def _nobody() -> tuple[int, int]:
    entry = pwd.getpwnam("nobody")
    return entry.pw_uid, entry.pw_gid


@contextmanager
def world_dir() -> Iterator[Path]:
    """A fresh folder the unprivileged user owns (removed afterwards)."""
    base = Path(tempfile.mkdtemp(prefix="rose-unpriv-", dir="/tmp"))
    try:
        if ROOT:
            os.chown(base, *_nobody())
        yield base
    finally:
        for p in (base, *base.rglob("*")):  # a test may have left 0555 folders behind
            if p.is_dir() and not p.is_symlink():
                os.chmod(p, 0o755)
        shutil.rmtree(base, ignore_errors=True)


def chown_tree(path: Path) -> None:
    """Give `path` and all below it to the unprivileged user (when running as root)."""
    if ROOT:
        for p in (path, *path.rglob("*")):
            os.lchown(p, *_nobody())


def as_unprivileged(fn: Callable[[], Any], *, cwd: Path | None = None) -> Outcome:
    """Run `fn` as `nobody` (or as the current user when that is not root) in `cwd`."""
    if not ROOT:
        old = Path.cwd()
        try:
            if cwd:
                os.chdir(cwd)
            return _outcome(fn)
        finally:
            os.chdir(old)
    uid, gid = _nobody()
    read, write = os.pipe()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork() in a threaded process
        pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 0
        try:
            os.close(read)
            os.setgroups([])
            os.setgid(gid)
            os.setuid(uid)
            if cwd:
                os.chdir(cwd)
            data = pickle.dumps(_outcome(fn))
            with os.fdopen(write, "wb") as fh:
                fh.write(data)
        except BaseException:
            code = 1
        os._exit(code)
    os.close(write)
    with os.fdopen(read, "rb") as fh:
        data = fh.read()
    _, status = os.waitpid(pid, 0)
    if not data or os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError("the unprivileged child failed before it could report")
    return pickle.loads(data)


def _outcome(fn: Callable[[], Any]) -> Outcome:
    try:
        return Outcome(value=fn())
    except Exception as exc:
        return Outcome(error_type=type(exc).__name__, error=str(exc))
