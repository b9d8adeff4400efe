"""Model CLI processes started before their question is known, each waiting for it on stdin.

Most of a `claude -p` call's wall time is the CLI starting (about 0.4 s of CPU on these
machines, against a millisecond for the loopback model's answer). In `--input-format
stream-json` the CLI does nearly all of that work before it reads its first message, so
a process started while ROSE is still importing, reading the store and rendering the
prompt answers about 0.3 s sooner once the prompt is written to it.

A spare is one such process with its own empty scratch directory, kept under the exact
argv it was started with: only a call with that argv takes it. A spare nobody takes is
dismissed by closing its stdin, on which the CLI exits without asking the model (checked
against Claude Code 2.1.332: no request reaches the server); that happens after
`IDLE_S` seconds, and at the latest when this process exits.
"""

from __future__ import annotations

import atexit
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from rose.model import _proc

REAP_S = 10.0  # a dismissed spare still running by then is killed
IDLE_S = 20.0  # a spare not taken by then is dismissed: it holds a few hundred MB of memory
MAX_SPARES = 4  # per argv: a level of recall asks at most a few questions at once


@dataclass
class Spare:
    """A started CLI waiting for its question, and the directory it runs in."""

    proc: subprocess.Popen[str]
    scratch: str
    timer: threading.Timer | None = field(default=None, repr=False)

    def close(self) -> None:
        """Remove the scratch directory once the caller is done with the process."""
        if self.timer is not None:
            self.timer.cancel()
        shutil.rmtree(self.scratch, ignore_errors=True)

    def dismiss(self) -> threading.Thread:
        """End a spare nobody took: EOF on stdin, on which the CLI exits by itself; a daemon
        thread drains its pipes and reaps it (its whole group killed past `REAP_S`)."""
        self.close()
        reaper = threading.Thread(target=_reap, args=(self.proc,), daemon=True)
        reaper.start()
        return reaper


Spawner = Callable[[str], subprocess.Popen[str]]  # the scratch directory -> the started CLI

_lock = threading.Lock()
_spares: dict[tuple[str, ...], list[Spare]] = {}


def start(prefix: str, spawner: Spawner) -> Spare:
    """A new process in a fresh scratch directory (`spawner` raises as `_proc.spawn` does)."""
    scratch = tempfile.mkdtemp(prefix=prefix)
    try:
        return Spare(spawner(scratch), scratch)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise


def take(key: tuple[str, ...]) -> Spare | None:
    """A spare started under `key` that is still waiting, or None."""
    with _lock:
        waiting = _spares.get(key, [])
        while waiting:
            spare = waiting.pop(0)
            if spare.proc.poll() is None:
                if spare.timer is not None:
                    spare.timer.cancel()
                return spare
            spare.close()  # it ended on its own (a broken install, a signal): not usable
    return None


def fill(key: tuple[str, ...], n: int, prefix: str, spawner: Spawner) -> int:
    """Start spares under `key` until `n` (at most MAX_SPARES) wait; how many were started."""
    with _lock:
        waiting = _spares.setdefault(key, [])
        for spare in [s for s in waiting if s.proc.poll() is not None]:
            waiting.remove(spare)  # it ended on its own: not usable
            spare.close()
        wanted = min(n, MAX_SPARES) - len(waiting)
        started = 0
        for _ in range(max(0, wanted)):
            spare = start(prefix, spawner)
            spare.timer = threading.Timer(IDLE_S, _expire, (key, spare))
            spare.timer.daemon = True
            spare.timer.start()
            waiting.append(spare)
            started += 1
        return started


def waiting(key: tuple[str, ...]) -> int:
    """How many spares wait under `key`."""
    with _lock:
        return sum(1 for s in _spares.get(key, []) if s.proc.poll() is None)


def _reap(proc: subprocess.Popen[str]) -> None:
    try:
        proc.communicate("", timeout=REAP_S)  # "": EOF on stdin, then read to the end
    except subprocess.TimeoutExpired:
        _proc.kill_group(proc)
    except (OSError, ValueError):
        pass


def _expire(key: tuple[str, ...], spare: Spare) -> None:
    with _lock:
        pool = _spares.get(key, [])
        if spare not in pool:
            return  # taken meanwhile
        pool.remove(spare)
    spare.dismiss()


@atexit.register
def dismiss_all(wait_s: float = 0.0) -> None:
    """Dismiss every spare; at exit the CLIs finish by themselves, unwaited for (`wait_s`
    waits that long for their reapers, as a test does)."""
    with _lock:
        spares = [s for pool in _spares.values() for s in pool]
        _spares.clear()
    reapers = [spare.dismiss() for spare in spares]
    if wait_s:
        for reaper in reapers:
            reaper.join(wait_s)
