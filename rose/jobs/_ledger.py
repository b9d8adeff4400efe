"""The job ledger's files and locks (see `rose.jobs.queue` for the design and why it is
race-free). Every function that reads, decides and writes here runs under `locked`."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import signal
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from rose.disk.atomic import write_json, write_text
from rose.errors import RoseError
from rose.events import append_event, now_iso
from rose.files.layout import StoreDir

if TYPE_CHECKING:
    from rose.config import Config
    from rose.jobs.queue import Kind

MAX_ATTEMPTS = 2  # a kind with retry=True runs at most twice
TAIL_LINES = 20
_LOCK_WAIT_S = 10.0  # the lock is held for milliseconds; longer means a stopped process


@contextlib.contextmanager
def locked(d: Path) -> Iterator[None]:
    """Hold the ledger lock: every read-decide-write of the ledger happens inside one."""
    try:
        if not d.is_dir():
            d.mkdir(parents=True, exist_ok=True)
            write_text(d / ".gitignore", "*\n")  # machine-local, even in a store made before jobs/
        fd = os.open(d / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        if exc.errno not in (errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOSPC):
            raise
        yield  # nobody can write this ledger, so reading it needs no lock (a write fails)
        return
    try:
        give_up = time.monotonic() + _LOCK_WAIT_S
        while not _try_flock(fd):
            if time.monotonic() > give_up:
                raise RoseError(
                    f"the job ledger {d} stayed locked for {_LOCK_WAIT_S:.0f}s; "
                    "a stopped rose process may hold it: end it and retry"
                )
            time.sleep(0.005)
        yield
    finally:
        os.close(fd)


def _try_flock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def read(path: Path) -> dict | None:
    """A record, or None when it is missing or unreadable (a torn file is never written:
    records are replaced atomically)."""
    try:
        rec = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return rec if isinstance(rec, dict) and "id" in rec else None


def records(d: Path) -> list[dict]:
    """Every readable record, oldest first (ids start with the submission time)."""
    out = [rec for path in d.glob("*.json") if (rec := read(path)) is not None]
    return sorted(out, key=lambda r: str(r["id"]))


def save(d: Path, rec: dict) -> None:
    write_json(d / f"{rec['id']}.json", rec)


# -- slots: the cap ---------------------------------------------------------------------------


def take_slot(d: Path, n: int) -> tuple[int, int] | None:
    """(slot, fd) for the first free slot below `n`, held until the fd is closed (or the
    process dies: the kernel drops the flock either way)."""
    for slot in range(n):
        fd = os.open(d / f"slot-{slot}", os.O_RDWR | os.O_CREAT, 0o644)
        if _try_flock(fd):
            return slot, fd
        os.close(fd)
    return None


def _slot_free(d: Path, slot: int) -> bool:
    fd = os.open(d / f"slot-{slot}", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        return _try_flock(fd)
    finally:
        os.close(fd)


def reap(store_dir: StoreDir, registry: dict[str, Kind], mine: int | None = None) -> int:
    """Fail (or retry) the running jobs whose runner is gone: their slot is free, or it is
    `mine`, just taken by the caller. Returns how many it queued again (the caller starts a
    runner for them, unless it is one)."""
    d = store_dir.jobs
    again = 0
    for rec in records(d):
        slot = rec.get("slot")
        if rec.get("state") != "running" or not isinstance(slot, int):
            continue
        if slot == mine or _slot_free(d, slot):
            pid = rec.get("pid")
            if isinstance(pid, int) and _is_job_process(pid, str(rec["id"])):
                killpg(pid, signal.SIGKILL)
            reason = "its runner stopped (killed or crashed) while it ran"
            tail = _file_tail(d / f"{rec['id']}.log")
            finish(store_dir, rec, None, reason, tail, retry=_retry(registry, rec))
            again += rec.get("state") == "queued"
    return again


def _retry(registry: dict[str, Kind], rec: dict) -> bool:
    spec = registry.get(str(rec.get("kind")))
    return spec is not None and spec.retry


def _file_tail(path: Path) -> list[str]:
    try:
        with path.open("rb") as fh:
            fh.seek(max(0, fh.seek(0, os.SEEK_END) - 8192))
            text = fh.read().decode("utf-8", "replace")
    except OSError:
        return []
    return text.splitlines()[-TAIL_LINES:]


def _is_job_process(pid: int, job_id: str) -> bool:
    """Whether `pid` is still this job's process, not a reused pid (Linux; elsewhere the
    job's own alarm ends it)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            return f"ROSE_JOB={job_id}".encode() in fh.read().split(b"\0")
    except OSError:
        return False


def killpg(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


# -- state changes ----------------------------------------------------------------------------


def claim(store_dir: StoreDir, cfg: Config, slot: int) -> dict | None:
    """Mark the oldest waiting job (queued, or deferred while the queue was full) running on
    `slot` and return it; None when none waits."""
    queued = [r for r in records(store_dir.jobs) if r.get("state") in ("queued", "deferred")]
    if not queued:
        return None
    rec = queued[0]
    from rose.jobs.queue import deadline

    calls, writes = (list(rec.get("calls") or []) + [0, 0])[:2]
    limit = float(rec.get("deadline_s") or deadline(int(calls), int(writes), cfg))
    rec.update(
        state="running",
        slot=slot,
        runner=os.getpid(),
        pid=None,
        started=now_iso(),
        ended=None,
        reason="",
        deadline_s=limit,
        deadline=iso(time.time() + limit),
    )
    save(store_dir.jobs, rec)
    return rec


def finish(
    store_dir: StoreDir,
    rec: dict,
    code: int | None,
    reason: str,
    tail: Iterable[str],
    *,
    retry: bool,
) -> None:
    """Record how a job ended: done (payload deleted), failed (payload and log kept), or,
    when `retry` and this was its first attempt, queued again; and log a `job` event."""
    d = store_dir.jobs
    if not (d / f"{rec['id']}.json").exists():  # deleted by hand while it ran: say so
        _lost(store_dir, rec)
    started = epoch(rec.get("started"))
    tail = list(tail)
    said = next((ln[len(FAILED) :] for ln in reversed(tail) if ln.startswith(FAILED)), "")
    if reason and said.strip():
        reason = said.strip()  # the job's own account of why, where it gave one
    rec.update(exit_code=code, ended=now_iso(), reason=reason)
    rec["seconds"] = round(time.time() - started, 3) if started else None
    state = "failed" if reason else "done"
    if state == "done":
        (d / f"{rec['id']}.payload").unlink(missing_ok=True)
    else:
        rec["tail"] = list(tail)
    event = {"id": rec["id"], "job": rec.get("kind"), "attempt": rec.get("attempt")}
    if reason and retry and int(rec.get("attempt", 1)) < MAX_ATTEMPTS:
        state = "retry"
        requeue(rec)
    else:
        rec["state"] = state
    event.update(state=state, exit_code=code, seconds=rec["seconds"], reason=reason)
    append_event(store_dir.events, "job", event)  # first: whoever sees the record sees this
    if state == "failed":
        append_event(store_dir.events, "error", {"job": rec.get("kind"), "id": rec["id"],
                                                 "error": reason})  # fmt: skip
        if rec.get("kind") in LEARNING:
            _tell(store_dir, reason)
    save(d, rec)


#: The line a failing job's process ends its log with: the reason its record gives.
FAILED = "[rose] failed: "
#: The jobs that learn from a session: when one fails, the next status line says so.
LEARNING = ("session-end", "absorb", "reflect", "reflect-fork")


def _lost(store_dir: StoreDir, rec: dict) -> None:
    """A running job's record was deleted (the ledger cleared by hand): it is written again
    with how the job ended, and one line and an event say so."""
    import sys

    what = f"the record of job {rec['id']} ({rec.get('kind')}) was deleted while it ran"
    append_event(store_dir.events, "error", {"job": rec.get("kind"), "id": rec["id"],
                                             "error": f"{what}; written again"})  # fmt: skip
    print(f"rose: {what}; it is written again with how the job ended", file=sys.stderr)


def _tell(store_dir: StoreDir, reason: str) -> None:
    """Keep a few words for the next prompt's status line (`rose.files.notices`)."""
    from rose.files import notices

    low = reason.lower()
    if "gave no answer within" in low or "timeout" in low or "deadline" in low:
        why = "model timed out"
    elif "unavailable" in low:
        why = "model unavailable"
    else:
        why = reason.split(";")[0][:80]
    notices.keep(store_dir.root, f"learning from the last session failed: {why} — rose jobs")


def requeue(rec: dict) -> None:
    """Queue `rec` again for its next attempt, what the last one came to kept in `previous`."""
    rec["previous"] = {k: rec.get(k) for k in ("exit_code", "reason", "tail", "seconds")}
    rec.update(state="queued", attempt=int(rec.get("attempt", 1)) + 1, slot=None, pid=None)
    rec.update(started=None, ended=None, seconds=None, exit_code=None, reason="", tail=[])


def prune(d: Path, keep_days: float) -> None:
    """Delete the records and logs of jobs done more than `keep_days` ago."""
    cutoff = time.time() - keep_days * 86400
    for rec in records(d):
        if rec.get("state") == "done" and epoch(rec.get("ended")) < cutoff:
            for ext in (".json", ".log", ".payload"):
                (d / f"{rec['id']}{ext}").unlink(missing_ok=True)


# -- shared -----------------------------------------------------------------------------------


def load_config(store_dir: StoreDir) -> Config:
    """The settings as the Store reads them (global, then project, then the environment);
    the defaults when they are broken, with an `error` event saying why."""
    from rose import config
    from rose.files.layout import global_root

    paths = [global_root() / "config.yaml", store_dir.config]
    try:
        return config.load(list(dict.fromkeys(paths)))
    except RoseError as exc:
        append_event(store_dir.events, "error", {"job-runner": "config", "detail": str(exc)})
        return config.Config()


def iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t % 1 * 1000):03d}+00:00"


def epoch(stamp: object) -> float:
    """Seconds since the epoch for one of the ledger's times; 0 when absent or unreadable."""
    from datetime import datetime

    try:
        return datetime.fromisoformat(str(stamp)).timestamp()
    except ValueError:
        return 0.0
