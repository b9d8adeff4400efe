"""Kept processes (graph servers) reached in a short folder of one test's own."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def own_folder(monkeypatch, prefix: str, stop: Callable[[], object]) -> Iterator[Path]:
    """Keeping on, the sockets under a new short folder (a socket's path has ~100 bytes at
    most); at the end `stop` asks every process there to end, and the graph servers the
    test's opens started are asked too (`rose.graph.server`); they are waited for."""
    run = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(run))
    monkeypatch.delenv("ROSE_KEEP_WARM", raising=False)
    try:
        yield run
    finally:
        from rose.graph import server

        stop()
        server.stop_all()
        folder = run / f"rose-{os.getuid()}"
        end = time.monotonic() + 15
        while folder.exists() and list(folder.glob("*.sock")) and time.monotonic() < end:
            time.sleep(0.05)
        shutil.rmtree(run, ignore_errors=True)


def gone(pid: int) -> bool:
    """Whether process `pid` has ended (a zombie waiting for its parent to reap it too)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
    except OSError:
        return True


def wait(cond: Callable[[], object], timeout: float = 10) -> bool:
    """Whether `cond()` came true within `timeout` seconds."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.05)
    return bool(cond())
